"""Hostile inputs to the command line end in exit code 2 and a message naming FILE:LINE or
the flag, never a traceback (in-process main(); the CLI maps ValueError / OSError to 2)."""

import json

import pytest

from dialeval.cli import main
from dialeval.cli.dtg_options import DTGOptions


def _evaluate(path, tmp_path):
    return main(
        [
            "evaluate",
            str(path),
            "--metric",
            "lexical_diversity",
            "--no-progress",
            "--output",
            str(tmp_path / "report.json"),
        ]
    )


@pytest.mark.parametrize(
    "name, text, line",
    [
        ("deep.jsonl", '{"responses": ["a b", "c d"]}\n' + "[" * 100_000 + "]" * 100_000 + "\n", 2),
        ("short.csv", "context,resp_0,resp_1,label_value\nc,a b,c d,1\nc,a b,c d\n", 3),
    ],
)
def test_evaluate_on_a_hostile_file_names_its_line(tmp_path, capsys, name, text, line):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert _evaluate(path, tmp_path) == 2
    error = capsys.readouterr().err
    assert f"{path}:{line}: " in error and "Traceback" not in error


def test_evaluate_reads_a_csv_field_over_csvs_default_limit(tmp_path, capsys):
    path = tmp_path / "long.csv"
    path.write_text("context,resp_0,resp_1\nc," + "word " * 40_000 + ",b c\n", encoding="utf-8")
    assert _evaluate(path, tmp_path) == 0
    assert "1 response sets, 2 responses" in capsys.readouterr().out


@pytest.mark.parametrize(
    "record",
    [
        {},
        [1],
        {
            "initial_responses": ["a"],
            "responses": ["a"],
            "initial_scores": {},
            "final_scores": {"x": 1.0},
            "reached_threshold": True,
            "stop_reason": "threshold",
            "utterance_overlap": 1,
            "num_pair_evaluations": 1,
            "num_resampled": 0,
        },
    ],
)
def test_dtg_summary_on_a_line_that_is_no_dtg_record_names_it(tmp_path, capsys, record):
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert main(["dtg-summary", str(path)]) == 2
    error = capsys.readouterr().err
    assert f"{path}:1: " in error and "dialeval dtg" in error


@pytest.mark.parametrize(
    "flags, flag",
    [
        (["--batch-size", "0"], "`--batch-size`"),
        (["--threshold", "nan"], "`--threshold`"),
        (["--threshold", "inf"], "`--threshold`"),
        (["--threshold=-inf"], "`--threshold`"),
        (["--top-p", "0"], "`--top-p`"),
        (["--top-p", "1.5"], "`--top-p`"),
        (["--top-p", "2"], "`--top-p`"),
        (
            ["--min-new-tokens", "50", "--max-new-tokens", "10"],
            "`--min-new-tokens` (50) must not exceed `--max-new-tokens`",
        ),
        (["--min-new-tokens", "-1"], "`--min-new-tokens` must be an int >= 0"),
        (["--temperature", "inf"], "`--temperature` must be a finite number in "),
        (["--repetition-penalty", "nan"], "`--repetition-penalty` must be a finite number in "),
        # argv bytes that are not UTF-8 (\xff) reach Python as a lone surrogate
        (["--turn-separator", "\udcff"], "`--turn-separator` holds a lone surrogate"),
        (["--max-samples", str(10**30)], "`--max-samples` must be at most"),
        (["--num-responses", "1"], "`--num-responses` must be an int >= 2"),
        (["--decoding", "beam", "--num-beams", str(2**63)], "`--num-beams` must be at most"),
    ],
)
def test_dtg_refuses_bad_settings_by_their_flag_before_loading_or_writing(
    tmp_path, capsys, flags, flag
):
    contexts = tmp_path / "contexts.jsonl"
    contexts.write_text('{"context": "hi"}\n', encoding="utf-8")
    output = tmp_path / "out.jsonl"
    # the model does not exist: the settings must be refused before it is looked for
    assert (
        main(
            [
                "dtg",
                "--model",
                str(tmp_path / "no_model"),
                "--input",
                str(contexts),
                "--metric",
                "distinct_n",
                "--output",
                str(output),
                "--no-progress",
                *flags,
            ]
        )
        == 2
    )
    error = capsys.readouterr().err
    assert flag in error and "no_model" not in error
    assert not output.exists()


@pytest.mark.parametrize("threshold", ["0.5", True, float("nan"), float("inf")])
def test_dtg_run_settings_refuse_a_threshold_that_is_not_a_finite_number(threshold):
    with pytest.raises(ValueError, match="^`threshold` must be a finite number"):
        DTGOptions(model="m", metric="nli", contexts_from="x", threshold=threshold)


