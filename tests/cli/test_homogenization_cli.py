"""``dialeval evaluate`` and ``meta-eval`` run the homogenization steps from the registry."""

import json

from dialeval.cli.main import main
from dialeval.metrics import homogenization, homogenization_per_set
from dialeval.metrics.registry import set_scorer

SETS = [["I like tea.", "I like tea a lot.", "Coffee, please."], ["Yes.", "No.", "Yes."]]


def test_evaluate_runs_the_model_free_and_model_backed_homogenization(
    tmp_path, tiny_roberta_nli_path
):
    source = tmp_path / "sets.jsonl"
    source.write_text("".join(json.dumps({"responses": s}) + "\n" for s in SETS))
    output = tmp_path / "report.json"
    assert (
        main(
            [
                "evaluate",
                str(source),
                "--output",
                str(output),
                "--metric",
                "homogenization_rougel",
                "--metric",
                "homogenization_bleu",
                "--metric",
                "homogenization_bertscore",
                "--homogenization-model",
                tiny_roberta_nli_path,
                "--device",
                "cpu",
                "--no-progress",
            ]
        )
        == 0
    )
    report = json.loads(output.read_text())
    text = json.dumps(report)
    for name in (
        "homogenization_rougel",
        "homogenization_bleu",
        f"homogenization_bertscore[{tiny_roberta_nli_path}]",
    ):
        assert name in text, name
    assert str(round(sum(homogenization_per_set(SETS)) / 2, 6))[:6] in text


def test_set_scorers_give_per_set_figures():
    result = set_scorer("homogenization_rougel").run(SETS)
    assert [row["homogenization_rougel"] for row in result["per_set"]] == [
        homogenization(s) for s in SETS
    ]
    assert set_scorer("homogenization_bertscore").default_model == "microsoft/deberta-base-mnli"
    # one-token texts
    assert set_scorer("homogenization_bleu").run(SETS)["per_set"][1]["homogenization_bleu"] == 0.0
