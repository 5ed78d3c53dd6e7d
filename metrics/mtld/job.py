"""``dialeval evaluate``'s MTLD step: per response set (and their mean), or of the whole corpus."""

from __future__ import annotations

from dialeval.metrics.engines.job_steps import (
    JobData,
    JobOptions,
    JobStep,
    Progress,
    Settings,
    StepOutcome,
)


def _mtld(data: JobData, model: str | None, options: Settings, progress: Progress) -> StepOutcome:
    # the metric's code: deferred so the CLI's --help reads this module alone
    from dialeval.metrics.mtld import mtld_scores

    result = mtld_scores(
        data.sets if data.sets is not None else data.responses, allow_empty=options.allow_empty
    )
    progress(data.num_units)
    summary = {"mtld": result["mtld"], "threshold": result["threshold"]}
    if result["scope"] == "corpus":
        return StepOutcome(summary)
    return StepOutcome(summary, [{"mtld": row["mtld"]} for row in result["per_set"]])


def _resampling(data: JobData, outcome: StepOutcome, options: Settings, model: str | None) -> dict:
    """A corpus's MTLD from the factors each response closes in the corpus's two passes
    (approximate: an exact resample reads all its tokens again)."""
    if data.sets is not None:
        return {}  # the mean of the per-set values
    # the metric's code (numpy): deferred so the CLI's --help reads this module alone
    from dialeval.metrics.mtld.resampling import mtld_statistic

    return {"mtld": mtld_statistic(data.responses)}


STEPS = (
    JobStep(
        "mtld", ("response_set", "corpus"), _mtld, options=(JobOptions,), resampling=_resampling
    ),
)
