"""examples/reproduce/ end to end on tiny models (smoke): each script writes its table in the paper's
layout, and the numbers in it are the ones the library computes for the same inputs."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest
import torch

SCRIPTS = Path(__file__).resolve().parents[2] / "examples" / "reproduce"


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Tiny models, many small forwards: on a loaded 2-core machine thread hand-offs dominate."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def table_rows(markdown: str) -> list[list[str]]:
    """The body rows of the first Markdown table in ``markdown``."""
    lines = [line for line in markdown.splitlines() if line.startswith("|")]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    body = []
    for row in rows[2:]:
        if row == rows[0]:  # a second table starts
            break
        body.append(row)
    return body


def test_table3_nli_diversity_against_human_judgements(
    shared_data, tiny_roberta_nli_path, tmp_path
):
    from scipy.stats import spearmanr

    from dialeval.datasets_scripts import load
    from dialeval.metrics.nli_diversity import nli_diversity

    data_dir = str(shared_data / "tevet-diversity-eval")
    cache = str(tmp_path / "cache")
    results = load_script("stasaski2022_table3").main(
        [
            "--nli-model",
            tiny_roberta_nli_path,
            "--data-dir",
            data_dir,
            "--limit",
            "12",
            "--out-dir",
            str(tmp_path / "out"),
            "--cache-dir",
            cache,
        ]
    )
    rows = table_rows((tmp_path / "out" / "table3.md").read_text(encoding="utf-8"))
    assert [row[0] for row in rows] == [
        "Baseline NLI Diversity",
        "Neutral NLI Diversity",
        "Confidence NLI Diversity",
        "# Contradiction",
        "# Neutral",
        "# Entailment",
    ]
    assert rows[0][3:] == ["0.48", "0.63"] and rows[5][3:] == [
        "-0.48",
        "-0.65",
    ]  # the paper's printed values
    # The table's rho is Spearman's rho of the library's per-set figures against the absHDS means.
    rated = load(
        "diversity_eval", "con_test_200_resp_gen", data_dir=data_dir, split="test", cache_dir=cache
    ).select(range(12))
    per_set = nli_diversity(rated["responses"], model=tiny_roberta_nli_path)["per_set"]
    expected = spearmanr([row["num_entailment"] for row in per_set], rated["abs_hds_mean"])[0]
    assert results["tests"]["conTest"]["rho"]["num_entailment"]["spearman"] == pytest.approx(
        expected
    )
    assert rows[5][2] == f"{expected:.2f}"
    assert (
        json.loads((tmp_path / "out" / "table3.json").read_text())["tests"]["decTest"]["num_sets"]
        == 12
    )


def test_table4_dtg_through_the_cli(
    shared_data, tiny_gpt2_path, tiny_bart_path, tiny_roberta_nli_path, tmp_path
):
    contexts = tmp_path / "emp.jsonl"
    contexts.write_text(
        '{"context": ["i heard a noise downstairs last night.", "oh no, what was it?"], "id": "c1"}\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    first = load_script("stasaski2022_table4").main(
        [
            "--dialogpt",
            tiny_gpt2_path,
            "--blenderbot",
            tiny_bart_path,
            "--nli-model",
            tiny_roberta_nli_path,
            "--dailydialog-dir",
            str(shared_data / "dailydialog-plusplus"),
            "--empathetic-input",
            str(contexts),
            "--limit",
            "1",
            "--max-new-tokens",
            "3",
            "--blenderbot-context-tokens",
            "32",
            "--dialogpt-context-tokens",
            "32",
            "--dtg-args",
            "--max-samples 6",
            "--trials",
            "1",
            "--out-dir",
            str(out),
        ]
    )
    first_table = (out / "table4.md").read_text(encoding="utf-8")
    rows = table_rows(first_table)
    assert [row[:3] for row in rows] == [
        [metric, model, dataset]
        for metric in ("Baseline NLI", "Distinct-n", "Sent-BERT")
        for model in ("DG", "BB")
        for dataset in ("Daily", "Emp")
    ]
    assert rows[0][6:] == ["4.11", "10.24", "6.3"] and rows[-1][6:] == ["-0.71", "-0.52", "19.7"]
    # Each row is the dtg-summary row of its own CLI run.
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert len(summary) == 12
    for row, summary_row in zip(rows, summary):
        assert row[3:5] == [
            f"{summary_row['starting_diversity']:.2f}",
            f"{summary_row['ending_diversity']:.2f}",
        ]
        assert summary_row["num_contexts"] == 1
    assert [s["model"] for s in summary[:4]] == [
        tiny_gpt2_path,
        tiny_gpt2_path,
        tiny_bart_path,
        tiny_bart_path,
    ]
    assert (out / "nli_bb_emp.jsonl").read_text(encoding="utf-8").count("\n") == 1
    # A second invocation (no --overwrite) reuses the outputs and gives the same rows (seeded runs).
    again = load_script("stasaski2022_table4").main(
        [
            "--dialogpt",
            tiny_gpt2_path,
            "--nli-model",
            tiny_roberta_nli_path,
            "--metrics",
            "nli",
            "--dailydialog-dir",
            str(shared_data / "dailydialog-plusplus"),
            "--empathetic-input",
            str(contexts),
            "--limit",
            "1",
            "--max-new-tokens",
            "3",
            "--dialogpt-context-tokens",
            "32",
            "--dtg-args",
            "--max-samples 6",
            "--trials",
            "1",
            "--out-dir",
            str(out),
        ]
    )
    assert [row["summary"] for row in again["rows"]] == summary[:2]
    # Before the table: ours next to the paper's, the Sent-BERT embedder, and every setting that differs.
    before = first_table.split("Table 4:")[0]
    assert "Baseline NLI DG Daily: starting div. " in before
    assert (
        "(paper 4.11), ending div." in before
        and "num. sampled" in before
        and "(paper 6.3)" in before
    )
    assert (
        "trials: 1 per run (paper, §6.1: 10)" in before
        and "Daily: 1 contexts (paper, §6.1: 1,028)" in before
    )
    # the paper's BERT is not here: the embedded MiniLM, with the threshold calibrated for it, passed to the CLI
    settings = json.loads((out / "sent_bert_dg_daily.jsonl.run.json").read_text(encoding="utf-8"))
    assert (
        settings["metric_model"] == "sentence-transformers/all-MiniLM-L6-v2"
        and settings["threshold"] == -0.1597
    )
    assert settings["effective_threshold"] == -0.1597
    assert "Sent-BERT embedder: sentence-transformers/all-MiniLM-L6-v2" in before
    assert (
        first["sent_bert_embedder"]["threshold"] == -0.1597
        and "trials: 1 per run (paper, §6.1: 10)" in first["differs_from_paper"]
    )


def test_table4_defaults_to_the_papers_ten_trials_and_its_embedder_when_present(
    monkeypatch, tmp_path
):
    from dialeval.generation.dtg_thresholds import PAPER_SENT_BERT_MODEL, SENT_BERT_THRESHOLDS

    script = load_script("stasaski2022_table4")
    args = script.parse_args(["--dialogpt", "G", "--out-dir", str(tmp_path)])
    assert args.trials == 10
    monkeypatch.setattr(script, "locally_available", lambda model: model == PAPER_SENT_BERT_MODEL)
    args.embedder = script.sentence_embedder(args)
    assert args.embedder["model"] == PAPER_SENT_BERT_MODEL and args.embedder["threshold"] == -0.179
    command = script.dtg_command(args, "sent_bert", "dialogpt", "daily", tmp_path / "run.jsonl")
    assert (
        command[command.index("--trials") + 1] == "10"
        and command[command.index("--threshold") + 1] == "-0.179"
    )
    assert command[command.index("--metric-model") + 1] == PAPER_SENT_BERT_MODEL
    assert not any(
        item.startswith(("trials", "Sent-BERT"))
        for item in script.settings_that_differ(args, {"daily": 1028})
    )
    monkeypatch.setattr(script, "locally_available", lambda model: False)
    args.embedder = script.sentence_embedder(args)
    assert (
        args.embedder["model"] == "sentence-transformers/all-MiniLM-L6-v2"
        and args.embedder["threshold"] == -0.1597
    )
    assert any(
        item.startswith("Sent-BERT embedder: sentence-transformers/all-MiniLM-L6-v2")
        for item in script.settings_that_differ(args, {"daily": 1028})
    )
    # the paper's embedder in a folder: named, so it must be there; the paper's threshold goes with it
    folder = tmp_path / "bert-large-nli-stsb-mean-tokens"
    folder.mkdir()
    args = script.parse_args(
        ["--dialogpt", "G", "--paper-sentence-model", str(folder), "--out-dir", str(tmp_path)]
    )
    assert script.sentence_embedder(args) == {
        "model": str(folder),
        "threshold": -0.179,
        "paper_embedder": True,
        "source": SENT_BERT_THRESHOLDS[PAPER_SENT_BERT_MODEL].source,
    }
    args = script.parse_args(
        ["--dialogpt", "G", "--paper-sentence-model", str(tmp_path / "nowhere"), "--out-dir", "o"]
    )
    with pytest.raises(SystemExit) as stop:
        script.sentence_embedder(args)
    assert stop.value.code == 2
    # another embedder with no calibrated threshold: the library's fallback, listed as a difference
    args = script.parse_args(
        ["--dialogpt", "G", "--sentence-model", str(folder), "--out-dir", str(tmp_path)]
    )
    args.embedder = script.sentence_embedder(args)
    assert args.embedder["threshold"] is None and not args.embedder["paper_embedder"]
    assert "--threshold" not in script.dtg_command(
        args, "sent_bert", "dialogpt", "daily", tmp_path / "run.jsonl"
    )
    assert any(
        "the library's fallback -0.179" in item
        for item in script.settings_that_differ(args, {"daily": 1028})
    )


def test_fig2_beam_size_sweep_and_plot(
    tiny_gpt2_path, tiny_bart_path, tiny_roberta_yes_no_path, tmp_path
):
    from dialeval.generation import beam_size_sweep, dialogue_prompt
    from dialeval.hub import load_model

    records = [
        {
            "history": "Yeah I'm in North Carolina.",
            "message": "Are you in North Carolina?",
            "expected_answer": "yes",
            "input_type": "ENTQ",
        },
        {
            "history": "I have a dog named max.",
            "message": "Do you have a dog?",
            "expected_answer": "yes",
            "input_type": "ENTQ",
        },
        {
            "history": "Yeah I'm in North Carolina.",
            "message": "Aren't you in South Carolina?",
            "expected_answer": "no",
            "input_type": "CNTQ",
        },
        {
            "history": "I work as a nurse.",
            "message": "Aren't you a teacher?",
            "expected_answer": "no",
            "input_type": "CNTQ",
        },
    ]
    inputs = tmp_path / "polar.jsonl"
    inputs.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    out = tmp_path / "out"
    data = load_script("sato2022_fig2").main(
        [
            "--model",
            f"tiny gpt2={tiny_gpt2_path}",
            "--model",
            f"tiny bart={tiny_bart_path}",
            "--classifier",
            tiny_roberta_yes_no_path,
            "--inputs",
            str(inputs),
            "--beam-sizes",
            "1",
            "3",
            "--max-new-tokens",
            "4",
            "--batch-size",
            "3",
            "--out-dir",
            str(out),
        ]
    )
    png = (out / "fig2.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    rows = table_rows((out / "fig2.md").read_text(encoding="utf-8"))
    assert [row[:2] for row in rows] == [
        ["tiny gpt2", "1"],
        ["tiny gpt2", "3"],
        ["tiny bart", "1"],
        ["tiny bart", "3"],
    ]
    # The figure's points are beam_size_sweep's on the same prompts.
    loaded = load_model(tiny_bart_path, "language_model")
    prompts = [
        dialogue_prompt([r["history"], r["message"]], loaded.tokenizer, loaded.model)
        for r in records
    ]
    expected = beam_size_sweep(
        loaded.model,
        loaded.tokenizer,
        prompts,
        [r["expected_answer"] for r in records],
        tiny_roberta_yes_no_path,
        beam_sizes=[1, 3],
        input_types=[r["input_type"] for r in records],
        questions=[r["message"] for r in records],
        max_new_tokens=4,
    )
    assert [p["per_type"] for p in data["sweeps"]["tiny bart"]] == [p["per_type"] for p in expected]
    certainty = expected[1]["per_type"]["ENTQ"]["certainty"]
    assert rows[3][2] == ("nan" if math.isnan(certainty) else f"{certainty:.3f}")
