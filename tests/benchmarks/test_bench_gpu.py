"""benchmarks/bench_gpu.py's BERTScore section, run at the smoke shapes on the CPU as it runs on a
lent GPU: ours against bert_score on the same pairs, equal figures, rendered into its section."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys

import pytest
from conftest import REPO_ROOT

BENCHMARKS = REPO_ROOT / "benchmarks"


@pytest.fixture(scope="module")
def bench_gpu():
    """The script as a module; what it sets for its own process (transformers' progress bars off,
    environment defaults, bert_score's patched ``sent_encode``) is put back afterwards, for the
    tests that follow."""
    bert_score_utils = pytest.importorskip(
        "bert_score.utils", reason="bert-score (a benchmark peer) is not installed"
    )
    from transformers.utils import logging as transformers_logging

    sent_encode = bert_score_utils.sent_encode
    bars = transformers_logging.is_progress_bar_enabled()
    environment = dict(os.environ)
    sys.path.insert(0, str(BENCHMARKS))
    yield importlib.import_module("bench_gpu")
    os.environ.clear()
    os.environ.update(environment)
    bert_score_utils.sent_encode = sent_encode
    if bars:
        transformers_logging.enable_progress_bar()


def test_the_bertscore_section_compares_equal_figures_and_renders(bench_gpu, tmp_path, capsys):
    output = tmp_path / "gpu.json"
    arguments = ["--smoke", "--no-write", "--sections", "bertscore", "--device", "cpu"]
    assert bench_gpu.main([*arguments, "--json", str(output)]) == 0
    data = json.loads(output.read_text(encoding="utf-8"))
    section = data["bertscore"]
    assert section["equal"] is True
    assert section["pairs"] == 4 * 10  # 4 sets of 5 responses, every unordered pair
    assert len(section["ours_s"]) == len(section["peer_s"]) == 1
    rendered = capsys.readouterr().out
    assert "### 3b. BERTScore diversity" in rendered
    assert "bert_score: wall" in rendered and "yes: max abs F1 diff" in rendered


def test_plotting_is_stood_in_only_where_matplotlib_is_missing(bench_gpu, monkeypatch):
    if importlib.util.find_spec("matplotlib") is not None:
        assert bench_gpu._stand_in_plotting() == []
    names = ["matplotlib", "matplotlib.pyplot", "mpl_toolkits", "mpl_toolkits.axes_grid1"]
    for name in names:
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None)
    stood_in = bench_gpu._stand_in_plotting()
    try:
        assert stood_in == names
        from mpl_toolkits.axes_grid1 import make_axes_locatable  # bert_score's import

        assert make_axes_locatable is None
    finally:
        for name in names:
            sys.modules.pop(name, None)
