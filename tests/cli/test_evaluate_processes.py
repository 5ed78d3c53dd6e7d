"""`accelerate launch -n 2 dialeval evaluate` shares the model-backed work and writes the one-process report.

The run covers every model-backed metric of the command that a tiny model can stand in for:
NLI and BERTScore diversity, Sem-Ent (its default embedder, the embedded MiniLM) and
response selection (a tiny GPT-2 and a tiny BART), with ``--ci``'s intervals. The report is the same bits because every
batch is the batch one process runs, and because the command line turns on oneMKL's
reproducible mode (dialeval.cli.reproducibility), so that a batch gives the same bits wherever
its buffers lie; the thread count must match (docs/cli.md, "Several processes, one report").
"""

import json
import os
import subprocess
import sys

import pytest

from dialeval.cli import main

SETS = [
    {
        "context": "How was your weekend?",
        "responses": ["I went hiking.", "I fixed the sink.", "Nothing much.", "I went hiking."],
    },
    {
        "context": "Any plans?",
        "responses": ["Not much.", "Not much, you?", "We ate seafood on the coast."],
    },
    {"context": "Coffee?", "responses": ["Sure!", "Maybe tomorrow?", "I don't know."]},
]


REFERENCE = [
    "I love pizza.",
    "Sushi for dinner!",
    "Pasta tonight?",
    "It is raining.",
    "So sunny today.",
    "A storm is coming.",
    "We won the final.",
    "I run every morning.",
    "My boss is angry.",
]
QUESTIONS = [
    {
        "context": ["How was your weekend?", "Great, and yours?"],
        "candidates": ["I went hiking.", "Blue.", "No idea."],
        "label": 0,
    },
    {
        "context": "Any plans?",
        "candidates": ["Not much, you?", "Seven o'clock.", "Not much, you?"],
        "label": 0,
    },
    {
        "context": "Coffee?",
        "candidates": ["Sure!", "The printer is broken again today.", "Maybe."],
        "label": 0,
    },
]


def _arguments(data, out, nli_path, gpt2_path, bart_path, inputs):
    return [
        "evaluate",
        str(data),
        "-o",
        str(out),
        "--no-progress",
        "--no-sentence-model",
        "--nli-model",
        nli_path,
        "--bertscore-model",
        nli_path,
        "--bertscore-rescale",
        "off",
        "--cross-encoder-model",
        "none",
        "--homogenization-model",
        "none",
        "--reference-corpus",
        str(inputs / "reference.txt"),
        "--ead-vocab-size",
        "50",
        "--sem-ent-k",
        "3",
        "--save-sem-ent-clusters",
        str(inputs / "clusters"),
        "--batch-size",
        "2",
        "--selection-model",
        gpt2_path,
        "--selection-model",
        bart_path,
        "--selection-questions",
        str(inputs / "questions.jsonl"),
        "--selection-batch-size",
        "1",
        # the same seed gives the same intervals on one process or several
        "--ci",
        "--num-resamples",
        "200",
        "--seed",
        "7",
    ]


