"""Peak memory on 100k-character inputs stays under 1 GiB, under a memory cap.

``nli_diversity([["word " * 20000, "x" * 100000, "short"]])`` is the hard case: pair
truncation (``longest_first`` on two huge texts) grows quadratically, to 24 GB unbounded. Each
model-based path runs in a subprocess (memory_cap_worker.py) whose address space is capped at its
size after loading the model + 1 GiB; the peak RSS of the call is read from the kernel's reset
high-water mark. Without a bound on it the NLI run aborts in the Rust tokenizer under this cap
("memory allocation of 512 bytes failed", SIGABRT); the harness tests below check that growth
past the cap, and growth without it, are caught.
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    sys.platform != "linux",
    reason="RLIMIT_AS and /proc/self/clear_refs (peak-RSS reset) are Linux-only",
)

WORKER = Path(__file__).with_name("memory_cap_worker.py")
GIB = 1 << 30
METRICS = ("nli", "cross_encoder", "bertscore", "sent_bert", "mean_pooling", "last_token")


def _run_worker(specs, **env):
    return subprocess.run(
        [sys.executable, str(WORKER), *specs],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TOKENIZERS_PARALLELISM": "false", **env},
    )


def _measurements(process):
    return {row["metric"]: row for row in map(json.loads, process.stdout.splitlines()) if row}


@pytest.fixture(scope="module")
def capped_run(tiny_roberta_nli_path, tiny_cross_encoder_path, tiny_gpt2_path):
    """Every metric in one worker (torch is imported once), each under its own cap.

    The tiny models are saved to temporary directories by the session fixtures and loaded from
    there by the worker.
    """
    models = {
        "nli": tiny_roberta_nli_path,
        "cross_encoder": tiny_cross_encoder_path,
        "bertscore": tiny_roberta_nli_path,
        "sent_bert": tiny_roberta_nli_path,  # a plain encoder: sentence-transformers mean-pools it
        "mean_pooling": tiny_roberta_nli_path,
        "last_token": tiny_gpt2_path,
    }
    process = _run_worker([f"{name}={models[name]}" for name in METRICS])
    return process, _measurements(process)


@pytest.mark.parametrize("metric", METRICS)
def test_100k_character_inputs_stay_under_one_gib(capped_run, metric):
    process, measured = capped_run
    assert metric in measured, (
        f"the worker died before finishing {metric!r} (exit {process.returncode}; -6/134 is an abort "
        f"under the memory cap):\n{process.stderr[-3000:]}"
    )
    row = measured[metric]
    assert row["peak_rss"] - row["rss_before"] < GIB, row
    result = row["result"]
    if metric == "nli":
        assert result["num_truncated"] == 6  # every ordered pair holds a huge text
        assert all(math.isfinite(value) for value in result["nli_diversity"].values())
    elif metric in ("mean_pooling", "last_token"):
        assert result == {"shape": [3, 32], "finite": True}
    else:
        assert math.isfinite(result["similarity_diversity"])


def test_harness_growth_past_the_cap_fails():
    # 2 GiB planted inside the measured call: refused by the cap (the worker exits non-zero).
    process = _run_worker([f"planted={2 * GIB}"])
    assert process.returncode != 0
    assert "MemoryError" in process.stderr
    assert "planted" not in _measurements(process)


def test_harness_measures_growth_without_the_cap():
    # Without the cap the peak-RSS reading must see what the call touched (64 MiB here).
    process = _run_worker([f"planted={64 << 20}"], MEMORY_CAP_OFF="1")
    assert process.returncode == 0, process.stderr[-3000:]
    row = _measurements(process)["planted"]
    # a few pages may have been resident before
    assert row["peak_rss"] - row["rss_before"] >= 60 << 20
