"""Two CPU processes (torchrun, gloo) x batch 2 take the same step as one process x batch 4.

Checks the multi-process half of the trainers' normalization: token counts gathered over
processes (``average_tokens_across_devices``), the loss scaled by the process count, and DRESS's
negative-training cycle sharing its generations across processes (``gather_object``); and that
DRESS's clusters are fitted (and every text embedded) on the main process only, the other
process holding the same clusters and weights.
Part of the default suite (about 20 s: it starts two Python processes that import torch and transformers).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from test_dress_trainer import _one_step
from test_unlikelihood_trainer import _one_step as _one_unlikelihood_step
from transformers import AutoTokenizer

WORKER = Path(__file__).resolve().parent / "dress_ddp_worker.py"


@pytest.mark.parametrize(
    "trainer_kind",
    # both trainers share ResponseLossTrainer's distributed path; a launch is 17 s
    ["dress", pytest.param("unlikelihood", marks=pytest.mark.slow)],
)
def test_two_processes_match_one(tmp_path, tiny_gpt2_path, trainer_kind, free_port):
    out = tmp_path / "updates.safetensors"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    completed = subprocess.run(  # noqa: PLW1510 - the test reads returncode itself
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc_per_node",
            "2",
            "--master_port",
            free_port,
            str(WORKER),
            tiny_gpt2_path,
            str(out),
            trainer_kind,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    distributed = load_file(str(out))
    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_path)
    if trainer_kind == "dress":
        alone, single = _one_step(
            tiny_gpt2_path,
            tmp_path / "single",
            4,
            1,
            True,
            tokenizer=tokenizer,
            logging_strategy="steps",
            logging_steps=1,
        )
        main, other = (
            json.loads((tmp_path / f"updates.safetensors.rank{rank}.json").read_text())
            for rank in (0, 1)
        )
        assert main["fitted_on"] == other["fitted_on"] == 4
        # the main process embedded the 4 responses to fit, again to assign, and the cycle's 4 generations
        assert main["embedded"] == 12 and other["embedded"] == 0
        assert other["centroids"] == main["centroids"] and other["weights"] == main["weights"]
        assert main["negatives"] == other["negatives"] == 4
        # the logged loss components are summed over the processes: the 1-process values
        logged = next(entry for entry in alone.state.log_history if "loss" in entry)
        for name in ("loss", "gold_nll", "weighted_nll", "negative_loss"):
            assert main["log"][name] == pytest.approx(logged[name], rel=1e-4), name
    else:
        _, single = _one_unlikelihood_step(tiny_gpt2_path, tmp_path / "single", tokenizer, 4, 1)
    assert max(update.abs().max().item() for update in single) > 1e-4
    for index, update in enumerate(single):
        torch.testing.assert_close(distributed[str(index)], update, rtol=1e-4, atol=1e-6)
