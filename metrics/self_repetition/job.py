"""``dialeval evaluate``'s self-repetition step: per response set, or of the whole corpus for a
corpus input."""

from __future__ import annotations

from dialeval.metrics.engines.job_steps import (
    JobData,
    JobOptions,
    JobStep,
    Progress,
    Settings,
    StepOutcome,
)


def _self_repetition(
    data: JobData, model: str | None, options: Settings, progress: Progress
) -> StepOutcome:
    # the metric's code: deferred so the CLI's --help reads this module alone
    from dialeval.metrics.self_repetition import self_repetition_scores

    result = self_repetition_scores(
        data.sets if data.sets is not None else data.responses, allow_empty=options.allow_empty
    )
    progress(data.num_units)
    return StepOutcome({"self_repetition": result["self_repetition"]}, result.get("per_set"))


def _resampling(data: JobData, outcome: StepOutcome, options: Settings, model: str | None) -> dict:
    """A corpus's self-repetition, recomputed exactly from which 4-grams each response holds: a
    resample's document frequencies are ``counts @ D``."""
    if data.sets is not None:
        return {}  # the mean of the per-set values
    # the metric's code and the engines (numpy, scipy): deferred so --help reads this module alone
    from dialeval.metrics.self_repetition.resampling import self_repetition_statistic

    return {"self_repetition": self_repetition_statistic(data)}


STEPS = (
    JobStep(
        "self_repetition",
        ("response_set", "corpus"),
        _self_repetition,
        options=(JobOptions,),
        resampling=_resampling,
    ),
)
