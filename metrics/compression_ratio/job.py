"""``dialeval evaluate``'s compression-ratio step: per response set, or of the whole corpus for a
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


def _compression_ratio(
    data: JobData, model: str | None, options: Settings, progress: Progress
) -> StepOutcome:
    # the metric's code: deferred so the CLI's --help reads this module alone
    from dialeval.metrics.compression_ratio import compression_ratio_scores

    result = compression_ratio_scores(
        data.sets if data.sets is not None else data.responses, allow_empty=options.allow_empty
    )
    progress(data.num_units)
    summary = {
        key: value
        for key, value in result.items()
        if key not in ("scope", "per_set", "num_sets", "num_responses")
    }
    return StepOutcome(summary, result.get("per_set"))


def _resampling(data: JobData, outcome: StepOutcome, options: Settings, model: str | None) -> dict:
    """A corpus's ratio from each response's share of the compressed corpus (approximate:
    recompressing each resample would cost a run each)."""
    if data.sets is not None:
        return {}  # the mean of the per-set ratios
    # the metric's code (numpy): deferred so the CLI's --help reads this module alone
    from dialeval.metrics.compression_ratio.resampling import compression_statistic

    return {"compression_ratio": compression_statistic(data.responses)}


STEPS = (
    JobStep(
        "compression_ratio",
        ("response_set", "corpus"),
        _compression_ratio,
        options=(JobOptions,),
        resampling=_resampling,
    ),
)
