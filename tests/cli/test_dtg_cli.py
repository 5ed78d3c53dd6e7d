"""``dialeval dtg``: JSONL output, resume after a kill, Table 4 summary, and two Accelerate processes."""

import json
import os
import subprocess
import sys

import pytest

from dialeval.cli import main
from dialeval.cli.dtg_contexts import format_context
from dialeval.cli.dtg_options import DTGOptions, sampling_defaults
from dialeval.cli.dtg_summary import format_summary_table, read_run, summarize
from dialeval.cli.dtg_writer import ResumableJsonl

CONTEXTS = [
    ["hello there , how are you ?", "fine , thanks ."],
    ["what did you do today ?"],
    ["i like music"],
    ["tell me a story"],
    ["where is the station ?", "over there ."],
    ["good morning"],
    ["is it raining ?"],
]


@pytest.fixture()
def contexts_file(tmp_path):
    path = tmp_path / "contexts.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": f"c{i}", "context": turns}) + "\n" for i, turns in enumerate(CONTEXTS)
        ),
        encoding="utf-8",
    )
    return path


def _args(model, nli, contexts_file, output, *extra):
    return [
        "dtg",
        "--model",
        model,
        "--input",
        str(contexts_file),
        "--metric",
        "nli",
        "--metric-model",
        nli,
        "--num-responses",
        "3",
        "--max-samples",
        "3",
        "--max-new-tokens",
        "5",
        "--batch-size",
        "2",
        "--seed",
        "3",
        "--output",
        str(output),
        "--no-progress",
        *extra,
    ]


def _records(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_dtg_cli_writes_every_context_in_order_with_a_table4_summary(
    tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, tmp_path, capsys
):
    output = tmp_path / "run.jsonl"
    assert main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, output)) == 0
    records = _records(output)
    assert [r["index"] for r in records] == list(range(len(CONTEXTS)))
    assert [r["id"] for r in records] == [f"c{i}" for i in range(len(CONTEXTS))]
    assert [r["context"] for r in records] == CONTEXTS
    for record in records:
        assert (
            len(record["responses"]) == 3
            and record["num_initial"] == 3
            and 0 <= record["num_resampled"] <= 3
        )
        assert record["stop_reason"] in ("threshold", "max_samples")
        assert record["num_pair_evaluations"] <= 3 * 2 + 2 * 2 * 3
        assert (
            record["decoding_settings"]["num_beams"] == 1
            and record["decoding_settings"]["top_p"] == 0.9
        )
    printed = capsys.readouterr().out
    assert "start div." in printed and "num resampled" in printed and "contexts" in printed
    settings, _ = read_run(output)
    row = summarize(settings, records)
    assert row["figure"] == "nli_diversity"
    assert row["starting_diversity"] == pytest.approx(
        sum(r["initial_scores"]["nli_diversity"] for r in records) / 7
    )
    assert row["num_resampled"] == pytest.approx(sum(r["num_resampled"] for r in records) / 7)
    assert row["num_contexts"] == 7 and row["num_trials"] == 1 and row["num_resampled_sd"] is None
    summary_json = tmp_path / "summary.json"
    assert main(["dtg-summary", str(output), str(output), "--output", str(summary_json)]) == 0
    assert len(json.loads(summary_json.read_text())) == 2


def test_a_killed_run_resumes_without_losing_or_repeating_a_context(
    tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, tmp_path
):
    complete = tmp_path / "complete.jsonl"
    assert main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, complete)) == 0
    expected = complete.read_text(encoding="utf-8")

    # As a kill leaves it: two whole batches, then a third batch's first line and half of its second.
    killed = tmp_path / "killed.jsonl"
    lines = expected.splitlines(keepends=True)
    killed.write_text("".join(lines[:5]) + lines[5][: len(lines[5]) // 2], encoding="utf-8")
    (tmp_path / "killed.jsonl.run.json").write_text(
        (tmp_path / "complete.jsonl.run.json").read_text()
    )
    assert main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, killed)) == 0
    assert killed.read_text(encoding="utf-8") == expected

    # Running again over a finished file changes nothing.
    assert main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, killed)) == 0
    assert killed.read_text(encoding="utf-8") == expected


