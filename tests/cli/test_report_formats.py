"""The report as a paper or a spreadsheet takes it: CSV, Markdown and LaTeX tables, where each
output of `dialeval evaluate` goes."""

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO_ROOT
from registry_steps import MODELS_OFF

from dialeval.cli import main
from dialeval.cli.report_formats import (
    Table,
    format_per_set_table,
    format_report,
    latex_escape,
    output_format_of,
    per_set_table,
    plan_outputs,
    render_table,
    summary_table,
)

DEMO = REPO_ROOT / "examples" / "demo_response_sets.jsonl"
NO_MODELS = MODELS_OFF

MODEL = "runs/50%_best&final#2"
REPORT = {
    "num_sets": 2,
    "num_responses": 5,
    "metrics": {
        "lexical_diversity": {
            "scope": "response_set",
            "averaged_distinct_n": 0.123456,
            "ngram_cosine_diversity": -0.5,
        },
        f"sent_bert_diversity[{MODEL}]": {
            "scope": "response_set",
            "sent_bert_diversity": 0.25,
            "model": MODEL,
        },
        "corpus_lexical_diversity": {
            "scope": "corpus",
            "num_tokens": 7,
            "lf_counted_against": "the evaluated responses",
            "per_length": [1, 2],
        },
    },
    "skipped": [],
    "per_set": [
        {
            "where": "s.jsonl:1",
            "id": "a",
            "context": "Hi, there",
            "fields": {"style": "diverse"},
            "averaged_distinct_n": 0.5,
            "sent_bert_diversity": 0.125,
        },
        {
            "where": "s.jsonl:2",
            "id": None,
            "context": ["Hi", 'say "x"'],
            "fields": {"sent_bert_diversity": "clash"},
            "averaged_distinct_n": 1.0,
            "sent_bert_diversity": None,
        },
    ],
}


def test_summary_table_as_csv():
    assert format_report(REPORT, "csv") == (
        "metric,figure,scope,value\n"
        "lexical_diversity,averaged_distinct_n,response_set,0.1235\n"
        "lexical_diversity,ngram_cosine_diversity,response_set,-0.5000\n"
        f"sent_bert_diversity[{MODEL}],sent_bert_diversity,response_set,0.2500\n"
        "corpus_lexical_diversity,num_tokens,corpus,7\n"
    )


def test_summary_table_as_markdown():
    assert format_report(REPORT, "markdown", decimals=2) == (
        "| metric                                     | figure                 | scope        | value |\n"
        "| :----------------------------------------- | :--------------------- | :----------- | ----: |\n"
        "| lexical_diversity                          | averaged_distinct_n    | response_set |  0.12 |\n"
        "| lexical_diversity                          | ngram_cosine_diversity | response_set | -0.50 |\n"
        "| sent_bert_diversity[runs/50%_best&final#2] | sent_bert_diversity    | response_set |  0.25 |\n"
        "| corpus_lexical_diversity                   | num_tokens             | corpus       |     7 |\n"
    )


def test_summary_table_as_latex_escapes_metric_names_and_model_paths():
    assert format_report(REPORT, "latex", decimals=3) == (
        "% dialeval table; needs \\usepackage{booktabs}\n"
        "\\begin{tabular}{lllr}\n"
        "\\toprule\n"
        "metric & figure & scope & value \\\\\n"
        "\\midrule\n"
        "lexical\\_diversity & averaged\\_distinct\\_n & response\\_set & 0.123 \\\\\n"
        "lexical\\_diversity & ngram\\_cosine\\_diversity & response\\_set & -0.500 \\\\\n"
        "sent\\_bert\\_diversity[runs/50\\%\\_best\\&final\\#2] & sent\\_bert\\_diversity & response\\_set & 0.250 \\\\\n"
        "corpus\\_lexical\\_diversity & num\\_tokens & corpus & 7 \\\\\n"
        "\\bottomrule\n"
        "\\end{tabular}\n"
    )


def test_latex_escape_every_special_character_once():
    assert latex_escape(r"_ % & # $ { } ~ ^ \ ") == (
        r"\_ \% \& \# \$ \{ \} \textasciitilde{} \textasciicircum{} \textbackslash{} "
    )
    # the escape's own braces are not escaped again
    assert latex_escape("a\\b{c}") == r"a\textbackslash{}b\{c\}"
    assert latex_escape("two\nlines") == "two lines"


