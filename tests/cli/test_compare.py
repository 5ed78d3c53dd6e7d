"""Several systems in one `dialeval evaluate`, and the inputs as users hold them."""

import dataclasses
import json

import pandas as pd
import pyarrow
import pyarrow.parquet
import pytest
from conftest import REPO_ROOT
from registry_steps import MODELS_OFF, expected_figures

from dialeval.atomic_files import MANIFEST_NAME
from dialeval.cli import main
from dialeval.cli.compare import comparison_table, systems_from_inputs
from dialeval.cli.evaluate_job import EvaluationOptions, evaluate_response_sets
from dialeval.cli.report_formats import summary_table
from dialeval.io import read_response_sets

DEMO = REPO_ROOT / "examples" / "demo_response_sets.jsonl"
NO_MODELS = MODELS_OFF
LEXICAL_ONLY = EvaluationOptions(
    sentence_models=[], nli_models=[], bertscore_models=[], cross_encoder_models=[], progress=False
)


def _split_demo(tmp_path):
    lines = DEMO.read_text(encoding="utf-8").splitlines(keepends=True)
    diverse, dull = tmp_path / "diverse.jsonl", tmp_path / "dull.jsonl"
    diverse.write_text("".join(lines[0::2]), encoding="utf-8")
    dull.write_text("".join(lines[1::2]), encoding="utf-8")
    return diverse, dull


def test_systems_are_named_by_stem_or_name(tmp_path):
    odd = tmp_path / "a=b.jsonl"
    odd.write_text("", encoding="utf-8")
    (tmp_path / "folder.v2").mkdir()
    assert systems_from_inputs(
        ["x/sysA.jsonl", "B=y/out.csv", "org/data", f"ab={odd}", str(tmp_path / "folder.v2")]
    ) == {
        "sysA": "x/sysA.jsonl",
        "B": "y/out.csv",
        "data": "org/data",
        "ab": str(odd),
        "folder.v2": str(tmp_path / "folder.v2"),
    }
    with pytest.raises(
        ValueError,
        match=r"a system name is letters, digits .*\(name it with NAME=INPUT\), got 'a=b'",
    ):
        # an existing path that holds "=" is a path, named by its stem
        systems_from_inputs([str(odd), "other.jsonl"])
    # a single input's name labels nothing: any file name will do
    assert systems_from_inputs([str(odd)]) == {"a=b": str(odd)}
    assert systems_from_inputs(["a*b?[c].jsonl"]) == {"a*b?[c]": "a*b?[c].jsonl"}
    with pytest.raises(
        ValueError,
        match=r"two systems are named 'out' \(a/out.jsonl, b/out.jsonl\): name them with NAME=INPUT",
    ):
        systems_from_inputs(["a/out.jsonl", "b/out.jsonl"])
    with pytest.raises(ValueError, match=r"a system name is letters, digits"):
        systems_from_inputs(["my system=a.jsonl", "b.jsonl"])
    with pytest.raises(ValueError, match=r"NAME=INPUT needs an input"):
        systems_from_inputs(["A="])


def test_comparison_table_has_a_row_per_system_and_a_column_per_figure():
    one = {
        "num_sets": 2,
        "metrics": {
            "lexical_diversity": {"scope": "response_set", "averaged_distinct_n": 0.5},
            "vendi_score[m]": {"scope": "response_set", "vendi_score": 2.0, "model": "m"},
            "other": {"scope": "corpus", "averaged_distinct_n": 0.1},
        },
    }
    two = {
        "num_sets": 3,
        "metrics": {"lexical_diversity": {"scope": "response_set", "averaged_distinct_n": 0.7}},
    }
    table = comparison_table({"A": one, "B": two})
    assert table.columns == [
        "system",
        "num_sets",
        "num_responses",
        "averaged_distinct_n",
        "vendi_score[m]",
        "other/averaged_distinct_n",
    ]
    assert table.rows == [
        ["A", 2, None, 0.5, 2.0, 0.1],
        ["B", 3, None, 0.7, None, None],
    ]  # B skipped vendi: empty


