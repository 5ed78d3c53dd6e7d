"""Measure similarity diversity on Tevet & Berant's conTest and decTest (all three tasks).

Prints a Markdown table: our Sent-BERT diversity with the embedded all-MiniLM-L6-v2 next to
the paper's sent-BERT row (Table 4 for conTest, Table 2 for decTest) and next to the released
per-set ``metric_SentBert`` column scored with the same protocol.

- conTest (``con_test_200_with_hds_<task>.csv``): Spearman's rho and OCA against the binary
  content-diversity class (§6.4).
- decTest (``dec_test_1000_no_hds_<task>.csv``): rho against the temperature, mean (std) over
  100 random subsets of 200 sets (§6.3).

Usage: ``.venv/bin/python examples/measure_similarity_diversity.py [--data-dir DIR] [--similarity sent_bert]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dialeval.io import read_tevet_csv
from dialeval.metrics.diversity_meta_eval.statistics import (
    optimal_classification_accuracy,
    spearman,
    subsampled_spearman,
)
from dialeval.metrics.similarity_diversity.similarity import similarity_diversity

DATA_DIR = (
    Path(__file__).resolve().parent.parent.parent
    / "shared"
    / "data"
    / "tevet-diversity-eval"
    / "with_metrics"
)
TASKS = ("story_gen", "resp_gen", "prompt_gen")
# Tevet & Berant (2021), sent-BERT (bert-large-nli-stsb-mean-tokens) rows.
PAPER_CONTEST = {
    "story_gen": (0.77, 0.90),
    "resp_gen": (0.59, 0.79),
    "prompt_gen": (0.68, 0.81),
}  # Table 4
PAPER_DECTEST = {
    "story_gen": "0.65 (0.03)",
    "resp_gen": "0.80 (0.02)",
    "prompt_gen": "0.74 (0.03)",
}  # Table 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--similarity", default="sent_bert")
    parser.add_argument("--model", default=None)
    args = parser.parse_args()
    rows = [
        "| test | task | ours: rho | ours: OCA | released metric_SentBert: rho | OCA | paper sent-BERT: rho | OCA |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for task in TASKS:
        sets = read_tevet_csv(args.data_dir / "conTest" / f"con_test_200_with_hds_{task}.csv")
        labels = [float(s.metadata["label_value"]) for s in sets]
        ours = [
            r["similarity_diversity"]
            for r in similarity_diversity(
                [s.responses for s in sets], args.similarity, args.model, allow_empty=True
            )["per_set"]
        ]
        released = [float(s.metadata["metric_SentBert"]) for s in sets]
        cells = []
        for scores in (ours, released):
            cells += [
                f"{spearman(scores, labels)[0]:.2f}",
                f"{optimal_classification_accuracy(scores, labels)[0]:.2f}",
            ]
        paper = PAPER_CONTEST[task]
        rows.append(
            f"| conTest ({len(sets)} sets) | {task} | "
            + " | ".join(cells)
            + f" | {paper[0]:.2f} | {paper[1]:.2f} |"
        )
    for task in TASKS:
        sets = read_tevet_csv(args.data_dir / "decTest" / f"dec_test_1000_no_hds_{task}.csv")
        temperatures = [float(s.metadata["label_value"]) for s in sets]
        ours = [
            r["similarity_diversity"]
            for r in similarity_diversity(
                [s.responses for s in sets], args.similarity, args.model, allow_empty=True
            )["per_set"]
        ]
        released = [float(s.metadata["metric_SentBert"]) for s in sets]
        cells = []
        for scores in (ours, released):
            mean, std = subsampled_spearman(scores, temperatures)
            cells += [f"{mean:.2f} ({std:.2f})", "–"]
        rows.append(
            f"| decTest ({len(sets)} sets) | {task} | "
            + " | ".join(cells)
            + f" | {PAPER_DECTEST[task]} | – |"
        )
    print("\n".join(rows))


if __name__ == "__main__":
    main()
