"""`dialeval evaluate --ci`: an interval on every figure, and each system tested against the
baseline, paired when the systems answer the same contexts."""

import json

import numpy as np
import pytest
from conftest import REPO_ROOT
from registry_steps import MODELS_OFF

from dialeval.cli import main
from dialeval.cli.compare import comparison_table, differences_table, interval_cell
from dialeval.cli.evaluate_job import EvaluationOptions, evaluate_corpus, evaluate_response_sets
from dialeval.cli.report_formats import render_table, summary_rows
from dialeval.cli.significance import check_baseline, match_sets
from dialeval.io import read_response_sets
from dialeval.resampling import interval, mean_statistic

DEMO = REPO_ROOT / "examples" / "demo_response_sets.jsonl"
NO_MODELS = [*MODELS_OFF, "--homogenization-model", "none"]
FAST_STEPS = ["--metric", "lexical_diversity", "--metric", "corpus_lexical_diversity"]


def _options(metrics=("lexical_diversity", "corpus_lexical_diversity", "mtld"), **settings):
    return EvaluationOptions(
        sentence_models=[],
        nli_models=[],
        bertscore_models=[],
        cross_encoder_models=[],
        progress=False,
        metrics=list(metrics),
        **settings,
    )


def _systems(tmp_path, shuffle=False):
    """Two systems answering the demo's contexts: the demo itself and each set's responses
    repeated (a duller system); ``shuffle`` writes the second's sets in another order."""
    lines = DEMO.read_text(encoding="utf-8").splitlines()
    records = [
        {**json.loads(line), "context": f"{json.loads(line)['context']} ({index})"}
        for index, line in enumerate(lines)
    ]
    dull = [
        {**record, "responses": [record["responses"][0]] * 2 + record["responses"][:3]}
        for record in records
    ]
    if shuffle:
        dull = dull[::-1]
    a, b = tmp_path / "lively.jsonl", tmp_path / "dull.jsonl"
    a.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    b.write_text("\n".join(json.dumps(r) for r in dull) + "\n", encoding="utf-8")
    return a, b


def test_every_summary_figure_of_the_python_job_gets_an_interval():
    sets = read_response_sets(DEMO)
    report = evaluate_response_sets(sets, _options(ci=True, num_resamples=200, seed=3))
    assert report["uncertainty"] == {
        "confidence": 0.95,
        "num_resamples": 200,
        "seed": 3,
        "unit": "response set",
    }
    for metric, figure, _, value in summary_rows(report):
        bounds = report["metrics"][metric]["intervals"][figure]
        assert bounds["method"]
        if bounds["low"] is not None:
            assert bounds["low"] <= bounds["high"]
    # a per-set figure's interval is the bootstrap of its per-set values, with the same seed
    values = [row["averaged_distinct_n"] for row in report["per_set"]]
    expected = interval(mean_statistic(values), 200, 3).as_json()
    assert report["metrics"]["lexical_diversity"]["intervals"]["averaged_distinct_n"] == expected
    # the same seed gives the same intervals; another seed other ones
    again = evaluate_response_sets(sets, _options(ci=True, num_resamples=200, seed=3))
    assert again["metrics"] == report["metrics"]
    other = evaluate_response_sets(sets, _options(ci=True, num_resamples=200, seed=4))
    assert other["metrics"] != report["metrics"]


def test_without_ci_the_report_holds_no_interval():
    report = evaluate_response_sets(read_response_sets(DEMO), _options())
    assert "uncertainty" not in report
    assert all("intervals" not in summary for summary in report["metrics"].values())


def test_a_corpus_resamples_its_responses():
    responses = [s.responses[0] for s in read_response_sets(DEMO)] * 3
    options = _options(("corpus_lexical_diversity", "mtld"), ci=True, num_resamples=100)
    report = evaluate_corpus(responses, options)
    assert report["uncertainty"]["unit"] == "response"
    assert "intervals" in report["metrics"]["corpus_lexical_diversity"]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"num_resamples": 500}, r"num_resamples.*--ci|ci"),
        ({"seed": 1}, r"seed.*ci"),
        ({"ci": True, "num_resamples": 99}, r"num_resamples"),
        ({"ci": True, "num_resamples": 10**9}, r"num_resamples"),
        ({"ci": True, "num_resamples": True}, r"num_resamples"),
        ({"ci": True, "seed": -1}, r"seed"),
    ],
)
def test_the_python_job_refuses_bad_resampling_settings(settings, message):
    with pytest.raises(ValueError, match=message):
        _options(**settings)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--num-resamples", "50", "--ci"], "--num-resamples"),
        (["--num-resamples", "100000000", "--ci"], "--num-resamples"),
        (["--num-resamples", "500"], "--num-resamples"),
        (["--seed", "2"], "--seed"),
        (["--baseline", "lively"], "--baseline"),
        (["--ci", "--baseline", "nobody"], "--baseline.*names no system: 'nobody'"),
        (["--pairing", "paired"], "--pairing"),
    ],
)
def test_the_command_line_names_the_flag_it_refuses(tmp_path, capsys, argv, message):
    a, b = _systems(tmp_path)
    out = tmp_path / "cmp.json"
    assert main(["evaluate", str(a), str(b), "-o", str(out), *NO_MODELS, *argv]) == 2
    assert message.split(".*")[0] in capsys.readouterr().err
    assert not out.exists()


