"""No advice that misleads: what an error tells a new user to do names the flag of the command
they ran (not a Python argument, nor another command's flag), and a flag they gave is never what
the error asks them to pass."""

import json

import pytest

from dialeval.cli import main


@pytest.fixture()
def fresh_datasets_cache(tmp_path, monkeypatch):
    """No builder's files in the cache: an offline load must download and fails."""
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets-cache")
    return str(tmp_path / "datasets-cache")


@pytest.mark.parametrize(
    "argv",
    [
        [
            "meta-eval",
            "--test",
            "dectest",
            "--task",
            "resp",
            "--metric",
            "averaged_distinct_n",
            "--no-progress",
            "--cache-dir",
            "{cache}",
        ],
        [
            "dtg",
            "--model",
            "unused",
            "--dataset",
            "dailydialog_pp",
            "--output",
            "{tmp}/run.jsonl",
            "--no-progress",
        ],
        ["export-dataset", "dailydialog_pp", "--to", "{tmp}/out", "--cache-dir", "{cache}"],
    ],
)
def test_an_offline_download_failure_says_to_pass_data_dir_as_its_flag(
    argv, tmp_path, fresh_datasets_cache, capsys, monkeypatch
):
    from dialeval.cli import release_data

    # meta-eval looks in these local places first: here they hold nothing
    monkeypatch.delenv(release_data.DATA_DIR_VARIABLE, raising=False)
    monkeypatch.setattr(release_data, "CHECKOUT_DATA", None)
    argv = [arg.format(cache=fresh_datasets_cache, tmp=tmp_path) for arg in argv]
    assert main(argv) == 2
    error = capsys.readouterr().err
    # meta-eval knows it is offline and tries no download
    tried = "could not download" in error or "no download was tried" in error
    assert tried and "`--data-dir`" in error, error
    assert "data_dir" not in error


def _dtg_run(tmp_path, responses: list[str], references: list[str]) -> str:
    """A one-context `dialeval dtg` output whose context came with human responses (Table 5)."""
    record = {
        "trial": 0,
        "index": 0,
        "id": 0,
        "context": ["hello there"],
        "references": references,
        "initial_responses": responses,
        "responses": responses,
        "initial_scores": {"distinct_n": 1.0},
        "final_scores": {"distinct_n": 1.0},
        "reached_threshold": True,
        "stop_reason": "threshold",
        "utterance_overlap": 0,
        "num_pair_evaluations": 0,
        "num_resampled": 0,
    }
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (tmp_path / "run.jsonl.run.json").write_text(
        json.dumps({"format": 2, "metric": "distinct_n"}), encoding="utf-8"
    )
    return str(path)


def test_dtg_names_metric_model_for_a_missing_nli_model(tiny_gpt2_path, tmp_path, capsys):
    contexts = tmp_path / "contexts.jsonl"
    contexts.write_text('{"context": "hello there"}\n', encoding="utf-8")
    argv = [
        "dtg",
        "--model",
        tiny_gpt2_path,
        "--metric",
        "nli",
        "--metric-model",
        "nobody/no-such-nli-model",
        "--input",
        str(contexts),
        "--output",
        str(tmp_path / "run.jsonl"),
        "--no-progress",
    ]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert "pass its path as `--metric-model`" in error, error
    assert "`--model`" not in error


def test_dtg_summary_names_bertscore_model_for_a_missing_model(tmp_path, capsys):
    run = _dtg_run(tmp_path, ["i am fine thanks", "what a day"], ["i am fine", "not bad"])
    assert main(["dtg-summary", run, "--bertscore-model", "nobody/no-such-bertscore-model"]) == 2
    error = capsys.readouterr().err
    assert "pass its path as `--bertscore-model`" in error, error
    assert "`model`" not in error


def test_dtg_summary_scores_an_empty_generated_response(tmp_path, tiny_roberta_nli_path, capsys):
    """A generation may be empty; dtg-summary has no allow_empty to pass, so it must not ask for one."""
    run = _dtg_run(tmp_path, ["", "i am fine thanks"], ["i am fine", "not bad"])
    assert main(["dtg-summary", run, "--bertscore-model", tiny_roberta_nli_path]) == 0
    assert "allow_empty" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, usage",
    [
        (["evaluate", "sets.jsonl", "--max-ngram", "3"], "usage: dialeval evaluate "),
        (["dtg-summary", "run.jsonl", "--bogus"], "usage: dialeval dtg-summary "),
    ],
)
def test_an_unknown_flag_prints_the_commands_usage(argv, usage, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith(usage), error
    assert f"dialeval {argv[0]}: error: unrecognized arguments: {' '.join(argv[2:])}" in error


def _sets_file(tmp_path, lines: list[dict]) -> str:
    path = tmp_path / "sets.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    "extra, says",
    [
        ([], "--reference-corpus TXT (to fit its clusters on) or --sem-ent-clusters DIR"),
        (
            ["--reference-corpus", "{reference}", "--metric", "lexical_diversity"],
            "--metric leaves it out",
        ),
    ],
)
def test_plot_without_sem_ent_on_one_input_is_refused(tmp_path, capsys, extra, says):
    reference = tmp_path / "reference.txt"
    reference.write_text("".join(f"reference line {i}\n" for i in range(30)), encoding="utf-8")
    sets = _sets_file(tmp_path, [{"responses": ["a b", "c d"]}])
    argv = [
        "evaluate",
        sets,
        "--plot",
        str(tmp_path / "plots"),
        "--no-sentence-model",
        "--no-progress",
        "-o",
        str(tmp_path / "report.json"),
        *(arg.format(reference=reference) for arg in extra),
    ]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert (
        f"--plot {tmp_path / 'plots'} draws Sem-Ent's cluster distribution" in error
        and says in error
    ), error
    assert not (tmp_path / "report.json").exists() and not (tmp_path / "plots").exists()