def test_settings_are_no_score_columns_and_stay_in_the_json_report():
    options = dataclasses.replace(LEXICAL_ONLY, ead_vocab_size=30522)
    report = evaluate_response_sets(read_response_sets(DEMO), options)
    # the JSON report keeps what each figure was computed with, beside it
    assert report["metrics"]["ead"]["n"] == 1 and report["metrics"]["ead"]["vocab_size"] == 30522
    assert report["metrics"]["mtld"]["threshold"] == 0.72
    settings = {"n", "vocab_size", "threshold", "num_responses", "num_texts", "num_clusters"}
    columns = comparison_table({"A": report, "B": report}).columns
    assert not settings & set(columns[3:]) and {"ead", "distinct", "mtld"} <= set(columns)
    assert not settings & {row[1] for row in summary_table(report).rows}
    corpus = {
        "metrics": {
            "remote_clique[m]": {
                "scope": "corpus",
                "remote_clique": 0.3,
                "num_responses": 4,
                "model": "m",
            },
            "sem_ent": {"scope": "corpus", "sem_ent": 1.2, "num_clusters": 20, "num_texts": 4},
        }
    }
    assert comparison_table({"A": corpus, "B": corpus}).columns == [
        "system",
        "num_sets",
        "num_responses",
        "remote_clique[m]",
        "sem_ent",
    ]


def test_two_systems_give_one_table_each_report_and_a_plot(tmp_path, capsys):
    diverse, dull = _split_demo(tmp_path)
    out = tmp_path / "results" / "compare.csv"
    argv = [
        "evaluate",
        str(diverse),
        f"boring={dull}",
        "-o",
        str(out),
        "--plot",
        str(tmp_path / "plots"),
        "--per-set-csv",
        str(tmp_path / "sets.csv"),
        "--decimals",
        "6",
        *NO_MODELS,
    ]
    assert main(argv) == 0
    table = pd.read_csv(out)
    assert table["system"].tolist() == ["diverse", "boring"] and len(table) == 2
    reports = {
        name: json.loads((out.parent / f"compare.{name}.json").read_text(encoding="utf-8"))
        for name in ("diverse", "boring")
    }
    for row, report in zip(table.itertuples(), reports.values()):
        assert row.num_sets == report["num_sets"] == 4
        assert row.averaged_distinct_n == pytest.approx(
            report["metrics"]["lexical_diversity"]["averaged_distinct_n"], abs=1e-6
        )
        assert row.self_bleu == pytest.approx(report["metrics"]["self_bleu"]["self_bleu"], abs=1e-6)
    assert reports["diverse"]["input"] == str(diverse) and reports["boring"]["provenance"]["input"][
        "path"
    ] == str(dull)
    # each system's report is the one a single run of that input writes
    assert main(["evaluate", str(dull), "-o", str(tmp_path / "alone.json"), *NO_MODELS]) == 0
    alone = json.loads((tmp_path / "alone.json").read_text(encoding="utf-8"))
    assert (
        alone["metrics"] == reports["boring"]["metrics"]
        and alone["per_set"] == reports["boring"]["per_set"]
    )
    plot = tmp_path / "plots" / "per_set_distributions.png"
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    per_set = pd.read_csv(tmp_path / "sets.csv")
    assert per_set["system"].tolist() == ["diverse"] * 4 + ["boring"] * 4
    assert set(per_set["style"]) == {"diverse", "dull"}
    printed = capsys.readouterr().out
    assert (
        f"comparison: {out}" in printed and f"plot: {plot}" in printed and "== boring: " in printed
    )


def test_a_plot_stopped_while_rendering_leaves_the_previous_figure_whole(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    diverse, dull = _split_demo(tmp_path)
    plots = tmp_path / "plots"
    argv = [
        "evaluate",
        str(diverse),
        str(dull),
        "-o",
        str(tmp_path / "t.csv"),
        "--plot",
        str(plots),
        *NO_MODELS,
    ]
    assert main(argv) == 0
    plot = plots / "per_set_distributions.png"
    before = plot.read_bytes()

    def stopped_half_way(figure, target, *args, **kwargs):
        if hasattr(target, "write"):
            target.write(before[:10])
        else:
            with open(target, "wb") as handle:
                handle.write(before[:10])
        raise KeyboardInterrupt

    monkeypatch.setattr(Figure, "savefig", stopped_half_way)
    with pytest.raises(KeyboardInterrupt):
        main(
            [
                "evaluate",
                str(diverse),
                str(dull),
                "-o",
                str(tmp_path / "t2.csv"),
                "--plot",
                str(plots),
                *NO_MODELS,
            ]
        )
    assert plot.read_bytes() == before
    assert sorted(path.name for path in plots.iterdir()) == [
        MANIFEST_NAME,
        "per_set_distributions.png",
    ]  # no temporary left


def test_a_metric_that_cannot_run_on_one_input_fails_before_any_system_runs(tmp_path, capsys):
    diverse, _ = _split_demo(tmp_path)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello there\nfine thanks\n", encoding="utf-8")
    out = tmp_path / "cmp.csv"
    assert (
        main(
            [
                "evaluate",
                str(diverse),
                str(corpus),
                "-o",
                str(out),
                "--metric",
                "lexical_diversity",
                *NO_MODELS,
            ]
        )
        == 2
    )
    assert "lexical_diversity does not run on a corpus input" in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "corpus.txt",
        "diverse.jsonl",
        "dull.jsonl",
    ]


