"""examples/train_yes_no_classifier.py as a smoke test: a tiny RoBERTa, a synthetic Circa TSV in
the released format, two Trainer steps; the saved classifier must plug into the metric."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch

from dialeval.datasets_scripts.circa.circa import COLUMNS, STRICT_LABELS
from dialeval.metrics.nbest_contradiction.yes_no import ModelYesNoClassifier

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "train_yes_no_classifier.py"
NOT_SURE = "I am not sure how X will interpret Y\u2019s answer"
LABELS = [
    "Yes",
    "No",
    "Probably yes / sometimes yes",
    "Probably no",
    "Yes, subject to some conditions",
    "In the middle, neither yes nor no",
    NOT_SURE,
]


def load_script():
    spec = importlib.util.spec_from_file_location("train_yes_no_classifier", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def circa_tsv(tmp_path):
    rows = []
    for i in range(24):  # 21 labelled with the paper's seven labels, one Other, two NA
        strict = LABELS[i % 7] if i < 21 else ("Other" if i == 21 else "NA")
        relaxed = {
            "Probably yes / sometimes yes": "Yes",
            "Probably no": "No",
            NOT_SURE: "In the middle, neither yes nor no",
        }.get(strict, strict)
        rows.append(
            [
                str(i + 1),
                "X wants to know about Y's food preferences.",
                f"Do you like dish {i}?",
                f"I like dish {i}.",
                f"answer number {i}",
                "#".join([strict if strict != "NA" else "Yes"] * 5),
                strict,
                relaxed,
            ]
        )
    path = tmp_path / "circa-data.tsv"
    path.write_text(
        "\n".join("\t".join(row) for row in [list(COLUMNS), *rows]) + "\n", encoding="utf-8"
    )
    return path


@pytest.mark.parametrize(
    ("labels", "expected_labels", "input_form"),
    [
        (
            "paper",
            [name for name in STRICT_LABELS if name != "Other"],
            "answer",
        ),  # App. C: seven labels
        ("yes_no_ambiguous", ["yes", "no", "ambiguous"], "question_answer"),
    ],
)
def test_training_script_smoke(
    tmp_path, circa_tsv, tiny_roberta_nli_path, labels, expected_labels, input_form
):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny model on a shared 2-core machine: thread hand-offs dominate
    try:
        summary = load_script().main(
            [
                "--source-path",
                str(circa_tsv),
                "--no-verify",
                "--model",
                tiny_roberta_nli_path,
                "--labels",
                labels,
                "--input",
                input_form,
                "--max-steps",
                "2",
                "--batch-size",
                "4",
                "--cpu",
                "--output-dir",
                str(tmp_path / "out"),
            ]
        )
    finally:
        torch.set_num_threads(threads)
    # 21 labelled pairs (Other and NA left out and counted), split 8:2 at random.
    assert summary["left_out"] == {"no majority (NA)": 2, "Other": 1}
    assert (summary["num_train"], summary["num_validation"]) == (16, 5)
    assert summary["labels"] == expected_labels
    assert 0.0 <= summary["validation"]["eval_accuracy"] <= 1.0
    saved = json.loads((tmp_path / "out" / "yes_no_training.json").read_text())
    assert saved == summary
    classifier = ModelYesNoClassifier(str(tmp_path / "out"), device="cpu")
    assert classifier.needs_questions == (input_form == "question_answer")
    questions = ["Do you like it?"] * 2 if classifier.needs_questions else None
    assert set(classifier.classify(["Yes, a lot.", "Never."], questions)) <= {
        "yes",
        "no",
        "ambiguous",
    }


def test_validation_fraction_is_checked(circa_tsv, tmp_path):
    with pytest.raises(SystemExit):
        load_script().parse_args(
            [
                "--source-path",
                str(circa_tsv),
                "--output-dir",
                str(tmp_path),
                "--validation-fraction",
                "1.5",
            ]
        )


def test_defaults_are_the_papers_setup(circa_tsv, tmp_path):
    """App. B: roberta-large fine-tuned on Circa's (question, answer) pairs, as Louis et al. (2020)."""
    args = load_script().parse_args(
        ["--source-path", str(circa_tsv), "--output-dir", str(tmp_path)]
    )
    assert args.model == "FacebookAI/roberta-large"
    assert args.input == "question_answer"
    assert (args.labels, args.validation_fraction) == ("paper", 0.2)
    options = load_script().parse_args(
        [
            "--source-path",
            str(circa_tsv),
            "--output-dir",
            str(tmp_path),
            "--model",
            "FacebookAI/roberta-base",
            "--input",
            "answer",
        ]
    )
    assert (options.model, options.input) == ("FacebookAI/roberta-base", "answer")
