"""``dialeval dtg``: JSONL output, resume after a kill, Table 4 summary, and two Accelerate processes."""
import json
import os
import subprocess
import sys

import pytest

from dialeval.cli import main
from dialeval.cli.dtg_job import ResumableJsonl, DTGRunSettings, format_context, read_run, summarize

CONTEXTS = [
    ["hello there , how are you ?", "fine , thanks ."], ["what did you do today ?"], ["i like music"],
    ["tell me a story"], ["where is the station ?", "over there ."], ["good morning"], ["is it raining ?"],
]


@pytest.fixture()
def contexts_file(tmp_path):
    path = tmp_path / "contexts.jsonl"
    path.write_text("".join(json.dumps({"id": f"c{i}", "context": turns}) + "\n" for i, turns in enumerate(CONTEXTS)),
                    encoding="utf-8")
    return path


def _args(model, nli, contexts_file, output, *extra):
    return ["dtg", "--model", model, "--input", str(contexts_file), "--metric", "nli", "--metric-model", nli,
            "--num-responses", "3", "--max-samples", "6", "--max-new-tokens", "5", "--batch-size", "2",
            "--seed", "3", "--output", str(output), "--no-progress", *extra]


def _records(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_dtg_cli_writes_every_context_in_order_with_a_table4_summary(tiny_gpt2_path, tiny_roberta_nli_path,
                                                                      contexts_file, tmp_path, capsys):
    output = tmp_path / "run.jsonl"
    assert main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, output)) == 0
    records = _records(output)
    assert [r["index"] for r in records] == list(range(len(CONTEXTS)))
    assert [r["id"] for r in records] == [f"c{i}" for i in range(len(CONTEXTS))]
    assert [r["context"] for r in records] == CONTEXTS
    for record in records:
        assert len(record["responses"]) == 3 and 3 <= record["num_sampled"] <= 6
        assert record["stop_reason"] in ("threshold", "max_samples")
        assert record["num_pair_evaluations"] <= 3 * 2 + 2 * 2 * (6 - 3)
    printed = capsys.readouterr().out
    assert "start div." in printed and "num sampled" in printed
    settings, _ = read_run(output)
    row = summarize(settings, records)
    assert row["figure"] == "nli_diversity"
    assert row["starting_diversity"] == pytest.approx(sum(r["initial_scores"]["nli_diversity"] for r in records) / 7)
    assert row["num_sampled"] == pytest.approx(sum(r["num_sampled"] for r in records) / 7)
    summary_json = tmp_path / "summary.json"
    assert main(["dtg-summary", str(output), str(output), "--output", str(summary_json)]) == 0
    assert len(json.loads(summary_json.read_text())) == 2


def test_a_killed_run_resumes_without_losing_or_repeating_a_context(tiny_gpt2_path, tiny_roberta_nli_path,
                                                                     contexts_file, tmp_path):
    complete = tmp_path / "complete.jsonl"
    assert main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, complete)) == 0
    expected = complete.read_text(encoding="utf-8")

    # As a kill leaves it: two whole batches, then a third batch's first line and half of its second.
    killed = tmp_path / "killed.jsonl"
    lines = expected.splitlines(keepends=True)
    killed.write_text("".join(lines[:5]) + lines[5][: len(lines[5]) // 2], encoding="utf-8")
    (tmp_path / "killed.jsonl.run.json").write_text((tmp_path / "complete.jsonl.run.json").read_text())
    assert main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, killed)) == 0
    assert killed.read_text(encoding="utf-8") == expected

    # Running again over a finished file changes nothing.
    assert main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, killed)) == 0
    assert killed.read_text(encoding="utf-8") == expected


def test_resuming_with_other_settings_is_refused(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, tmp_path, capsys):
    output = tmp_path / "run.jsonl"
    assert main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, output, "--limit", "2")) == 0
    assert main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, output, "--limit", "2", "--seed", "4")) == 2
    assert "seed: 3 -> 4" in capsys.readouterr().err
    assert main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, output, "--limit", "2", "--seed", "4",
                      "--overwrite")) == 0


def test_resumable_jsonl_rejects_a_file_out_of_order(tmp_path):
    path = tmp_path / "out.jsonl"
    settings = DTGRunSettings(model="m", metric="nli", contexts_from="x")
    ResumableJsonl(path, settings, batch_size=2)
    path.write_text(json.dumps({"index": 1}) + "\n")
    with pytest.raises(ValueError, match="expected 0"):
        ResumableJsonl(path, settings, batch_size=2)


def test_contexts_are_formatted_as_the_models_were_trained(tiny_gpt2_path):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_path)
    eos = tokenizer.eos_token
    assert format_context(["a", "b "], tokenizer, is_encoder_decoder=False) == f"a{eos}b{eos}"
    assert format_context(["a", "b"], tokenizer, is_encoder_decoder=True) == "a\nb"
    assert format_context(["a", "b"], tokenizer, is_encoder_decoder=True, separator="  ") == "a  b"


def test_dtg_on_dailydialog_pp_dev_with_beam_search(tiny_bart_path, shared_data, tmp_path):
    output = tmp_path / "dd.jsonl"
    code = main(["dtg", "--model", tiny_bart_path, "--dataset", "dailydialog_pp", "--split", "dev",
                 "--data-dir", str(shared_data / "dailydialog-plusplus"), "--limit", "3", "--metric", "distinct_n",
                 "--decoding", "beam", "--num-beams", "6", "--max-new-tokens", "4", "--max-context-tokens", "32",
                 "--output", str(output), "--no-progress"])
    assert code == 0
    records = _records(output)
    assert [r["id"] for r in records] == [0, 1, 2]
    assert records[0]["context"][0].startswith("Am I too abrupt?")
    assert all(r["num_sampled"] <= 6 for r in records)


def test_two_accelerate_processes_give_the_one_process_file(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file,
                                                            tmp_path, free_port):
    single = tmp_path / "single.jsonl"
    assert main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, single)) == 0
    double = tmp_path / "double.jsonl"
    environment = {**os.environ, "OMP_NUM_THREADS": "1"}
    # `--cpu` would start one process; the torchrun path with no GPU gives a gloo CPU group.
    launched = subprocess.run(
        [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
         "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", free_port,
         "-m", "dialeval.cli", *_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, double)],
        env=environment, capture_output=True, text=True, timeout=300,
    )
    assert launched.returncode == 0, launched.stderr[-3000:]
    assert launched.stdout.count("start div.") == 1  # only the main process prints the summary
    assert "(2 process(es))" in launched.stdout
    assert double.read_text(encoding="utf-8") == single.read_text(encoding="utf-8")


def test_bad_context_files_name_the_line(tmp_path):
    from dialeval.cli.dtg_job import read_contexts

    path = tmp_path / "bad.jsonl"
    path.write_text('{"context": ["hi"]}\n{"context": \n', encoding="utf-8")
    with pytest.raises(ValueError, match="bad.jsonl:2: not valid JSON"):
        read_contexts(None, None, str(path))
    path.write_text('{"context": []}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="bad.jsonl:1: `context` must be"):
        read_contexts(None, None, str(path))
    with pytest.raises(ValueError, match="exactly one of"):
        read_contexts("dailydialog_pp", "dev", str(path))
