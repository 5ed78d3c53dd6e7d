"""Stasaski & Hearst (2022), Table 3: Spearman's rho between NLI Diversity (MNLI model) and the
human diversity judgements of Tevet & Berant's decTest and conTest (respGen).

§4.4: every response set of the human-rated files (``dec_test_200_with_hds_resp_gen.csv``, 203
sets of 10 responses; ``con_test_200_with_hds_resp_gen.csv``, 220 sets of 5; footnote 3) is
scored with Baseline, Neutral and Confidence NLI Diversity (§3) and the three prediction counts,
and each is correlated with the mean of the 10 crowd ratings (absHDS mean). Rows and columns
are the paper's; its printed values are written beside ours.

Usage (see README.md beside this file)::

    python examples/reproduce/stasaski2022_table3.py --nli-model FacebookAI/roberta-large-mnli \\
        --data-dir ../shared/data/tevet-diversity-eval --out-dir runs/table3
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _tables import (
    cell,
    markdown_table,
    one_line_errors,
    require_model,
    require_path,
    write_outputs,
)

#: Table 3's rows: (label as printed, NLI Diversity figure).
ROWS = (
    ("Baseline NLI Diversity", "nli_diversity"),
    ("Neutral NLI Diversity", "nli_diversity_neutral"),
    ("Confidence NLI Diversity", "nli_diversity_confidence"),
    ("# Contradiction", "num_contradiction"),
    ("# Neutral", "num_neutral"),
    ("# Entailment", "num_entailment"),
)
#: Table 3 as printed: figure -> (decTest rho, conTest rho).
PAPER = {
    "nli_diversity": (0.48, 0.63),
    "nli_diversity_neutral": (0.69, 0.40),
    "nli_diversity_confidence": (0.41, 0.64),
    "num_contradiction": (0.26, 0.46),
    "num_neutral": (0.05, -0.08),
    "num_entailment": (-0.48, -0.65),
}
#: column -> the diversity_eval config holding its human-rated sets (footnote 3's files).
TESTS = {"decTest": "dec_test_200_resp_gen", "conTest": "con_test_200_resp_gen"}


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--nli-model",
        default="FacebookAI/roberta-large-mnli",
        help="NLI classifier id or directory (the paper's 'MNL': roberta-large-mnli)",
    )
    parser.add_argument(
        "--data-dir", help="Tevet & Berant's data (an unzipped data.zip); default: pinned download"
    )
    parser.add_argument("--out-dir", required=True, help="writes table3.md and table3.json here")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", help="torch device (default: Accelerate's choice)")
    parser.add_argument("--dtype", help="model dtype, e.g. bfloat16 (default: the checkpoint's)")
    parser.add_argument("--limit", type=int, help="only the first N sets of each test (smoke runs)")
    parser.add_argument("--cache-dir", help="datasets cache directory")
    return parser.parse_args(argv)


SCRIPT = Path(__file__).name


def main(argv=None) -> dict:
    """The table (see the module docstring); a missing input exits 2 with one line saying how to get it."""
    args = parse_args(argv)
    require_model(SCRIPT, "--nli-model", args.nli_model, hub_id="FacebookAI/roberta-large-mnli")
    if args.data_dir is not None:
        require_path(
            SCRIPT,
            "--data-dir",
            args.data_dir,
            folder=True,
            what="Tevet & Berant's data.zip unzipped (https://github.com/fabriceyhc/diversity-eval)",
        )
    with one_line_errors(SCRIPT, {"data_dir": "--data-dir"}):
        return run(args)


def run(args) -> dict:
    from scipy.stats import spearmanr

    from dialeval.datasets_scripts import load
    from dialeval.metrics.nli_diversity import NLIScorer, nli_diversity

    # the data first: a missing file is reported before the model loads
    tests = {
        column: load(
            "diversity_eval", config, data_dir=args.data_dir, split="test", cache_dir=args.cache_dir
        )
        for column, config in TESTS.items()
    }
    scorer = NLIScorer(
        args.nli_model, device=args.device, dtype=args.dtype, batch_size=args.batch_size
    )
    results = {"nli_model": args.nli_model, "tests": {}}
    for column, config in TESTS.items():
        rated = tests[column]
        if args.limit:
            rated = rated.select(range(min(args.limit, len(rated))))
        human = rated["abs_hds_mean"]
        scores = nli_diversity(rated["responses"], scorer=scorer)["per_set"]
        rhos = {}
        for _, figure in ROWS:
            rho, p_value = spearmanr([row[figure] for row in scores], human)
            rhos[figure] = {"spearman": float(rho), "p_value": float(p_value)}
        results["tests"][column] = {"config": config, "num_sets": len(rated), "rho": rhos}
    header = ["Metric", "decTest ρ", "conTest ρ", "paper decTest ρ", "paper conTest ρ"]
    body = [
        [
            label,
            *(cell(results["tests"][column]["rho"][figure]["spearman"]) for column in TESTS),
            *(f"{value:.2f}" for value in PAPER[figure]),
        ]
        for label, figure in ROWS
    ]
    sets = ", ".join(f"{column} {results['tests'][column]['num_sets']} sets" for column in TESTS)
    markdown = "\n\n".join(
        [
            "Table 3: Spearman's ρ between NLI Diversity metrics and human judgments (absHDS mean), respGen",
            markdown_table(header, body),
            f"NLI model: {args.nli_model}; {sets}.",
        ]
    )
    table, _ = write_outputs(args.out_dir, "table3", markdown, results)
    print(markdown)
    print(f"\nwrote {table} and table3.json")
    return results


if __name__ == "__main__":
    main()
