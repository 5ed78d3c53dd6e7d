"""Every summary figure of a job step as a :class:`~dialeval.resampling.UnitStatistic`, for
``dialeval evaluate --ci``.

A figure that is the mean of the step's per-set values is resampled from them
(:func:`~dialeval.resampling.mean_statistic`); every other figure comes from the step's own
``resampling`` hook (:attr:`~dialeval.metrics.engines.job_steps.JobStep.resampling`), which wins
for the figures it returns. The helpers below are what the hooks build on: the units of a job's
data (a set of a response-set input, a response of a corpus), the mean of per-response scores, a
figure that does not depend on the responses, sparse per-unit counts and chunked evaluation.

numpy is imported inside the functions: the job's declaration modules import this one.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from dialeval.metrics.engines.job_steps import JobData, JobStep, Settings, StepOutcome
from dialeval.resampling import UnitStatistic, mean_statistic

if TYPE_CHECKING:
    import numpy as np

#: Relative tolerance within which a summary figure counts as the mean of its per-set values.
MEAN_TOLERANCE = 1e-9
#: Resamples evaluated at once by the hooks that hold a (resamples x types) array.
RESAMPLE_CHUNK = 16


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _per_set_mean(values: list[float | None]) -> float | None:
    defined = [value for value in values if value is not None and not math.isnan(value)]
    return math.fsum(defined) / len(defined) if defined else None


def figure_statistics(
    step: JobStep, data: JobData, outcome: StepOutcome, options: Settings, model: str | None
) -> dict[str, UnitStatistic]:
    """The statistic of every numeric summary figure of ``outcome`` that is a per-set mean, plus
    what ``step.resampling`` returns (it wins for its figures)."""
    statistics: dict[str, UnitStatistic] = {}
    rows = outcome.per_set if data.sets is not None else None
    for figure, value in outcome.summary.items():
        if not _is_number(value) or not rows or len(rows) != len(data.sets or ()):
            continue
        if not all(
            figure in row and (row[figure] is None or _is_number(row[figure])) for row in rows
        ):
            continue
        values = [row[figure] for row in rows]
        mean = _per_set_mean(values)
        if mean is not None and math.isclose(mean, value, rel_tol=MEAN_TOLERANCE, abs_tol=1e-12):
            statistics[figure] = mean_statistic(values)
    if step.resampling is not None:
        statistics.update(step.resampling(data, outcome, options, model))
    return statistics


# --------------------------------------------------------------------------------------------
# helpers of the hooks


def unit_of_response(data: JobData) -> np.ndarray:
    """For each response of ``data.responses``, the index of its unit (its set; itself in a
    corpus)."""
    import numpy as np

    if data.sets is None:
        return np.arange(len(data.responses), dtype=np.int64)
    sizes = np.fromiter((len(s) for s in data.sets), dtype=np.int64, count=len(data.sets))
    return np.repeat(np.arange(len(data.sets), dtype=np.int64), sizes)


def response_mean_statistic(
    values: Sequence[float] | np.ndarray, data: JobData, method: str, exact: bool = False
) -> UnitStatistic:
    """The mean over the responses of a resample of per-response ``values`` (one per response of
    ``data.responses``), each response weighted by how often its unit is drawn."""
    import numpy as np

    units = unit_of_response(data)
    sums = np.bincount(units, weights=np.asarray(values, dtype=float), minlength=data.num_units)
    sizes = np.bincount(units, minlength=data.num_units).astype(float)

    def evaluate(counts: np.ndarray) -> np.ndarray:
        drawn = counts @ sizes
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(drawn > 0, (counts @ sums) / np.where(drawn > 0, drawn, 1), np.nan)

    return UnitStatistic(
        data.num_units, evaluate, method, "no response in the resample", None, exact
    )


def constant_statistic(value: float, num_units: int, method: str) -> UnitStatistic:
    """A figure that does not depend on which units are drawn."""
    import numpy as np

    def evaluate(counts: np.ndarray) -> np.ndarray:
        return np.full(len(counts), float(value))

    return UnitStatistic(num_units, evaluate, method)


def sparse_unit_counts(data: JobData, keys_of_text: Callable[[list[str]], list]) -> Any:
    """A scipy CSR matrix (units x distinct keys): how often each key occurs in each unit, from
    ``keys_of_text(texts)`` (one list of hashable keys per text, e.g. its n-grams)."""
    import numpy as np
    import scipy.sparse

    vocabulary: dict = {}
    rows, columns = [], []
    units = unit_of_response(data)
    for unit, keys in zip(units.tolist(), keys_of_text(data.responses), strict=True):
        for key in keys:
            rows.append(unit)
            columns.append(vocabulary.setdefault(key, len(vocabulary)))
    return scipy.sparse.csr_matrix(
        (
            np.ones(len(rows)),
            (np.asarray(rows, dtype=np.int64), np.asarray(columns, dtype=np.int64)),
        ),
        shape=(data.num_units, len(vocabulary)),
    )


def chunked(
    evaluate_chunk: Callable[[np.ndarray], np.ndarray],
) -> Callable[[np.ndarray], np.ndarray]:
    """``evaluate`` over :data:`RESAMPLE_CHUNK` resamples at a time (bounded memory)."""
    import numpy as np

    def evaluate(counts: np.ndarray) -> np.ndarray:
        counts = np.atleast_2d(np.asarray(counts, dtype=float))
        return (
            np.concatenate(
                [
                    evaluate_chunk(counts[start : start + RESAMPLE_CHUNK])
                    for start in range(0, len(counts), RESAMPLE_CHUNK)
                ]
            )
            if len(counts)
            else np.zeros(0)
        )

    return evaluate