def test_a_baseline_needs_two_systems(tmp_path, capsys):
    a, _ = _systems(tmp_path)
    assert main(["evaluate", str(a), "--ci", "--baseline", "lively", *NO_MODELS]) == 2
    assert "--baseline" in capsys.readouterr().err
    assert check_baseline(None, ["x", "y"], True, "auto") == "x"


def test_two_systems_on_the_same_contexts_are_paired_and_compared(tmp_path, capsys):
    a, b = _systems(tmp_path, shuffle=True)
    out = tmp_path / "cmp.json"
    argv = ["evaluate", str(a), str(b), "-o", str(out), "--ci", "--num-resamples", "200"]
    assert main([*argv, *NO_MODELS, *FAST_STEPS, "--baseline", "dull"]) == 0
    comparison = json.loads(out.read_text(encoding="utf-8"))
    assert comparison["baseline"] == "dull"
    assert comparison["pairing"]["lively"].startswith("paired over 8 shared")
    tested = {entry["column"]: entry for entry in comparison["differences"]}
    assert set(tested) >= {"averaged_distinct_n", "distinct_1", "entropy_2"}
    entry = tested["averaged_distinct_n"]
    assert entry["paired"] and entry["system"] == "lively" and entry["difference"] > 0
    assert entry["low"] <= entry["difference"] <= entry["high"]
    assert 0 < entry["p_value"] <= entry["p_holm"] <= 1
    # every number of the table is in the JSON: intervals per system and column
    assert set(comparison["intervals"]) == {"lively", "dull"}
    printed = capsys.readouterr().out
    assert "dull (baseline)" in printed and " *" in printed and "p (Holm)" in printed
    assert "lively: paired over 8 shared" in printed


def test_a_p_value_too_small_to_print_is_a_bound_never_zero():
    def entry(p_value, p_holm):
        return {
            "system": "b",
            "column": "distinct_1",
            "difference": 0.5,
            "low": 0.4,
            "high": 0.6,
            "p_value": p_value,
            "p_holm": p_holm,
            "significant": p_holm is not None and p_holm < 0.05,
            "paired": True,
        }

    comparison = {
        "baseline": "a",
        "differences": [entry(3e-9, 0.0), entry(0.01234, 0.0494), entry(None, None)],
    }
    rows = differences_table(comparison, decimals=4).rows
    assert [row[4:6] for row in rows] == [
        ["<0.0001", "<0.0001"],
        ["0.0123", "0.0494"],
        ["", ""],
    ]
    # --decimals 1 would round 0.0494 to 0.0 and 0.01234 to 0.0: a p-value keeps three
    assert differences_table(comparison, decimals=1).rows[1][4:6] == ["0.012", "0.049"]
    assert differences_table(comparison, decimals=1).rows[0][4] == "<0.001"
    printed = render_table(differences_table(comparison), "text", 4)
    assert "<0.0001" in printed and "0.0000" not in printed


def test_matching_by_id_then_context_and_why_not(tmp_path):
    def report(ids, contexts):
        return {
            "scope": "response_set",
            "per_set": [{"id": i, "context": c} for i, c in zip(ids, contexts)],
        }

    by_id = match_sets(report([1, 2, 3], ["a", "b", "c"]), report([3, 1, 2], ["c", "a", "b"]))
    assert by_id == ([0, 1, 2], [1, 2, 0], "paired over 3 shared ids")
    without_contexts = match_sets(report([1, 2], [None, None]), report([2, 1], [None, None]))
    assert without_contexts == ([0, 1], [1, 0], "paired over 2 shared ids")
    by_context = match_sets(
        report([None, None], [["a"], ["b"]]), report([None, None], [["b"], ["a"]])
    )
    assert by_context == ([0, 1], [1, 0], "paired over 2 shared contexts")
    apart = match_sets(report([1, 2], ["a", "b"]), report([5, 6], ["a", "q"]))
    assert apart == "they share no id; they share 1 of 2 and 2 contexts"
    assert "corpus" in match_sets({"scope": "corpus"}, report([1], ["a"]))
    # ids that number each file's lines match whatever the files hold: the contexts decide
    renumbered = match_sets(report([0, 1], ["a", "b"]), report([0, 1], ["b", "a"]))
    assert renumbered == ([0, 1], [1, 0], "paired over 2 shared contexts")
    clash = match_sets(report([0, 1], ["a", "b"]), report([0, 1], ["c", "d"]))
    assert clash.startswith("the sets with id 0 answer different contexts")


