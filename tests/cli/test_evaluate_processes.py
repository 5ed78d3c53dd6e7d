"""`accelerate launch -n 2 dialeval evaluate` shares the model-backed work and writes the one-process report."""
import json
import os
import subprocess
import sys

from dialeval.cli import main

SETS = [
    {"context": "How was your weekend?", "responses": ["I went hiking.", "I fixed the sink.", "Nothing much.", "I went hiking."]},
    {"context": "Any plans?", "responses": ["Not much.", "Not much, you?", "We ate seafood on the coast."]},
    {"context": "Coffee?", "responses": ["Sure!", "Maybe tomorrow?", "I don't know."]},
]


def _arguments(data, out, nli_path):
    return ["evaluate", str(data), "-o", str(out), "--no-progress", "--no-sentence-model", "--nli-model", nli_path,
            "--bertscore-model", nli_path, "--bertscore-rescale", "off", "--cross-encoder-model", "none"]


def test_two_accelerate_processes_write_the_one_process_report(tmp_path, tiny_roberta_nli_path, free_port):
    data = tmp_path / "sets.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in SETS), encoding="utf-8")
    single = tmp_path / "single.json"
    assert main(_arguments(data, single, tiny_roberta_nli_path)) == 0
    double = tmp_path / "double.json"
    environment = {**os.environ, "OMP_NUM_THREADS": "1"}
    # `--cpu` would start one process; the torchrun path with no GPU gives a gloo CPU group.
    launched = subprocess.run(
        [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
         "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", free_port,
         "-m", "dialeval.cli", *_arguments(data, double, tiny_roberta_nli_path)],
        env=environment, capture_output=True, text=True, timeout=600,
    )
    assert launched.returncode == 0, launched.stderr[-3000:]
    assert launched.stdout.count("report:") == 1 and "(2 processes)" in launched.stdout
    one, two = json.loads(single.read_text(encoding="utf-8")), json.loads(double.read_text(encoding="utf-8"))
    assert set(one["metrics"]) >= {f"nli_diversity[{tiny_roberta_nli_path}]", f"bertscore_diversity[{tiny_roberta_nli_path}]"}
    assert two["provenance"]["options"].pop("--output") == str(double)  # the one option the two runs differ in
    one["provenance"]["options"].pop("--output")
    assert two == one
