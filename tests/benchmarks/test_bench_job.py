"""benchmarks/bench_job.py's corpus job against a reference backend: which figures count as equal,
and what the section says about the same-machine ratio."""

from __future__ import annotations

import importlib

import pytest
from conftest import REPO_ROOT

BENCHMARKS = REPO_ROOT / "benchmarks"

FIGURES = {
    "corpus_lexical_diversity": {"distinct_1": 0.25, "num_tokens": 1000},
    "vendi_score[m]": {"vendi_score": 70.0},
}


@pytest.fixture()
def bench_job(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("bench_job")


def _run(bench_job, backend, wall, figures=FIGURES):
    return {
        "backend": backend,
        "command": "evaluate corpus.txt -o OUT.json",
        "wall": wall,
        "cpu": 2 * wall,
        "peak_rss": 2**30,
        "tree_rss": 2**30,
        "max_rss": 2**30,
        "others": 0.01,
        "returncode": 0,
        "num_responses": 1000,
        "figures": figures,
        "skipped": [],
        "provenance": {"m": (backend or "onnx", "float32")},
    }


def _with_vendi(value, **lexical):
    return {
        "corpus_lexical_diversity": {**FIGURES["corpus_lexical_diversity"], **lexical},
        "vendi_score[m]": {"vendi_score": value},
    }


def test_vendi_may_move_by_float32_noise_and_every_lexical_figure_must_be_exact(bench_job):
    close = bench_job.corpus_figure_differences(_with_vendi(70.0 * (1 + 5e-6)), FIGURES)
    assert all(row["equal"] for row in close)
    far = bench_job.corpus_figure_differences(_with_vendi(70.0 * (1 + 5e-5)), FIGURES)
    assert [row["figure"] for row in far if not row["equal"]] == ["vendi_score[m].vendi_score"]
    lexical = bench_job.corpus_figure_differences(_with_vendi(70.0, distinct_1=0.2500001), FIGURES)
    assert [row["figure"] for row in lexical if not row["equal"]] == [
        "corpus_lexical_diversity.distinct_1"
    ]


def test_a_figure_one_side_lacks_is_a_difference(bench_job):
    ours = {"corpus_lexical_diversity": {"distinct_1": 0.25}}
    rows = bench_job.corpus_figure_differences(ours, FIGURES)
    missing = {row["figure"] for row in rows if not row["equal"]}
    assert missing == {"corpus_lexical_diversity.num_tokens", "vendi_score[m].vendi_score"}
    assert not all(row["equal"] for row in bench_job.corpus_figure_differences(FIGURES, ours))


@pytest.mark.parametrize(
    ("ours", "reference", "verdict"), [(600.0, 1300.0, "met"), (700.0, 1300.0, "not met")]
)
def test_the_section_reports_the_same_machine_ratio_and_its_verdict(
    bench_job, ours, reference, verdict
):
    result = {
        "corpus": {"responses": 1000, "dailydialog": 1000, "synthetic": 0, "distinct": 900},
        "threads": None,
        **_run(bench_job, None, ours),
        "reference": _run(bench_job, "torch", reference),
        "comparison": bench_job.corpus_figure_differences(FIGURES, FIGURES),
    }
    text = bench_job.render_corpus(result, "bench_job.py --corpus-1m")
    assert f"| `torch` (torch float32) | {reference:.1f} s |" in text
    assert f"| `default` (onnx float32) | {ours:.1f} s |" in text
    ratio = ours / reference
    assert (
        f"= {ratio:.2f} (**{1 / ratio:.2f}x**); half of the reference's time: **{verdict}**" in text
    )
    assert "3 compared, all equal" in text


def test_a_failed_reference_run_is_reported_not_compared(bench_job):
    failed = {**_run(bench_job, "torch", 5.0), "returncode": 2, "error": "no torch here"}
    result = {
        "corpus": {"responses": 1000, "dailydialog": 1000, "synthetic": 0, "distinct": 900},
        "threads": None,
        **_run(bench_job, None, 600.0),
        "reference": failed,
    }
    text = bench_job.render_corpus(result, "bench_job.py --corpus-1m")
    assert "**Not measured** (`--backend torch`): the job exited with 2" in text
    assert "no torch here" in text
    assert "Same machine" not in text