def test_resuming_with_other_settings_is_refused(
    tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, tmp_path, capsys
):
    output = tmp_path / "run.jsonl"
    assert (
        main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, output, "--limit", "2"))
        == 0
    )
    assert (
        main(
            _args(
                tiny_gpt2_path,
                tiny_roberta_nli_path,
                contexts_file,
                output,
                "--limit",
                "2",
                "--seed",
                "4",
            )
        )
        == 2
    )
    assert "seed: 3 -> 4" in capsys.readouterr().err
    # the same file name with other contexts in it: not the run that was interrupted
    original = contexts_file.read_text(encoding="utf-8")
    contexts_file.write_text(original.replace("c0", "c0-edited", 1), encoding="utf-8")
    assert (
        main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, output, "--limit", "2"))
        == 2
    )
    assert "its run had other settings (contexts_sha256: " in capsys.readouterr().err
    contexts_file.write_text(original, encoding="utf-8")
    assert (
        main(
            _args(
                tiny_gpt2_path,
                tiny_roberta_nli_path,
                contexts_file,
                output,
                "--limit",
                "2",
                "--seed",
                "4",
                "--overwrite",
            )
        )
        == 0
    )


def test_resumable_jsonl_rejects_a_file_out_of_order(tmp_path):
    path = tmp_path / "out.jsonl"
    settings = DTGOptions(model="m", metric="nli", contexts_from="x")
    ResumableJsonl(path, settings, batch_size=2)
    path.write_text(json.dumps({"index": 1}) + "\n")
    with pytest.raises(ValueError, match="expected trial 0, index 0"):
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
    code = main(
        [
            "dtg",
            "--model",
            tiny_bart_path,
            "--dataset",
            "dailydialog_pp",
            "--split",
            "dev",
            "--data-dir",
            str(shared_data / "dailydialog-plusplus"),
            "--limit",
            "3",
            "--metric",
            "distinct_n",
            "--decoding",
            "beam",
            "--num-beams",
            "6",
            "--max-new-tokens",
            "4",
            "--max-context-tokens",
            "32",
            "--output",
            str(output),
            "--no-progress",
        ]
    )
    assert code == 0
    records = _records(output)
    assert [r["id"] for r in records] == [0, 1, 2]
    assert records[0]["context"][0].startswith("Am I too abrupt?")
    # 6 beams: 5 first, 1 spare
    assert all(r["num_initial"] + r["num_resampled"] <= 6 for r in records)
    # DailyDialog++'s human responses, for Table 5
    assert all(len(r["references"]) == 5 for r in records)


def test_two_accelerate_processes_give_the_one_process_file(
    tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, tmp_path, free_port
):
    # Both runs in a fresh interpreter with the launch's one thread per process, as in
    # tests/cli/test_evaluate_processes.py (a float32 product can round by the thread count).
    environment = {**os.environ, "OMP_NUM_THREADS": "1"}
    single = tmp_path / "single.jsonl"
    alone = subprocess.run(
        [
            sys.executable,
            "-m",
            "dialeval.cli",
            *_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, single),
        ],
        check=False,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert alone.returncode == 0, alone.stderr[-3000:]
    double = tmp_path / "double.jsonl"
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
            *_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, double),
        ],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert launched.returncode == 0, launched.stderr[-3000:]
    assert launched.stdout.count("start div.") == 1  # only the main process prints the summary
    assert "(2 process(es))" in launched.stdout
    assert double.read_text(encoding="utf-8") == single.read_text(encoding="utf-8")


