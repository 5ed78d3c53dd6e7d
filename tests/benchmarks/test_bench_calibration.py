"""benchmarks/bench_calibration.py: the measures it takes from the registry, the A/A samples, the
sets-for-80% readings, and a tiny run through dialeval.resampling into its section."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest
from conftest import REPO_ROOT

from dialeval.io import ResponseSet


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
    return importlib.import_module("bench_calibration")


def test_each_measure_is_the_figure_meta_eval_scores(bench):
    chosen = {m.name: m for m in bench.measures(bench.MODEL_FREE + bench.WITH_MODEL)}
    assert ("ead_vocab_from_responses", True) in chosen["ead"].settings
    homogeneity = {name for name, m in chosen.items() if not m.more_is_diverse}
    assert homogeneity == {"self_repetition", "compression_ratio", "homogenization_rougel"}
    assert {name for name, m in chosen.items() if m.needs_model} == set(bench.WITH_MODEL)


def test_per_set_values_come_from_one_run_of_the_job(bench):
    sets = [
        ResponseSet(None, ["the cat sat on the mat"] * 2 + ["the cat sat on a mat"]),
        ResponseSet(None, ["one two three four five", "six seven eight nine ten", "a b c d e"]),
    ]
    values = bench.per_set_values(sets, bench.measures(bench.MODEL_FREE))
    assert set(values) == set(bench.MODEL_FREE)
    assert all(len(column) == 2 for column in values.values())
    # the repeated responses make the first set the less diverse one
    assert values["averaged_distinct_n"][0] < values["averaged_distinct_n"][1]
    assert values["compression_ratio"][0] > values["compression_ratio"][1]


def test_the_two_a_a_samples_are_disjoint_and_seeded(bench):
    first, second = bench.aa_samples(100, 40, seed=0, trial=3)
    assert len(first) == len(second) == 40 and not set(first) & set(second)
    again = bench.aa_samples(100, 40, seed=0, trial=3)
    assert (again[0] == first).all() and (again[1] == second).all()
    assert not (bench.aa_samples(100, 40, seed=0, trial=4)[0] == first).all()


@pytest.mark.parametrize(
    ("powers", "reading"),
    # 0.6 at 25 and 1.0 at 50: 80% is halfway, in log n: sqrt(25 * 50) = 35.4
    [((0.85, 0.9, 1.0), "≤ 10"), ((0.2, 0.5, 0.7), "> 50"), ((0.2, 0.6, 1.0), "35")],
)
def test_sets_for_80_percent_are_read_off_the_curve(bench, powers, reading):
    assert bench.measured_sets_needed((10, 25, 50), powers) == reading


def test_the_normal_approximation_and_the_binomial_band(bench):
    assert bench.normal_sets_needed(0.5) == pytest.approx(62.8, abs=0.1)
    assert bench.normal_sets_needed(0.0) == float("inf")
    assert bench.binomial_band(200) == (0.02, 0.08)


def test_a_tiny_run_goes_through_the_test_into_the_section(bench):
    rng = np.random.default_rng(0)
    human = {"averaged_distinct_n": rng.normal(size=40), "compression_ratio": rng.normal(size=40)}
    aa = bench.aa_trials(human, [10], seeds=3, resamples=100, seed=0)
    assert {key: tally.seeds for key, tally in aa.items()} == {
        (name, 10, test): 3 for name in human for test in ("unpaired", "paired")
    }
    # a shift of 3 standard deviations in the diversity direction of each measure
    generated = {
        "averaged_distinct_n": np.r_[rng.normal(size=30), rng.normal(3, size=30)],
        "compression_ratio": np.r_[rng.normal(size=30), rng.normal(-3, size=30)],
    }
    lower, higher = np.arange(30), np.arange(30, 60)
    tallies = bench.ab_trials(generated, lower, higher, [10], seeds=3, resamples=100, seed=0)
    assert tallies["averaged_distinct_n", 10].rejected_up == 3
    assert tallies["compression_ratio", 10].rejected_down == 3
    run = {
        "measures": list(human),
        "more_is_diverse": {"averaged_distinct_n": True, "compression_ratio": False},
        "seeds": 3,
        "seed": 0,
        "resamples": 100,
        "band": bench.binomial_band(3),
        "aa": aa,
        "aa_sizes": [10],
        "aa_sets": 40,
        "ab": {
            gap: {
                "bands": bench.GAPS[gap],
                "band_sets": (30, 30),
                "effect": {
                    name: (1 if name == "averaged_distinct_n" else -1)
                    * bench.effect_size(generated[name], lower, higher)
                    for name in generated
                },
                "tallies": tallies,
            }
            for gap in ("small", "large")
        },
        "ab_sizes": [10],
        "ab_sets": 60,
        "task": "resp",
        "dectest_file": "x.csv",
        "time": {"values": 1.0, "aa": 1.0, "ab": 1.0},
        "values_from_cache": False,
        "others": 0.0,
    }
    section = bench.render(run, "cmd")
    assert section.startswith("<!-- bench_calibration:start -->\n## bench_calibration: ")
    assert 2 < run["ab"]["small"]["effect"]["compression_ratio"] < 4  # in the diversity direction
    assert "| `averaged_distinct_n` | " in section
    assert "| `compression_ratio` † | " in section
    assert "### 3. Sets a system needs for 80% power" in section
    assert "rejections in the wrong direction: 0 of 6 tests" in section


def _word_sets(count: int, seed: int) -> list[ResponseSet]:
    """``count`` sets of 5 responses of 4-8 words from 60: the same population for every set."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(60)]
    return [
        ResponseSet(
            None,
            [" ".join(rng.choice(words, size=rng.integers(4, 9))) for _ in range(5)],
        )
        for _ in range(count)
    ]