def test_systems_that_share_no_context_are_unpaired_or_refused_when_pairing_is_required(
    tmp_path, capsys
):
    a, _ = _systems(tmp_path)
    records = [json.loads(line) for line in a.read_text(encoding="utf-8").splitlines()]
    other = tmp_path / "other.jsonl"
    other.write_text(
        "\n".join(
            json.dumps({"context": [f"elsewhere {i}"], "responses": r["responses"]})
            for i, r in enumerate(records)
        )
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "cmp.json"
    argv = ["evaluate", str(a), str(other), "-o", str(out), "--ci", "--num-resamples", "100"]
    assert main([*argv, *NO_MODELS, *FAST_STEPS]) == 0
    comparison = json.loads(out.read_text(encoding="utf-8"))
    assert comparison["pairing"]["other"].startswith("unpaired: ")
    assert not any(entry["paired"] for entry in comparison["differences"])
    out.unlink()
    capsys.readouterr()
    assert main([*argv, *NO_MODELS, *FAST_STEPS, "--pairing", "paired"]) == 2
    refusal = capsys.readouterr()
    assert "`--pairing` paired: other and lively cannot be paired" in refusal.err
    assert "== lively" not in refusal.out  # refused before any system ran


def test_the_comparison_table_prints_each_interval_and_marks_the_differences():
    reports = {
        name: {"num_sets": 3, "metrics": {"m": {"scope": "response_set", "f": value}}}
        for name, value in (("A", 0.5), ("B", 0.412))
    }
    comparison = {
        "baseline": "A",
        "intervals": {
            "A": {"f": {"low": 0.45, "high": 0.55, "method": "x"}},
            "B": {"f": {"low": 0.405, "high": 0.419, "method": "x"}},
        },
        "differences": [{"system": "B", "column": "f", "significant": True}],
    }
    table = comparison_table(reports, comparison, decimals=3)
    assert table.rows == [
        ["A (baseline)", 3, None, "0.500 [0.450, 0.550]"],
        ["B", 3, None, "0.412 [0.405, 0.419] *"],
    ]
    for table_format in ("csv", "markdown", "latex", "text"):
        assert "0.412 [0.405, 0.419] *" in render_table(table, table_format, 3)
    assert interval_cell(0.5, {"low": None, "high": None}, 2) == "0.50 [undefined]"


def test_the_interval_of_a_constant_figure_is_never_nan():
    statistic = mean_statistic([0.25] * 5)
    bounds = interval(statistic, 100, 0).as_json()
    assert json.dumps(bounds, allow_nan=False)
    assert np.isfinite(bounds["low"]) if bounds["low"] is not None else bounds["undefined"]


def test_intervals_run_no_model_again(monkeypatch):
    from sentence_transformers import SentenceTransformer

    from dialeval.hub import EMBEDDED_SENTENCE_MODEL, load_sentence_encoder
    from dialeval.sentence_graph import ExportedSentenceEncoder

    # loaded (and its pipeline checked and recorded) before counting: the check encodes probes
    load_sentence_encoder(EMBEDDED_SENTENCE_MODEL)
    forwards = []

    def counted(original):
        def counting(self, *args, **kwargs):
            forwards.append(1)
            return original(self, *args, **kwargs)

        return counting

    # a batch through sentence-transformers, or through the exported encoder (one tokenize each)
    monkeypatch.setattr(SentenceTransformer, "forward", counted(SentenceTransformer.forward))
    monkeypatch.setattr(
        ExportedSentenceEncoder, "tokenize", counted(ExportedSentenceEncoder.tokenize)
    )
    sets = read_response_sets(DEMO)
    steps = ["sent_bert", "vendi", "remote_clique", "chamfer_distance"]
    settings = {"metrics": steps, "progress": False, "nli_models": [], "bertscore_models": []}
    plain = evaluate_response_sets(sets, EvaluationOptions(**settings))
    without = len(forwards)
    assert without > 0
    with_ci = evaluate_response_sets(sets, EvaluationOptions(**settings, ci=True))
    # the second run reads the first's vectors from no store: it encodes as much, and no more
    assert len(forwards) - without == without
    for name, summary in with_ci["metrics"].items():
        assert {k: v for k, v in summary.items() if k != "intervals"} == plain["metrics"][name]
        assert all(bounds["low"] is not None for bounds in summary["intervals"].values()), name