def test_bad_context_files_name_the_line(tmp_path):
    from dialeval.cli.dtg_contexts import read_contexts

    path = tmp_path / "bad.jsonl"
    path.write_text('{"context": ["hi"]}\n{"context": \n', encoding="utf-8")
    with pytest.raises(ValueError, match="bad.jsonl:2: not valid JSON"):
        read_contexts(None, None, str(path))
    path.write_text('{"context": []}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="bad.jsonl:1: `context` must be"):
        read_contexts(None, None, str(path))
    with pytest.raises(ValueError, match="exactly one of"):
        read_contexts("dailydialog_pp", "dev", str(path))


def test_trials_repeat_the_run_with_their_own_seeds_and_resume_across_trials(
    tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, tmp_path
):
    few = ("--limit", "3")  # batches of 2 and 1 per trial
    single = tmp_path / "single.jsonl"
    assert main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, single, *few)) == 0
    trials = tmp_path / "trials.jsonl"
    assert (
        main(
            _args(
                tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, trials, *few, "--trials", "2"
            )
        )
        == 0
    )
    lines = trials.read_text(encoding="utf-8").splitlines(keepends=True)
    records = [json.loads(line) for line in lines]
    assert [(r["trial"], r["index"]) for r in records] == [
        (t, i) for t in range(2) for i in range(3)
    ]
    assert "".join(lines[:3]) == single.read_text(encoding="utf-8")  # trial 0 is the one-trial run
    assert [r["initial_responses"] for r in records[:3]] != [
        r["initial_responses"] for r in records[3:]
    ]
    # Killed inside trial 1's first batch: its first line is dropped, and the resumed file equals the whole.
    killed = tmp_path / "killed.jsonl"
    killed.write_text("".join(lines[:4]) + lines[4][:10], encoding="utf-8")
    (tmp_path / "killed.jsonl.run.json").write_text(
        (tmp_path / "trials.jsonl.run.json").read_text()
    )
    assert (
        main(
            _args(
                tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, killed, *few, "--trials", "2"
            )
        )
        == 0
    )
    assert killed.read_text(encoding="utf-8") == "".join(lines)
    settings, _ = read_run(trials)
    row = summarize(settings, records)
    per_trial = [
        sum(r["num_resampled"] for r in records[t * 3 : (t + 1) * 3]) / 3 for t in range(2)
    ]
    assert row["num_trials"] == 2 and row["num_contexts"] == 3
    assert row["num_resampled"] == pytest.approx(sum(per_trial) / 2)
    assert row["num_resampled_sd"] == pytest.approx(abs(per_trial[0] - per_trial[1]) / 2**0.5)
    with pytest.raises(ValueError, match="different numbers of contexts"):
        summarize(settings, records[:-1])


def test_run_json_records_the_effective_decoding_and_the_gpu_options(
    tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, tmp_path
):
    output = tmp_path / "run.jsonl"
    assert (
        main(
            _args(
                tiny_gpt2_path,
                tiny_roberta_nli_path,
                contexts_file,
                output,
                "--limit",
                "2",
                "--dtype",
                "float32",
                "--metric-dtype",
                "float32",
                "--nli-batch-size",
                "4",
                "--nli-objective",
                "contradictions",
                "--no-repeat-ngram-size",
                "2",
                "--temperature",
                "0.8",
            )
        )
        == 0
    )
    recorded = json.loads((tmp_path / "run.jsonl.run.json").read_text())
    assert recorded["format"] == 2
    assert {recorded[key] for key in ("dtype", "metric_dtype")} == {"float32"} and recorded[
        "nli_batch_size"
    ] == 4
    assert recorded["nli_objective"] == "contradictions"
    effective = recorded["effective_decoding"]
    assert (
        effective["num_beams"],
        effective["do_sample"],
        effective["top_p"],
        effective["top_k"],
    ) == (1, True, 0.9, 0)
    assert effective["temperature"] == 0.8 and effective["no_repeat_ngram_size"] == 2
    # the tiny GPT-2's 128 positions, less --max-new-tokens
    assert effective["max_context_tokens"] == 128 - 5
    assert all(r["decoding_settings"] == effective for r in _records(output))


