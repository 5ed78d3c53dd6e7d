"""Train the yes/no classifier of Sato et al. (2022, §3.2, App. B) on Circa with the HF Trainer.

App. B: RoBERTa fine-tuned on Circa (Louis et al. 2020), the corpus split at random into
train:valid = 8:2. The trained directory is what ``classifier=`` of the ``nbest_contradiction``
metric takes: its labels carry Circa's names, which the metric maps to yes / no / ambiguous
(App. C, footnote 9), and its config records ``yes_no_input`` (``answer`` or
``question_answer``) so the metric knows whether to pass the questions.

Label sets (``--labels``):

- ``paper`` (default): the seven interpretation labels of the strict gold standard
  (``goldstandard1``) -- App. C's "seven different labels"; "Other" and no-majority ("NA") pairs
  are left out of training (counted and printed).
- ``yes_no_ambiguous``: the same pairs, labels collapsed to yes / no / ambiguous.
- ``relaxed``: the relaxed gold standard's five labels (``goldstandard2``), NA left out.

Defaults follow the paper (App. B): ``FacebookAI/roberta-large`` on the (question, answer) pair,
as Louis et al. (2020) classify Circa (``--input question_answer``: an answer alone cannot be read
correctly, e.g. "We call it coke." after "Don't you always call it Coke?" refutes the question, after
"Do you call it coke?" confirms it). ``--model FacebookAI/roberta-base`` and ``--input answer`` remain
as options (cheaper; the answer-only classifier needs no questions at scoring time). The other
settings (learning rate 2e-5, 3 epochs, batch 32, 128 tokens) are our choice: App. B defers to
Louis et al.'s settings without restating them, and their paper is not in this project's spec.

Usage::

    .venv/bin/python examples/train_yes_no_classifier.py --data-dir DIR_WITH_circa-data.tsv --output-dir runs/yes-no
    # smoke test: a tiny local model, a few steps
    .venv/bin/python examples/train_yes_no_classifier.py --source-path tiny.tsv --no-verify \\
        --model path/to/tiny-roberta --max-steps 2 --output-dir /tmp/yes-no
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

LABEL_SETS = ("paper", "yes_no_ambiguous", "relaxed")
INPUT_FORMS = ("answer", "question_answer")
#: App. B: "we fine-tuned the pretrained RoBERTa (roberta-large)", on Circa's (question, answer) pairs.
DEFAULT_MODEL = "FacebookAI/roberta-large"
DEFAULT_INPUT = "question_answer"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--data-dir", help="folder holding circa-data.tsv (the released TSV)")
    source.add_argument("--source-path", help="the Circa TSV itself")
    parser.add_argument(
        "--no-verify", action="store_true", help="do not check the TSV's sha256 (edited copies)"
    )
    parser.add_argument("--output-dir", required=True)
    parser.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        help="Hub id or local directory (default: App. B's roberta-large)",
    )
    parser.add_argument("--labels", choices=LABEL_SETS, default="paper")
    parser.add_argument(
        "--input",
        choices=INPUT_FORMS,
        default=DEFAULT_INPUT,
        help="classify the (question, answer) pair (default: the paper, as Louis et al.) or the answer alone",
    )
    parser.add_argument(
        "--validation-fraction", type=float, default=0.2, help="App. B: train:valid = 8:2"
    )
    parser.add_argument("--epochs", type=float, default=3.0)
    parser.add_argument(
        "--max-steps", type=int, default=-1, help="overrides --epochs when > 0 (smoke tests)"
    )
    parser.add_argument("--learning-rate", type=float, default=2e-5)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--cpu", action="store_true", help="train on the CPU even when a GPU is present"
    )
    args = parser.parse_args(argv)
    if not 0 < args.validation_fraction < 1:
        parser.error(f"--validation-fraction must be in (0, 1), got {args.validation_fraction}")
    return args


def load_examples(args) -> tuple[list[dict], list[str], dict]:
    """Circa pairs with a label of the chosen set, the label names, and what was left out (counted)."""
    from dialeval.datasets_scripts import prepare
    from dialeval.datasets_scripts.circa import Circa
    from dialeval.labels import answer_of_label

    config = "relaxed" if args.labels == "relaxed" else "strict"
    builder = Circa(
        config_name=config,
        data_dir=args.data_dir,
        source_path=args.source_path,
        verify_checksums=not args.no_verify,
    )
    prepare(builder)
    data = builder.as_dataset(split="train")
    names = data.features["label"].names
    if args.labels == "relaxed":
        label_names = list(names)
    else:
        label_names = [name for name in names if name != "Other"]
    if args.labels == "yes_no_ambiguous":
        label_names = ["yes", "no", "ambiguous"]
    examples, left_out = [], {"no majority (NA)": 0, "Other": 0}
    for record in data:
        if record["label"] == -1:
            left_out["no majority (NA)"] += 1
            continue
        name = names[record["label"]]
        if name == "Other" and args.labels != "relaxed":
            left_out["Other"] += 1
            continue
        target = answer_of_label(name) if args.labels == "yes_no_ambiguous" else name
        examples.append(
            {
                "question": record["question"],
                "answer": record["answer"],
                "label": label_names.index(target),
            }
        )
    return examples, label_names, left_out


def main(argv=None) -> dict:
    args = parse_args(argv)
    import datasets
    from sklearn.metrics import accuracy_score, f1_score
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        DataCollatorWithPadding,
        Trainer,
        TrainingArguments,
        set_seed,
    )

    from dialeval.hub import resolve_model_path

    set_seed(args.seed)
    examples, label_names, left_out = load_examples(args)
    if len(examples) < 2:
        raise SystemExit(f"only {len(examples)} labelled Circa pairs: nothing to split 8:2")
    print(f"{len(examples)} labelled pairs; left out: {left_out}; labels: {label_names}")

    # App. B: a random split of the whole corpus, train:valid = 8:2 (seeded).
    split = datasets.Dataset.from_list(examples).train_test_split(
        test_size=args.validation_fraction, seed=args.seed
    )
    model_path = resolve_model_path(args.model)
    tokenizer = AutoTokenizer.from_pretrained(model_path)

    def tokenize(batch):
        if args.input == "question_answer":
            return tokenizer(
                batch["question"], batch["answer"], truncation=True, max_length=args.max_length
            )
        return tokenizer(batch["answer"], truncation=True, max_length=args.max_length)

    columns = ["question", "answer"]
    train = split["train"].map(tokenize, batched=True, remove_columns=columns)
    valid = split["test"].map(tokenize, batched=True, remove_columns=columns)

    model = AutoModelForSequenceClassification.from_pretrained(
        model_path,
        num_labels=len(label_names),
        id2label=dict(enumerate(label_names)),
        label2id={name: i for i, name in enumerate(label_names)},
        # A checkpoint with another head (e.g. an NLI model) gets a fresh one of the right size.
        ignore_mismatched_sizes=True,
    )
    # read by dialeval.metrics.nbest_contradiction.yes_no.ModelYesNoClassifier
    model.config.yes_no_input = args.input

    def compute_metrics(prediction):
        predicted = np.argmax(prediction.predictions, axis=-1)
        return {
            "accuracy": accuracy_score(prediction.label_ids, predicted),
            "macro_f1": f1_score(prediction.label_ids, predicted, average="macro"),
        }

    output_dir = Path(args.output_dir)
    training_args = TrainingArguments(
        output_dir=str(output_dir / "checkpoints"),
        num_train_epochs=args.epochs,
        max_steps=args.max_steps,
        learning_rate=args.learning_rate,
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.batch_size,
        eval_strategy="epoch" if args.max_steps <= 0 else "no",
        save_strategy="no",
        logging_steps=50,
        seed=args.seed,
        report_to=[],
        use_cpu=args.cpu,
    )
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train,
        eval_dataset=valid,
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=compute_metrics,
    )
    trainer.train()
    figures = trainer.evaluate()
    trainer.save_model(str(output_dir))
    tokenizer.save_pretrained(str(output_dir))
    summary = {
        "model": args.model,
        "labels": label_names,
        "input": args.input,
        "num_train": len(train),
        "num_validation": len(valid),
        "left_out": left_out,
        "validation": {
            key: float(value) for key, value in figures.items() if isinstance(value, (int, float))
        },
    }
    (output_dir / "yes_no_training.json").write_text(
        json.dumps(summary, indent=2) + "\n", encoding="utf-8"
    )
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