def test_comparison_as_markdown_latex_and_json(tmp_path):
    diverse, dull = _split_demo(tmp_path)
    for name in ("t.md", "t.tex", "t.json"):
        assert (
            main(["evaluate", str(diverse), str(dull), "-o", str(tmp_path / name), *NO_MODELS]) == 0
        )
    assert (tmp_path / "t.md").read_text(encoding="utf-8").splitlines()[2].startswith("| diverse ")
    assert "\\midrule\ndiverse & 4 & " in (tmp_path / "t.tex").read_text(encoding="utf-8")
    rows = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))["systems"]
    assert [(row["system"], row["report"]) for row in rows] == [
        ("diverse", str(tmp_path / "t.diverse.json")),
        ("dull", str(tmp_path / "t.dull.json")),
    ]
    assert (
        rows[1]["self_bleu"]
        == json.loads((tmp_path / "t.dull.json").read_text())["metrics"]["self_bleu"]["self_bleu"]
    )


def test_a_bad_second_system_stops_before_any_job_runs(tmp_path, capsys):
    diverse, _ = _split_demo(tmp_path)
    bad = tmp_path / "bad.parquet"
    pyarrow.parquet.write_table(pyarrow.table({"outs": [["a", "b"]]}), bad)
    assert main(["evaluate", str(diverse), str(bad), *NO_MODELS]) == 2
    assert "no column 'responses' (`--responses-column`)" in capsys.readouterr().err
    assert not (tmp_path / "diverse.diversity.json").exists()


def test_the_cli_reads_parquet_json_and_datasets_folders_alike(tmp_path):
    import datasets

    sets = read_response_sets(DEMO)
    records = [{"prompt": s.context, "outs": s.responses, **s.metadata} for s in sets]
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(records), tmp_path / "s.parquet")
    (tmp_path / "s.json").write_text(json.dumps(records), encoding="utf-8")
    datasets.Dataset.from_list(records).save_to_disk(str(tmp_path / "folder"))
    columns = ["--responses-column", "outs", "--context-column", "prompt"]
    assert main(["evaluate", str(DEMO), "-o", str(tmp_path / "jsonl.json"), *NO_MODELS]) == 0
    expected = json.loads((tmp_path / "jsonl.json").read_text(encoding="utf-8"))
    for source in ("s.parquet", "s.json", "folder"):
        out = tmp_path / f"{source}.report.json"
        assert main(["evaluate", str(tmp_path / source), "-o", str(out), *columns, *NO_MODELS]) == 0
        report = json.loads(out.read_text(encoding="utf-8"))
        assert report["metrics"] == expected["metrics"]
        assert [row["context"] for row in report["per_set"]] == [
            row["context"] for row in expected["per_set"]
        ]
    assert report["provenance"]["input"]["sha256"]  # a folder is hashed over its files


def test_a_corpus_and_response_sets_compare_in_one_table(tmp_path):
    corpus = tmp_path / "responses.txt"
    corpus.write_text(
        "I went hiking.\nNothing much.\nI went hiking.\nWe ate seafood on the coast.\n",
        encoding="utf-8",
    )
    diverse, _ = _split_demo(tmp_path)
    out = tmp_path / "compare.csv"
    assert main(["evaluate", str(corpus), str(diverse), "-o", str(out), *NO_MODELS]) == 0
    table = pd.read_csv(out)
    assert table["system"].tolist() == ["responses", "diverse"]
    assert table["num_responses"].tolist() == [4, 20] and pd.isna(table["num_sets"][0])
    corpus_report = json.loads((tmp_path / "compare.responses.json").read_text(encoding="utf-8"))
    assert corpus_report["scope"] == "corpus" and "per_set" not in corpus_report
    # the model-free corpus steps
    assert sorted(corpus_report["metrics"]) == sorted(expected_figures("corpus", LEXICAL_ONLY))
    assert pd.isna(table["averaged_distinct_n"][0])  # a set-level figure: none for a corpus


