"""Calibrate DTG's Sent-BERT threshold by Stasaski & Hearst (2022) §6.2's own procedure.

§6.2: the thresholds of the metrics without a human-specifiable one are "empirical thresholds
measured from the sets of 5 human responses for each conversation in DailyDialog++ [...] the 90th
percentile" (0.98 for distinct-n, -0.179 for Sent-BERT with BERT sentence embeddings). For every
conversation of the split, the DTG objective's own set value of its 5 ``positive_responses`` (for
Sent-BERT the negated mean pairwise cosine, exactly what DTG compares with the threshold), then the
90th percentile over conversations (``dialeval.generation.dtg_thresholds.calibrate_threshold``).

By default it calibrates the embedded all-MiniLM-L6-v2 and, when it loads locally (a folder or
the Hugging Face cache; never downloaded here), the paper's embedder
(``sentence-transformers/bert-large-nli-stsb-mean-tokens``, whose value should come out near
-0.179); distinct-n is computed as a check of the procedure against the paper's 0.98. The split
defaults to dev (the 1,028 conversations DTG runs on, §6.1; the paper does not name the split it
calibrated on). ``--limit N`` takes the first N conversations only (a quicker, noisier estimate).

Usage::

    python examples/reproduce/calibrate_dtg_threshold.py --data-dir ../shared/data/dailydialog-plusplus \\
        --out-dir runs/dtg_threshold
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _tables import cell, fail, locally_available, markdown_table, one_line_errors, write_outputs

#: §6.2's thresholds (distinct-n; Sent-BERT with the paper's BERT embedder).
PAPER = {"distinct_n": 0.98, "sent_bert": -0.179}


def parse_args(argv=None):
    from dialeval.generation.dtg_thresholds import PAPER_PERCENTILE, PAPER_SENT_BERT_MODEL

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir",
        help="DailyDialog++ files (dev.json, test.json); default: the builder's pinned download",
    )
    parser.add_argument(
        "--split",
        choices=("dev", "test"),
        default="dev",
        help="human sets to calibrate on (default dev)",
    )
    parser.add_argument(
        "--sentence-model",
        action="append",
        dest="sentence_models",
        metavar="MODEL",
        help="an embedder to calibrate (repeatable; default: the embedded all-MiniLM-L6-v2, plus "
        f"{PAPER_SENT_BERT_MODEL} when it is found locally)",
    )
    parser.add_argument("--percentile", type=float, default=PAPER_PERCENTILE, help="§6.2: the 90th")
    parser.add_argument("--limit", type=int, help="only the first N conversations (a subsample)")
    parser.add_argument("--batch-size", type=int, default=64, help="sentences per encode batch")
    parser.add_argument("--device", help="torch device of the embedders")
    parser.add_argument("--out-dir", help="write dtg_threshold.md and dtg_threshold.json there")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be positive")
    return args


def embedders(args) -> tuple[list[str], list[str]]:
    """The embedders to calibrate, and notes on the ones skipped."""
    from dialeval.generation.dtg_thresholds import PAPER_SENT_BERT_MODEL
    from dialeval.hub import EMBEDDED_SENTENCE_MODEL

    if args.sentence_models:
        return list(args.sentence_models), []
    if locally_available(PAPER_SENT_BERT_MODEL):
        return [EMBEDDED_SENTENCE_MODEL, PAPER_SENT_BERT_MODEL], []
    missing = (
        f"{PAPER_SENT_BERT_MODEL} (the paper's embedder) is not here (no folder, not in the Hugging Face cache): "
        "not calibrated"
    )
    return [EMBEDDED_SENTENCE_MODEL], [missing]


def main(argv=None) -> dict:
    args = parse_args(argv)
    from dialeval.datasets_scripts import load, split_name
    from dialeval.generation.dtg_thresholds import (
        empirical_threshold,
        sent_bert_threshold,
        set_values,
    )
    from dialeval.generation.objectives import DistinctN, SentBertDiversity

    script = Path(__file__).name
    with one_line_errors(script, {"data_dir": "--data-dir"}):
        rows = load("dailydialog_pp", data_dir=args.data_dir, split=split_name(args.split))
    sets = [list(responses) for responses in rows["positive_responses"]]
    if args.limit:
        sets = sets[: args.limit]
    if len(sets) < 2:
        fail(script, "fewer than 2 conversations to calibrate on")
    models, skipped = embedders(args)
    results = [{"metric": "distinct_n", "model": None, "values": set_values(DistinctN(), sets)}]
    for model in models:
        with one_line_errors(script, {"model": "--sentence-model", "device": "--device"}):
            objective = SentBertDiversity(model, device=args.device, batch_size=args.batch_size)
        results.append(
            {"metric": "sent_bert", "model": model, "values": set_values(objective, sets)}
        )
    body = []
    for result in results:
        values = result.pop("values")
        result.update(
            threshold=empirical_threshold(values, args.percentile),
            num_sets=len(values),
            mean=sum(values) / len(values),
        )
        known = sent_bert_threshold(result["model"]) if result["metric"] == "sent_bert" else None
        result["library_threshold"] = known.threshold if known else None
        paper = (
            PAPER["distinct_n"]
            if result["metric"] == "distinct_n"
            else (PAPER["sent_bert"] if known and known.threshold == PAPER["sent_bert"] else None)
        )
        body.append(
            [
                result["metric"],
                result["model"] or "-",
                result["num_sets"],
                f"{result['threshold']:.4f}",
                cell(result["library_threshold"], 4),
                cell(paper, 3),
            ]
        )
    where = (
        f"DailyDialog++ {args.split}, {len(sets)} conversations x {len(sets[0])} human responses"
    )
    markdown = "\n\n".join(
        [
            f"DTG thresholds by §6.2's procedure: the {args.percentile:g}th percentile of each conversation's human set ({where})",
            markdown_table(
                [
                    "Metric",
                    "Embedder",
                    "Sets",
                    "Threshold (here)",
                    "Library default",
                    "Paper (§6.2)",
                ],
                body,
            ),
            *(f"Skipped: {note}" for note in skipped),
        ]
    )
    print(markdown)
    report = {
        "split": args.split,
        "percentile": args.percentile,
        "num_sets": len(sets),
        "limit": args.limit,
        "results": results,
        "skipped": skipped,
    }
    if args.out_dir:
        table, _ = write_outputs(args.out_dir, "dtg_threshold", markdown, report)
        print(f"\nwrote {table} and dtg_threshold.json")
    return report


if __name__ == "__main__":
    main()
