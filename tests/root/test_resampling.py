"""dialeval.resampling: bootstrap intervals, paired and unpaired differences, Holm's correction.

Hand-computed values, scipy's own BCa interval and permutation tests called directly, the same
seed giving the same figures whatever the chunk size, the undefined paths (never NaN in the
JSON), the argument checks, and the calibration of the tests: A/A comparisons reject at about
the nominal 5% and a clear shift is found.
"""

import dataclasses
import json
import math
import types

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from dialeval import resampling
from dialeval.resampling import (
    MAX_RESAMPLES,
    MIN_RESAMPLES,
    Difference,
    Interval,
    UnitStatistic,
    check_num_resamples,
    holm,
    interval,
    mean_statistic,
    paired_difference,
    unpaired_difference,
)
from dialeval.validation import ArgumentError, ArgumentTypeError


def ratio_statistic(numerators, denominators) -> UnitStatistic:
    """A corpus figure that is no mean of per-unit values: a ratio of sums over the units."""
    numerators = np.asarray(numerators, dtype=float)
    denominators = np.asarray(denominators, dtype=float)

    def evaluate(counts: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return (counts @ numerators) / (counts @ denominators)

    return UnitStatistic(len(numerators), evaluate, "ratio of sums", "no token in the resample")


def without_per_unit(statistic: UnitStatistic) -> UnitStatistic:
    """The same mean, recomputed on each resample as a corpus figure is."""
    return dataclasses.replace(statistic, per_unit=None)


def unit_zero_needed(values) -> UnitStatistic:
    """A figure undefined on every resample that leaves unit 0 out."""
    values = np.asarray(values, dtype=float)

    def evaluate(counts: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts[:, 0] > 0, (counts @ values) / counts.sum(axis=1), np.nan)

    return UnitStatistic(len(values), evaluate, "weighted mean", "unit 0 not drawn")


def no_nan_in_json(result: Interval | Difference) -> dict:
    return json.loads(json.dumps(result.as_json(), allow_nan=False))


SAMPLE = [0.31, 0.52, 0.12, 0.77, 0.45, 0.9, 0.05, 0.66, 0.38, 0.21, 0.59, 0.83]


# -- check_num_resamples ------------------------------------------------------------------------


def test_check_num_resamples_takes_ints_in_range() -> None:
    assert check_num_resamples(MIN_RESAMPLES) == 100
    assert check_num_resamples(np.int64(MAX_RESAMPLES)) == 100_000


@pytest.mark.parametrize("value", [99, 100_001, True, 1000.0, "1000", None])
def test_check_num_resamples_refuses_by_name(value) -> None:
    with pytest.raises(ArgumentError) as raised:
        check_num_resamples(value, "--num-resamples")
    assert raised.value.argument == "--num-resamples"


# -- holm ---------------------------------------------------------------------------------------


def test_holm_hand_computed() -> None:
    # sorted 0.01, 0.03, 0.04, 0.5 (four tests): 4*0.01, 3*0.03, max(0.09, 2*0.04), 1*0.5
    assert holm([0.01, None, 0.04, 0.03, 0.5]) == pytest.approx([0.04, None, 0.09, 0.09, 0.5])
    assert holm([0.6, 0.7]) == [1.0, 1.0]  # 2 * 0.6 capped at 1; the larger keeps up with it
    assert holm([0.2]) == [0.2]
    assert holm([None, None]) == [None, None]
    assert holm([]) == []


@pytest.mark.parametrize(
    ("p_values", "argument"), [([0.1, 1.5], "p_values[1]"), ([math.nan], "p_values[0]")]
)
def test_holm_refuses_what_is_no_p_value(p_values, argument) -> None:
    with pytest.raises(ArgumentError) as raised:
        holm(p_values)
    assert raised.value.argument == argument


@given(st.lists(st.one_of(st.none(), st.floats(0.0, 1.0)), max_size=12))
def test_holm_is_monotone_and_capped(p_values) -> None:
    adjusted = holm(p_values)
    tested = [(p, a) for p, a in zip(p_values, adjusted, strict=True) if p is not None]
    assert [a is None for a in adjusted] == [p is None for p in p_values]
    for p, a in tested:
        assert p <= a <= 1.0
    for (p, a), (q, b) in zip(sorted(tested), sorted(tested)[1:]):
        assert a <= b  # a smaller p-value never gets a larger adjusted one


# -- interval -----------------------------------------------------------------------------------


def test_percentile_interval_of_a_recomputed_mean_is_numpys() -> None:
    values = np.array(SAMPLE)
    got = interval(without_per_unit(mean_statistic(SAMPLE)), num_resamples=300, seed=7)
    drawn = np.random.default_rng(7).integers(0, len(values), size=(300, len(values)))
    low, high = np.percentile(values[drawn].mean(axis=1), [2.5, 97.5])
    assert (got.low, got.high) == pytest.approx((low, high), rel=1e-12)
    assert got.method.startswith("percentile bootstrap, 300 resamples of the response sets")
    assert got.undefined is None


@pytest.mark.parametrize("confidence", [0.95, 0.8])
def test_bca_interval_of_a_mean_is_scipys(confidence) -> None:
    values = np.random.default_rng(3).exponential(size=60)
    got = interval(mean_statistic(list(values)), 1000, seed=11, confidence=confidence)
    expected = stats.bootstrap(
        (values,),
        np.mean,
        n_resamples=1000,
        rng=np.random.default_rng(11),
        confidence_level=confidence,
        method="BCa",
    ).confidence_interval
    assert (got.low, got.high) == pytest.approx((expected.low, expected.high), rel=1e-12)
    assert got.method == "BCa bootstrap, 1000 resamples of the response sets"


def test_bca_interval_leaves_out_the_undefined_units() -> None:
    values = [None, *SAMPLE[:6], math.nan, *SAMPLE[6:]]
    got = interval(mean_statistic(values), 500, seed=2, unit="responses")
    expected = stats.bootstrap(
        (np.array(SAMPLE),), np.mean, n_resamples=500, rng=np.random.default_rng(2)
    ).confidence_interval
    assert (got.low, got.high) == pytest.approx((expected.low, expected.high), rel=1e-12)
    assert "responses where the figure is defined" in got.method


def test_two_sample_bca_ends_are_scipys() -> None:
    ours = np.random.default_rng(1).exponential(size=25)
    theirs = np.random.default_rng(2).normal(size=18)
    resampled = np.random.default_rng(3).normal(ours.mean() - theirs.mean(), 0.3, size=999)
    got = resampling._bca_ends((ours, theirs), resampled, 0.9)
    expected = stats.bootstrap(
        (ours, theirs),
        lambda x, y, axis: x.mean(axis=axis) - y.mean(axis=axis),
        n_resamples=0,
        bootstrap_result=types.SimpleNamespace(bootstrap_distribution=resampled),
        confidence_level=0.9,
    ).confidence_interval
    assert got == pytest.approx((expected.low, expected.high), rel=1e-12)


def test_bca_falls_back_to_the_percentile_interval(monkeypatch) -> None:
    point = np.mean(SAMPLE)
    outside = np.full(200, point + 1.0)  # the data's figure below every resample
    assert resampling._bca_ends((np.array(SAMPLE),), outside, 0.95) is None
    monkeypatch.setattr(resampling, "_bca_ends", lambda *arguments: None)
    got = interval(mean_statistic(SAMPLE), 200, seed=4)
    expected = interval(without_per_unit(mean_statistic(SAMPLE)), 200, seed=4)
    assert (got.low, got.high) == pytest.approx((expected.low, expected.high), rel=1e-12)
    assert got.method.startswith("percentile bootstrap") and "BCa is undefined" in got.method


@pytest.mark.parametrize("values", [[2.5] * 5, [None, 3.0, None]])
def test_a_constant_sample_has_a_zero_width_interval(values) -> None:
    got = interval(mean_statistic(values))
    constant = next(value for value in values if value is not None)
    assert (got.low, got.high) == (constant, constant)
    assert got.method.startswith("zero-width")


def test_a_figure_undefined_on_the_data_has_no_interval() -> None:
    got = interval(mean_statistic([None, math.nan]))
    assert (got.low, got.high) == (None, None)
    assert got.undefined == "undefined on the data: no unit where the figure is defined"
    assert no_nan_in_json(got)["undefined"] == got.undefined


def test_a_figure_undefined_on_some_resamples_has_no_interval() -> None:
    values = np.arange(1.0, 9.0)
    got = interval(unit_zero_needed(values), 200, seed=5)
    drawn = np.random.default_rng(5).integers(0, len(values), size=(200, len(values)))
    missing = int(np.count_nonzero((drawn != 0).all(axis=1)))
    assert missing > 0
    assert (got.low, got.high) == (None, None)
    assert got.undefined == f"undefined on {missing} of 200 resamples: unit 0 not drawn"
    assert no_nan_in_json(got)["low"] is None


# -- determinism --------------------------------------------------------------------------------


def comparisons(seed: int) -> list:
    rng = np.random.default_rng(0)
    ours, theirs = rng.normal(size=40), rng.normal(size=40) + 0.2
    tokens, types_ = rng.integers(5, 15, 40), rng.integers(1, 5, 40)
    ratio_ours, ratio_theirs = ratio_statistic(types_, tokens), ratio_statistic(types_ + 1, tokens)
    order = rng.permutation(40)
    return [
        interval(mean_statistic(list(ours)), 300, seed),
        interval(ratio_ours, 300, seed),
        paired_difference(
            mean_statistic(list(ours)), mean_statistic(list(theirs)), order, order, 300, seed
        ),
        paired_difference(ratio_ours, ratio_theirs, range(40), range(40), 300, seed),
        unpaired_difference(mean_statistic(list(ours)), mean_statistic(list(theirs)), 300, seed),
        unpaired_difference(ratio_ours, ratio_theirs, 300, seed),
    ]


def test_the_same_seed_gives_the_same_figures() -> None:
    first, again, other = comparisons(3), comparisons(3), comparisons(4)
    assert first == again
    assert all(a != b for a, b in zip(first, other, strict=True))


@pytest.mark.parametrize("rows", [1, 7])
def test_the_figures_do_not_depend_on_the_chunk_size(monkeypatch, rows) -> None:
    expected = comparisons(3)
    monkeypatch.setattr(resampling, "_CHUNK_ROWS", rows)
    assert comparisons(3) == expected


def test_a_chunk_holds_at_most_the_cell_budget() -> None:
    assert resampling._chunk_rows(10) == resampling._CHUNK_ROWS
    assert resampling._chunk_rows(10**7) == 1
    assert resampling._chunk_rows(50_000) * 50_000 <= resampling._CHUNK_CELLS


# -- paired and unpaired differences ------------------------------------------------------------


def test_paired_difference_matches_units_through_the_orders() -> None:
    rng = np.random.default_rng(8)
    context = rng.normal(size=30)
    baseline = context + rng.normal(scale=0.1, size=30)
    system = context + 0.05 + rng.normal(scale=0.1, size=30)
    shuffle = rng.permutation(30)  # the system answers the contexts in another order
    got = paired_difference(
        mean_statistic(list(system[shuffle])),
        mean_statistic(list(baseline)),
        np.argsort(shuffle),
        range(30),
        num_resamples=500,
    )
    assert got.difference == pytest.approx(system.mean() - baseline.mean())
    assert got.paired and got.low < got.difference < got.high
    # matched, the contexts' spread cancels: an interval far narrower than unpaired
    unpaired = unpaired_difference(
        mean_statistic(list(system)), mean_statistic(list(baseline)), 500
    )
    assert got.high - got.low < (unpaired.high - unpaired.low) / 4
    assert got.method.startswith("paired: BCa bootstrap, 500 resamples of the matched")


def test_paired_permutation_test_is_scipys_when_exact() -> None:
    ours = np.random.default_rng(1).normal(size=8)
    theirs = np.random.default_rng(2).normal(size=8) + 0.5
    got = paired_difference(
        mean_statistic(list(ours)), mean_statistic(list(theirs)), range(8), range(8), 1000
    )
    expected = stats.permutation_test(
        (ours, theirs),
        lambda x, y, axis: x.mean(axis=axis) - y.mean(axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=1000,
    )
    assert got.p_value == pytest.approx(expected.pvalue, rel=1e-12)
    assert "exact over the 256 swaps" in got.method


def test_random_sign_flips_agree_with_scipy() -> None:
    ours = np.random.default_rng(1).normal(size=30)
    theirs = np.random.default_rng(2).normal(size=30) + 0.3
    got = paired_difference(
        mean_statistic(list(ours)), mean_statistic(list(theirs)), range(30), range(30), 100_000
    )
    expected = stats.permutation_test(
        (ours, theirs),
        lambda x, y, axis: x.mean(axis=axis) - y.mean(axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=100_000,
        rng=np.random.default_rng(0),
    )
    # two estimates of p near 0.167, each with a standard error near 0.0012
    assert got.p_value == pytest.approx(expected.pvalue, abs=0.008)


def test_paired_means_with_undefined_units_swap_whole_pairs() -> None:
    ours = [0.2, None, 0.5, 0.9, 0.4, 0.7]
    theirs = [0.1, 0.3, None, 0.6, 0.2, 0.5]
    got = paired_difference(
        mean_statistic(ours), mean_statistic(theirs), range(6), range(6), 200, seed=1
    )
    assert got.difference == pytest.approx(np.mean([0.2, 0.5, 0.9, 0.4, 0.7]) - 0.34)
    assert got.method.startswith("paired: percentile bootstrap")
    assert "exact over the 64 swaps" in got.method
    # by hand: every one of the 64 swap patterns, each side's mean over its defined values
    values = np.array([[np.nan if v is None else v for v in side] for side in (ours, theirs)])
    null = []
    for pattern in range(64):
        swapped = np.array([(pattern >> pair) & 1 for pair in range(6)], dtype=bool)
        x = np.where(swapped, values[1], values[0])
        y = np.where(swapped, values[0], values[1])
        null.append(np.nanmean(x) - np.nanmean(y))
    null = np.array(null)
    tolerance = abs(got.difference) * 1e-12
    extreme = min(
        np.count_nonzero(null >= got.difference - tolerance),
        np.count_nonzero(null <= got.difference + tolerance),
    )
    assert got.p_value == pytest.approx(min(1.0, 2 * extreme / 64))


def test_identical_systems_differ_by_nothing() -> None:
    statistic = ratio_statistic([3, 4, 2, 5, 1], [9, 8, 7, 9, 6])
    got = paired_difference(statistic, statistic, range(5), range(5), 100)
    assert (got.difference, got.low, got.high, got.p_value) == (0.0, 0.0, 0.0, 1.0)
    assert got.method.endswith("bootstrap test")


def test_a_constant_difference_has_a_zero_width_interval() -> None:
    got = paired_difference(
        mean_statistic([1.5, 2.5, 3.5]), mean_statistic([0.5, 1.5, 2.5]), range(3), range(3)
    )
    assert (got.low, got.difference, got.high) == (1.0, 1.0, 1.0)


def test_unpaired_difference_of_means() -> None:
    ours = np.random.default_rng(5).normal(size=25) + 1.0
    theirs = np.random.default_rng(6).normal(size=35)
    got = unpaired_difference(mean_statistic(list(ours)), mean_statistic(list(theirs)), 20_000)
    assert not got.paired
    assert got.difference == pytest.approx(ours.mean() - theirs.mean())
    assert got.low < got.difference < got.high
    expected = stats.permutation_test(
        (ours, theirs),
        lambda x, y, axis: x.mean(axis=axis) - y.mean(axis=axis),
        vectorized=True,
        n_resamples=20_000,
        rng=np.random.default_rng(0),
    )
    # two estimates of p near 0.03, each with a standard error near 0.0012
    assert got.p_value == pytest.approx(expected.pvalue, abs=0.008)
    assert got.method.startswith("unpaired: BCa bootstrap, 20000 resamples of each system's")
    assert "permutation test, 20000 random splits" in got.method


def test_unpaired_permutation_test_is_exact_on_few_units() -> None:
    got = unpaired_difference(mean_statistic([1.0, 2.0, 3.0]), mean_statistic([4.0, 5.0]), 100)
    # the most extreme of the 10 splits, in both tails: 2 / 10
    assert got.p_value == pytest.approx(0.2)
    assert "exact over the 10 splits" in got.method


def test_a_single_unit_side_is_tested_over_every_split() -> None:
    got = unpaired_difference(mean_statistic([5.0, 6.0, 7.0]), mean_statistic([1.0]), 100)
    # the baseline's unit is 1, 5, 6 or 7: differences 5, -1/3, -5/3, -3; 5 is the top one
    assert got.difference == 5.0
    assert got.p_value == pytest.approx(2 * 1 / 4)
    assert "exact over the 4 splits" in got.method
    assert "percentile bootstrap" in got.method  # a one-unit side has no jackknife


def test_a_difference_undefined_on_the_data() -> None:
    got = paired_difference(
        mean_statistic([0.5, 0.7]), mean_statistic([None, None]), [0, 1], [1, 0]
    )
    assert (got.difference, got.low, got.high, got.p_value) == (None, None, None, None)
    assert got.undefined == (
        "undefined on the data: no unit where the figure is defined (the baseline's figure)"
    )
    assert no_nan_in_json(got)["paired"] is True
    assert unpaired_difference(mean_statistic([None]), mean_statistic([1.0])).undefined.endswith(
        "(the system's figure)"
    )


@pytest.mark.parametrize("paired", [True, False])
def test_a_difference_undefined_on_some_resamples(paired) -> None:
    values = np.arange(1.0, 9.0)
    system, baseline = unit_zero_needed(values), mean_statistic(list(values))
    got = (
        paired_difference(system, baseline, range(8), range(8), 200, seed=2)
        if paired
        else unpaired_difference(system, baseline, 200, seed=2)
    )
    assert got.difference == 0.0  # defined on the data
    assert (got.low, got.high, got.p_value) == (None, None, None)
    assert got.undefined.startswith("undefined on ")
    assert got.undefined.endswith(" of 200 resamples: unit 0 not drawn (the system's figure)")
    assert no_nan_in_json(got)["difference"] == 0.0


def test_p_values_lie_in_the_unit_interval() -> None:
    rng = np.random.default_rng(12)
    for shift in (0.0, 5.0):
        ours, theirs = rng.normal(size=20) + shift, rng.normal(size=20)
        for statistic in (mean_statistic, lambda v: without_per_unit(mean_statistic(v))):
            for got in (
                paired_difference(
                    statistic(list(ours)), statistic(list(theirs)), range(20), range(20), 100
                ),
                unpaired_difference(statistic(list(ours)), statistic(list(theirs)), 100),
            ):
                assert 0 < got.p_value <= 1
    # the bootstrap test's smallest p-value: no resample as far from d as d from 0
    far = paired_difference(
        without_per_unit(mean_statistic(list(ours))),
        without_per_unit(mean_statistic(list(theirs))),
        range(20),
        range(20),
        100,
    )
    assert far.p_value == pytest.approx(1 / 101)


# -- argument checks ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "argument"),
    [
        ({"num_resamples": 99}, "num_resamples"),
        ({"num_resamples": 10**6}, "num_resamples"),
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": 0}, "confidence"),
        ({"unit": ""}, "unit"),
    ],
)
def test_every_function_checks_its_settings(arguments, argument) -> None:
    defined, undefined = mean_statistic([1.0, 2.0]), mean_statistic([None, None])
    calls = [
        lambda: interval(defined, **arguments),
        lambda: interval(undefined, **arguments),  # checked though nothing is resampled
        lambda: paired_difference(defined, undefined, [0, 1], [0, 1], **arguments),
        lambda: unpaired_difference(defined, defined, **arguments),
    ]
    for call in calls:
        with pytest.raises(ArgumentError) as raised:
            call()
        assert raised.value.argument == argument


def test_a_statistic_must_be_one() -> None:
    with pytest.raises(ArgumentTypeError) as raised:
        interval([1.0, 2.0])  # type: ignore[arg-type]
    assert raised.value.argument == "statistic"
    with pytest.raises(ArgumentError, match="has 2 per-unit values for 3 units"):
        unpaired_difference(
            mean_statistic([1.0]),
            dataclasses.replace(mean_statistic([1.0, 2.0]), num_units=3),
        )
    wrong_shape = dataclasses.replace(
        mean_statistic([1.0, 2.0]), evaluate=lambda counts: counts.sum()
    )
    with pytest.raises(ArgumentError, match="evaluate returned shape"):
        interval(wrong_shape)


@pytest.mark.parametrize(
    ("system_units", "baseline_units", "argument", "problem"),
    [
        ([0, 1, 2], [0, 1], "baseline_units", "has 2 units but `system_units` has 3"),
        ([0, 1, 3], [0, 1, 2], "system_units[2]", "must be at most 2"),
        ([0, -1, 2], [0, 1, 2], "system_units[1]", "must be an int >= 0"),
        ([0, True, 2], [0, 1, 2], "system_units[1]", "must be an int >= 0"),
        ([0, 1, 2], [2, 1, 2], "baseline_units[2]", "repeats unit 2 of `baseline`"),
        ([0, 1], [0, 1], "system_units", "leaves unit 2 of `system`'s 3 unmatched"),
        ("012", [0, 1, 2], "system_units", "must be a list"),
    ],
)
def test_paired_units_are_checked(system_units, baseline_units, argument, problem) -> None:
    three = mean_statistic([1.0, 2.0, 3.0])
    baseline = three if len(baseline_units) == 3 else mean_statistic([1.0, 2.0])
    with pytest.raises(ArgumentError) as raised:
        paired_difference(three, baseline, system_units, baseline_units)
    assert raised.value.argument == argument
    assert problem in raised.value.problem


# -- calibration --------------------------------------------------------------------------------

SEEDS = 200
UNITS = 30


def two_systems(rng: np.random.Generator, kind: str, paired: bool, shift: float) -> tuple:
    """Two systems' statistics on ``UNITS`` units: the same distribution when ``shift`` is 0.
    Paired systems share each context's effect, as systems answering the same contexts do."""
    if kind == "mean":
        context = rng.normal(size=UNITS) if paired else np.zeros(UNITS)
        ours = context + rng.normal(size=UNITS) + shift
        theirs = (context if paired else rng.normal(size=UNITS)) + rng.normal(size=UNITS)
        return mean_statistic(list(ours)), mean_statistic(list(theirs))
    rate = rng.beta(4, 4, UNITS) if paired else np.full(UNITS, 0.5)
    tokens_ours, tokens_theirs = rng.integers(5, 15, UNITS), rng.integers(5, 15, UNITS)
    return (
        ratio_statistic(rng.binomial(tokens_ours, np.clip(rate + shift, 0, 1)), tokens_ours),
        ratio_statistic(rng.binomial(tokens_theirs, rate), tokens_theirs),
    )


def rejection_rate(kind: str, paired: bool, shift: float, seeds: int) -> float:
    rejected = 0
    for seed in range(seeds):
        ours, theirs = two_systems(np.random.default_rng(10_000 + seed), kind, paired, shift)
        got = (
            paired_difference(ours, theirs, range(UNITS), range(UNITS), MIN_RESAMPLES * 2, seed)
            if paired
            else unpaired_difference(ours, theirs, MIN_RESAMPLES * 2, seed)
        )
        rejected += got.p_value < 0.05
    return rejected / seeds


@pytest.mark.parametrize("paired", [True, False], ids=["paired", "unpaired"])
@pytest.mark.parametrize("kind", ["mean", "ratio"])
def test_a_a_comparisons_reject_at_about_the_nominal_rate(kind, paired) -> None:
    assert rejection_rate(kind, paired, 0.0, SEEDS) <= 0.09


@pytest.mark.parametrize("paired", [True, False], ids=["paired", "unpaired"])
@pytest.mark.parametrize(("kind", "shift"), [("mean", 1.0), ("ratio", 0.15)])
def test_a_clear_shift_is_found(kind, shift, paired) -> None:
    assert rejection_rate(kind, paired, shift, SEEDS // 2) > 0.8
