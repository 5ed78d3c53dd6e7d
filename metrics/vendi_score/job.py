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
    from dialeval.metrics.engines.embedders import sentence_vectors
    from dialeval.metrics.engines.shared_outputs import shared_model_outputs
    from dialeval.metrics.vendi_score import vendi_score

    if data.sets is None:
        # the job's store (or this block's, outside a job) holds the vectors the score read: the
        # second lookup keeps them for the resampling hook without encoding again
        with shared_model_outputs():
            result = vendi_score(
                data.responses,
                model,
                batch_size=options.batch_size,
                device=options.device,
                backend=options.backend,
                scope="corpus",
                progress=progress,
                allow_empty=options.allow_empty,
            )
            kept = sentence_vectors(
                data.responses,
                model,
                options.batch_size,
                options.device,
                backend=options.backend,
            )
        return StepOutcome(
            {
                "vendi_score": result["vendi_score"],
                "num_responses": result["num_responses"],
                "model": model,
            },
            kept=kept,
        )
    result = vendi_score(
        data.sets,
        model,
        batch_size=options.batch_size,
        device=options.device,
        backend=options.backend,
        progress=progress,
        allow_empty=options.allow_empty,
    )
    return StepOutcome(
        {"vendi_score": result["vendi_score"], "model": model},
        [{"vendi_score": row["vendi_score"]} for row in result["per_set"]],
    )


def _resampling(data: JobData, outcome: StepOutcome, options: Settings, model: str) -> dict:
    """A corpus's Vendi score recomputed exactly on each resample from the embeddings the run read
    (a resample is a multiset of them: the weighted kernel's spectrum); none when the run was taken
    from a checkpoint (no model runs again)."""
    if data.sets is not None or outcome.kept is None:
        return {}
    # metric code (numpy, scipy): deferred so the declaration's import stays light
    from dialeval.metrics.vendi_score.vendi import vendi_statistic

    vectors, index = outcome.kept
    return {"vendi_score": vendi_statistic(vectors, index)}


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
        resampling=_resampling,
    ),
)
