"""Uncertainty of the job's figures: bootstrap intervals over the units a test set is drawn in
(the response sets; the responses of a one-per-line corpus), the difference between two systems
with its interval and p-value (paired when the systems answer the same contexts), and Holm's
correction over a table of tests.

A figure enters as a :class:`UnitStatistic`: a function from how many times each unit is drawn
(a resample's counts) to the figure's value. A figure that is the mean of per-unit values (every
per-set figure) carries those values (``per_unit``), so its interval is scipy's BCa bootstrap and
its paired test a sign-flip permutation test; a corpus figure (Dist-n, Self-BLEU, corpus Vendi,
...) is recomputed on each resample from statistics its metric kept from the one pass (counts per
unit, the embeddings already computed), so no model runs again.

Resamples come from ``numpy.random.default_rng(seed)`` in a fixed order, so the same seed gives
the same interval wherever it is computed (one process or the main process of several).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # types only: numpy loads with the first interval, not with the command line
    import numpy as np

#: The interval's coverage (95%).
CONFIDENCE = 0.95
#: Fewest and most resamples ``--num-resamples`` takes: under 100 a 95% interval's ends rest on
#: two or three draws; above 100,000 the time grows with no visible gain in the ends.
MIN_RESAMPLES = 100
MAX_RESAMPLES = 100_000
#: The default number of resamples.
DEFAULT_RESAMPLES = 1000


@dataclass(frozen=True)
class UnitStatistic:
    """A figure as a function of how many times each of ``num_units`` units is drawn.

    ``evaluate(counts)``: ``counts`` is a float64 array of shape ``(k, num_units)`` (row ``r``:
    how many times resample ``r`` draws each unit; all ones is the data itself); returns the
    figure of each resample, shape ``(k,)``, NaN where the figure is undefined on that resample.
    ``method``: how the figure is recomputed, said in the report ("mean of the per-set values",
    "recomputed from per-set n-gram counts"). ``undefined``: why NaN can come out ("no token in
    the resample"). ``per_unit``: the per-unit values when the figure is their mean (NaN for a
    unit where it is undefined: the mean is over the defined units). ``exact``: False when a
    resample's figure is an approximation of the figure recomputed on the resampled data (e.g.
    per-response scores kept against the whole corpus), which ``method`` then says.
    """

    num_units: int
    evaluate: Callable[[np.ndarray], np.ndarray]
    method: str
    undefined: str = ""
    per_unit: np.ndarray | None = None
    exact: bool = True


def mean_statistic(
    values: Sequence[float | None], method: str = "mean of the per-set values"
) -> UnitStatistic:
    """The mean of per-unit ``values`` (None or NaN: undefined for that unit, left out of the
    mean) as a :class:`UnitStatistic`."""
    # numpy: loaded with the first interval, never by the command line's start
    import numpy as np

    per_unit = np.array([np.nan if value is None else value for value in values], dtype=float)
    defined = ~np.isnan(per_unit)
    filled = np.where(defined, per_unit, 0.0)

    def evaluate(counts: np.ndarray) -> np.ndarray:
        drawn = counts @ defined.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(drawn > 0, (counts @ filled) / np.where(drawn > 0, drawn, 1), np.nan)

    return UnitStatistic(
        len(per_unit), evaluate, method, "no unit where the figure is defined", per_unit
    )


@dataclass(frozen=True)
class Interval:
    """A confidence interval (``low``, ``high``), or None for both with the reason
    (``undefined``) when the figure is undefined on some resample or on the data."""

    low: float | None
    high: float | None
    method: str
    undefined: str | None = None

    def as_json(self) -> dict:
        """``{"low", "high", "method"}`` plus ``"undefined"`` when it is."""
        fields = {"low": self.low, "high": self.high, "method": self.method}
        return fields if self.undefined is None else {**fields, "undefined": self.undefined}


def check_num_resamples(num_resamples: int, name: str = "num_resamples") -> int:
    """``num_resamples`` when an int in [:data:`MIN_RESAMPLES`, :data:`MAX_RESAMPLES`], else an
    :class:`~dialeval.validation.ArgumentError` naming ``name``."""
    raise NotImplementedError


def interval(
    statistic: UnitStatistic,
    num_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
    unit: str = "response sets",
) -> Interval:
    """The bootstrap interval of ``statistic``'s figure, resampling its units with replacement:
    BCa (``scipy.stats.bootstrap``) when it is a mean of per-unit values and BCa is defined,
    else the percentile interval; ``method`` names which, with the number of resamples and the
    ``unit``."""
    raise NotImplementedError


@dataclass(frozen=True)
class Difference:
    """``system - baseline`` on the data, its interval, and the two-sided p-value of "no
    difference"; ``paired`` says whether units were matched; None values with ``undefined``
    when the figure is undefined on the data or a resample."""

    difference: float | None
    low: float | None
    high: float | None
    p_value: float | None
    paired: bool
    method: str
    undefined: str | None = None

    def as_json(self) -> dict:
        """Every field, ``undefined`` only when it is set."""
        fields = {
            "difference": self.difference,
            "low": self.low,
            "high": self.high,
            "p_value": self.p_value,
            "paired": self.paired,
            "method": self.method,
        }
        return fields if self.undefined is None else {**fields, "undefined": self.undefined}


def paired_difference(
    system: UnitStatistic,
    baseline: UnitStatistic,
    system_units: Sequence[int],
    baseline_units: Sequence[int],
    num_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
    unit: str = "response sets",
) -> Difference:
    """The paired comparison: unit ``system_units[i]`` of ``system`` answers the same context as
    unit ``baseline_units[i]`` of ``baseline`` (every unit of both, each once). A resample draws
    the matched pairs, so both systems see the same contexts. Interval: percentile (BCa for
    means) of the resampled differences; p-value: a sign-flip permutation test for means, else
    the bootstrap test ``(1 + #{|d* - d| >= |d|}) / (1 + B)``."""
    raise NotImplementedError


def unpaired_difference(
    system: UnitStatistic,
    baseline: UnitStatistic,
    num_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
    unit: str = "response sets",
) -> Difference:
    """The comparison of two independent samples: each system's units resampled on their own.
    p-value: a permutation test of the two samples' units for means, else the bootstrap test."""
    raise NotImplementedError


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (None stays None and is not counted as a test)."""
    raise NotImplementedError