def test_an_old_format_file_is_summarized_but_not_resumed(
    tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, tmp_path, capsys
):
    output = tmp_path / "old.jsonl"
    assert (
        main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, output, "--limit", "2"))
        == 0
    )
    settings_path = tmp_path / "old.jsonl.run.json"
    settings = json.loads(settings_path.read_text())
    for key in ("format", "effective_decoding", "trials", "nli_objective", "tie_break"):
        settings.pop(key)
    settings_path.write_text(json.dumps(settings))
    old_records = []
    for record in _records(output):  # format 1: num_sampled counted the first n
        record["num_sampled"] = record.pop("num_initial") + record.pop("num_resampled")
        record.pop("trial")
        old_records.append(record)
    output.write_text("".join(json.dumps(r) + "\n" for r in old_records))
    assert (
        main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, output, "--limit", "2"))
        == 2
    )
    assert "older dialeval" in capsys.readouterr().err
    row = summarize(*read_run(output))
    assert row["num_resampled"] == pytest.approx(sum(r["num_sampled"] - 3 for r in old_records) / 2)


def test_relevance_against_human_responses_bleu_and_bertscore(tiny_roberta_nli_path):
    from dialeval.cli.dtg_relevance import (
        bertscore_against_references,
        corpus_bleu_against_references,
    )

    references = [
        ["i went to the market this morning .", "we watched a long film at home ."],
        ["the train leaves at nine tonight .", "it is raining in the city again ."],
    ]
    assert corpus_bleu_against_references(
        [[references[0][1]], [references[1][0]]], references
    ) == pytest.approx(1.0)
    assert (
        corpus_bleu_against_references(
            [["blue green red yellow"], ["purple orange pink grey"]], references
        )
        == 0.0
    )
    # Hand-computed: one hypothesis "i went to the market today ." (7 tokens) against the first context's references:
    # matches 1-grams 6/7, 2-grams 4/6, 3-grams 3/5, 4-grams 2/4; closest reference length 8 -> BP = exp(1 - 8/7).
    import math

    expected = math.exp(1 - 8 / 7) * math.exp(
        sum(math.log(p) for p in (6 / 7, 4 / 6, 3 / 5, 2 / 4)) / 4
    )
    assert corpus_bleu_against_references(
        [["I went to the market today ."]], references[:1]
    ) == pytest.approx(expected)
    scores = bertscore_against_references(
        {"same": [[references[0][0]], [references[1][1]]], "other": [["hello"], ["goodbye"]]},
        references,
        tiny_roberta_nli_path,
        device="cpu",
    )
    assert scores["same"] == pytest.approx(1.0, abs=1e-5)
    assert scores["other"] < scores["same"]