def test_markdown_escapes_pipes_and_line_breaks():
    table = Table(["name | kind", "n"], [["a|b\nc", 1], [None, 2.5]])
    assert render_table(table, "markdown", decimals=1) == (
        "| name \\| kind |   n |\n"
        "| :----------- | --: |\n"
        "| a\\|b c       |   1 |\n"
        "|              | 2.5 |\n"
    )


def test_text_table_is_the_printed_one():
    assert render_table(Table(["a", "value"], [["x", 0.5], ["long name", 12]]), "text") == (
        "a          value\n---------  ------\nx          0.5000\nlong name  12"
    )


def test_printed_per_set_table_cuts_long_cells_and_hides_absent_ids():
    report = {
        "per_set": [
            {
                "where": "a.jsonl:1",
                "id": "d1",
                "context": ["hi", "how are you? " * 5],
                "fields": {"system": "A"},
                "nli_diversity": 1.23456,
                "count": 3,
                "none": None,
            },
            {
                "where": "a.jsonl:2",
                "id": None,
                "context": "x",
                "fields": {},
                "nli_diversity": 2.0,
                "count": 4,
                "none": None,
            },
        ]
    }
    assert format_per_set_table(report) == (
        "id  context                                   system  nli_diversity  count  none\n"
        "--  ----------------------------------------  ------  -------------  -----  ----\n"
        "d1  hi | how are you? how are you? how are..  A       1.2346         3\n"
        "    x                                                 2.0000         4"
    )
    without_ids = {"per_set": [{"where": "w", "context": None, "a": 0.5}]}
    assert format_per_set_table(without_ids) == "context  a\n-------  ------\n         0.5000"
    assert format_per_set_table({"per_set": []}) == "context\n-------"


@pytest.mark.parametrize("bad", [-1, 1.5, True, "4", 21, 100000])
def test_decimals_must_be_a_count(bad):
    with pytest.raises(ValueError, match="`decimals` must be an integer from 0 to 20"):
        render_table(summary_table(REPORT), "csv", decimals=bad)


def test_csv_round_trips_through_pandas():
    frame = pd.read_csv(io.StringIO(render_table(summary_table(REPORT), "csv", decimals=6)))
    assert list(frame.columns) == ["metric", "figure", "scope", "value"]
    assert frame["metric"].tolist()[2] == f"sent_bert_diversity[{MODEL}]"
    assert frame["value"].tolist() == pytest.approx([0.123456, -0.5, 0.25, 7])
    per_set = pd.read_csv(
        io.StringIO(render_table(per_set_table({"only": REPORT}), "csv")), keep_default_na=False
    )
    assert per_set.columns.tolist() == [
        "id",
        "where",
        "context",
        "style",
        "fields.sent_bert_diversity",
        "averaged_distinct_n",
        "sent_bert_diversity",
    ]
    assert per_set["context"].tolist() == ["Hi, there", '["Hi", "say \\"x\\""]']
    assert json.loads(per_set["context"][1]) == ["Hi", 'say "x"']  # a dialogue's turns, as JSON
    assert per_set["sent_bert_diversity"].tolist() == ["0.1250", ""]  # None: an empty cell


def test_per_set_table_of_several_systems_starts_with_the_system():
    table = per_set_table({"A": REPORT, "B": REPORT})
    assert table.columns[:4] == ["system", "id", "where", "context"]
    assert [row[0] for row in table.rows] == ["A", "A", "B", "B"]


def test_the_format_follows_the_suffix_or_the_flag():
    assert [
        output_format_of(name, None) for name in ("r.json", "r.CSV", "r.md", "r.markdown", "r.tex")
    ] == ["json", "csv", "markdown", "markdown", "latex"]
    assert (
        output_format_of(None, None) == "json" and output_format_of("table.txt", "latex") == "latex"
    )
    with pytest.raises(
        ValueError, match=r"`output` 'r\.md' names a markdown file but `output_format` is latex"
    ):
        output_format_of("r.md", "latex")
    with pytest.raises(
        ValueError, match=r"^`output` 'report': cannot tell its format .* pass `output_format`"
    ):
        output_format_of("report", None)