def test_push_metrics_without_a_network_says_the_hub_is_unreachable(monkeypatch, capsys):
    import huggingface_hub

    from dialeval.cli.push_metrics import _hub_transport_errors

    network_error = _hub_transport_errors()[0]

    def unreachable(self, *args, **kwargs):
        raise network_error("[Errno -2] Name or service not known")

    monkeypatch.setattr(huggingface_hub.HfApi, "create_repo", unreachable)
    assert main(["push-metrics", "--namespace", "org", "--metric", "lexical_diversity"]) == 2
    error = capsys.readouterr().err
    assert "the Hugging Face Hub is unreachable" in error and "--to DIR" in error


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--lf-threshold", "-1"], "`--lf-threshold` must be an int >= 0"),
        (["--ead-n", "0"], "`--ead-n` must be a positive int"),
        (["--ead-vocab-size", "0"], "`--ead-vocab-size` must be a positive int"),
        (["--batch-size", "0"], "`--batch-size` must be a positive int"),
        (["--sem-ent-k", "1"], "`--sem-ent-k` must be an int >= 2"),
        (["--sem-ent-seed", "-1"], "`--sem-ent-seed` must be an int >= 0"),
        (["--max-n", "0"], "`--max-n` must be a positive int"),
        (
            ["--context-column", "responses"],
            "`--context-column` names the same key / column as `--responses-column` ('responses')",
        ),
        (
            ["--responses-column", "text", "--context-column", "text"],
            "`--context-column` names the same key / column as `--responses-column` ('text')",
        ),
        (["--sem-ent-max-length", "0"], "`--sem-ent-max-length` must be a positive int"),
        (
            ["--sem-ent-max-length", "64"],
            (
                "`--sem-ent-max-length` applies to the last_token and mean_pooling embedders "
                "(`--sem-ent-embedder`)"
            ),
        ),
    ],
)
def test_evaluate_refuses_a_bad_setting_before_any_metric_runs_or_anything_is_written(
    tmp_path, capsys, flags, message
):
    sets = tmp_path / "sets.jsonl"
    sets.write_text('{"responses": ["a b c", "a b d"]}\n', encoding="utf-8")
    report = tmp_path / "report.json"
    assert main(["evaluate", str(sets), "-o", str(report), "--no-progress", *flags]) == 2
    assert message in capsys.readouterr().err
    # no report, no checkpoint of the metrics run before the bad one
    assert list(tmp_path.iterdir()) == [sets]


@pytest.mark.parametrize(
    "decimals, message",
    [
        ("-1", "`--round-scores` must be an int >= 0, got -1"),
        ("16", "`--round-scores` must be at most 15"),
    ],
)
def test_meta_eval_refuses_round_scores_outside_0_to_15_before_reading_data(
    tmp_path, capsys, decimals, message
):
    argv = ["meta-eval", "--test", "contest", "--task", "resp", "--metric", "averaged_distinct_n"]
    # --data-dir holds nothing: the setting must be refused before the test set is looked for
    argv += ["--data-dir", str(tmp_path), "--round-scores", decimals]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert message in error and "con_test" not in error


@pytest.mark.parametrize("value", [-1, 16, True, 2.0])
def test_meta_eval_options_refuse_round_scores_that_are_no_decimals(value):
    from dialeval.cli.meta_eval_job import MetaEvalOptions

    with pytest.raises(ValueError, match="^`round_scores` must be"):
        MetaEvalOptions(round_scores=value)


def test_evaluate_on_a_datasets_folder_of_no_rows_says_the_input_is_empty(tmp_path, capsys):
    import datasets

    folder = tmp_path / "zero_rows"
    features = datasets.Features(
        {"context": datasets.Value("string"), "responses": datasets.List(datasets.Value("string"))}
    )
    datasets.Dataset.from_dict({"context": [], "responses": []}, features=features).save_to_disk(
        str(folder)
    )
    assert _evaluate(folder, tmp_path) == 2
    error = capsys.readouterr().err
    assert f"{folder}: an empty input" in error and "Traceback" not in error
    assert not (tmp_path / "report.json").exists()


def test_a_single_input_needs_no_valid_system_name(tmp_path, capsys):
    path = tmp_path / "a*b?[c].jsonl"
    path.write_text('{"responses": ["a b c", "a b d"]}\n', encoding="utf-8")
    assert _evaluate(path, tmp_path) == 0
    assert "1 response sets, 2 responses" in capsys.readouterr().out
    other = tmp_path / "other.jsonl"
    other.write_text('{"responses": ["a b c", "a b d"]}\n', encoding="utf-8")
    # several inputs: each name labels a row and a report file, so the rule holds
    assert main(["evaluate", str(path), str(other), "--metric", "lexical_diversity"]) == 2
    assert "a system name is letters, digits" in capsys.readouterr().err
