"""Response selection and Sem-Ent inside split_work: two real processes (gloo on CPU) share the
work and get one process's results.

One torchrun launch serves both tests (a module fixture): each launch costs two interpreters
importing torch and transformers.
"""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

WORKER = Path(__file__).resolve().parent / "selection_sem_ent_worker.py"
#: The processes run the same batches as one process (work_share hands out whole batches), so
#: the NLLs differ at most by float32 rounding of a different thread count (torchrun's
#: OMP_NUM_THREADS=1): well inside the selection's own tie tolerance (TIE_RTOL = 1e-6).
NLL_RTOL = 1e-6


@pytest.fixture(scope="module")
def single_and_shared(tmp_path_factory, tiny_gpt2_path, tiny_bart_path):
    sys.path.insert(0, str(WORKER.parent))
    from selection_sem_ent_worker import compute

    out = tmp_path_factory.mktemp("processes") / "result.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    # a free port for the rendezvous (the free_port fixture is per test)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc_per_node",
            "2",
            "--master_port",
            port,
            str(WORKER),
            tiny_gpt2_path,
            tiny_bart_path,
            str(out),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    shared = json.loads(out.read_text(encoding="utf-8"))
    single = compute(tiny_gpt2_path, tiny_bart_path)
    assert single["processes"] == 1 and shared["processes"] == 2
    return single, shared


@pytest.mark.parametrize("run", ["gpt2_packed", "gpt2_padded", "bart"])
def test_two_processes_select_as_one(single_and_shared, run):
    from selection_sem_ent_worker import CONTEXTS

    single, shared = (outcome[run] for outcome in single_and_shared)
    # Each process scored some of the 7 questions (batches of 2: 4 batches, 2 each), not all.
    assert single.pop("questions_per_process") == [len(CONTEXTS)]
    assert shared.pop("questions_per_process") == [4, 3]
    one, two = single.pop("per_question"), shared.pop("per_question")
    assert shared == single  # accuracy, num_correct, num_ties, num_truncated_contexts
    assert len(one) == len(two) == len(CONTEXTS)
    for i, (a, b) in enumerate(zip(one, two)):
        assert (b["selected"], b["label"], b["correct"], b["tie"]) == (
            a["selected"],
            a["label"],
            a["correct"],
            a["tie"],
        ), i
        assert b["num_tokens"] == a["num_tokens"], i
        np.testing.assert_allclose(
            b["nll_sums"], a["nll_sums"], rtol=NLL_RTOL, atol=0, err_msg=f"question {i}"
        )
        np.testing.assert_allclose(
            b["losses"], a["losses"], rtol=NLL_RTOL, atol=0, err_msg=f"question {i}"
        )


def test_two_processes_fit_and_score_sem_ent_as_one(single_and_shared):
    single, shared = (outcome["sem_ent"] for outcome in single_and_shared)
    distinct = shared.pop("distinct_reference_texts")
    assert single.pop("distinct_reference_texts") == distinct
    # The embedding is shared (every distinct reference text embedded on one process only) ...
    per_process = shared.pop("fit_texts_per_process")
    assert len(per_process) == 2 and min(per_process) > 0 and sum(per_process) == distinct
    assert single.pop("fit_texts_per_process") == [distinct]
    # ... k-means runs on the main process alone, and every process holds the same clusters.
    assert shared.pop("kmeans_fits_per_process") == [1, 0]
    assert single.pop("kmeans_fits_per_process") == [1]
    for key in ("centroids_per_process", "components_per_process"):
        on_main, on_other = shared.pop(key)
        assert on_main == on_other, key
        (alone,) = single.pop(key)
        np.testing.assert_allclose(on_main, alone, rtol=1e-5, atol=1e-6, err_msg=key)
    assert shared.pop("labels") == single.pop("labels")
    assert shared.pop("cluster_distribution") == single.pop("cluster_distribution")
    assert shared.pop("reference_distribution") == single.pop("reference_distribution")
    settings_one, settings_two = single.pop("settings"), shared.pop("settings")
    assert settings_two.pop("inertia") == pytest.approx(settings_one.pop("inertia"), rel=1e-5)
    assert settings_two.pop("explained_variance") == pytest.approx(
        settings_one.pop("explained_variance"), rel=1e-6
    )
    assert settings_two == settings_one
    assert shared == single  # sem_ent, max_sem_ent, num_texts


def test_a_failure_on_the_main_process_reaches_every_process(single_and_shared):
    single, shared = (outcome["failure_per_process"] for outcome in single_and_shared)
    assert single == ["ValueError: no clusters"]
    # the main process raises its own error; the other one is told, instead of waiting forever
    assert shared == [
        "ValueError: no clusters",
        "RuntimeError: the main process failed in a step it computes for every process: ValueError: no clusters",
    ]
