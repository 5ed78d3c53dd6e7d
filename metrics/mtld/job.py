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


STEPS = (JobStep("mtld", ("response_set", "corpus"), _mtld, options=(JobOptions,)),)
