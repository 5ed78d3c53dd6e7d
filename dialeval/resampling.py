"""Uncertainty of the job's figures: bootstrap intervals over the units a test set is drawn in
(the response sets; the responses of a one-per-line corpus), the difference between two systems
with its interval and p-value (paired when the systems answer the same contexts), and Holm's
correction over a table of tests.

A figure enters as a :class:`UnitStatistic`: a function from how many times each unit is drawn
(a resample's counts) to the figure's value. A figure that is the mean of per-unit values (every
per-set figure) carries those values (``per_unit``), so its interval is scipy's BCa bootstrap and
its paired test a sign-flip permutation test; a corpus figure (Dist-n, Self-BLEU, corpus Vendi,
...) is recomputed from statistics its metric kept from the one pass (counts per unit, the
embeddings already computed), so no model runs again, on subsamples without replacement (a unit
drawn twice adds no new n-gram, which biases a resample with replacement): random halves and
quarters, the variance carried to all units at the rate the two sizes show, the interval the
figure +/- z sd and the test a normal test over that sd.

Resamples come from ``numpy.random.default_rng(seed)`` in a fixed order, so the same seed gives
the same interval wherever it is computed (one process or the main process of several).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dialeval.validation import (
    ArgumentError,
    ArgumentTypeError,
    check_int,
    check_real,
    require_collection,
)

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
#: A figure recomputed on resamples (Dist-n, Ent-n, corpus Vendi, ...) is not resampled with
#: replacement: a unit drawn twice adds no new n-gram or point, which biases such a figure (a
#: Dist-1 of DailyDialog++ sets fell below its 95% interval's lower end). Its variance comes from
#: subsamples without replacement, halves and quarters, carried to all units at the rate the
#: two show (Bertail, Politis & Romano 1999), within these bounds.
MIN_RATE, MAX_RATE = 0.5, 2.0
#: Fewest units for a subsampled interval (a quarter holds at least 2).
MIN_SUBSAMPLED_UNITS = 8
#: Fewest units on each side for the normal test of a recomputed figure over its subsampled
#: sd: below it the p-value is left undefined, with the reason. A mean's permutation test is
#: exact at any size.
MIN_SUBSAMPLING_TEST_UNITS = 30


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
    return check_int(num_resamples, name, minimum=MIN_RESAMPLES, maximum=MAX_RESAMPLES)


def interval(
    statistic: UnitStatistic,
    num_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
    unit: str = "response sets",
) -> Interval:
    """The interval of ``statistic``'s figure: for a mean of per-unit values, the bootstrap
    (units resampled with replacement), BCa (``scipy.stats.bootstrap``'s) where it is defined,
    else the percentile interval; for any other figure, subsampling without replacement (the
    module docstring); ``method`` names which, with the number of resamples and the ``unit``.

    A mean is resampled over its defined units, with scipy's draws from
    ``numpy.random.default_rng(seed)`` and scipy's BCa formulas, its jackknife in closed form
    (the same ends as ``scipy.stats.bootstrap(method="BCa")`` in O(units) rather than
    O(units^2)); a constant one gets a zero-width interval. Any other figure is evaluated on
    ``num_resamples`` random halves and quarters of the units; it gets None ends with the reason
    (``undefined``) when it is undefined on the data or on any subsample, or has fewer than
    :data:`MIN_SUBSAMPLED_UNITS` units."""
    statistic = _check_statistic(statistic, "statistic")
    num_resamples, seed, confidence, unit = _check_settings(num_resamples, seed, confidence, unit)
    # numpy: loaded with the first interval, never by the command line's start
    import numpy as np

    rng = np.random.default_rng(seed)
    point = _evaluate(statistic, np.ones((1, statistic.num_units)), "statistic")[0]
    resampling = f"{num_resamples} resamples of the {unit}"
    if not np.isfinite(point):
        return Interval(None, None, f"bootstrap, {resampling}", _undefined_on_data(statistic))
    if statistic.per_unit is not None:
        values = np.asarray(statistic.per_unit, dtype=np.float64)
        defined = values[~np.isnan(values)]
        if not defined.size:  # an evaluate that disagrees with its per-unit values
            reason = _undefined_on_data(statistic)
            return Interval(None, None, f"bootstrap, {resampling}", reason)
        where = "" if len(defined) == len(values) else " where the figure is defined"
        low, high, method = _mean_ends(defined, rng, num_resamples, confidence, unit + where)
        return Interval(low, high, method)
    z = _normal_quantile(confidence)
    method = f"{_subsampling_method(num_resamples, unit)} ({statistic.method})"
    if statistic.num_units < MIN_SUBSAMPLED_UNITS:
        reason = f"subsampling needs at least {MIN_SUBSAMPLED_UNITS} {unit}"
        return Interval(None, None, method, reason)
    half, quarter = _subsampled(
        lambda counts: _evaluate(statistic, counts, "statistic"),
        statistic.num_units,
        rng,
        num_resamples,
    )
    undefined = int(np.count_nonzero(~np.isfinite(half))) + int(
        np.count_nonzero(~np.isfinite(quarter))
    )
    if undefined:
        reason = statistic.undefined or "the figure is undefined"
        return Interval(
            None, None, method, _undefined_on_resamples(undefined, num_resamples, reason)
        )
    variance, rate = _extrapolated_variance(half, quarter, statistic.num_units)
    spread = z * math.sqrt(variance)
    return Interval(float(point) - spread, float(point) + spread, f"{method}; rate {rate:.2f}")


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
    the matched pairs, so both systems see the same contexts. Interval: BCa for means, else the
    difference +/- z sd from the same subsamples of the pairs on both sides; p-value: a
    sign-flip permutation test for means, else the normal test over that sd (undefined under
    :data:`MIN_SUBSAMPLING_TEST_UNITS` pairs).

    Means with a value on every unit of both get the BCa interval of the per-pair differences
    (as :func:`interval`); means with undefined units get the subsampled interval of the
    difference of the two means (each over its defined units) and a permutation test that swaps
    each pair's two values (a sign flip when both are defined). An undefined figure leaves
    ``difference`` set when the data defines it, and ``low``, ``high`` and ``p_value`` None."""
    system = _check_statistic(system, "system")
    baseline = _check_statistic(baseline, "baseline")
    system_order, baseline_order = _check_pairs(
        system_units, baseline_units, system.num_units, baseline.num_units
    )
    num_resamples, seed, confidence, unit = _check_settings(num_resamples, seed, confidence, unit)
    # numpy: loaded with the first comparison, never by the command line's start
    import numpy as np

    resample_rng, test_rng = _streams(seed, 2)
    pairs = len(system_order)
    matched = f"matched {unit}"
    on_data = _difference_on_data(system, baseline)
    if isinstance(on_data, str):
        return Difference(
            None, None, None, None, True, f"paired bootstrap of the {matched}", on_data
        )
    means = system.per_unit is not None and baseline.per_unit is not None
    if means:
        ours = np.asarray(system.per_unit, dtype=np.float64)[system_order]
        theirs = np.asarray(baseline.per_unit, dtype=np.float64)[baseline_order]
        informative = ~(np.isnan(ours) & np.isnan(theirs))  # a pair undefined on both sides
        ours, theirs = ours[informative], theirs[informative]
        p_value, test = _paired_permutation(ours, theirs, test_rng, num_resamples)
        if not (np.isnan(ours).any() or np.isnan(theirs).any()):
            low, high, method = _mean_ends(
                ours - theirs, resample_rng, num_resamples, confidence, matched
            )
            return Difference(on_data, low, high, p_value, True, f"paired: {method}; {test}")
    # the general case: both figures recomputed on each resample of the pairs
    system_columns = np.argsort(system_order)  # system unit u is drawn as its pair is
    baseline_columns = np.argsort(baseline_order)
    method = f"paired: {_subsampling_method(num_resamples, matched)} ({system.method})"
    method += f"; {test}" if means else "; normal test of the difference over its sd"
    if pairs < MIN_SUBSAMPLED_UNITS:
        reason = f"subsampling needs at least {MIN_SUBSAMPLED_UNITS} {matched}"
        return Difference(on_data, None, None, p_value if means else None, True, method, reason)
    ours_half, ours_quarter = _subsampled(
        lambda counts: _evaluate(system, counts[:, system_columns], "system"),
        pairs,
        np.random.default_rng(seed),
        num_resamples,
    )
    theirs_half, theirs_quarter = _subsampled(  # the same draws: the same contexts
        lambda counts: _evaluate(baseline, counts[:, baseline_columns], "baseline"),
        pairs,
        np.random.default_rng(seed),
        num_resamples,
    )
    return _from_subsampled_difference(
        on_data,
        (ours_half, ours_quarter),
        (theirs_half, theirs_quarter),
        (system, baseline),
        confidence,
        None,
        method,
        p_value if means else None,
    )


def unpaired_difference(
    system: UnitStatistic,
    baseline: UnitStatistic,
    num_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
    unit: str = "response sets",
) -> Difference:
    """The comparison of two independent samples: each system's units resampled on their own.
    p-value: a permutation test of the two samples' units for means, else the normal test over
    the sd of the difference, the two sides' subsampled variances added.

    Means get the BCa interval of the difference of the two means (scipy's two-sample
    formulas, over each side's defined units; the percentile interval where BCa is undefined)
    and scipy's independent-samples permutation test. An undefined figure leaves
    ``difference`` set when the data defines it, and ``low``, ``high`` and ``p_value`` None."""
    system = _check_statistic(system, "system")
    baseline = _check_statistic(baseline, "baseline")
    num_resamples, seed, confidence, unit = _check_settings(num_resamples, seed, confidence, unit)
    # numpy: loaded with the first comparison, never by the command line's start
    import numpy as np

    system_rng, baseline_rng, test_rng = _streams(seed, 3)
    resampling = f"{num_resamples} resamples of each system's {unit}"
    on_data = _difference_on_data(system, baseline)
    if isinstance(on_data, str):
        return Difference(
            None, None, None, None, False, f"unpaired bootstrap, {resampling}", on_data
        )
    if system.per_unit is not None and baseline.per_unit is not None:
        ours = _defined(system.per_unit)
        theirs = _defined(baseline.per_unit)
        p_value, test = _independent_permutation(ours, theirs, test_rng, num_resamples, unit)
        if np.ptp(ours) == 0 and np.ptp(theirs) == 0:
            method = f"unpaired: zero-width: the same value on every one of each system's {unit}"
            return Difference(on_data, on_data, on_data, p_value, False, f"{method}; {test}")
        resampled = _resampled_means(ours, system_rng, num_resamples) - _resampled_means(
            theirs, baseline_rng, num_resamples
        )
        ends = _bca_ends((ours, theirs), resampled, confidence)
        if ends is not None:
            method = f"unpaired: BCa bootstrap, {resampling}; {test}"
            return Difference(on_data, ends[0], ends[1], p_value, False, method)
        low, high = _percentile_ends(resampled, confidence)
        method = f"unpaired: percentile bootstrap, {resampling} (BCa is undefined here); {test}"
        return Difference(on_data, low, high, p_value, False, method)
    method = (
        f"unpaired: {_subsampling_method(num_resamples, 'units of each system')} "
        f"({system.method}); normal test of the difference over its sd"
    )
    if min(system.num_units, baseline.num_units) < MIN_SUBSAMPLED_UNITS:
        reason = f"subsampling needs at least {MIN_SUBSAMPLED_UNITS} {unit} of each system"
        return Difference(on_data, None, None, None, False, method, reason)
    system_figures = _subsampled(
        lambda counts: _evaluate(system, counts, "system"),
        system.num_units,
        system_rng,
        num_resamples,
    )
    baseline_figures = _subsampled(
        lambda counts: _evaluate(baseline, counts, "baseline"),
        baseline.num_units,
        baseline_rng,
        num_resamples,
    )
    return _from_subsampled_difference(
        on_data,
        system_figures,
        baseline_figures,
        (system, baseline),
        confidence,
        (system, baseline),
        method,
        None,
    )


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (None stays None and is not counted as a test)."""
    require_collection(p_values, "p_values")
    checked = [
        None if p is None else check_real(p, f"p_values[{index}]", 0.0, 1.0)
        for index, p in enumerate(p_values)
    ]
    tested = [index for index, p in enumerate(checked) if p is not None]
    adjusted: list[float | None] = list(checked)
    if not tested:
        return adjusted
    # statsmodels (a dependency): its Holm step-down, loaded with the first comparison
    from statsmodels.stats.multitest import multipletests

    corrected = multipletests([checked[index] for index in tested], method="holm")[1]
    for index, p in zip(tested, corrected):
        adjusted[index] = float(p)
    return adjusted


# -- Checks ---------------------------------------------------------------------------------------


def _check_settings(
    num_resamples: object, seed: object, confidence: object, unit: object
) -> tuple[int, int, float, str]:
    checked_resamples = check_num_resamples(num_resamples)  # type: ignore[arg-type]
    checked_seed = check_int(seed, "seed", minimum=0)
    checked_confidence = check_real(confidence, "confidence", 0.0, 1.0, open_bounds=(True, True))
    if not isinstance(unit, str) or not unit.strip():
        raise ArgumentError("unit", f"must be a non-empty str naming the units, got {unit!r:.60}")
    return checked_resamples, checked_seed, checked_confidence, unit


def _check_statistic(statistic: object, argument: str) -> UnitStatistic:
    if not isinstance(statistic, UnitStatistic):
        raise ArgumentTypeError(
            argument, f"must be a UnitStatistic, got {type(statistic).__name__}"
        )
    check_int(statistic.num_units, f"{argument}.num_units")
    if statistic.per_unit is not None and len(statistic.per_unit) != statistic.num_units:
        raise ArgumentError(
            argument,
            f"has {len(statistic.per_unit)} per-unit values for {statistic.num_units} units",
        )
    return statistic


def _check_pairs(
    system_units: Sequence[int],
    baseline_units: Sequence[int],
    system_count: int,
    baseline_count: int,
) -> tuple[np.ndarray, np.ndarray]:
    require_collection(system_units, "system_units")
    require_collection(baseline_units, "baseline_units")
    if len(system_units) != len(baseline_units):
        raise ArgumentError(
            "baseline_units",
            f"has {len(baseline_units)} units but `system_units` has {len(system_units)}: "
            "position i pairs one unit of each system",
        )
    # numpy: the checked orders index the per-unit values and the resampled counts
    import numpy as np

    orders = []
    for argument, units, count, owner in (
        ("system_units", system_units, system_count, "system"),
        ("baseline_units", baseline_units, baseline_count, "baseline"),
    ):
        position: dict[int, int] = {}
        for index, value in enumerate(units):
            drawn = check_int(value, f"{argument}[{index}]", minimum=0, maximum=count - 1)
            if drawn in position:
                raise ArgumentError(
                    f"{argument}[{index}]",
                    f"repeats unit {drawn} of `{owner}` (`{argument}[{position[drawn]}]`): "
                    "a paired comparison matches each unit once",
                )
            position[drawn] = index
        if len(position) < count:
            missing = next(drawn for drawn in range(count) if drawn not in position)
            raise ArgumentError(
                argument,
                f"leaves unit {missing} of `{owner}`'s {count} unmatched: a paired comparison "
                "matches every unit once (compare unmatched systems with unpaired_difference)",
            )
        orders.append(np.fromiter(position, dtype=np.int64, count=count))
    return orders[0], orders[1]


# -- Resampling -----------------------------------------------------------------------------------

#: Resamples drawn at once, and the most counts a chunk holds (rows x units), so memory stays
#: O(chunk x units) whatever the number of resamples. The draws come in a fixed order, so the
#: figures do not depend on either.
_CHUNK_ROWS = 256
_CHUNK_CELLS = 1 << 22


def _chunk_rows(num_units: int) -> int:
    return max(1, min(_CHUNK_ROWS, _CHUNK_CELLS // max(num_units, 1)))


def _streams(seed: int, count: int) -> list[np.random.Generator]:
    """``count`` independent generators from ``seed``: each draws in its own fixed order, so
    chunking one stream never shifts another's draws."""
    # numpy: the generators
    import numpy as np

    return [np.random.default_rng(child) for child in np.random.SeedSequence(seed).spawn(count)]


def _draw_chunks(
    rng: np.random.Generator, num_units: int, num_resamples: int
) -> Iterator[np.ndarray]:
    """Each chunk of resamples as drawn unit indexes, shape ``(rows, num_units)``: the draws
    ``rng.integers(0, num_units, (num_resamples, num_units))`` makes, a chunk at a time."""
    rows = _chunk_rows(num_units)
    for start in range(0, num_resamples, rows):
        yield rng.integers(0, num_units, size=(min(rows, num_resamples - start), num_units))


def _subsample_chunks(
    rng: np.random.Generator, num_units: int, size: int, num_resamples: int
) -> Iterator[np.ndarray]:
    """Each chunk of random subsamples as counts, shape ``(rows, num_units)`` float64: row r
    holds 1 for each of ``size`` units drawn without replacement, 0 elsewhere."""
    # numpy: the draws
    import numpy as np

    rows = _chunk_rows(num_units)
    for start in range(0, num_resamples, rows):
        count = min(rows, num_resamples - start)
        drawn = np.argsort(rng.random((count, num_units)), axis=1)[:, :size]
        counts = np.zeros((count, num_units), dtype=np.float64)
        np.put_along_axis(counts, drawn, 1.0, axis=1)
        yield counts


def _evaluate(statistic: UnitStatistic, counts: np.ndarray, argument: str) -> np.ndarray:
    # numpy: the figures as one float array
    import numpy as np

    figures = np.asarray(statistic.evaluate(counts), dtype=np.float64)
    if figures.shape != (len(counts),):
        raise ArgumentError(
            argument,
            f"evaluate returned shape {figures.shape} for {len(counts)} resamples; "
            f"expected ({len(counts)},)",
        )
    return figures


def _resampled_means(
    values: np.ndarray, rng: np.random.Generator, num_resamples: int
) -> np.ndarray:
    """The mean of each resample of ``values``: the draws and means scipy.stats.bootstrap makes
    from the same generator."""
    # numpy: the figures of every chunk joined
    import numpy as np

    return np.concatenate(
        [values[drawn].mean(axis=-1) for drawn in _draw_chunks(rng, len(values), num_resamples)]
    )


def _defined(values: np.ndarray) -> np.ndarray:
    # numpy: the per-unit values as floats
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    return values[~np.isnan(values)]


# -- Interval ends --------------------------------------------------------------------------------


def _percentile_ends(figures: np.ndarray, confidence: float) -> tuple[float, float]:
    # numpy: the percentiles
    import numpy as np

    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(figures, [tail, 100 - tail])
    return float(low), float(high)


def _difference_of_means(ours: np.ndarray, theirs: np.ndarray, axis: int = -1) -> np.ndarray:
    return ours.mean(axis=axis) - theirs.mean(axis=axis)


def _bca_ends(
    samples: tuple[np.ndarray, ...], resampled: np.ndarray, confidence: float
) -> tuple[float, float] | None:
    """The BCa ends of the mean of one sample, or of the first sample's mean minus the second's,
    from the bootstrap distribution ``resampled``: scipy.stats.bootstrap(method="BCa")'s
    formulas (Efron & Tibshirani, 14.3 and 15.4), with the jackknife's leave-one-out means in
    closed form, O(units) where scipy's jackknife recomputes each, O(units^2). None where BCa
    is undefined: the figure on the data outside the distribution, a sample under two units."""
    # numpy: the distribution's quantiles
    import numpy as np

    # scipy.special: the normal quantile and distribution function, without scipy.stats' load
    from scipy.special import ndtr, ndtri

    if min(len(sample) for sample in samples) < 2:
        return None
    point = samples[0].mean() - (samples[1].mean() if len(samples) > 1 else 0.0)
    below = np.count_nonzero(resampled < point) + np.count_nonzero(resampled <= point)
    share = below / (2 * len(resampled))
    if not 0 < share < 1:
        return None
    bias = ndtri(share)
    cubes = squares = 0.0
    for sign, sample in zip((1.0, -1.0), samples):
        size = len(sample)
        left_out = (sample.sum() - sample) / (size - 1)  # the mean without each unit
        influence = sign * (size - 1) * (left_out.mean() - left_out)
        cubes += np.sum(influence**3) / size**3
        squares += np.sum(influence**2) / size**2
    if squares == 0:
        return None
    acceleration = cubes / 6 / squares**1.5
    tail = ndtri((1.0 - confidence) / 2)
    levels = [ndtr(bias + (bias + z) / (1 - acceleration * (bias + z))) for z in (tail, -tail)]
    low, high = (float(end) for end in np.quantile(resampled, levels))
    return (low, high) if math.isfinite(low) and math.isfinite(high) else None


def _mean_ends(
    values: np.ndarray,
    rng: np.random.Generator,
    num_resamples: int,
    confidence: float,
    unit: str,
) -> tuple[float, float, str]:
    """The interval of the mean of ``values`` (no NaN, at least one): zero-width for a constant
    sample, BCa where defined, else the percentile interval; with the method's text."""
    # numpy: the spread of the values
    import numpy as np

    if np.ptp(values) == 0:
        value = float(values[0])
        return value, value, f"zero-width: the same value on every one of the {unit}"
    resampled = _resampled_means(values, rng, num_resamples)
    resampling = f"{num_resamples} resamples of the {unit}"
    ends = _bca_ends((values,), resampled, confidence)
    if ends is not None:
        return ends[0], ends[1], f"BCa bootstrap, {resampling}"
    low, high = _percentile_ends(resampled, confidence)
    return low, high, f"percentile bootstrap, {resampling} (BCa is undefined on these values)"


# -- Differences ----------------------------------------------------------------------------------


def _difference_on_data(system: UnitStatistic, baseline: UnitStatistic) -> float | str:
    """``system - baseline`` on the data, or why it is undefined."""
    # numpy: the all-ones counts of the data
    import numpy as np

    ours = _evaluate(system, np.ones((1, system.num_units)), "system")[0]
    theirs = _evaluate(baseline, np.ones((1, baseline.num_units)), "baseline")[0]
    reasons = []
    if not np.isfinite(ours):
        reasons.append(_undefined_on_data(system, "the system's figure"))
    if not np.isfinite(theirs):
        reasons.append(_undefined_on_data(baseline, "the baseline's figure"))
    return "; ".join(reasons) if reasons else float(ours - theirs)


def _from_subsampled_difference(
    on_data: float,
    ours: tuple[np.ndarray, np.ndarray],
    theirs: tuple[np.ndarray, np.ndarray],
    sides: tuple[UnitStatistic, UnitStatistic],
    confidence: float,
    independent: tuple[UnitStatistic, UnitStatistic] | None,
    method: str,
    p_value: float | None,
) -> Difference:
    """The difference's interval ``d +/- z sd`` and, when ``p_value`` is None, the normal test's
    p-value, from each side's figures on random halves and quarters of the units; undefined when
    either side is on some of them. ``independent``: the two samples are apart (their variances
    add); None: paired (the same draws on both sides, the differences' variance)."""
    # numpy: counting the undefined figures and the variances
    import numpy as np

    system, baseline = sides
    reasons = []
    for figures, statistic, side in ((ours, system, "system"), (theirs, baseline, "baseline")):
        undefined = sum(int(np.count_nonzero(~np.isfinite(part))) for part in figures)
        if undefined:
            reason = statistic.undefined or "the figure is undefined"
            total = sum(len(part) for part in figures)
            reasons.append(
                _undefined_on_resamples(undefined, total, f"{reason} (the {side}'s figure)")
            )
    paired = independent is None
    if reasons:
        return Difference(on_data, None, None, None, paired, method, "; ".join(reasons))
    if paired:
        variance, rate = _extrapolated_variance(
            ours[0] - theirs[0], ours[1] - theirs[1], system.num_units
        )
        rates = f"rate {rate:.2f}"
    else:
        ours_variance, ours_rate = _extrapolated_variance(*ours, system.num_units)
        theirs_variance, theirs_rate = _extrapolated_variance(*theirs, baseline.num_units)
        variance = ours_variance + theirs_variance
        rates = f"rates {ours_rate:.2f} and {theirs_rate:.2f}"
    sd = math.sqrt(variance)
    spread = _normal_quantile(confidence) * sd
    low, high = on_data - spread, on_data + spread
    method = f"{method}; {rates}"
    if p_value is None:
        fewest = min(system.num_units, baseline.num_units)
        if fewest < MIN_SUBSAMPLING_TEST_UNITS:
            reason = (
                f"no p-value: the normal test over the subsampled sd needs at least "
                f"{MIN_SUBSAMPLING_TEST_UNITS} units on each side to hold its level, and one "
                f"side has {fewest}"
            )
            return Difference(on_data, low, high, None, paired, method, reason)
        p_value = _normal_p(on_data, sd, len(ours[0]) + len(ours[1]))
    return Difference(on_data, low, high, p_value, paired, method)


def _subsampling_method(num_resamples: int, units: str) -> str:
    return (
        f"subsampling: the figure on {num_resamples} random halves and quarters of the {units} "
        "(none drawn twice), its variance carried to all of them at the rate the two sizes "
        "show; point +/- 1.96 sd"
    )


def _subsampled(
    evaluate: Callable[[np.ndarray], np.ndarray],
    num_units: int,
    rng: np.random.Generator,
    num_resamples: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``evaluate`` (counts -> figures) on half of ``num_resamples`` random halves of the units
    and on the other half random quarters, each drawn without replacement."""
    # numpy: the figures of every chunk joined
    import numpy as np

    halves = (num_resamples + 1) // 2

    def figures(size: int, count: int) -> np.ndarray:
        chunks = _subsample_chunks(rng, num_units, size, count)
        return np.concatenate([evaluate(counts) for counts in chunks])

    return figures(num_units // 2, halves), figures(num_units // 4, num_resamples - halves)


def _extrapolated_variance(
    half: np.ndarray, quarter: np.ndarray, num_units: int
) -> tuple[float, float]:
    """The variance of the figure on all ``num_units`` units, from its figures on random halves
    and quarters, and the rate it falls at: each size's variance (finite-population corrected,
    since the draws are without replacement) is ``c m^-rate``; the rate (1 for a mean, other for
    a count of distinct n-grams or an entropy) is measured from the two sizes, within
    [``MIN_RATE``, ``MAX_RATE``], and the variance carried from the halves to all units."""
    # numpy: the variances
    import numpy as np

    sizes = (num_units // 2, num_units // 4)
    variances = [
        float(np.var(figures, ddof=1)) / (1 - size / num_units)
        for figures, size in zip((half, quarter), sizes)
    ]
    if min(variances) <= 0:
        rate = 1.0
    else:
        rate = math.log(variances[1] / variances[0]) / math.log(sizes[0] / sizes[1])
        rate = min(max(rate, MIN_RATE), MAX_RATE)
    return variances[0] * (sizes[0] / num_units) ** rate, rate


def _normal_quantile(confidence: float) -> float:
    """The standard normal quantile of a two-sided ``confidence`` interval (1.96 for 95%)."""
    # scipy: the normal quantile
    from scipy.special import ndtri

    return float(ndtri(0.5 + confidence / 2))


def _normal_p(difference: float, sd: float, num_resamples: int) -> float:
    """The two-sided normal p-value of ``difference`` over its ``sd``; a zero ``sd`` gives 1 for
    no difference and the resolution of the resamples, ``1 / (1 + B)``, for any other."""
    # scipy: the normal tail
    from scipy.special import ndtr

    if sd == 0:
        return 1.0 if difference == 0 else 1 / (1 + num_resamples)
    p_value = float(2 * ndtr(-abs(difference) / sd))
    return max(p_value, 1e-300)  # a p-value is positive; JSON holds any float above 0


# -- Permutation tests ----------------------------------------------------------------------------


def _two_sided_p(null: np.ndarray, observed: float, exact: bool) -> float:
    """scipy.stats.permutation_test's two-sided p-value: twice the smaller tail, the observed
    arrangement counted once where the arrangements were drawn at random."""
    # numpy: counting the tails
    import numpy as np

    adjustment = 0 if exact else 1
    tolerance = abs(observed) * np.finfo(np.float64).eps * 100  # ties that rounding separates
    less = (np.count_nonzero(null <= observed + tolerance) + adjustment) / (len(null) + adjustment)
    more = (np.count_nonzero(null >= observed - tolerance) + adjustment) / (len(null) + adjustment)
    return float(min(1.0, 2 * min(less, more)))


def _random_swaps(rng: np.random.Generator, rows: int, pairs: int) -> np.ndarray:
    """``rows`` x ``pairs`` fair coin flips as 0.0 / 1.0, from 64-bit draws (64 flips each, read
    lowest bit first, so the flips do not depend on the machine's byte order)."""
    # numpy: the draws and their bits
    import numpy as np

    words = rng.integers(0, 2**64, size=(rows, -(-pairs // 64)), dtype=np.uint64)
    octets = words.astype("<u8").view(np.uint8)  # little-endian bytes on every machine
    flips = np.unpackbits(octets, axis=1, count=pairs, bitorder="little")
    return flips.astype(np.float64)


def _paired_permutation(
    ours: np.ndarray, theirs: np.ndarray, rng: np.random.Generator, num_resamples: int
) -> tuple[float, str]:
    """The paired permutation test of the difference of the two means (NaN: undefined, left out
    of its side's mean): each arrangement swaps each pair's two values or not, every one of the
    2^pairs when that is at most ``num_resamples`` (as scipy's ``permutation_test`` with
    ``permutation_type="samples"`` does), else ``num_resamples`` drawn at random, vectorised as
    matrix products."""
    # numpy: the swaps and the means they give
    import numpy as np

    pairs = len(ours)
    ours_defined, theirs_defined = ~np.isnan(ours), ~np.isnan(theirs)
    # per pair: each side's value (0 where undefined) and whether it is defined
    sides = np.column_stack(
        [np.where(ours_defined, ours, 0.0), np.where(theirs_defined, theirs, 0.0)]
        + [ours_defined, theirs_defined]
    ).astype(np.float64)
    totals = sides.sum(axis=0)

    def difference(swaps: np.ndarray) -> np.ndarray:
        moved = swaps @ sides  # what the swapped pairs carry from each side to the other
        ours_sum = totals[0] - moved[:, 0] + moved[:, 1]
        theirs_sum = totals[1] - moved[:, 1] + moved[:, 0]
        ours_count = totals[2] - moved[:, 2] + moved[:, 3]
        theirs_count = totals[3] - moved[:, 3] + moved[:, 2]
        with np.errstate(invalid="ignore", divide="ignore"):  # a side left with no value: NaN
            return ours_sum / ours_count - theirs_sum / theirs_count

    observed = float(difference(np.zeros((1, pairs)))[0])
    rows = _chunk_rows(pairs)
    exact = pairs < 62 and 2**pairs <= num_resamples
    if exact:
        every = np.arange(2**pairs)[:, None] >> np.arange(pairs) & 1
        null = np.concatenate(
            [
                difference(every[start : start + rows].astype(np.float64))
                for start in range(0, len(every), rows)
            ]
        )
        return _two_sided_p(null, observed, True), (
            f"paired permutation test, exact over the {2**pairs} swaps of the pairs"
        )
    null = np.concatenate(
        [
            difference(_random_swaps(rng, min(rows, num_resamples - start), pairs))
            for start in range(0, num_resamples, rows)
        ]
    )
    return _two_sided_p(null, observed, False), (
        f"paired permutation test, {num_resamples} random swaps of the pairs"
    )


def _independent_permutation(
    ours: np.ndarray,
    theirs: np.ndarray,
    rng: np.random.Generator,
    num_resamples: int,
    unit: str,
) -> tuple[float, str]:
    """scipy's independent-samples permutation test of the difference of the two means; where
    one side has a single unit (scipy asks two a side), the exact test over the splits that
    give that side each pooled unit in turn."""
    splits = math.comb(len(ours) + len(theirs), len(ours))
    test = (
        f"permutation test, exact over the {splits} splits of the pooled {unit}"
        if splits <= num_resamples or min(len(ours), len(theirs)) == 1
        else f"permutation test, {num_resamples} random splits of the pooled {unit}"
    )
    if min(len(ours), len(theirs)) == 1:
        return _single_unit_permutation(ours, theirs), test
    # scipy: the permutation test, only where a comparison is asked for
    from scipy import stats

    result = stats.permutation_test(
        (ours, theirs),
        _difference_of_means,
        permutation_type="independent",
        vectorized=True,
        n_resamples=num_resamples,
        batch=_chunk_rows(len(ours) + len(theirs)),
        rng=rng,
    )
    return float(result.pvalue), test


def _single_unit_permutation(ours: np.ndarray, theirs: np.ndarray) -> float:
    """The exact permutation test when one side has a single unit: each split gives that side
    one of the pooled units, the other side the rest."""
    # numpy: the pooled units' splits
    import numpy as np

    pooled = np.concatenate([ours, theirs])
    rest = (pooled.sum() - pooled) / (len(pooled) - 1)  # the other side's mean in each split
    null = pooled - rest if len(ours) == 1 else rest - pooled
    return _two_sided_p(null, float(ours.mean() - theirs.mean()), exact=True)


# -- Reasons --------------------------------------------------------------------------------------


def _undefined_on_data(statistic: UnitStatistic, figure: str = "") -> str:
    reason = statistic.undefined or "the figure is undefined"
    return f"undefined on the data: {reason}" + (f" ({figure})" if figure else "")


def _undefined_on_resamples(undefined: int, num_resamples: int, reason: str) -> str:
    return f"undefined on {undefined} of {num_resamples} resamples: {reason}"