def test_the_cli_names_the_hub_dataset_it_cannot_read_offline(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["evaluate", "nobody/no-such-dataset", "--split", "test", *NO_MODELS]) == 2
    assert "'nobody/no-such-dataset' is not a file or folder here" in capsys.readouterr().err
    (tmp_path / "s.json").write_text('{"responses": ["a", "b"]}\n', encoding="utf-8")
    assert main(["evaluate", "s.json", *NO_MODELS]) == 2
    assert (
        "s.json:1: a .json input must hold one JSON array of objects; it holds JSON lines: read it with `--format` jsonl"
        in (capsys.readouterr().err)
    )


def test_evaluate_response_sets_takes_a_dataframe():
    sets = read_response_sets(DEMO)
    frame = pd.DataFrame(
        {
            "context": [s.context for s in sets],
            "responses": [s.responses for s in sets],
            "style": [s.metadata["style"] for s in sets],
        }
    )
    from_frame = evaluate_response_sets(frame, LEXICAL_ONLY)
    from_sets = evaluate_response_sets(sets, LEXICAL_ONLY)
    assert from_frame["metrics"] == from_sets["metrics"]
    assert [row["fields"] for row in from_frame["per_set"]] == [
        {"style": s.metadata["style"]} for s in sets
    ]
    assert from_frame["per_set"][3]["where"] == "DataFrame row 3"


def test_a_hub_dataset_downloaded_to_the_hub_cache_is_read_offline(tmp_path, monkeypatch):
    import huggingface_hub.constants

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "datasets--someone--demo-sets"
    (repo / "snapshots" / commit / "data").mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit, encoding="utf-8")
    sets = read_response_sets(DEMO)
    for split, part in (("train", sets[:4]), ("test", sets[4:])):
        pyarrow.parquet.write_table(
            pyarrow.Table.from_pylist(
                [{"context": s.context, "responses": s.responses} for s in part]
            ),
            repo / "snapshots" / commit / "data" / f"{split}-00000-of-00001.parquet",
        )
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.chdir(tmp_path)
    assert main(["evaluate", "someone/demo-sets", "--split", "test", *NO_MODELS]) == 0
    report = json.loads(
        (tmp_path / "someone__demo-sets.diversity.json").read_text(encoding="utf-8")
    )
    assert (
        report["num_sets"] == 4 and report["per_set"][0]["where"] == "someone/demo-sets[test]:row 1"
    )
    assert report["per_set"][0]["context"] == sets[4].context
    assert report["provenance"]["input"] == {
        "path": "someone/demo-sets",
        "hub_dataset": True,
        "revision": commit,
    }


def test_a_failing_system_keeps_the_finished_ones_for_resume(tmp_path, capsys, monkeypatch):
    """Each system's finished steps stay checkpointed until every report is written; --resume reuses them."""
    from dialeval.cli.safe_output import lock_path

    # the lexical step reads its function from here when it runs
    from dialeval.metrics.lexical_diversity import by_scope as lexical_module

    diverse, dull = _split_demo(tmp_path)
    good_lines = dull.read_text(encoding="utf-8")
    dull.write_text(good_lines + '{"responses": ["fine", ""]}\n', encoding="utf-8")
    out = tmp_path / "compare.csv"
    argv = ["evaluate", str(diverse), str(dull), "-o", str(out), *NO_MODELS]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert (
        f"{dull}:5: response 1 is empty" in err
        and "compare.diverse.json.partial" in err
        and "--resume" in err
    )
    # the first system's report is kept
    assert (tmp_path / "compare.diverse.json").is_file() and not out.exists()
    # every lock let go on the error
    assert not lock_path(tmp_path / "compare.diverse.json").exists()
    dull.write_text(good_lines, encoding="utf-8")
    calls = []
    lexical = lexical_module.set_lexical_diversity
    monkeypatch.setattr(
        lexical_module, "set_lexical_diversity", lambda *a, **k: calls.append(1) or lexical(*a, **k)
    )
    assert main([*argv, "--resume"]) == 0
    # the second system's sets only: the first system's steps came from its checkpoints
    assert calls == [1]
    assert pd.read_csv(out)["system"].tolist() == ["diverse", "dull"]
    assert (
        not (tmp_path / "compare.diverse.json.partial").exists()
        and not (tmp_path / "compare.dull.json.partial").exists()
    )
    lock_path(tmp_path / "compare.dull.json").write_text(
        '{"pid": 1, "host": "elsewhere"}', encoding="utf-8"
    )
    assert main(argv) == 2  # a second run on an output that another run holds
    assert "compare.dull.json is being written by another run" in capsys.readouterr().err
