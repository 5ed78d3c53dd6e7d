"""Han et al. (2022), Table 1: Pearson and Spearman correlation (with p-values) of Dist-3, Ent-3,
LF and Sem-Ent with human judgements of response diversity, over rated inference settings.

§3.2: eight inference settings (two models x four decoding algorithms on DailyDialog) were
rated pairwise by crowd workers and turned into Bradley-Terry scores per criterion ("Diversity"
and "Interesting"); each diversity measure of a setting's responses is correlated with those
scores. The paper's human-rated responses are not released, so the rated sets are an input
file you supply (``--rated``), one JSON object per line::

    {"system": "blender-greedy", "responses": ["...", ...], "human_score": 0.41}
    {"system": "bart-top-k", "responses": [...], "human_score": {"Diversity/BT": 1.3, "Interesting/BT": 0.9}}

``human_score`` is a number (read as the "Diversity/BT" criterion) or a ``{criterion: score}``
mapping; every line must rate the same criteria. Sem-Ent's clusters (k = 20, §3.1) are fitted
on ``--reference`` (one response per line: the paper fits on the DailyDialog training
responses) or loaded from ``--clusters`` (saved by ``SemanticClusters.save``). MAUVE is not
computed here (its column is "-"); LF counts token frequencies in the scored responses
themselves, as the authors' released ``LFCalculator`` does.

Usage (see README.md beside this file)::

    python examples/reproduce/han2022_table1.py --rated rated_settings.jsonl \\
        --reference dailydialog_train_responses.txt --out-dir runs/han-table1
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _tables import markdown_table, one_line_errors, require_model, require_path, write_outputs

#: Table 1's columns: (label as printed, measure key); MAUVE is printed but not computed.
COLUMNS = (
    ("Dist-3", "dist_3"),
    ("Ent-3", "ent_3"),
    ("LF", "lf"),
    ("MAUVE", "mauve"),
    ("Sem-Ent", "sem_ent"),
)
#: Table 1 as printed: (criterion, correlation) -> measure -> (coefficient, p-value).
PAPER = {
    ("Diversity/BT", "Pearson"): {
        "dist_3": (0.348, 0.399),
        "ent_3": (0.702, 0.052),
        "lf": (-0.232, 0.580),
        "mauve": (0.134, 0.750),
        "sem_ent": (0.810, 0.015),
    },
    ("Diversity/BT", "Spearman"): {
        "dist_3": (0.381, 0.352),
        "ent_3": (0.667, 0.071),
        "lf": (0.000, 1.000),
        "mauve": (0.547, 0.160),
        "sem_ent": (0.762, 0.028),
    },
    ("Interesting/BT", "Pearson"): {
        "dist_3": (0.261, 0.533),
        "ent_3": (0.671, 0.068),
        "lf": (-0.260, 0.533),
        "mauve": (0.098, 0.817),
        "sem_ent": (0.789, 0.020),
    },
    ("Interesting/BT", "Spearman"): {
        "dist_3": (0.381, 0.352),
        "ent_3": (0.714, 0.047),
        "lf": (0.048, 0.911),
        "mauve": (0.523, 0.182),
        "sem_ent": (0.667, 0.020),
    },
}
DEFAULT_CRITERION = "Diversity/BT"


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--rated",
        required=True,
        help="JSONL: one rated setting per line (system, responses, human_score)",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--reference",
        help="text file, one reference response per line: Sem-Ent's clusters are fitted on it",
    )
    source.add_argument(
        "--clusters", help="a directory of saved SemanticClusters (instead of --reference)"
    )
    parser.add_argument(
        "--embedder-kind",
        default="sentence_transformers",
        help="dialeval embedder kind; the paper's is last_token (DialoGPT-large, §3.1)",
    )
    parser.add_argument(
        "--embedder-model", help="embedder model id or directory (default: the kind's default)"
    )
    parser.add_argument("--num-clusters", type=int, default=20, help="k (paper: 20)")
    parser.add_argument("--n", type=int, default=3, help="n of Dist-n and Ent-n (paper: 3)")
    parser.add_argument("--seed", type=int, default=0, help="k-means seed")
    parser.add_argument("--device", help="embedder device")
    parser.add_argument("--batch-size", type=int, default=64, help="embedder batch size")
    parser.add_argument("--out-dir", required=True, help="writes table1.md and table1.json here")
    return parser.parse_args(argv)


def read_rated(path) -> tuple[list[dict], list[str]]:
    """The rated settings and their common criteria; a malformed line is a ValueError naming FILE:LINE."""
    from dialeval.io import iter_jsonl

    settings, criteria = [], None
    for where, record in iter_jsonl(path):
        if not isinstance(record, dict) or not {"system", "responses", "human_score"} <= set(
            record
        ):
            raise ValueError(f"`--rated` {where}: needs 'system', 'responses' and 'human_score'")
        responses, score = record["responses"], record["human_score"]
        if (
            not isinstance(responses, list)
            or not responses
            or not all(isinstance(r, str) for r in responses)
        ):
            raise ValueError(f"`--rated` {where}: 'responses' must be a non-empty list of strings")
        scores = {DEFAULT_CRITERION: score} if not isinstance(score, dict) else score
        if not scores or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in scores.values()
        ):
            raise ValueError(
                f"`--rated` {where}: 'human_score' must be a number or a {{criterion: number}} mapping"
            )
        if criteria is None:
            criteria = list(scores)
        elif set(scores) != set(criteria):
            raise ValueError(
                f"`--rated` {where}: rates {sorted(scores)}, the first line rated {sorted(criteria)}"
            )
        settings.append(
            {
                "system": str(record["system"]),
                "responses": responses,
                "human": {name: float(value) for name, value in scores.items()},
            }
        )
    if len(settings) < 3:
        raise ValueError(
            f"`--rated` {path}: {len(settings)} rated settings; a correlation needs at least 3"
        )
    return settings, criteria


def load_clusters(args):
    from dialeval.io import read_text_lines
    from dialeval.metrics import SemanticClusters, load_embedder

    options = {"batch_size": args.batch_size, **({"device": args.device} if args.device else {})}
    if args.clusters:
        return SemanticClusters.load(args.clusters, **options)
    embedder = load_embedder(args.embedder_kind, args.embedder_model, **options)
    return SemanticClusters.fit(
        read_text_lines(args.reference), embedder, num_clusters=args.num_clusters, seed=args.seed
    )


def measures(responses: list[str], clusters, n: int) -> dict:
    from dialeval.metrics import distinct_n, entropy_n, lf, sem_ent

    return {
        "dist_3": distinct_n(responses, n),
        "ent_3": entropy_n(responses, n),
        "lf": lf(responses),
        "sem_ent": sem_ent(responses, clusters)["sem_ent"],
    }


SCRIPT = Path(__file__).name


def main(argv=None) -> dict:
    """The table (see the module docstring); a missing input exits 2 with one line saying how to get it."""
    args = parse_args(argv)
    require_path(
        SCRIPT,
        "--rated",
        args.rated,
        folder=False,
        what='your rated settings, one {"system": ..., "responses": [...], "human_score": ...} per line '
        "(§3.2's ratings are not released; see README.md)",
    )
    clusters_from = (
        (
            "--clusters",
            args.clusters,
            True,
            (
                "clusters saved by SemanticClusters.save (or dialeval "
                "evaluate --save-sem-ent-clusters)"
            ),
        )
        if args.clusters is not None
        else (
            "--reference",
            args.reference,
            False,
            (
                "a text file of reference responses, one per line "
                "(e.g. DailyDialog's training responses)"
            ),
        )
    )
    flag, path, folder, what = clusters_from
    require_path(SCRIPT, flag, path, folder=folder, what=what)
    if args.embedder_model is not None:
        require_model(SCRIPT, "--embedder-model", args.embedder_model)
    with one_line_errors(SCRIPT, {"reference_corpus": "--reference"}):
        return run(args)


def run(args) -> dict:
    from scipy.stats import pearsonr, spearmanr

    settings, criteria = read_rated(args.rated)
    clusters = load_clusters(args)
    for setting in settings:
        setting["measures"] = measures(setting["responses"], clusters, args.n)
    correlations = {}
    for criterion in criteria:
        human = [setting["human"][criterion] for setting in settings]
        for name, function in (("Pearson", pearsonr), ("Spearman", spearmanr)):
            row = {}
            for _, key in COLUMNS:
                if key == "mauve":
                    continue
                values = [setting["measures"][key] for setting in settings]
                if len(set(values)) < 2 or len(set(human)) < 2:
                    row[key] = {
                        "coefficient": None,
                        "p_value": None,
                        "note": "constant input: undefined",
                    }
                    continue
                coefficient, p_value = function(values, human)
                row[key] = {"coefficient": float(coefficient), "p_value": float(p_value)}
            correlations[f"{criterion}|{name}"] = row

    def ours(row, key):
        figure = row.get(key)
        if figure is None or figure["coefficient"] is None:
            return "-"
        return f"{figure['coefficient']:.3f} ({figure['p_value']:.3f})"

    body = []
    for criterion in criteria:
        for name in ("Pearson", "Spearman"):
            body.append(
                [
                    criterion,
                    name,
                    "ours",
                    *(ours(correlations[f"{criterion}|{name}"], key) for _, key in COLUMNS),
                ]
            )
            paper = PAPER.get((criterion, name))
            if paper:
                body.append(
                    [
                        criterion,
                        name,
                        "paper",
                        *(f"{paper[key][0]:.3f} ({paper[key][1]:.3f})" for _, key in COLUMNS),
                    ]
                )
    header = [
        "Metric",
        "Correlation",
        "Source",
        *(
            label if key != "dist_3" and key != "ent_3" else label.replace("3", str(args.n))
            for label, key in COLUMNS
        ),
    ]
    described = (
        f"saved clusters {args.clusters}"
        if args.clusters
        else f"k = {clusters.num_clusters} clusters fitted on {args.reference}"
    )
    markdown = "\n\n".join(
        [
            "Table 1: Correlation of diversity measures with human judgments; value (p-value)",
            markdown_table(header, body),
            (
                f"{len(settings)} rated settings from {args.rated}; Sem-Ent: {described}, embedder "
                f"{clusters.embedder_identity.get('kind')} {clusters.embedder_identity.get('model', '')}. "
                "MAUVE is not computed by this script ('-'). The paper's rows are its 8 settings rated by its annotators."
            ),
        ]
    )
    results = {
        "rated": args.rated,
        "criteria": criteria,
        "clusters": described,
        "settings": [
            {key: setting[key] for key in ("system", "human", "measures")} for setting in settings
        ],
        "correlations": correlations,
    }
    table, _ = write_outputs(args.out_dir, "table1", markdown, results)
    print(markdown)
    print(f"\nwrote {table} and table1.json")
    return results


if __name__ == "__main__":
    main()
