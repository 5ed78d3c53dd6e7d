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


STEPS = (
    JobStep("self_repetition", ("response_set", "corpus"), _self_repetition, options=(JobOptions,)),
)