def test_where_every_output_goes(tmp_path):
    source = tmp_path / "s.jsonl"
    source.write_text("{}\n", encoding="utf-8")
    assert plan_outputs({"s": str(source)}).reports == {"s": tmp_path / "s.diversity.json"}
    plan = plan_outputs({"s": str(source)}, output_format="latex")
    assert (plan.table, plan.reports["s"]) == (
        tmp_path / "s.diversity.tex",
        tmp_path / "s.diversity.json",
    )
    plan = plan_outputs(
        {"s": str(source)}, str(tmp_path / "out" / "r.md"), per_set_csv=str(tmp_path / "sets.csv")
    )
    assert plan.paths() == [
        tmp_path / "out" / "r.json",
        tmp_path / "out" / "r.md",
        tmp_path / "sets.csv",
    ]
    plan = plan_outputs({"A": str(source), "B": "org/b"}, str(tmp_path / "cmp.csv"))
    assert plan.reports == {"A": tmp_path / "cmp.A.json", "B": tmp_path / "cmp.B.json"}
    assert plan.comparison == tmp_path / "cmp.csv" and plan.output_format == "csv"
    assert plan_outputs({"A": str(source), "B": "org/b"}).reports["B"] == Path(
        "org__b.diversity.json"
    )


def test_outputs_never_land_on_an_input_or_on_each_other(tmp_path):
    source = tmp_path / "s.json"
    source.write_text("[]", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^`output` would overwrite the input .*s\.json"):
        # the JSON report beside s.md is s.json
        plan_outputs({"s": str(source)}, str(tmp_path / "s.md"))
    other = tmp_path / "s.csv"
    other.write_text("", encoding="utf-8")
    with pytest.raises(
        ValueError, match=r"^`output` would have two outputs written to .*s\.diversity\.json"
    ):
        plan_outputs({"A": str(source), "B": str(other)})
    with pytest.raises(ValueError, match=r"`per_set_csv` .* must end with \.csv"):
        plan_outputs(
            {"s": str(source)}, str(tmp_path / "r.json"), per_set_csv=str(tmp_path / "sets.md")
        )
    with pytest.raises(ValueError, match=r"with several inputs it needs `output`"):
        plan_outputs({"A": str(source), "B": str(other)}, output_format="latex")


def test_cli_writes_the_table_and_the_json_report_beside_it(tmp_path, capsys):
    out = tmp_path / "paper" / "table.tex"
    per_set = tmp_path / "sets.csv"
    assert (
        main(
            [
                "evaluate",
                str(DEMO),
                "-o",
                str(out),
                "--per-set-csv",
                str(per_set),
                "--decimals",
                "2",
                *NO_MODELS,
            ]
        )
        == 0
    )
    report = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert out.read_text(encoding="utf-8") == format_report(report, "latex", decimals=2)
    assert "lexical\\_diversity & averaged\\_distinct\\_n & response\\_set & " in out.read_text(
        encoding="utf-8"
    )
    assert report["provenance"]["options"]["--output"] == str(out)
    rows = pd.read_csv(per_set)
    assert len(rows) == report["num_sets"] == 8
    assert rows["averaged_distinct_n"].tolist() == pytest.approx(
        [row["averaged_distinct_n"] for row in report["per_set"]], abs=0.005
    )
    assert rows["style"].tolist()[:2] == ["diverse", "dull"]
    printed = capsys.readouterr().out
    assert (
        f"report: {out.with_suffix('.json')}; table: {out}" in printed
        and f"per-set table: {per_set}" in printed
    )


def test_cli_output_errors_name_the_flags(tmp_path, capsys):
    assert (
        main(
            [
                "evaluate",
                str(DEMO),
                "-o",
                str(tmp_path / "r.md"),
                "--output-format",
                "csv",
                *NO_MODELS,
            ]
        )
        == 2
    )
    assert "`--output` " in capsys.readouterr().err
    assert main(["evaluate", str(DEMO), "-o", str(tmp_path / "r.txt"), *NO_MODELS]) == 2
    assert "pass `--output-format`" in capsys.readouterr().err
    assert (
        main(["evaluate", str(DEMO), "-o", str(tmp_path / "r.csv"), "--decimals", "-1", *NO_MODELS])
        == 2
    )
    assert "`--decimals` must be an integer from 0 to 20" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing written
