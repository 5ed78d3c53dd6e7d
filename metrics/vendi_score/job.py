"""``dialeval evaluate``'s Vendi step: per response set, or of the whole corpus for a corpus
input."""

from __future__ import annotations

from dialeval.metrics.engines.job_steps import (
    JobData,
    JobOptions,
    JobStep,
    Progress,
    SentenceModelOptions,
    Settings,
    StepOutcome,
)


def _vendi(data: JobData, model: str, options: Settings, progress: Progress) -> StepOutcome:
    # metric code (numpy, model stacks): deferred so the declaration's import stays light
    from dialeval.metrics.vendi_score import vendi_score

    if data.sets is None:
        result = vendi_score(
            data.responses,
            model,
            batch_size=options.batch_size,
            device=options.device,
            scope="corpus",
            progress=progress,
            allow_empty=options.allow_empty,
        )
        return StepOutcome(
            {
                "vendi_score": result["vendi_score"],
                "num_responses": result["num_responses"],
                "model": model,
            }
        )
    result = vendi_score(
        data.sets,
        model,
        batch_size=options.batch_size,
        device=options.device,
        progress=progress,
        allow_empty=options.allow_empty,
    )
    return StepOutcome(
        {"vendi_score": result["vendi_score"], "model": model},
        [{"vendi_score": row["vendi_score"]} for row in result["per_set"]],
    )


STEPS = (
    JobStep(
        "vendi",
        ("response_set", "corpus"),
        _vendi,
        options=(JobOptions, SentenceModelOptions),
        models=lambda options: options.sentence_models,
        model_flag="--sentence-model",
        report_name="vendi_score",
        sentence_texts=lambda data, options, model: [(model, data.responses)],
    ),
)
