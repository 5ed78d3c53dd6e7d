"""benchmarks/_report.py: the one Markdown renderer every benchmark's RESULTS.md section goes through,
and the split bench_peers scripts, which together run every row once."""

from __future__ import annotations

import ast
import importlib
import sys

import pytest
from conftest import REPO_ROOT

BENCHMARKS = REPO_ROOT / "benchmarks"


@pytest.fixture(scope="module")
def report():
    sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module("_report")


def test_a_table_renders_as_the_results_page_writes_it(report):
    lines = report.markdown_table(
        ("implementation", "wall time", "speed-up vs naive"),
        "lrr",
        [("naive Sem-Ent port (1 process)", "41.2 s", "1.0x"), ("ours, `num_workers=1`", 3, "")],
    )
    assert "\n".join(lines) == (
        "| implementation | wall time | speed-up vs naive |\n"
        "|---|---:|---:|\n"
        "| naive Sem-Ent port (1 process) | 41.2 s | 1.0x |\n"
        "| ours, `num_workers=1` | 3 |  |"
    )


def test_a_section_sits_between_its_script_markers(report):
    text = report.section_text("bench_x", ["## bench_x: a title", "", "a line"])
    assert text == ("<!-- bench_x:start -->\n## bench_x: a title\n\na line\n<!-- bench_x:end -->\n")


@pytest.mark.parametrize(
    ("align", "rows"),
    [("l", [("a",)]), ("lx", [("a", "b")]), ("ll", [("a",)])],
)
def test_a_table_whose_shape_disagrees_with_its_header_is_refused(report, align, rows):
    with pytest.raises(ValueError):
        report.markdown_table(("first", "second"), align, rows)


def test_no_benchmark_writes_a_table_or_a_section_marker_of_its_own():
    for path in sorted(BENCHMARKS.glob("*.py")):
        if path.name == "_report.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
                assert not text.startswith("|---"), f"{path.name}: an alignment row of its own"
                assert not text.startswith("<!--"), f"{path.name}: a section marker of its own"


def test_the_peers_scripts_run_every_row_once_in_the_reported_order(report):
    peers = importlib.import_module("_peers")
    driver = importlib.import_module("bench_peers")
    families = sorted(BENCHMARKS.glob("bench_peers_*.py"))
    names = [name for path in families for name in importlib.import_module(path.stem).ROWS]
    assert sorted(names) == sorted(peers.ORDER) and len(names) == len(set(names))
    assert set(driver.ROWS) == set(peers.ORDER)


def test_the_peers_table_renders_each_row_as_before(report):
    peers = importlib.import_module("_peers")
    timing = report.Timing(wall=[0.5, 0.25, 0.75], cpu=[1.0, 0.5, 1.5])
    slow = report.Timing(wall=[2.0], cpu=[2.0])
    row = peers.Row(
        "k",
        "4. Self-BLEU-3",
        "500 responses",
        "`self_bleu`",
        "NLTK",
        timing,
        slow,
        True,
        "|diff| 0.0e+00",
    )
    text = peers.render([row], {"repeats": 3}, "cmd", {})
    assert text.startswith("<!-- bench_peers:start -->\n## bench_peers: dialeval vs peers\n")
    assert text.endswith('Settings: `{"repeats": 3}`.\n<!-- bench_peers:end -->\n')
    assert (
        "| path | data | ours | peer | ours: wall / CPU | peer: wall / CPU | ratio (wall) | equal outputs |\n"
        "|---|---|---|---|---:|---:|---:|---|\n"
        "| 4. Self-BLEU-3 | 500 responses | `self_bleu` | NLTK | 0.500 / 1.000 s | 2.000 / 2.000 s | "
        "**4.00x** | yes: |diff| 0.0e+00 |\n"
    ) in text


def test_the_peers_section_names_the_backend_our_side_ran_on(report):
    peers = importlib.import_module("_peers")
    timing = report.Timing(wall=[1.0], cpu=[1.0])
    row = peers.Row("k", "1. NLI", "pairs", "ours", "peer", timing, timing, True, "same")
    text = peers.render([row], {"repeats": 1}, "cmd", {}, backend="openvino")
    assert "Our side of the model-backed rows ran on the `openvino` backend in float32" in text
    assert "every peer ran on torch float32" in text


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ("fpu sse2 avx avx2 fma", "AVX2"),
        ("avx2 avx512f avx512bw avx512_bf16 avx512_vnni", "AVX512-BF16, AVX-512, AVX2"),
        ("sse2 sse4_2", "no AVX2"),
    ],
)
def test_the_machine_line_names_the_vector_extensions_that_set_float32_speed(
    report, flags, expected
):
    assert report.vector_extensions(flags) == expected
    assert f"({report.vector_extensions()})" in report.machine_line()
