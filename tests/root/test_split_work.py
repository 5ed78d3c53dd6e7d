"""dialeval.distributed.split_work: two real processes share the engines' work and get one process's results."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from dialeval.distributed import computed_on_main, gather_shares, split_work, work_share

WORKER = Path(__file__).resolve().parent / "split_work_worker.py"


def test_one_process_keeps_everything():
    with split_work():
        assert work_share([3, 1, 2]) == [3, 1, 2]
        assert gather_shares([3, 1], np.ones((2, 2)))[0] == [3, 1]
        assert computed_on_main(lambda: {"centroids": [1.0]}) == {"centroids": [1.0]}


def test_two_processes_equal_one(tmp_path, tiny_roberta_nli_path, tiny_gpt2_path, free_port):
    sys.path.insert(0, str(WORKER.parent))
    from split_work_worker import compute

    out = tmp_path / "result.json"
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
            tiny_roberta_nli_path,
            tiny_roberta_nli_path,
            tiny_gpt2_path,
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    shared = json.loads(out.read_text(encoding="utf-8"))
    single = compute(tiny_roberta_nli_path, tiny_roberta_nli_path, tiny_gpt2_path)
    assert shared.pop("processes") == 2 and single.pop("processes") == 1
    assert shared.pop("broadcast") == [7, 7] and single.pop("broadcast") == [7]
    # Each process ran about half of the distinct pairs through the model, not all of them.
    rows = shared.pop("nli_rows_per_process")
    assert len(rows) == 2 and min(rows) > 0 and sum(rows) == shared.pop("distinct_pairs")
    assert single.pop("nli_rows_per_process") == [single.pop("distinct_pairs")]
    for key, value in single.items():
        np.testing.assert_allclose(
            np.asarray(shared[key]), np.asarray(value), rtol=1e-5, atol=1e-6, err_msg=key
        )
