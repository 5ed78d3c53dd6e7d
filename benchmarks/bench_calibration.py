"""Is dialeval's comparison test calibrated, and how many response sets does it need?

The test is :mod:`dialeval.resampling`'s, on the mean of per-set values
(:func:`~dialeval.resampling.mean_statistic`); a comparison rejects at 5% when its p-value is
under 0.05. The per-set values of every measure come once from ``dialeval evaluate``'s own job
(:func:`dialeval.cli.evaluate_job.evaluate_response_sets`: one embedding pass for sent-BERT and
Vendi, on the embedded all-MiniLM-L6-v2), run with the step settings ``dialeval meta-eval`` uses
for each figure (EAD: V counted from the responses scored together).

1. A/A calibration: DailyDialog++'s human response sets (``dev.json`` and ``test.json``: 5
   ``positive_responses`` a context). For each seed and each n, the sets are shuffled and the
   first n (A) compared with the next n (B), two disjoint samples of the same population:
   unpaired (:func:`~dialeval.resampling.unpaired_difference`) and paired, A's i-th set matched
   with B's i-th (:func:`~dialeval.resampling.paired_difference`; a random pairing, so the paired
   null holds too). Reported: the share of seeds that reject at 5% (p-value) and whose 95%
   interval of the difference leaves out 0, with the binomial 95% band of a 5% test over that
   many seeds.

   The corpus figures (Dist-1..3, Ent-1..3, LF, Self-BLEU: recomputed on subsamples, not means
   of per-set values) on the same splits (``--corpus-seeds``): each sample through the job with
   ``--ci`` (its ``statistics``), the two compared with
   :func:`~dialeval.resampling.unpaired_difference`; also the mean sd the intervals report
   (half-width / 1.96) over the sd of the figure, and of the difference, across the seeds.
2. A/B power: Tevet & Berant's decTest (``dec_test_1000_no_hds_<task>_gen.csv``: 10 responses a
   set, one sampling temperature a set, every context once), two temperature bands a comparison.
   For each seed and n, n sets are drawn with replacement from each band (i.i.d. draws from the
   band's sets) and compared unpaired (no context is at both temperatures), higher band minus
   lower. Power: the share of seeds that reject at 5% in the direction of more diversity (a
   homogeneity measure must fall). Sets needed for 80% power: read off the measured curve
   (linear in log n between the sizes around 80%), and the normal approximation
   ``2 (z_0.975 + z_0.8)^2 / d^2`` from the bands' effect size d (difference of the means over
   the pooled standard deviation, in the diversity direction).

Writes its section of ``benchmarks/RESULTS.md``.

Usage::

    .venv/bin/python benchmarks/bench_calibration.py  # 200 seeds (600 on corpus figures): ~20 min
    .venv/bin/python benchmarks/bench_calibration.py --quick --results /tmp/calibration.md
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from _report import (
    DAILYDIALOG,
    DATA_ROOT,
    RESULTS_PATH,
    Contention,
    details_head,
    log,
    markdown_table,
    package_versions,
    section_text,
    set_offline_environment,
    write_section,
)

set_offline_environment()

# dialeval's job imports transformers: the offline environment must come first
import numpy as np
from scipy import stats

from dialeval import resampling
from dialeval.cli.evaluate_job import evaluate_response_sets
from dialeval.cli.evaluate_options import EvaluationOptions
from dialeval.hub import EMBEDDED_SENTENCE_MODEL
from dialeval.io import ResponseSet, read_tevet_csv
from dialeval.metrics.registry import SET_SCORERS, SPECS

SCRIPT = "bench_calibration"
#: The per-set measures (``dialeval meta-eval --metric`` names): the model-free ones, then the
#: two that embed with a sentence model.
MODEL_FREE = (
    "averaged_distinct_n",
    "ngram_cosine",
    "mtld",
    "ead",
    "self_repetition",
    "compression_ratio",
    "homogenization_rougel",
)
WITH_MODEL = ("sent_bert", "vendi")
#: The corpus figures (recomputed on subsamples, not means of per-set values): job step ->
#: figures. EAD's ``distinct`` is not among them: on response sets it is the mean of the per-set
#: values, which part 1 covers.
CORPUS_FIGURES = {
    "corpus_lexical_diversity": (
        "distinct_1",
        "distinct_2",
        "distinct_3",
        "entropy_1",
        "entropy_2",
        "entropy_3",
        "lf",
    ),
    "self_bleu": ("self_bleu",),
}
LEVEL = 0.05
POWER_TARGET = 0.8
DAILYDIALOG_SPLITS = ("dev.json", "test.json")
DECTEST = DATA_ROOT / "tevet-diversity-eval" / "raw" / "decTest"
#: name -> (lower band, higher band), temperatures inclusive
GAPS = {
    "small": ((0.60, 0.69), (0.70, 0.79)),
    "medium": ((0.45, 0.69), (0.70, 0.94)),
    "large": ((0.20, 0.44), (0.95, 1.21)),
}


@dataclass(frozen=True)
class Measure:
    """A per-set figure and where the job puts it."""

    name: str
    step: str
    key: str
    more_is_diverse: bool
    settings: tuple[tuple[str, object], ...]
    needs_model: bool


def measures(names: Sequence[str]) -> list[Measure]:
    """The registry's description of each named per-set figure."""
    figures = {figure.name: figure for spec in SPECS for figure in spec.set_figures}
    return [
        Measure(
            name,
            figures[name].step,
            figures[name].figure,
            figures[name].more_is_diverse,
            figures[name].settings,
            SET_SCORERS[name].needs_model,
        )
        for name in names
    ]