def test_dtg_summary_reports_relevance_when_the_contexts_have_human_responses(
    tiny_gpt2_path, tiny_roberta_nli_path, tmp_path, capsys
):
    path = tmp_path / "with_refs.jsonl"
    path.write_text(
        "".join(
            json.dumps({"context": turns, "references": ["fine , thanks .", "i like music too ."]})
            + "\n"
            for turns in CONTEXTS[:3]
        ),
        encoding="utf-8",
    )
    output = tmp_path / "run.jsonl"
    assert (
        main(
            _args(
                tiny_gpt2_path,
                tiny_roberta_nli_path,
                path,
                output,
                "--trials",
                "2",
                "--max-samples",
                "1",
            )
        )
        == 0
    )
    capsys.readouterr()
    summary_json = tmp_path / "summary.json"
    assert (
        main(
            [
                "dtg-summary",
                str(output),
                "--bertscore-model",
                tiny_roberta_nli_path,
                "--device",
                "cpu",
                "--output",
                str(summary_json),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "Table 5" in printed and "start BERTScore" in printed and "±" in printed
    (row,) = json.loads(summary_json.read_text())
    for name in ("starting_bleu", "ending_bleu", "starting_bertscore", "ending_bertscore"):
        assert 0.0 <= row[name] <= 1.0 and row[f"{name}_sd"] is not None


def test_the_sampling_flags_default_to_the_papers_nucleus_sampling():
    from dialeval.generation.dtg_decoding import SAMPLING

    assert sampling_defaults() == {
        name: SAMPLING[name] for name in ("top_p", "top_k", "temperature")
    }


def test_sampling_flags_other_than_their_defaults_are_refused_with_beams(
    tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, tmp_path, capsys
):
    output = tmp_path / "beams.jsonl"
    beams = ["--decoding", "beam", "--num-beams", "4", "--top-p", "0.5", "--temperature", "0.7"]
    assert main(_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, output, *beams)) == 2
    assert (
        "['temperature', 'top_p'] apply to --decoding sample, not to beam search"
        in capsys.readouterr().err
    )
    assert not output.exists()


SUMMARY_ROWS = [
    {
        "model": "/models/DialoGPT-large",
        "contexts_from": "dailydialog_pp:test",
        "metric": "nli",
        "decoding": "sample",
        "figure": "nli_diversity",
        "num_contexts": 7,
        "num_trials": 2,
        "starting_diversity": 3.14159,
        "starting_diversity_sd": 0.5,
        "ending_diversity": 9.5,
        "ending_diversity_sd": 0.25,
        "num_resampled": 4.25,
        "num_resampled_sd": None,
        "reached_threshold": 0.857,
        "reached_threshold_sd": 0.1,
        "utterance_overlap": 0.125,
        "starting_bleu": 0.0123,
        "ending_bleu": 0.02,
        "starting_bertscore": 0.81,
        "ending_bertscore": 0.8,
    },
    {
        "model": "t5",
        "contexts_from": "in.jsonl",
        "metric": "distinct_n",
        "decoding": "beam",
        "figure": "distinct_1",
        "num_contexts": 3,
        "starting_diversity": 0.5,
        "ending_diversity": 0.75,
        "num_resampled": 2.0,
        "reached_threshold": 1.0,
        "utterance_overlap": 0.0,
    },
]
SUMMARY_NOTE = (
    "contexts: contexts per trial; start/end div.: Baseline NLI Diversity for nli (Table 4), the "
    "metric itself otherwise; num resampled: responses drawn after the first n, at most S (Table "
    '4\'s "Num. Sampled"); overlap: App. C; mean ± sd over trials; BERTScore only with '
    "--bertscore-model"
)


def test_the_printed_tables_4_and_5():
    assert format_summary_table(SUMMARY_ROWS) == (
        "model           data                 metric                   decoding  contexts  trials  start div.   end div.     num resampled  reached   overlap\n"
        "--------------  -------------------  -----------------------  --------  --------  ------  -----------  -----------  -------------  --------  -------\n"
        "DialoGPT-large  dailydialog_pp:test  nli                      sample    7         2       3.14 ± 0.50  9.50 ± 0.25  4.2            86% ± 10  0.12\n"
        "t5              in.jsonl             distinct_n (distinct_1)  beam      3         1       0.50         0.75         2.0            100%      0.00\n"
        "\n"
        "Relevance against the human responses (Table 5):\n"
        "model           data                 metric  decoding  start BLEU  end BLEU  start BERTScore  end BERTScore\n"
        "--------------  -------------------  ------  --------  ----------  --------  ---------------  -------------\n"
        "DialoGPT-large  dailydialog_pp:test  nli     sample    0.012       0.020     0.810            0.800\n"
        "\n" + SUMMARY_NOTE
    )
    assert format_summary_table(SUMMARY_ROWS[1:]) == (
        "model  data      metric                   decoding  contexts  trials  start div.  end div.  num resampled  reached  overlap\n"
        "-----  --------  -----------------------  --------  --------  ------  ----------  --------  -------------  -------  -------\n"
        "t5     in.jsonl  distinct_n (distinct_1)  beam      3         1       0.50        0.75      2.0            100%     0.00\n"
        "\n" + SUMMARY_NOTE
    )
