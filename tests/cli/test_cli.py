"""`dialeval evaluate`: the main job, end to end on the bundled demo file."""

import json

import pytest
from conftest import REPO_ROOT
from registry_steps import expected_figures

from dialeval.cli import main
from dialeval.cli.evaluate_job import EvaluationOptions
from dialeval.io import read_response_sets

DEMO = REPO_ROOT / "examples" / "demo_response_sets.jsonl"


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "report.json"
    # EAD has no default vocabulary size: the demo's is GPT-2's, given as a user would
    command = ["evaluate", str(DEMO), "--output", str(out), "--no-progress"]
    assert main([*command, "--ead-vocab-size", "50257"]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_report_holds_lexical_and_semantic_figures(demo_report):
    metrics = demo_report["metrics"]
    assert demo_report["num_sets"] == 8 and demo_report["num_responses"] == 40
    assert set(metrics["lexical_diversity"]) >= {"averaged_distinct_n", "ngram_cosine_diversity"}
    assert set(metrics["corpus_lexical_diversity"]) >= {"distinct_1", "entropy_3", "lf"}
    assert 0 < metrics["self_bleu"]["self_bleu"] < 1 and metrics["self_bleu"]["scope"] == "corpus"
    # every registered step that fits response sets runs, compression ratio included
    assert (
        metrics["compression_ratio"]["compression_ratio"] > 1 and len(demo_report["per_set"]) == 8
    )
    assert all(row["compression_ratio"] > 1 for row in demo_report["per_set"])
    assert (
        "sent_bert_diversity"
        in metrics["sent_bert_diversity[sentence-transformers/all-MiniLM-L6-v2]"]
    )
    assert "vendi_score" in metrics["vendi_score[sentence-transformers/all-MiniLM-L6-v2]"]
    # The default NLI / BERTScore / cross-encoder models are not on an offline machine: listed, not fatal.
    skipped = {entry["metric"]: entry["reason"] for entry in demo_report["skipped"]}
    # a part-of-speech tagger is not part of the install: skipped with how to install one
    assert "spacy download" in skipped.pop("pos_templates", "spacy download")
    assert set(skipped) == {
        "nli_diversity[FacebookAI/roberta-large-mnli]",
        "bertscore_diversity[FacebookAI/roberta-large]",
        "cross_encoder_diversity[cross-encoder/stsb-roberta-large]",
        "homogenization_bertscore[microsoft/deberta-base-mnli]",
    }
    # every model-free step runs by default (the registry's, e.g. the diversity package's measures and EAD)
    for name in expected_figures("response_set", EvaluationOptions(ead_vocab_size=50257)):
        assert name in metrics, name
    for name in ("ead", "self_repetition", "homogenization_rougel", "homogenization_bleu"):
        assert all(name in row for row in demo_report["per_set"]), name
    assert all("hf download" in reason for reason in skipped.values())


def test_semantic_diversity_separates_the_demo_sets(demo_report):
    sets = read_response_sets(DEMO)
    for diverse, dull in zip(demo_report["per_set"][0::2], demo_report["per_set"][1::2]):
        assert diverse["context"] == dull["context"]
        assert diverse["sent_bert_diversity"] > dull["sent_bert_diversity"]
    assert [s.metadata["style"] for s in sets[:2]] == ["diverse", "dull"]


def test_missing_model_is_skipped_with_reason(tmp_path, capsys):
    out = tmp_path / "r.json"
    code = main(
        [
            "evaluate",
            str(DEMO),
            "-o",
            str(out),
            "--no-progress",
            "--sentence-model",
            "nobody/no-such-model",
        ]
    )
    assert code == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    skipped = {entry["metric"]: entry["reason"] for entry in report["skipped"]}
    assert {
        "sent_bert_diversity[nobody/no-such-model]",
        "vendi_score[nobody/no-such-model]",
    } <= set(skipped)
    assert "hf download" in skipped["sent_bert_diversity[nobody/no-such-model]"]
    assert "lexical_diversity" in report["metrics"]
    assert "skipped sent_bert_diversity[nobody/no-such-model]" in capsys.readouterr().out


def test_tevet_csv_and_reference_corpus(tmp_path):
    csv_path = tmp_path / "sets.csv"
    csv_path.write_text(
        'sample_id,context,resp_1,resp_0,label_value\n1,"Hi, héllo","yo\nyo",hey,1.0\n2,ctx,b,a,0.0\n',
        encoding="utf-8",
    )
    reference = tmp_path / "train.txt"
    reference.write_text("hey\n" * 3 + "\nyo\n", encoding="utf-8")
    out = tmp_path / "r.json"
    args = ["evaluate", str(csv_path), "-o", str(out), "--no-progress", "--no-sentence-model"]
    assert main(args + ["--reference-corpus", str(reference), "--lf-threshold", "1"]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["per_set"][0]["context"] == "Hi, héllo"
    # tokens: hey yo yo a b; reference counts hey 3, yo 1, a 0, b 0 -> 4 of 5 tokens are rare
    corpus = report["metrics"]["corpus_lexical_diversity"]
    assert corpus["lf"] == pytest.approx(4 / 5)
    assert corpus["lf_counted_against"] == "reference corpus"


def test_bad_input_exits_2_with_message(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"responses": ["fine", "ok"]}\n{"responses": ["", "x"]}\n', encoding="utf-8")
    assert main(["evaluate", str(bad), "--no-progress", "--no-sentence-model"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2: response 0 is empty; pass --allow-empty" in err and "allow_empty" not in err
    assert main(["evaluate", str(tmp_path / "missing.jsonl")]) == 2
    not_json = tmp_path / "x.jsonl"
    not_json.write_text("{oops\n", encoding="utf-8")
    assert main(["evaluate", str(not_json)]) == 2
    assert "x.jsonl:1: not valid JSON" in capsys.readouterr().err


def test_allow_empty_flag(tmp_path):
    data = tmp_path / "e.jsonl"
    data.write_text('{"responses": ["", ""]}\n{"responses": ["a b", "c"]}\n', encoding="utf-8")
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "evaluate",
                str(data),
                "-o",
                str(out),
                "--no-progress",
                "--no-sentence-model",
                "--allow-empty",
            ]
        )
        == 0
    )
    assert json.loads(out.read_text(encoding="utf-8"))["per_set"][0]["averaged_distinct_n"] == 0.0


def test_nli_and_cross_encoder_join_with_local_models(
    tmp_path, tiny_roberta_nli_path, tiny_cross_encoder_path
):
    out = tmp_path / "r.json"
    args = [
        "evaluate",
        str(DEMO),
        "-o",
        str(out),
        "--no-progress",
        "--ead-vocab-size",
        "50257",
        "--no-sentence-model",
        "--bertscore-model",
        "none",
    ]
    args += [
        "--nli-model",
        tiny_roberta_nli_path,
        "--cross-encoder-model",
        tiny_cross_encoder_path,
        "--homogenization-model",
        "none",
    ]
    assert main(args) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    # every model given is here; a part-of-speech tagger is not part of the install
    assert [entry for entry in report["skipped"] if entry["metric"] != "pos_templates"] == []
    nli = report["metrics"][f"nli_diversity[{tiny_roberta_nli_path}]"]
    assert nli["num_pairs"] == 8 * 5 * 4
    row = report["per_set"][0]
    assert {
        "nli_diversity",
        "nli_diversity_confidence",
        "num_entailment",
        "cross_encoder_diversity",
    } <= set(row)
    assert row["num_contradiction"] + row["num_neutral"] + row["num_entailment"] == 20
