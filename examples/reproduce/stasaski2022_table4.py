"""Stasaski & Hearst (2022), Table 4: Diversity Threshold Generation with DialoGPT and BlenderBot on
DailyDialog++ and EmpatheticDialogues (dev), for the NLI, distinct-n and Sent-BERT objectives.

Every condition is one ``dialeval dtg`` run (§5, §6: 5 responses, at most S = 20 samples,
nucleus sampling p = 0.9, the dev sets; BlenderBot reads the last 128 tokens of the
conversation), then ``dialeval dtg-summary`` gives each run's starting / ending diversity and
samples, laid out as the paper's Table 4 with its printed values beside ours. Only the command
line is used (``dialeval.cli.main``, in this process), so the table follows whatever the CLI
records; the command of every run is printed so that it can be run alone (or under
``accelerate launch``). A run whose output already exists with the same settings resumes.

Each run averages ``--trials`` seeded repeats (default 10, §6.1: "all experiments are averaged
over 10 trials"; ``--trials 1`` for a quick run). The Sent-BERT objective uses the paper's embedder,
``sentence-transformers/bert-large-nli-stsb-mean-tokens`` (Tevet & Berant's, which §6.2 cites), with
the paper's threshold -0.179 whenever it loads locally (a folder, or the Hugging Face cache; never
downloaded here); otherwise the embedded all-MiniLM-L6-v2 with the threshold calibrated for it by
§6.2's procedure (-0.1597; ``calibrate_dtg_threshold.py``). Before its table the script prints its
numbers next to the paper's and every setting that differs from the paper (also in ``table4.md`` and,
as ``differs_from_paper``, in ``table4.json``).

Usage (see README.md beside this file)::

    python examples/reproduce/stasaski2022_table4.py --dialogpt microsoft/DialoGPT-large \\
        --blenderbot facebook/blenderbot-400M-distill --dailydialog-dir ../shared/data/dailydialog-plusplus \\
        --empathetic-dir DIR_WITH_empatheticdialogues.tar.gz --out-dir runs/table4
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _tables import (
    cell,
    fail,
    locally_available,
    markdown_table,
    paper_comparison,
    require_model,
    write_outputs,
)

#: objective -> how Table 4 names it.
METRICS = {"nli": "Baseline NLI", "distinct_n": "Distinct-n", "sent_bert": "Sent-BERT"}
MODELS = {"dialogpt": "DG", "blenderbot": "BB"}
DATASETS = {"daily": ("Daily", "dailydialog_pp"), "emp": ("Emp", "empathetic_dialogues")}
#: Table 4 as printed: (metric, model, dataset) -> (starting div., ending div., num. sampled).
PAPER = {
    ("nli", "DG", "Daily"): (4.11, 10.24, 6.3),
    ("nli", "DG", "Emp"): (3.68, 10.11, 7.1),
    ("nli", "BB", "Daily"): (-5.55, 2.51, 14.4),
    ("nli", "BB", "Emp"): (-8.90, -1.72, 16.5),
    ("distinct_n", "DG", "Daily"): (0.95, 0.98, 5.4),
    ("distinct_n", "DG", "Emp"): (0.43, 0.52, 20.0),
    ("distinct_n", "BB", "Daily"): (0.61, 0.80, 20.0),
    ("distinct_n", "BB", "Emp"): (0.52, 0.71, 20.0),
    ("sent_bert", "DG", "Daily"): (-0.26, -0.16, 5.2),
    ("sent_bert", "DG", "Emp"): (-0.28, -0.16, 5.8),
    ("sent_bert", "BB", "Daily"): (-0.62, -0.40, 19.0),
    ("sent_bert", "BB", "Emp"): (-0.71, -0.52, 19.7),
}
#: The summary's count for Table 4's "Num. Sampled", first found wins: the resamples alone where
#: the summary reports them apart from the n initial draws (the caption's "maximum value of 20"),
#: otherwise every draw.
NUM_SAMPLED_KEYS = ("num_resampled", "num_sampled")
#: The paper's setting (§6.1-6.2), for the list of what differs here.
PAPER_SETTING = {
    "trials": 10,
    "contexts": {"daily": 1028, "emp": 2763},
    "nli_model": "FacebookAI/roberta-large-mnli",
    "blenderbot_context_tokens": 128,
    "dialogpt": "microsoft/DialoGPT-large",
}


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--dialogpt", help="DialoGPT id or directory (the paper: DialoGPT-large, 'DG')"
    )
    parser.add_argument("--blenderbot", help="BlenderBot 1.0 id or directory (the paper: 'BB')")
    parser.add_argument(
        "--nli-model",
        default="FacebookAI/roberta-large-mnli",
        help="NLI classifier of the nli objective",
    )
    parser.add_argument(
        "--paper-sentence-model",
        help="where the paper's Sent-BERT embedder is, a folder or a Hub id "
        "in the Hugging Face cache (default: Tevet & Berant's sentence-transformers/"
        "bert-large-nli-stsb-mean-tokens, used when it is in the cache, else all-MiniLM-L6-v2)",
    )
    parser.add_argument(
        "--sentence-model",
        help="another embedder for the sent_bert objective instead of the paper's",
    )
    parser.add_argument(
        "--sent-bert-threshold",
        type=float,
        help="the sent_bert threshold (default: the one calibrated for the embedder: the paper's -0.179 "
        "for its BERT, -0.1597 for all-MiniLM-L6-v2)",
    )
    parser.add_argument(
        "--trials",
        type=int,
        default=PAPER_SETTING["trials"],
        help="seeded repeats of every run, averaged (§6.1: 10; 1 for a quick run)",
    )
    parser.add_argument(
        "--dailydialog-dir", help="DailyDialog++ files (dev.json); default: pinned download"
    )
    parser.add_argument(
        "--empathetic-dir",
        help="folder with empatheticdialogues.tar.gz; default: official download",
    )
    parser.add_argument(
        "--dailydialog-input", help="a JSONL of contexts instead of the DailyDialog++ dev set"
    )
    parser.add_argument(
        "--empathetic-input", help="a JSONL of contexts instead of the EmpatheticDialogues dev set"
    )
    parser.add_argument("--metrics", nargs="+", choices=list(METRICS), default=list(METRICS))
    parser.add_argument(
        "--out-dir", required=True, help="one JSONL per run, summary.json, table4.md, table4.json"
    )
    parser.add_argument(
        "--blenderbot-context-tokens",
        type=int,
        default=128,
        help="BlenderBot reads the last N context tokens (§6.1: 128)",
    )
    parser.add_argument(
        "--dialogpt-context-tokens",
        type=int,
        help="DialoGPT reads the last N context tokens (default: the whole context, as the paper)",
    )
    parser.add_argument(
        "--limit", type=int, help="only the first N contexts of each dataset (smoke runs)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--batch-size", type=int, help="contexts per generate call (default: the CLI's)"
    )
    parser.add_argument("--max-new-tokens", type=int, help="default: the CLI's")
    parser.add_argument("--device", help="torch device (default: Accelerate's choice)")
    parser.add_argument(
        "--overwrite", action="store_true", help="start every run over instead of resuming"
    )
    parser.add_argument(
        "--dtg-args",
        default="",
        help="more `dialeval dtg` options for every run, one quoted string",
    )
    args = parser.parse_args(argv)
    if not (args.dialogpt or args.blenderbot):
        parser.error("give --dialogpt and/or --blenderbot")
    if args.trials < 1:
        parser.error("--trials must be positive")
    return args


def sentence_embedder(args) -> dict:
    """The sent_bert embedder and threshold of the runs: the paper's BERT when it is here, else MiniLM
    (or ``--sentence-model``).

    Returns ``{"model", "threshold", "source", "paper_embedder"}``; ``threshold`` None leaves it to
    the library (the paper's -0.179 with a warning, for an embedder no threshold is calibrated for).
    """
    from dialeval.generation.dtg_thresholds import PAPER_SENT_BERT_MODEL, sent_bert_threshold
    from dialeval.hub import EMBEDDED_SENTENCE_MODEL

    script = Path(__file__).name
    if args.sentence_model and args.paper_sentence_model:
        fail(script, "give --sentence-model or --paper-sentence-model, not both")
    paper_embedder = False
    if args.sentence_model:
        require_model(script, "--sentence-model", args.sentence_model)
        model = args.sentence_model
    elif args.paper_sentence_model:  # named: it must be there
        require_model(
            script,
            "--paper-sentence-model",
            args.paper_sentence_model,
            hub_id=PAPER_SENT_BERT_MODEL,
        )
        model, paper_embedder = args.paper_sentence_model, True
    elif locally_available(PAPER_SENT_BERT_MODEL):
        model, paper_embedder = PAPER_SENT_BERT_MODEL, True
    else:
        model = EMBEDDED_SENTENCE_MODEL
    calibrated = sent_bert_threshold(PAPER_SENT_BERT_MODEL if paper_embedder else model)
    if args.sent_bert_threshold is not None:
        threshold, source = args.sent_bert_threshold, "--sent-bert-threshold"
    elif calibrated is not None:
        threshold, source = calibrated.threshold, calibrated.source
    else:
        threshold, source = (
            None,
            "none calibrated for this embedder: the library's fallback, the paper's -0.179",
        )
    return {
        "model": model,
        "threshold": threshold,
        "source": source,
        "paper_embedder": paper_embedder,
    }


def dtg_command(args, metric: str, model_key: str, dataset_key: str, output: Path) -> list[str]:
    """The ``dialeval dtg`` arguments of one Table 4 condition."""
    model = getattr(args, model_key)
    command = [
        "dtg",
        "--model",
        model,
        "--metric",
        metric,
        "--seed",
        str(args.seed),
        "--output",
        str(output),
        "--no-progress",
    ]
    source_file = getattr(
        args, f"{ {'daily': 'dailydialog', 'emp': 'empathetic'}[dataset_key] }_input"
    )
    data_dir = getattr(args, f"{ {'daily': 'dailydialog', 'emp': 'empathetic'}[dataset_key] }_dir")
    if source_file:
        command += ["--input", source_file]
    else:
        command += ["--dataset", DATASETS[dataset_key][1], "--split", "dev"] + (
            ["--data-dir", data_dir] if data_dir else []
        )
    if metric == "nli":
        command += ["--metric-model", args.nli_model]
    elif metric == "sent_bert":
        command += ["--metric-model", args.embedder["model"]]
        if args.embedder["threshold"] is not None:
            command += ["--threshold", repr(args.embedder["threshold"])]
    command += ["--trials", str(args.trials)]
    context_tokens = getattr(args, f"{model_key}_context_tokens")
    if context_tokens:
        command += ["--max-context-tokens", str(context_tokens)]
    for flag, value in (
        ("--limit", args.limit),
        ("--batch-size", args.batch_size),
        ("--max-new-tokens", args.max_new_tokens),
        ("--device", args.device),
    ):
        if value is not None:
            command += [flag, str(value)]
    if args.overwrite:
        command.append("--overwrite")
    return command + shlex.split(args.dtg_args)


def run_cli(arguments: list[str]) -> None:
    from dialeval.cli.main import main as cli

    print("$ python -m dialeval.cli " + shlex.join(arguments), flush=True)
    code = cli(arguments)
    if code != 0:
        raise SystemExit(
            f"`dialeval {arguments[0]}` failed (exit code {code}); see its message above"
        )


def num_sampled(row: dict) -> tuple[float, str]:
    for key in NUM_SAMPLED_KEYS:
        if key in row:
            return row[key], key
    raise KeyError(f"the dtg-summary row has none of {NUM_SAMPLED_KEYS}: {sorted(row)}")


def settings_that_differ(args, num_contexts: dict[str, int]) -> list[str]:
    """Every setting of this run that is not the paper's (§6.1-6.2)."""
    from dialeval.generation.dtg_thresholds import PAPER_SENT_BERT_MODEL

    paper = PAPER_SETTING
    differ = []
    if args.trials != paper["trials"]:
        differ.append(f"trials: {args.trials} per run (paper, §6.1: {paper['trials']})")
    for key, flag in (("daily", "dailydialog"), ("emp", "empathetic")):
        name = DATASETS[key][1]
        if getattr(args, f"{flag}_input"):
            differ.append(
                f"{DATASETS[key][0]}: contexts from --{flag}-input (paper: the {name} dev set)"
            )
        if key in num_contexts and num_contexts[key] != paper["contexts"][key]:
            differ.append(
                f"{DATASETS[key][0]}: {num_contexts[key]} contexts (paper, §6.1: {paper['contexts'][key]:,})"
            )
    if args.dialogpt and args.dialogpt != paper["dialogpt"]:
        differ.append(
            f"DG: {args.dialogpt} (paper, §6.1: DialoGPT, 700M parameters; we read {paper['dialogpt']})"
        )
    if args.blenderbot:
        differ.append(
            f"BB: {args.blenderbot} (paper, §6.1: BlenderBot 1.0, 300M parameters; it names no checkpoint)"
        )
    if "nli" in args.metrics and args.nli_model != paper["nli_model"]:
        differ.append(f"NLI model: {args.nli_model} (paper: {paper['nli_model']})")
    if "sent_bert" in args.metrics:
        embedder = args.embedder
        if not embedder["paper_embedder"]:
            differ.append(
                f"Sent-BERT embedder: {embedder['model']} (paper: BERT sentence embeddings, we read "
                f"{PAPER_SENT_BERT_MODEL}); its values are on another scale than the paper's Sent-BERT rows"
            )
        if embedder["threshold"] != -0.179:
            shown = (
                "the library's fallback -0.179"
                if embedder["threshold"] is None
                else embedder["threshold"]
            )
            differ.append(
                f"Sent-BERT threshold: {shown} ({embedder['source']}; paper, §6.2: -0.179 for its BERT)"
            )
    if args.blenderbot and args.blenderbot_context_tokens != paper["blenderbot_context_tokens"]:
        differ.append(
            f"BB context: last {args.blenderbot_context_tokens} tokens (paper, §6.1: "
            f"{paper['blenderbot_context_tokens']})"
        )
    if args.dialogpt and args.dialogpt_context_tokens:
        differ.append(
            f"DG context: last {args.dialogpt_context_tokens} tokens (paper: the whole conversation)"
        )
    if args.dtg_args.strip():
        differ.append(f"more dtg options: {args.dtg_args} (each may change a §6 setting)")
    return differ


def embedder_line(embedder: dict) -> str:
    """Which Sent-BERT embedder and threshold the runs use, and why."""
    whose = "the paper's embedder" if embedder["paper_embedder"] else "not the paper's embedder"
    threshold = (
        "the library's fallback -0.179" if embedder["threshold"] is None else embedder["threshold"]
    )
    return f"Sent-BERT: {embedder['model']} ({whose}), threshold {threshold} ({embedder['source']})"


def comparison(rows: list[dict], differ: list[str], embedder: dict | None) -> str:
    """What the script prints before its table: the Sent-BERT embedder, ours next to the paper's, what differs."""
    measures = []
    for row in rows:
        ours, paper = row["summary"], row["paper"]
        measures.append(
            (
                f"{METRICS[row['metric']]} {row['model']} {row['dataset']}",
                [
                    (
                        "starting div.",
                        cell(ours["starting_diversity"]),
                        f"{paper['starting_diversity']:.2f}",
                    ),
                    (
                        "ending div.",
                        cell(ours["ending_diversity"]),
                        f"{paper['ending_diversity']:.2f}",
                    ),
                    ("num. sampled", cell(num_sampled(ours)[0], 1), f"{paper['num_sampled']:.1f}"),
                ],
            )
        )
    text = paper_comparison("Stasaski & Hearst (2022) Table 4", measures, differ)
    return (text if embedder is None else embedder_line(embedder) + "\n" + text) + "\n"


def main(argv=None) -> dict:
    args = parse_args(argv)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    args.embedder = sentence_embedder(args) if "sent_bert" in args.metrics else None
    if args.embedder is not None:
        print(embedder_line(args.embedder), flush=True)
    conditions = [
        (metric, model_key, dataset_key)
        for metric in args.metrics
        for model_key in MODELS
        if getattr(args, model_key)
        for dataset_key in DATASETS
    ]
    outputs = []
    for metric, model_key, dataset_key in conditions:
        output = out / f"{metric}_{MODELS[model_key]}_{DATASETS[dataset_key][0]}.jsonl".lower()
        run_cli(dtg_command(args, metric, model_key, dataset_key, output))
        outputs.append(output)
    summary_path = out / "summary.json"
    run_cli(["dtg-summary", *map(str, outputs), "--output", str(summary_path)])
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    if len(summary) != len(conditions):
        raise SystemExit(f"dtg-summary returned {len(summary)} rows for {len(conditions)} runs")
    body, rows, count_keys = [], [], set()
    for (metric, model_key, dataset_key), row in zip(conditions, summary):
        model, dataset = MODELS[model_key], DATASETS[dataset_key][0]
        sampled, key = num_sampled(row)
        count_keys.add(key)
        paper = PAPER[(metric, model, dataset)]
        body.append(
            [
                METRICS[metric],
                model,
                dataset,
                cell(row["starting_diversity"]),
                cell(row["ending_diversity"]),
                cell(sampled, 1),
                *(f"{value:.2f}" if i < 2 else f"{value:.1f}" for i, value in enumerate(paper)),
            ]
        )
        rows.append(
            {
                "metric": metric,
                "model": model,
                "dataset": dataset,
                "num_sampled_key": key,
                "paper": dict(
                    zip(("starting_diversity", "ending_diversity", "num_sampled"), paper)
                ),
                "summary": row,
            }
        )
    header = [
        "Metric",
        "Model",
        "Dataset",
        "Starting Div.",
        "Ending Div.",
        "Num. Sampled",
        "paper Starting Div.",
        "paper Ending Div.",
        "paper Num. Sampled",
    ]
    num_contexts = {
        dataset_key: row["num_contexts"] for (_, _, dataset_key), row in zip(conditions, summary)
    }
    differ = settings_that_differ(args, num_contexts)
    before = comparison(rows, differ, args.embedder)
    markdown = "\n\n".join(
        [
            before,
            "Table 4: Diversity results of Diversity Threshold Generation",
            markdown_table(header, body),
            f"Num. Sampled is dtg-summary's `{'`/`'.join(sorted(count_keys))}`; contexts per run: "
            + ", ".join(sorted({str(row["summary"].get("num_contexts", "?")) for row in rows}))
            + ".",
        ]
    )
    data = {
        "rows": rows,
        "trials": args.trials,
        "sent_bert_embedder": args.embedder,
        "differs_from_paper": differ,
    }
    table, _ = write_outputs(out, "table4", markdown, data)
    print(markdown)
    print(f"\nwrote {table} and table4.json")
    return data


if __name__ == "__main__":
    main()