def per_set_values(sets: list[ResponseSet], chosen: list[Measure]) -> dict[str, np.ndarray]:
    """Each measure's value on every set (NaN where undefined), from one run of the job."""
    settings: dict[str, object] = {}
    for measure in chosen:
        settings.update(measure.settings)
    options = EvaluationOptions(
        metrics=list(dict.fromkeys(measure.step for measure in chosen)),
        sentence_models=[EMBEDDED_SENTENCE_MODEL] if any(m.needs_model for m in chosen) else [],
        allow_empty=True,
        progress=False,
        **settings,
    )
    report = evaluate_response_sets(sets, options)
    if report["skipped"]:
        raise SystemExit(f"{SCRIPT}: the job skipped {report['skipped']}")
    return {
        measure.name: np.array(
            [
                np.nan if row.get(measure.key) is None else row[measure.key]
                for row in report["per_set"]
            ],
            dtype=float,
        )
        for measure in chosen
    }


def cached_values(
    cache: Path | None,
    collections: list[list[ResponseSet]],
    chosen: list[Measure],
    sources: list[Path],
) -> tuple[list[dict[str, np.ndarray]], bool]:
    """:func:`per_set_values` of each collection, kept in ``cache`` (when given) under a key of
    the source files' digests, the measures and dialeval's version: the statistics part of the
    benchmark then reruns without the job. Also whether they came from the cache."""
    from dialeval import __version__

    digests = [hashlib.sha256(path.read_bytes()).hexdigest() for path in sources]
    key = {"sources": digests, "measures": [m.name for m in chosen], "dialeval": __version__}
    if cache is not None and cache.exists():
        kept = json.loads(cache.read_text(encoding="utf-8"))
        if kept["key"] == key:
            log(f"per-set values from {cache}")
            return [
                {name: np.array(column, dtype=float) for name, column in values.items()}
                for values in kept["values"]
            ], True
    computed = [per_set_values(sets, chosen) for sets in collections]
    if cache is not None:
        values = [
            {
                name: [None if math.isnan(v) else v for v in column.tolist()]
                for name, column in c.items()
            }
            for c in computed
        ]
        cache.write_text(json.dumps({"key": key, "values": values}), encoding="utf-8")
    return computed, False


# ---------------------------------------------------------------- data


