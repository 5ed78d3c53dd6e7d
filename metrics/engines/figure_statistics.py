"""A step's summary figures as functions of how often each unit is drawn, for ``--ci``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.resampling import mean_statistic

if TYPE_CHECKING:  # types only
    from dialeval.metrics.engines.job_steps import JobData, JobStep, Settings, StepOutcome
    from dialeval.resampling import UnitStatistic


def figure_statistics(
    step: JobStep, data: JobData, outcome: StepOutcome, options: Settings, model: str | None
) -> dict[str, UnitStatistic]:
    """Each per-set figure's mean of its per-set values, and what the step's ``resampling`` hook
    builds for the others."""
    statistics: dict[str, UnitStatistic] = {}
    rows = outcome.per_set if data.sets is not None else None
    for figure, value in outcome.summary.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if rows and all(figure in row for row in rows):
            statistics[figure] = mean_statistic([row[figure] for row in rows])
    if step.resampling is not None:
        statistics.update(step.resampling(data, outcome, options, model))
    return statistics
