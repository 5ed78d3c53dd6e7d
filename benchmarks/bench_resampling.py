"""Why ``dialeval.resampling`` computes a mean's BCa interval and its paired permutation test
itself: both against scipy's, on the same values, in one run.

- BCa: ``dialeval.resampling.interval(mean_statistic(values), 1000, seed)`` vs
  ``scipy.stats.bootstrap((values,), np.mean, method="BCa", n_resamples=1000,
  rng=default_rng(seed))``: the same draws, so the ends must be equal (tolerance 1e-9
  relative); scipy's jackknife recomputes the mean once per left-out unit (O(units^2)),
  dialeval's is closed-form.
- Paired test: ``paired_difference`` of two means vs ``scipy.stats.permutation_test`` with
  ``permutation_type="samples"`` on the per-pair values, 1,000 random sign flips each: different
  random flips, so the p-values agree within Monte-Carlo error (stated).

Values: exponential draws (skewed, as per-set figures are), seed 0. Written to
``benchmarks/RESULTS.md`` between ``<!-- bench_resampling:start -->`` and ``:end -->``.

    .venv/bin/python benchmarks/bench_resampling.py
"""

from __future__ import annotations

import time

import numpy as np
from _report import (
    RESULTS_PATH,
    Contention,
    details_head,
    markdown_table,
    section_text,
    write_section,
)
from scipy import stats

from dialeval.resampling import interval, mean_statistic, paired_difference

SCRIPT = "bench_resampling"
SIZES = (1_000, 4_000)
RESAMPLES = 1000


def _timed(function):
    start = time.perf_counter()
    value = function()
    return value, time.perf_counter() - start


def main() -> int:
    with Contention() as contention:
        rows, ok = _measure()
    lines = _lines(rows, contention.share)
    section = section_text(SCRIPT, lines)
    write_section(RESULTS_PATH, SCRIPT, section)
    print(section)
    return 0 if ok else 1


def _measure() -> tuple[list, bool]:
    rows, ok = [], True
    for size in SIZES:
        rng = np.random.default_rng(0)
        values = rng.exponential(size=size)
        ours, ours_s = _timed(lambda v=values: interval(mean_statistic(list(v)), RESAMPLES, 1))
        theirs, theirs_s = _timed(
            lambda v=values: (
                stats.bootstrap(
                    (v,),
                    np.mean,
                    method="BCa",
                    n_resamples=RESAMPLES,
                    rng=np.random.default_rng(1),
                ).confidence_interval
            )
        )
        equal = np.allclose([ours.low, ours.high], [theirs.low, theirs.high], rtol=1e-9)
        ok &= bool(equal)
        rows.append(
            [
                f"BCa interval of a mean, {size:,} units",
                f"{ours_s:.3f} s",
                f"{theirs_s:.3f} s",
                f"**{theirs_s / ours_s:.0f}x**",
                "equal ends" if equal else "**ends differ**",
            ]
        )
        other = values + rng.normal(scale=0.05, size=size)
        ours_p, ours_s = _timed(
            lambda a=values, b=other: (
                paired_difference(
                    mean_statistic(list(a)),
                    mean_statistic(list(b)),
                    range(size),
                    range(size),
                    RESAMPLES,
                    1,
                ).p_value
            )
        )
        theirs_p, theirs_s = _timed(
            lambda a=values, b=other: (
                stats.permutation_test(
                    (a, b),
                    lambda x, y, axis: np.mean(x - y, axis=axis),
                    permutation_type="samples",
                    n_resamples=RESAMPLES,
                    vectorized=True,
                    rng=np.random.default_rng(1),
                ).pvalue
            )
        )
        error = 2 * np.sqrt(max(theirs_p * (1 - theirs_p), 1e-4) / RESAMPLES) * 2
        agree = abs(ours_p - theirs_p) <= error
        ok &= bool(agree)
        rows.append(
            [
                f"paired permutation test of two means, {size:,} pairs",
                f"{ours_s:.3f} s",
                f"{theirs_s:.3f} s",
                f"**{theirs_s / ours_s:.1f}x**",
                f"p {ours_p:.3f} vs {theirs_p:.3f} (within {error:.3f}: {'yes' if agree else 'NO'})",
            ]
        )
    return rows, ok


def _lines(rows: list, share: float) -> list[str]:
    return [
        "## bench_resampling: the statistics core against scipy",
        "",
        f"{RESAMPLES:,} resamples each; exponential values, seed 0; one run each.",
        "",
        *markdown_table(
            ["what", "dialeval.resampling", "scipy.stats", "scipy / ours", "same result"],
            "lrrrl",
            rows,
        ),
        "",
        *details_head("benchmarks/bench_resampling.py"),
        f"- Other processes took {share:.0%} of the CPU meanwhile.",
    ]


if __name__ == "__main__":
    raise SystemExit(main())