def dailydialog_sets(root: Path) -> list[ResponseSet]:
    sets = []
    for name in DAILYDIALOG_SPLITS:
        with open(root / name, encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    record = json.loads(line)
                    sets.append(
                        ResponseSet(
                            record["context"],
                            record["positive_responses"],
                            where=f"{name}:{number}",
                        )
                    )
    return sets


def dectest_sets(path: Path) -> tuple[list[ResponseSet], np.ndarray]:
    """decTest's sets and the sampling temperature of each."""
    sets = read_tevet_csv(path)
    return sets, np.array([float(s.metadata["label_value"]) for s in sets])


def in_band(temperatures: np.ndarray, band: tuple[float, float]) -> np.ndarray:
    """Indices of the sets whose temperature is in ``band`` (inclusive; temperatures have two
    decimals, so the tolerance only absorbs their float spelling)."""
    low, high = band
    return np.flatnonzero((temperatures >= low - 1e-9) & (temperatures <= high + 1e-9))


# ---------------------------------------------------------------- trials


@dataclass
class Tally:
    """Over the seeds of one (measure, n, test): how many rejected at 5%, in which direction,
    and how many intervals left out 0."""

    seeds: int = 0
    rejected: int = 0
    rejected_up: int = 0
    rejected_down: int = 0
    interval_excludes_zero: int = 0
    undefined: int = 0

    def add(self, difference: resampling.Difference) -> None:
        self.seeds += 1
        if difference.p_value is None or difference.difference is None:
            self.undefined += 1
            return
        if difference.p_value < LEVEL:
            self.rejected += 1
            if difference.difference > 0:
                self.rejected_up += 1
            else:
                self.rejected_down += 1
        if difference.low is not None and (difference.low > 0 or difference.high < 0):
            self.interval_excludes_zero += 1

    def rate(self, count: int) -> float:
        return count / self.seeds if self.seeds else math.nan


def aa_samples(num_sets: int, n: int, seed: int, trial: int) -> tuple[np.ndarray, np.ndarray]:
    """Trial ``trial``'s two disjoint samples of ``n`` of ``num_sets`` sets: the first n of a
    shuffle and the next n (one shuffle a trial, whatever n)."""
    order = np.random.default_rng((seed, 1, trial)).permutation(num_sets)
    return order[:n], order[n : 2 * n]


def aa_trials(
    values: dict[str, np.ndarray], sizes: Sequence[int], seeds: int, resamples: int, seed: int
) -> dict[tuple[str, int, str], Tally]:
    """A/A: per seed and n, the first n of a shuffle against the next n, unpaired and paired."""
    tallies: dict[tuple[str, int, str], Tally] = {}
    num_sets = len(next(iter(values.values())))
    for trial in range(seeds):
        for n in sizes:
            first, second = aa_samples(num_sets, n, seed, trial)
            for name, per_set in values.items():
                a = resampling.mean_statistic(per_set[first].tolist())
                b = resampling.mean_statistic(per_set[second].tolist())
                unpaired = resampling.unpaired_difference(a, b, num_resamples=resamples, seed=trial)
                paired = resampling.paired_difference(
                    a, b, range(n), range(n), num_resamples=resamples, seed=trial
                )
                tallies.setdefault((name, n, "unpaired"), Tally()).add(unpaired)
                tallies.setdefault((name, n, "paired"), Tally()).add(paired)
        if (trial + 1) % max(seeds // 10, 1) == 0:
            log(f"  A/A: {trial + 1}/{seeds} seeds")
    return tallies


@dataclass
class CorpusTally(Tally):
    """:class:`Tally` plus, per seed, the figure on the first sample with the sd its interval
    reports (half-width / 1.96), and the difference with the sd its interval reports."""

    first_values: list[float] = field(default_factory=list)
    first_sds: list[float] = field(default_factory=list)
    differences: list[float] = field(default_factory=list)
    difference_sds: list[float] = field(default_factory=list)

    def add_sample(
        self, value: float, reported: dict | None, difference: resampling.Difference
    ) -> None:
        self.add(difference)
        z = stats.norm.ppf(1 - LEVEL / 2)
        if reported is not None and reported.get("low") is not None:
            self.first_values.append(value)
            self.first_sds.append((reported["high"] - reported["low"]) / (2 * z))
        if difference.low is not None and difference.difference is not None:
            self.differences.append(difference.difference)
            self.difference_sds.append((difference.high - difference.low) / (2 * z))

    def sd_ratio(self) -> float:
        """Mean reported sd of the figure over the sd of the figure across the first samples."""
        return _ratio(self.first_sds, self.first_values)

    def difference_sd_ratio(self) -> float:
        """Mean reported sd of the difference over the sd of the differences across seeds."""
        return _ratio(self.difference_sds, self.differences)


def _ratio(reported: list[float], observed: list[float]) -> float:
    if len(observed) < 2:
        return math.nan
    spread = float(np.std(observed, ddof=1))
    return float(np.mean(reported)) / spread if spread > 0 else math.nan


def corpus_sample(
    sets: list[ResponseSet], resamples: int, seed: int
) -> tuple[dict[str, float], dict[str, dict | None], dict[str, resampling.UnitStatistic]]:
    """One run of the job with ``--ci`` on ``sets``, the corpus steps only: each corpus figure's
    value, the interval the report gives it, and its statistic (what a comparison takes)."""
    kept: dict[str, dict[str, resampling.UnitStatistic]] = {}
    options = EvaluationOptions(
        metrics=list(CORPUS_FIGURES),
        allow_empty=True,
        progress=False,
        ci=True,
        num_resamples=resamples,
        seed=seed,
    )
    report = evaluate_response_sets(sets, options, statistics=kept)
    if report["skipped"]:
        raise SystemExit(f"{SCRIPT}: the job skipped {report['skipped']}")
    values, intervals, statistics = {}, {}, {}
    for step, figures in CORPUS_FIGURES.items():
        entry = report["metrics"][step]
        for figure in figures:
            statistic = kept[step][figure]
            if statistic.per_unit is not None:
                raise SystemExit(f"{SCRIPT}: {step}'s {figure} is a per-set mean, not a corpus one")
            values[figure] = entry[figure]
            intervals[figure] = entry.get("intervals", {}).get(figure)
            statistics[figure] = statistic
    return values, intervals, statistics


def corpus_aa_trials(
    sets: list[ResponseSet], sizes: Sequence[int], seeds: int, resamples: int, seed: int
) -> dict[tuple[str, int], CorpusTally]:
    """A/A on the corpus figures: per seed and n, the job on the first n of a shuffle and on the
    next n (the same split as :func:`aa_trials`), compared unpaired."""
    tallies: dict[tuple[str, int], CorpusTally] = {}
    for trial in range(seeds):
        for n in sizes:
            first, second = aa_samples(len(sets), n, seed, trial)
            values, intervals, a = corpus_sample([sets[i] for i in first], resamples, trial)
            _, _, b = corpus_sample([sets[i] for i in second], resamples, trial)
            for figure, statistic in a.items():
                difference = resampling.unpaired_difference(
                    statistic, b[figure], num_resamples=resamples, seed=trial
                )
                tallies.setdefault((figure, n), CorpusTally()).add_sample(
                    values[figure], intervals[figure], difference
                )
        if (trial + 1) % max(seeds // 10, 1) == 0:
            log(f"  A/A corpus figures: {trial + 1}/{seeds} seeds")
    return tallies


def ab_trials(
    values: dict[str, np.ndarray],
    lower: np.ndarray,
    higher: np.ndarray,
    sizes: Sequence[int],
    seeds: int,
    resamples: int,
    seed: int,
) -> dict[tuple[str, int], Tally]:
    """A/B: per seed and n, n sets drawn with replacement from each band, higher minus lower."""
    tallies: dict[tuple[str, int], Tally] = {}
    for trial in range(seeds):
        rng = np.random.default_rng((seed, 2, trial))
        for n in sizes:
            low_draw = rng.choice(lower, size=n, replace=True)
            high_draw = rng.choice(higher, size=n, replace=True)
            for name, per_set in values.items():
                difference = resampling.unpaired_difference(
                    resampling.mean_statistic(per_set[high_draw].tolist()),
                    resampling.mean_statistic(per_set[low_draw].tolist()),
                    num_resamples=resamples,
                    seed=trial,
                )
                tallies.setdefault((name, n), Tally()).add(difference)
    return tallies


def effect_size(values: np.ndarray, lower: np.ndarray, higher: np.ndarray) -> float:
    """(mean of the higher band - mean of the lower) / pooled standard deviation (the bands as
    the populations the draws come from)."""
    low, high = values[lower], values[higher]
    low, high = low[~np.isnan(low)], high[~np.isnan(high)]
    pooled = math.sqrt((low.var() + high.var()) / 2)
    return float((high.mean() - low.mean()) / pooled) if pooled > 0 else math.nan


def normal_sets_needed(d: float) -> float:
    """Sets a system for 80% power of a two-sided 5% two-sample test at effect size ``d``."""
    z = stats.norm.ppf(1 - LEVEL / 2) + stats.norm.ppf(POWER_TARGET)
    return 2 * (z / d) ** 2 if d and not math.isnan(d) else math.inf


def measured_sets_needed(sizes: Sequence[int], powers: Sequence[float]) -> str:
    """Where the measured power curve crosses 80%: linear in log n between the sizes around it."""
    if powers[0] >= POWER_TARGET:
        return f"≤ {sizes[0]}"
    for (n0, p0), (n1, p1) in zip(zip(sizes, powers), zip(sizes[1:], powers[1:])):
        if p1 >= POWER_TARGET:
            share = (POWER_TARGET - p0) / (p1 - p0) if p1 > p0 else 1.0
            return f"{math.exp(math.log(n0) + share * (math.log(n1) - math.log(n0))):.0f}"
    return f"> {sizes[-1]}"


def binomial_band(seeds: int) -> tuple[float, float]:
    """The central 95% range of the rejection rate of an exact 5% test over ``seeds`` seeds."""
    return (
        float(stats.binom.ppf(0.025, seeds, LEVEL)) / seeds,
        float(stats.binom.ppf(0.975, seeds, LEVEL)) / seeds,
    )


# ---------------------------------------------------------------- the section


def _percent(rate: float) -> str:
    return f"{100 * rate:.1f}%"


def _outside(rate: float, band: tuple[float, float]) -> bool:
    return not band[0] <= rate <= band[1]


def _marked(rate: float, band: tuple[float, float]) -> str:
    return f"**{_percent(rate)}**" if _outside(rate, band) else _percent(rate)


def _aa_cell(tally: Tally, band: tuple[float, float]) -> str:
    text = (
        f"{_marked(tally.rate(tally.rejected), band)} "
        f"({_marked(tally.rate(tally.interval_excludes_zero), band)})"
    )
    return text + (f", {tally.undefined} undefined" if tally.undefined else "")


def render(run: dict, command: str) -> str:
    aa, band, seeds = run["aa"], run["band"], run["seeds"]
    sizes_aa, sizes_ab = run["aa_sizes"], run["ab_sizes"]
    names = run["measures"]
    lines = [
        f"## {SCRIPT}: is the comparison test calibrated, and how many sets does it need?",
        "",
        (
            "`dialeval.resampling`'s test of the difference between two systems' mean per-set "
            f"values, at {LEVEL:.0%}, {run['resamples']:,} resamples a test, {seeds} seeds per "
            "cell. Per-set values from `evaluate_response_sets` (sent-BERT and Vendi on the "
            f"embedded all-MiniLM-L6-v2; EAD with V counted from the responses scored together); "
            "homogeneity measures are marked †."
        ),
        "",
        "### 1. A/A: two disjoint random samples of the same human response sets",
        "",
        (
            f"DailyDialog++ {' + '.join(DAILYDIALOG_SPLITS)}: {run['aa_sets']:,} contexts with 5 "
            "human responses each. Per seed the sets are shuffled and the first n compared with "
            "the next n: unpaired (permutation test) and paired with a random pairing (sign-flip "
            "test). Cell: share of seeds rejecting at 5% (p-value), in brackets the share whose "
            f"95% interval of the difference leaves out 0. A 5% test over {seeds} seeds lands in "
            f"{_percent(band[0])}-{_percent(band[1])} 95% of the time; rates outside that band "
            f"are bold (of {4 * len(sizes_aa) * len(names)} rates, about "
            f"{0.05 * 4 * len(sizes_aa) * len(names):.0f} would fall outside by chance were they "
            "independent; they are not: the measures of a seed share its split)."
        ),
        "",
    ]
    header = ["measure"]
    for n in sizes_aa:
        header += [f"n = {n}, unpaired", f"n = {n}, paired"]
    rows = []
    for name in names:
        cells = [_label(name, run)]
        for n in sizes_aa:
            cells += [_aa_cell(aa[name, n, test], band) for test in ("unpaired", "paired")]
        rows.append(cells)
    lines += markdown_table(header, "l" + "r" * (len(header) - 1), rows)
    if run.get("corpus"):
        lines += ["", *render_corpus(run)]
    lines += [
        "",
        f"### 2. A/B power: decTest {run['task']}Gen, two temperature bands",
        "",
        (
            f"`{run['dectest_file']}`: {run['ab_sets']:,} sets of 10 responses, each at its own "
            "temperature and context. Per seed and n, n sets drawn with replacement from each "
            "band, compared unpaired (no context is at both temperatures), higher band minus "
            "lower. Cell: power, the share of seeds rejecting at 5% in the direction of more "
            "diversity. d: the bands' effect size in that direction. Sets for 80%: where the "
            "measured curve crosses 80% (linear in log n between sizes), and the normal "
            "approximation 2 (1.96 + 0.84)² / d²."
        ),
        "",
    ]
    for gap, result in run["ab"].items():
        (low, high), (num_low, num_high) = result["bands"], result["band_sets"]
        wrong = _wrong_direction(result, run)
        lines += [
            (
                f"**{gap} gap**: temperatures {low[0]:.2f}-{low[1]:.2f} ({num_low} sets) vs "
                f"{high[0]:.2f}-{high[1]:.2f} ({num_high} sets); rejections in the wrong "
                f"direction: {wrong} of {len(result['tallies']) * seeds} tests."
            ),
            "",
        ]
        header = ["measure", "d", *(f"n = {n}" for n in sizes_ab), "sets for 80%", "normal approx."]
        rows = []
        for name in names:
            tallies = [result["tallies"][name, n] for n in sizes_ab]
            powers = [_power(t, name, run) for t in tallies]
            d = result["effect"][name]
            rows.append(
                [
                    _label(name, run),
                    f"{d:.2f}",
                    *(_percent(p) for p in powers),
                    measured_sets_needed(sizes_ab, powers),
                    _sets(normal_sets_needed(d)),
                ]
            )
        lines += markdown_table(header, "l" + "r" * (len(header) - 1), rows)
        lines.append("")
    if len(run["ab"]) > 1:
        lines += [
            "### 3. Sets a system needs for 80% power",
            "",
            (
                "Per gap: where the measured power curve crosses 80% (sizes "
                f"{', '.join(str(n) for n in sizes_ab)}), in brackets the normal approximation "
                "from d. Fewer is better: the measure sees that temperature difference with fewer "
                "sets."
            ),
            "",
            *markdown_table(
                ["measure", *(f"{gap} gap" for gap in run["ab"])],
                "l" + "r" * len(run["ab"]),
                [
                    [
                        _label(name, run),
                        *(_needed(result, name, run) for result in run["ab"].values()),
                    ]
                    for name in names
                ],
            ),
            "",
        ]
    corpus_lines = corpus_reading(run) if run.get("corpus") else []
    lines += ["### Reading", "", *reading(run), *corpus_lines, ""]
    lines += details_head(command)
    corpus_seeds = (
        f"; corpus figures: trials 0-{run['corpus_seeds'] - 1}, the job's and the test's "
        "resampling seed = the trial"
        if run.get("corpus")
        else ""
    )
    corpus_time = (
        ", A/A on corpus figures (jobs and tests) {:.0f} s".format(run["time"]["corpus"])
        if run.get("corpus")
        else ""
    )
    lines += [
        f"- Versions: {package_versions(['numpy', 'scipy', 'torch', 'sentence-transformers'])}",
        (
            f"- Seeds: trials 0-{seeds - 1}; shuffles and draws from `numpy.random.default_rng(("
            f"{run['seed']}, part, trial))`, each test's resampling seed = the trial" + corpus_seeds
        ),
        (
            "- Time: per-set values {:.0f} s{}, A/A tests {:.0f} s, A/B tests {:.0f} s{}; other "
            "processes used {:.0%} of the CPU meanwhile".format(
                run["time"]["values"],
                " (read from `--cache`)" if run["values_from_cache"] else "",
                run["time"]["aa"],
                run["time"]["ab"],
                corpus_time,
                run["others"],
            )
        ),
    ]
    return section_text(SCRIPT, lines)


def render_corpus(run: dict) -> list[str]:
    """Part 1b: the A/A table of the corpus figures."""
    corpus, seeds, sizes = run["corpus"], run["corpus_seeds"], run["corpus_sizes"]
    band = binomial_band(seeds)
    lines = [
        "### 1b. A/A on the corpus figures (recomputed on subsamples)",
        "",
        (
            "The same splits as part 1 (the first n of a seed's shuffle against the next n), each "
            "sample run through `evaluate_response_sets` with `--ci` (steps "
            f"{', '.join(f'`{step}`' for step in CORPUS_FIGURES)}; {run['corpus_resamples']} "
            "resamples), the two samples' statistics compared with `unpaired_difference` (normal "
            "test of the difference over its subsampled sd). EAD has no corpus figure on response "
            "sets (its `distinct` is the mean of the per-set values, as in part 1). Cell: share "
            "of seeds rejecting at 5% (in brackets: interval of the difference leaving out 0; "
            "the test and the interval rest on the same sd), "
            f"bold outside {_percent(band[0])}-{_percent(band[1])}, the binomial band of a 5% "
            f"test over {seeds} seeds. sd ratio: the mean sd the first sample's interval reports "
            "(half-width / 1.96) over the sd of the figure across the seeds' first samples; "
            "diff. sd ratio: the same for the difference, over the sd of the differences across "
            "seeds (1 is right; over "
            f"{seeds} seeds the observed sd is itself uncertain by about "
            f"{100 / math.sqrt(2 * (seeds - 1)) if seeds > 1 else math.nan:.0f}%; the first "
            "samples are drawn without replacement from the "
            f"{run['aa_sets']:,} sets, which narrows their spread by up to "
            f"{100 * (1 - math.sqrt(1 - max(sizes) / run['aa_sets'])):.0f}%, not the "
            "differences')."
        ),
        "",
    ]
    header = ["figure"]
    for n in sizes:
        header += [f"n = {n}, rejects", f"n = {n}, sd ratio", f"n = {n}, diff. sd ratio"]
    rows = []
    for figure in corpus_figure_names():
        cells = [f"`{figure}`"]
        for n in sizes:
            tally = corpus[figure, n]
            cells += [
                _aa_cell(tally, band),
                _ratio_text(tally.sd_ratio()),
                _ratio_text(tally.difference_sd_ratio()),
            ]
        rows.append(cells)
    return lines + markdown_table(header, "l" + "r" * (len(header) - 1), rows)


def corpus_figure_names() -> list[str]:
    return [figure for figures in CORPUS_FIGURES.values() for figure in figures]


def _ratio_text(ratio: float) -> str:
    return "-" if math.isnan(ratio) else f"{ratio:.2f}"


def corpus_reading(run: dict) -> list[str]:
    """What the corpus table shows, in numbers."""
    corpus, band = run["corpus"], binomial_band(run["corpus_seeds"])
    out = []
    for what, count in (("p < 0.05", "rejected"), ("interval leaving out 0", "interval")):
        cells = {
            key: t.rate(t.rejected if count == "rejected" else t.interval_excludes_zero)
            for key, t in corpus.items()
        }
        rates = list(cells.values())
        out.append(
            f"- A/A, corpus figures, {what}: {_percent(min(rates))}-{_percent(max(rates))} "
            f"(mean {_percent(float(np.mean(rates)))}) over {len(rates)} cells; "
            f"{_outside_text(cells, band)}."
        )
    within = sorted(
        {
            figure
            for figure in corpus_figure_names()
            if all(
                not _outside(corpus[figure, n].rate(corpus[figure, n].rejected), band)
                for n in run["corpus_sizes"]
            )
        },
        key=corpus_figure_names().index,
    )
    out.append(
        "- Corpus figures whose p < 0.05 rate is within the band at every n: "
        + (", ".join(f"`{figure}`" for figure in within) if within else "none")
        + "."
    )
    for name, ratio in (("sd ratio", "sd_ratio"), ("diff. sd ratio", "difference_sd_ratio")):
        ratios = {key: getattr(t, ratio)() for key, t in corpus.items()}
        defined = {key: value for key, value in ratios.items() if not math.isnan(value)}
        if defined:
            low, high = min(defined, key=defined.get), max(defined, key=defined.get)
            out.append(
                f"- {name}: {defined[low]:.2f} (`{low[0]}` at n = {low[1]}) to "
                f"{defined[high]:.2f} (`{high[0]}` at n = {high[1]}), median "
                f"{float(np.median(list(defined.values()))):.2f}."
            )
    return out


def _up(name: str, run: dict) -> bool:
    return run["more_is_diverse"][name]


def _power(tally: Tally, name: str, run: dict) -> float:
    return tally.rate(tally.rejected_up if _up(name, run) else tally.rejected_down)


def _label(name: str, run: dict) -> str:
    return f"`{name}`" + ("" if _up(name, run) else " †")


def _needed(result: dict, name: str, run: dict) -> str:
    powers = [_power(result["tallies"][name, n], name, run) for n in run["ab_sizes"]]
    measured = measured_sets_needed(run["ab_sizes"], powers)
    return f"{measured} ({_sets(normal_sets_needed(result['effect'][name]))})"


def _sets(value: float) -> str:
    return "∞" if math.isinf(value) else f"{math.ceil(value)}"


def reading(run: dict) -> list[str]:
    """What the tables show, in numbers."""
    aa, band = run["aa"], run["band"]
    out = []
    for test in ("unpaired", "paired"):
        for what, count in (("p < 0.05", "rejected"), ("interval leaving out 0", "interval")):
            cells = {
                (name, n): t.rate(t.rejected if count == "rejected" else t.interval_excludes_zero)
                for (name, n, kind), t in aa.items()
                if kind == test
            }
            rates = list(cells.values())
            out.append(
                f"- A/A, {test}, {what}: {_percent(min(rates))}-{_percent(max(rates))} (mean "
                f"{_percent(float(np.mean(rates)))}) over {len(rates)} cells; "
                f"{_outside_text(cells, band)}."
            )
    for gap, result in run["ab"].items():
        needed = {
            name: measured_sets_needed(
                run["ab_sizes"],
                [_power(result["tallies"][name, n], name, run) for n in run["ab_sizes"]],
            )
            for name in run["measures"]
        }
        ranked = sorted(needed, key=lambda name: _reading_order(needed[name]))
        out.append(
            f"- A/B, {gap} gap: measured sets for 80% power, fewest first: "
            + ", ".join(f"`{name}` {needed[name]}" for name in ranked)
            + f"; {_wrong_direction(result, run)} rejection(s) in the wrong direction."
        )
    return out


def _outside_text(cells: dict[tuple[str, int], float], band: tuple[float, float]) -> str:
    above = {cell: rate for cell, rate in cells.items() if rate > band[1]}
    below = {cell: rate for cell, rate in cells.items() if rate < band[0]}
    if not above and not below:
        return "none outside the band"
    parts = []
    for side, outside, pick in (("above", above, max), ("below", below, min)):
        if outside:
            (name, n), rate = pick(outside.items(), key=lambda item: item[1])
            extreme = "highest" if side == "above" else "lowest"
            parts.append(
                f"{len(outside)} {side} the band ({extreme}: `{name}` at n = {n}, {_percent(rate)})"
            )
    return ", ".join(parts)


def _reading_order(reading: str) -> float:
    """``measured_sets_needed``'s text as a number to sort by: "≤ 5" before 6, "> 200" last."""
    if reading.startswith("≤"):
        return float(reading[1:]) - 0.5
    if reading.startswith(">"):
        return math.inf
    return float(reading)


def _wrong_direction(result: dict, run: dict) -> int:
    return sum(
        t.rejected_down if _up(name, run) else t.rejected_up
        for (name, _), t in result["tallies"].items()
    )


# ---------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--aa-sizes", type=int, nargs="+", default=[20, 50, 200])
    parser.add_argument("--ab-sizes", type=int, nargs="+", default=[5, 10, 25, 50, 100, 200])
    parser.add_argument(
        "--corpus-seeds",
        type=int,
        default=600,
        help="seeds of the A/A comparison of the corpus figures (0: leave that part out)",
    )
    parser.add_argument("--corpus-sizes", type=int, nargs="+", default=[50, 200])
    parser.add_argument(
        "--corpus-resamples",
        type=int,
        default=200,
        help="subsamples of each corpus-figure interval and test",
    )
    parser.add_argument("--gaps", nargs="+", default=list(GAPS), choices=list(GAPS))
    parser.add_argument("--task", default="resp", choices=("resp", "story", "prompt"))
    parser.add_argument("--resamples", type=int, default=resampling.DEFAULT_RESAMPLES)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--no-model", action="store_true", help="model-free measures only (no sent-BERT, Vendi)"
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="a JSON file keeping the per-set values between runs (reused when the data files, "
        "the measures and dialeval's version are the same)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="40 seeds, n = 50 (A/A) and 10, 50 (A/B), the small gap, model-free measures; "
        "corpus figures: 10 seeds, n = 40, 100 resamples",
    )
    parser.add_argument("--results", type=Path, default=RESULTS_PATH)
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.aa_sizes, args.ab_sizes = 40, [50], [10, 50]
        args.gaps, args.no_model = ["small"], True
        args.corpus_seeds, args.corpus_sizes, args.corpus_resamples = 10, [40], 100
    if args.corpus_seeds < 0:
        parser.error("--corpus-seeds: must be 0 or more")
    resampling.check_num_resamples(args.corpus_resamples, "--corpus-resamples")
    names = list(MODEL_FREE) + ([] if args.no_model else list(WITH_MODEL))
    chosen = measures(names)
    dectest_file = DECTEST / f"dec_test_1000_no_hds_{args.task}_gen.csv"
    for needed in (DAILYDIALOG, dectest_file):
        if not needed.exists():
            print(f"{SCRIPT}: {needed} is missing (the papers' data lives in ../shared/data)")
            return 1

    with Contention() as contention:
        started = time.perf_counter()
        human = dailydialog_sets(DAILYDIALOG)
        for flag, sizes in (("--aa-sizes", args.aa_sizes), ("--corpus-sizes", args.corpus_sizes)):
            if 2 * max(sizes) > len(human):
                parser.error(
                    f"{flag}: two samples of {max(sizes)} need more than {len(human)} sets"
                )
        generated, temperatures = dectest_sets(dectest_file)
        log(f"per-set values of {len(names)} measures on {len(human)} + {len(generated)} sets")
        (human_values, generated_values), from_cache = cached_values(
            args.cache,
            [human, generated],
            chosen,
            [*(DAILYDIALOG / name for name in DAILYDIALOG_SPLITS), dectest_file],
        )
        values_s = time.perf_counter() - started

        started = time.perf_counter()
        aa = aa_trials(human_values, args.aa_sizes, args.seeds, args.resamples, args.seed)
        aa_s = time.perf_counter() - started

        started = time.perf_counter()
        ab = {}
        for gap in args.gaps:
            lower, higher = (in_band(temperatures, band) for band in GAPS[gap])
            log(f"A/B {gap} gap: {len(lower)} vs {len(higher)} sets")
            ab[gap] = {
                "bands": GAPS[gap],
                "band_sets": (len(lower), len(higher)),
                "effect": {
                    m.name: (1 if m.more_is_diverse else -1)
                    * effect_size(generated_values[m.name], lower, higher)
                    for m in chosen
                },
                "tallies": ab_trials(
                    generated_values,
                    lower,
                    higher,
                    args.ab_sizes,
                    args.seeds,
                    args.resamples,
                    args.seed,
                ),
            }
        ab_s = time.perf_counter() - started

        started = time.perf_counter()
        corpus = {}
        if args.corpus_seeds:
            log(f"A/A on corpus figures: {args.corpus_seeds} seeds, n = {args.corpus_sizes}")
            corpus = corpus_aa_trials(
                human, args.corpus_sizes, args.corpus_seeds, args.corpus_resamples, args.seed
            )
        corpus_s = time.perf_counter() - started

    run = {
        "measures": names,
        "more_is_diverse": {m.name: m.more_is_diverse for m in chosen},
        "seeds": args.seeds,
        "seed": args.seed,
        "resamples": args.resamples,
        "band": binomial_band(args.seeds),
        "aa": aa,
        "aa_sizes": args.aa_sizes,
        "aa_sets": len(human),
        "ab": ab,
        "ab_sizes": args.ab_sizes,
        "ab_sets": len(generated),
        "task": args.task,
        "dectest_file": dectest_file.name,
        "corpus": corpus,
        "corpus_seeds": args.corpus_seeds,
        "corpus_sizes": args.corpus_sizes,
        "corpus_resamples": args.corpus_resamples,
        "time": {"values": values_s, "aa": aa_s, "ab": ab_s, "corpus": corpus_s},
        "values_from_cache": from_cache,
        "others": contention.share,
    }
    command = ".venv/bin/python benchmarks/bench_calibration.py " + shlex.join(
        argv if argv is not None else sys.argv[1:]
    )
    section = render(run, command.strip())
    write_section(args.results, SCRIPT, section)
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