def test_two_accelerate_processes_write_the_one_process_report(
    tmp_path, tiny_roberta_nli_path, tiny_gpt2_path, tiny_bart_path, free_port
):
    data = tmp_path / "sets.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in SETS), encoding="utf-8")
    (tmp_path / "reference.txt").write_text("\n".join(REFERENCE) + "\n", encoding="utf-8")
    (tmp_path / "questions.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in QUESTIONS), encoding="utf-8"
    )
    models = (tiny_roberta_nli_path, tiny_gpt2_path, tiny_bart_path, tmp_path)
    # Both runs in a fresh interpreter with the environment `accelerate launch` gives its processes
    # (one thread each): a float32 product can round by the thread count, and this pytest
    # process uses every core and started oneMKL long before the command line could set its mode.
    environment = {**os.environ, "OMP_NUM_THREADS": "1"}
    single = tmp_path / "single.json"
    alone = subprocess.run(
        [sys.executable, "-m", "dialeval.cli", *_arguments(data, single, *models)],
        check=False,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert alone.returncode == 0, alone.stderr[-3000:]
    double = tmp_path / "double.json"
    # `--cpu` would start one process; the torchrun path with no GPU gives a gloo CPU group.
    launched = subprocess.run(  # noqa: PLW1510 - the test reads returncode itself
        [
            sys.executable,
            "-m",
            "accelerate.commands.launch",
            "--multi_gpu",
            "--num_processes",
            "2",
            "--num_machines",
            "1",
            "--mixed_precision",
            "no",
            "--dynamo_backend",
            "no",
            "--main_process_port",
            free_port,
            "-m",
            "dialeval.cli",
            *_arguments(data, double, *models),
        ],
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert launched.returncode == 0, launched.stderr[-3000:]
    assert launched.stdout.count("report:") == 1 and "(2 processes)" in launched.stdout
    one, two = (
        json.loads(single.read_text(encoding="utf-8")),
        json.loads(double.read_text(encoding="utf-8")),
    )
    assert set(one["metrics"]) >= {
        f"nli_diversity[{tiny_roberta_nli_path}]",
        f"bertscore_diversity[{tiny_roberta_nli_path}]",
        "sem_ent",
        f"response_selection[{tiny_gpt2_path}]",
        f"response_selection[{tiny_bart_path}]",
    }
    assert one["uncertainty"]["seed"] == 7
    assert all("intervals" in summary for summary in one["metrics"].values())
    # every model given is here; a part-of-speech tagger is not part of the install
    assert [entry for entry in one["skipped"] if entry["metric"] != "pos_templates"] == []
    # the one option the two runs differ in
    assert two["provenance"]["options"].pop("--output") == str(double)
    one["provenance"]["options"].pop("--output")
    assert two == one


def test_the_command_line_turns_on_reproducible_math_unless_the_user_chose(monkeypatch, tmp_path):
    missing = str(tmp_path / "missing.jsonl")
    monkeypatch.delenv("MKL_CBWR", raising=False)
    # refused, after the request: it comes before anything else
    assert main(["evaluate", missing]) == 2
    assert os.environ["MKL_CBWR"] == "AUTO"
    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE")
    assert main(["evaluate", missing]) == 2
    assert os.environ["MKL_CBWR"] == "COMPATIBLE"


#: In a fresh interpreter: after `dialeval`'s start, does any float32 product change its bits when
#: only its operands' addresses move? Prints how many of the cases did, at 1 thread and at 2.
ALIGNMENT_PROBE = """
import sys
import torch
from dialeval.cli import main

main(["evaluate", sys.argv[1]])  # a missing file: refused, after the command line's request
torch.manual_seed(0)
cases = [(torch.randn(rows, inner), torch.randn(outer, inner))
         for rows, inner, outer in ((9, 32, 32), (69, 32, 32), (7, 100, 400), (2, 300, 300), (23, 32, 400), (64, 384, 1536))]
for threads in (1, 2):
    torch.set_num_threads(threads)
    changed = 0
    for x, w in cases:
        expected = torch.nn.functional.linear(x, w)
        for shift in range(1, 16):
            moved_x = torch.empty(x.numel() + shift)[shift:].view_as(x).copy_(x)
            moved_w = torch.empty(w.numel() + shift)[shift:].view_as(w).copy_(w)
            changed += any(not torch.equal(torch.nn.functional.linear(a, b), expected)
                           for a, b in ((moved_x, w), (x, moved_w), (moved_x, moved_w)))
    print(threads, changed)
"""


def test_a_product_gives_the_same_bits_wherever_its_operands_lie(tmp_path):
    import torch

    if not torch.backends.mkl.is_available():
        pytest.skip(
            "this torch build has no oneMKL, whose reproducible mode the command line turns on"
        )
    # the CLI's own default
    environment = {name: value for name, value in os.environ.items() if name != "MKL_CBWR"}
    probe = subprocess.run(
        [sys.executable, "-c", ALIGNMENT_PROBE, str(tmp_path / "missing.jsonl")],
        check=False,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert probe.returncode == 0, probe.stderr[-3000:]
    # Without the reproducible mode, 12 of these 90 cases changed at 1 thread and 36 at 2 (AMD EPYC, oneMKL 2024.2).
    assert probe.stdout.split() == ["1", "0", "2", "0"]
