"""``dialeval evaluate``'s homogenization steps (ROUGE-L, BLEU, BERTScore): per response set, or of
the whole corpus."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dialeval.metrics.engines.job_steps import (
    JobData,
    JobOptions,
    JobStep,
    Progress,
    Settings,
    StepOutcome,
    check_pairwise_corpus,
)
from dialeval.metrics.homogenization.defaults import DEFAULT_HOMOGENIZATION_MODEL
from dialeval.option_fields import model_list_field


@dataclass
class HomogenizationOptions:
    """The encoders of BERTScore homogenization (its own flag: the package's default model is not
    BERTScore diversity's)."""

    homogenization_models: list[str] = model_list_field(
        "--homogenization-model",
        DEFAULT_HOMOGENIZATION_MODEL,
        "encoder for BERTScore homogenization (the diversity package's choice; bert_score's "
        "layer for it)",
    )


def _bertscore_corpus(
    data: JobData, model: str | None, options: Settings, progress: Progress
) -> StepOutcome:
    """A corpus's BERTScore homogenization, keeping the F1 of its distinct pairs for ``--ci``."""
    # the metric's code: deferred so the CLI's --help reads this module alone
    from dialeval.metrics.homogenization.scores import corpus_bertscore_homogenization

    score, units = corpus_bertscore_homogenization(
        data.responses,
        model,
        batch_size=options.batch_size,
        device=options.device,
        backend=options.backend,
        allow_empty=options.allow_empty,
        progress=progress,
    )
    summary: dict = {"homogenization_bertscore": score}
    if model is not None:
        summary["model"] = model
    return StepOutcome(summary, kept=units)


def _homogenization(measure: str) -> Callable[..., StepOutcome]:
    def run(data: JobData, model: str | None, options: Settings, progress: Progress) -> StepOutcome:
        # the metric's code: deferred so the CLI's --help reads this module alone
        from dialeval.metrics.homogenization import homogenization_score

        check_pairwise_corpus(f"homogenization_{measure}", data, options)
        figure = f"homogenization_{measure}"
        if measure == "bertscore" and data.sets is None:
            return _bertscore_corpus(data, model, options, progress)
        result = homogenization_score(
            data.sets if data.sets is not None else data.responses,
            measure=measure,
            model=model,
            batch_size=options.batch_size,
            device=options.device,
            backend=options.backend,
            allow_empty=options.allow_empty,
            progress=progress,
        )
        summary = {figure: result["homogenization"]}
        if model is not None:
            summary["model"] = model
        per_set = result.get("per_set")
        return StepOutcome(
            summary,
            None if per_set is None else [{figure: row["homogenization"]} for row in per_set],
        )

    return run


def _resampling(measure: str) -> Callable[..., dict]:
    def hook(data: JobData, outcome: StepOutcome, options: Settings, model: str | None) -> dict:
        """A corpus's figure: ROUGE-L and BLEU as the mean of per-response scores against the
        whole corpus; BERTScore exactly, from the F1 of the distinct pairs the run kept."""
        if data.sets is not None:
            return {}  # the mean of the per-set values
        # the metric's code and the engines (numpy): deferred so --help reads this module alone
        from dialeval.metrics.engines.figure_statistics import response_mean_statistic
        from dialeval.metrics.homogenization import resampling
        from dialeval.metrics.homogenization.rouge_l import rouge_l_per_response

        if measure == "rougel":
            per_response = rouge_l_per_response(data.responses)
        elif measure == "bleu":
            per_response = resampling.bleu_per_response(data.responses)
        elif outcome.kept is None:  # taken from a checkpoint: no model runs again
            return {}
        else:
            return {f"homogenization_{measure}": resampling.unit_similarity_statistic(outcome.kept)}
        return {
            f"homogenization_{measure}": response_mean_statistic(
                per_response, data, resampling.METHOD
            )
        }

    return hook


STEPS = (
    JobStep(
        "homogenization_rougel",
        ("response_set", "corpus"),
        _homogenization("rougel"),
        resampling=_resampling("rougel"),
        options=(JobOptions,),
    ),
    JobStep(
        "homogenization_bleu",
        ("response_set", "corpus"),
        _homogenization("bleu"),
        resampling=_resampling("bleu"),
        options=(JobOptions,),
    ),
    JobStep(
        "homogenization_bertscore",
        ("response_set", "corpus"),
        _homogenization("bertscore"),
        resampling=_resampling("bertscore"),
        options=(JobOptions, HomogenizationOptions),
        models=lambda options: options.homogenization_models,
        model_flag="--homogenization-model",
    ),
)
