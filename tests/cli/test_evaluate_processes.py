"""`accelerate launch -n 2 dialeval evaluate` shares the model-backed work and writes the one-process report.

The run covers every model-backed metric of the command that a tiny model can stand in for:
NLI and BERTScore diversity, Sem-Ent (its default embedder, the embedded MiniLM) and
response selection (a tiny GPT-2 and a tiny BART).
"""
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


REFERENCE = ["I love pizza.", "Sushi for dinner!", "Pasta tonight?", "It is raining.", "So sunny today.", "A storm is coming.",
             "We won the final.", "I run every morning.", "My boss is angry."]
QUESTIONS = [
    {"context": ["How was your weekend?", "Great, and yours?"], "candidates": ["I went hiking.", "Blue.", "No idea."], "label": 0},
    {"context": "Any plans?", "candidates": ["Not much, you?", "Seven o'clock.", "Not much, you?"], "label": 0},
    {"context": "Coffee?", "candidates": ["Sure!", "The printer is broken again today.", "Maybe."], "label": 0},
]


def _arguments(data, out, nli_path, gpt2_path, bart_path, inputs):
    return ["evaluate", str(data), "-o", str(out), "--no-progress", "--no-sentence-model", "--nli-model", nli_path,
            "--bertscore-model", nli_path, "--bertscore-rescale", "off", "--cross-encoder-model", "none",
            "--reference-corpus", str(inputs / "reference.txt"),
            "--sem-ent-k", "3", "--save-sem-ent-clusters", str(inputs / "clusters"), "--batch-size", "2",
            "--selection-model", gpt2_path, "--selection-model", bart_path,
            "--selection-questions", str(inputs / "questions.jsonl"), "--selection-batch-size", "1"]


def test_two_accelerate_processes_write_the_one_process_report(tmp_path, tiny_roberta_nli_path, tiny_gpt2_path,
                                                               tiny_bart_path, free_port):
    data = tmp_path / "sets.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in SETS), encoding="utf-8")
    (tmp_path / "reference.txt").write_text("\n".join(REFERENCE) + "\n", encoding="utf-8")
    (tmp_path / "questions.jsonl").write_text("".join(json.dumps(row) + "\n" for row in QUESTIONS), encoding="utf-8")
    models = (tiny_roberta_nli_path, tiny_gpt2_path, tiny_bart_path, tmp_path)
    single = tmp_path / "single.json"
    assert main(_arguments(data, single, *models)) == 0
    double = tmp_path / "double.json"
    environment = {**os.environ, "OMP_NUM_THREADS": "1"}
    # `--cpu` would start one process; the torchrun path with no GPU gives a gloo CPU group.
    launched = subprocess.run(
        [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
         "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", free_port,
         "-m", "dialeval.cli", *_arguments(data, double, *models)],
        env=environment, capture_output=True, text=True, timeout=600,
    )
    assert launched.returncode == 0, launched.stderr[-3000:]
    assert launched.stdout.count("report:") == 1 and "(2 processes)" in launched.stdout
    one, two = json.loads(single.read_text(encoding="utf-8")), json.loads(double.read_text(encoding="utf-8"))
    assert set(one["metrics"]) >= {f"nli_diversity[{tiny_roberta_nli_path}]", f"bertscore_diversity[{tiny_roberta_nli_path}]",
                                   "sem_ent", f"response_selection[{tiny_gpt2_path}]", f"response_selection[{tiny_bart_path}]"}
    assert not one.get("skipped")
    assert two["provenance"]["options"].pop("--output") == str(double)  # the one option the two runs differ in
    one["provenance"]["options"].pop("--output")
    assert two == one