def test_ead_has_no_corpus_figure_on_response_sets(bench):
    from dialeval.cli.evaluate_job import evaluate_response_sets
    from dialeval.cli.evaluate_options import EvaluationOptions

    kept: dict = {}
    options = EvaluationOptions(
        metrics=["ead"], ead_vocab_from_responses=True, progress=False, ci=True, num_resamples=100
    )
    evaluate_response_sets(_word_sets(10, 1), options, statistics=kept)
    assert all(statistic.per_unit is not None for statistic in kept["ead"].values())
    assert "ead" not in bench.CORPUS_FIGURES


def test_a_tiny_corpus_run_goes_through_the_job_and_the_test_into_the_section(bench):
    sets = _word_sets(64, 0)
    values, intervals, statistics = bench.corpus_sample(sets[:32], resamples=100, seed=0)
    assert set(values) == set(statistics) == set(bench.corpus_figure_names())
    assert all(statistic.per_unit is None for statistic in statistics.values())
    assert all(intervals[f]["low"] <= values[f] <= intervals[f]["high"] for f in values)

    corpus = bench.corpus_aa_trials(sets, [32], seeds=3, resamples=100, seed=0)
    assert {key: tally.seeds for key, tally in corpus.items()} == {
        (figure, 32): 3 for figure in bench.corpus_figure_names()
    }
    distinct = corpus["distinct_1", 32]
    assert distinct.undefined == 0 and len(distinct.first_sds) == len(distinct.differences) == 3
    assert 0 < distinct.sd_ratio() < 100 and 0 < distinct.difference_sd_ratio() < 100

    human = {"averaged_distinct_n": np.random.default_rng(0).normal(size=64)}
    run = {
        "measures": list(human),
        "more_is_diverse": {"averaged_distinct_n": True},
        "seeds": 3,
        "seed": 0,
        "resamples": 100,
        "band": bench.binomial_band(3),
        "aa": bench.aa_trials(human, [32], seeds=3, resamples=100, seed=0),
        "aa_sizes": [32],
        "aa_sets": 64,
        "corpus": corpus,
        "corpus_seeds": 3,
        "corpus_sizes": [32],
        "corpus_resamples": 100,
        "ab": {},
        "ab_sizes": [10],
        "ab_sets": 0,
        "task": "resp",
        "dectest_file": "x.csv",
        "time": {"values": 1.0, "aa": 1.0, "ab": 1.0, "corpus": 1.0},
        "values_from_cache": False,
        "others": 0.0,
    }
    section = bench.render(run, "cmd")
    assert "### 1b. A/A on the corpus figures" in section
    assert "| figure | n = 32, rejects | n = 32, sd ratio | n = 32, diff. sd ratio |" in section
    assert all(f"| `{figure}` | " in section for figure in bench.corpus_figure_names())
    assert "- A/A, corpus figures, p < 0.05: " in section
    assert "A/A on corpus figures (jobs and tests) 1 s" in section