def test_plot_says_so_when_sem_ent_is_skipped(tmp_path, capsys):
    reference = tmp_path / "reference.txt"
    # fewer texts than --sem-ent-k: skipped
    reference.write_text("one\ntwo\nthree\n", encoding="utf-8")
    sets = _sets_file(tmp_path, [{"responses": ["a b", "c d"]}])
    argv = [
        "evaluate",
        sets,
        "--plot",
        str(tmp_path / "plots"),
        "--reference-corpus",
        str(reference),
        "--sem-ent-k",
        "5",
        "--no-sentence-model",
        "--nli-model",
        "none",
        "--bertscore-model",
        "none",
        "--cross-encoder-model",
        "none",
        "--homogenization-model",
        "none",
        "--no-progress",
        "-o",
        str(tmp_path / "report.json"),
    ]
    assert main(argv) == 0
    assert "plot: no sem_ent_clusters.png: sem_ent was skipped" in capsys.readouterr().out
    # asked for by name, the same reason is an error before any step runs
    (tmp_path / "report.json").unlink()
    assert main([*argv, "--metric", "sem_ent"]) == 2
    assert "`--metric`: sem_ent was asked for but cannot run: the reference corpus has 3" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "report.json").exists()


@pytest.mark.parametrize("file_format", ["jsonl", "json", "csv", "lines"])
def test_a_parquet_file_read_as_text_names_the_file_and_the_format_to_use(
    tmp_path, capsys, file_format
):
    import pandas

    path = tmp_path / "sets.parquet"
    pandas.DataFrame(
        {"responses": [["a b", "c d"]], "context": ["hi \u00e9\u00e9\u00e9"]}
    ).to_parquet(path)
    assert (
        main(
            [
                "evaluate",
                str(path),
                "--format",
                file_format,
                "--no-progress",
                "-o",
                str(tmp_path / "r.json"),
            ]
        )
        == 2
    )
    error = capsys.readouterr().err
    assert f"{path}:" in error and f"not readable as {file_format}" in error, error
    assert "it is a Parquet file: read it with `--format` parquet" in error
    assert "codec can't decode" not in error


def test_dtg_summary_prints_no_nltk_bleu_warning(tmp_path):
    """Some n-gram orders without overlap: NLTK warns on every corpus_bleu call; the 0 is the figure."""
    import subprocess
    import sys

    run = _dtg_run(tmp_path, ["i am fine thanks a lot", "what a day"], ["i am fine", "not bad"])
    done = subprocess.run(
        [sys.executable, "-W", "always", "-m", "dialeval.cli", "dtg-summary", run],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "start BLEU" in done.stdout
    assert (
        "The hypothesis contains 0 counts" not in done.stderr and "UserWarning" not in done.stderr
    ), done.stderr


def test_allow_empty_runs_and_says_which_metric_it_cannot_reach(tmp_path, capsys):
    """--allow-empty reaches every metric that can score a response without tokens; Sem-Ent, which
    embeds each response, is skipped with that reason instead of failing the run, and asked for
    by name it is an error saying the same."""
    reference = tmp_path / "reference.txt"
    reference.write_text("".join(f"reference line {i}\n" for i in range(30)), encoding="utf-8")
    sets = _sets_file(tmp_path, [{"responses": ["", "a b"]}, {"responses": ["c d", " ", "e"]}])
    report = tmp_path / "report.json"
    argv = [
        "evaluate",
        sets,
        "--allow-empty",
        "--reference-corpus",
        str(reference),
        "--no-sentence-model",
        "--nli-model",
        "none",
        "--bertscore-model",
        "none",
        "--cross-encoder-model",
        "none",
        "--homogenization-model",
        "none",
        "--no-progress",
        "-o",
        str(report),
    ]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "pass --allow-empty" not in captured.err + captured.out
    written = json.loads(report.read_text(encoding="utf-8"))
    assert "lexical_diversity" in written["metrics"] and "sem_ent" not in written["metrics"]
    skipped = {entry["metric"]: entry["reason"] for entry in written["skipped"]}
    reason = (
        "2 of the 5 responses are empty or white space only: --allow-empty scores them in the "
        "other metrics"
    )
    assert reason in skipped["sem_ent"]
    assert main([*argv, "--metric", "sem_ent", "--metric", "lexical_diversity"]) == 2
    assert f"`--metric`: sem_ent was asked for but cannot run: {reason}" in capsys.readouterr().err


def test_a_parquet_file_damaged_before_its_footer_is_named(tmp_path, capsys):
    import pyarrow
    import pyarrow.parquet

    path = tmp_path / "sets.parquet"
    pyarrow.parquet.write_table(
        pyarrow.Table.from_pylist([{"responses": [f"a b {i}", "c d"]} for i in range(50)]), path
    )
    content = bytearray(path.read_bytes())
    content[4:80] = b"\xff" * 76  # the first data page's header; the footer (the schema) is whole
    path.write_bytes(bytes(content))
    assert (
        main(
            [
                "evaluate",
                str(path),
                "--metric",
                "lexical_diversity",
                "--no-progress",
                "-o",
                str(tmp_path / "r.json"),
            ]
        )
        == 2
    )
    assert (
        f"{path}: a damaged Parquet file: rows after row 0 cannot be read"
        in capsys.readouterr().err
    )
