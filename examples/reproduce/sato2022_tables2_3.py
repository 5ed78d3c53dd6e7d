"""Reproduce Tables 2-3 (and the analyzed counts of Tables 5-6) of Sato et al. (2022), "N-best
Response-based Analysis of Contradiction-awareness in Neural Response Generation Models", given
the generators and the yes/no classifier.

- Table 2: Certainty and Variety of the 10-best lists of beam search (B = 10) for each model
  (``--bs NAME=MODEL``; paper: Blender 400M / 1B / 3B, DialoGPT 345M / 762M).
- Table 3, for one model (``--technique-model``; paper: Blender 3B): BS (beam search, B = 10),
  DBS (diverse beam search, B = 10), NS (nucleus sampling ten times, footnote 6), and UL rows:
  beam search on checkpoints fine-tuned with unlikelihood training (``--ul NAME=MODEL``, e.g.
  ``"UL (alpha=0)"``, ``"UL (alpha=1)"``, ``"UL (alpha=10)"``; App. C: α = 0 is the same
  fine-tuning with likelihood only). Train them on the ``polar_questions`` builder's
  ``unlikelihood`` config with ``dialeval.trainers``' ``UnlikelihoodTrainer``.
- Inputs: ``--entq`` / ``--cntq``, JSONL rows with ``history``, ``message`` and
  ``expected_answer`` (the ``polar_questions`` builder's ``entq`` / ``cntq`` configs, exported;
  2,000 each in the paper). The generator reads ``[history, message]`` as two turns
  (``dialeval.generation.dialogue_prompt``: each turn then EOS for decoder-only models, turns
  joined by a newline for encoder-decoder ones).
- Classifier (``--classifier``): a yes/no classifier directory (``examples/train_yes_no_classifier.py``;
  given the messages when it was trained on (question, answer) pairs) or ``prefix`` (the weaker
  rule, for smoke runs). Inputs with an ambiguous response are excluded (App. C), so the
  analyzed counts (Tables 5-6) are reported with every figure.

Generation settings: App. C used ParlAI's defaults with ``beam_length_penalty=0``; here
``length_penalty=0.0``, ``--max-new-tokens`` 32, DBS with ``--num-beam-groups`` 5 and
``--diversity-penalty`` 0.5 and NS with ``--top-p`` 0.9 (our choices where the paper is silent).
Writes ``OUTPUT/tables2_3.json`` and ``OUTPUT/tables2_3.md`` (ours beside the paper's values).

Usage::

    python examples/reproduce/sato2022_tables2_3.py --entq entq.jsonl --cntq cntq.jsonl \\
        --classifier runs/yes-no --bs "Blender 400M=facebook/blenderbot-400M-distill" \\
        --bs "DialoGPT 345M=microsoft/DialoGPT-medium" --technique-model facebook/blenderbot-3B \\
        --ul "UL (alpha=1)=runs/ul-alpha1" --device cuda:0 --output-dir runs/sato2022
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

#: Tables 2 and 3 of the paper: (Certainty ENTQ, Certainty CNTQ, Variety ENTQ, Variety CNTQ), and
#: Tables 5-6: the analyzed inputs of 2,000 (ENTQ, CNTQ).
PAPER_TABLE2 = {
    "Blender 400M": (0.806, 0.747, 0.780, 0.775),
    "Blender 1B": (0.832, 0.752, 0.832, 0.753),
    "Blender 3B": (0.856, 0.768, 0.824, 0.737),
    "DialoGPT 345M": (0.938, 0.917, 0.750, 0.669),
    "DialoGPT 762M": (0.883, 0.918, 0.671, 0.713),
}
PAPER_TABLE3 = {
    "BS": (0.856, 0.768, 0.824, 0.737),
    "DBS": (0.999, 0.981, 0.758, 0.478),
    "NS": (1.000, 0.994, 0.755, 0.462),
    "UL (alpha=0)": (1.000, 0.996, 0.406, 0.759),
    "UL (alpha=1)": (0.943, 0.900, 0.920, 0.938),
    "UL (alpha=10)": (0.910, 0.937, 0.969, 0.968),
}
PAPER_ANALYZED = {
    "Blender 400M": (1331, 1270),
    "Blender 1B": (1413, 1316),
    "Blender 3B": (1566, 1403),
    "DialoGPT 345M": (1126, 924),
    "DialoGPT 762M": (1044, 956),
    "BS": (1566, 1403),
    "DBS": (991, 882),
    "NS": (818, 684),
    "UL (alpha=0)": (1914, 1871),
    "UL (alpha=1)": (1806, 1887),
    "UL (alpha=10)": (1654, 1811),
}
TYPES = ("ENTQ", "CNTQ")


def named(parser, items, flag) -> dict[str, str]:
    out = {}
    for item in items or ():
        name, sep, model = item.rpartition("=")
        if not sep or not name or not model:
            parser.error(f"{flag} must be NAME=MODEL, got {item!r}")
        out[name] = model
    return out


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--entq", required=True, help="JSONL: history, message, expected_answer ('yes')"
    )
    parser.add_argument(
        "--cntq", required=True, help="JSONL: history, message, expected_answer ('no')"
    )
    parser.add_argument(
        "--classifier", required=True, help="yes/no classifier directory, or 'prefix'"
    )
    parser.add_argument(
        "--bs",
        action="append",
        metavar="NAME=MODEL",
        help="Table 2 row: beam search with this model",
    )
    parser.add_argument(
        "--technique-model",
        help="Table 3: the model for the BS, DBS and NS rows (paper: Blender 3B)",
    )
    parser.add_argument(
        "--ul",
        action="append",
        metavar="NAME=MODEL",
        help="Table 3 row: an unlikelihood-trained checkpoint",
    )
    parser.add_argument("--beam-size", type=int, default=10, help="B (and n for NS); paper: 10")
    parser.add_argument("--num-beam-groups", type=int, default=5)
    parser.add_argument("--diversity-penalty", type=float, default=0.5)
    parser.add_argument("--top-p", type=float, default=0.9)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument(
        "--generation-batch-size", type=int, default=8, help="inputs per generate call"
    )
    parser.add_argument(
        "--limit", type=int, default=None, help="only the first N inputs of each type"
    )
    parser.add_argument("--seed", type=int, default=0, help="nucleus sampling seed")
    parser.add_argument("--device", default=None)
    parser.add_argument("--dtype", default=None, choices=(None, "float32", "float16", "bfloat16"))
    parser.add_argument("--classifier-batch-size", type=int, default=32)
    parser.add_argument("--output-dir", required=True)
    args = parser.parse_args(argv)
    args.bs_models, args.ul_models = named(parser, args.bs, "--bs"), named(parser, args.ul, "--ul")
    if not (args.bs_models or args.technique_model or args.ul_models):
        parser.error("give at least one of --bs, --technique-model, --ul")
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be positive")
    return args


def read_inputs(path, input_type: str, limit: int | None) -> list[dict]:
    from dialeval.io import iter_jsonl

    rows = []
    for where, row in iter_jsonl(path):
        if not isinstance(row, dict) or not {"history", "message", "expected_answer"} <= row.keys():
            raise SystemExit(
                f"{where}: expected a row with 'history', 'message' and 'expected_answer'"
            )
        if row["expected_answer"] not in ("yes", "no"):
            raise SystemExit(
                f"{where}: expected_answer must be 'yes' or 'no', got {row['expected_answer']!r}"
            )
        rows.append({**row, "input_type": input_type})
        if limit is not None and len(rows) == limit:
            break
    if not rows:
        raise SystemExit(f"{path}: no inputs")
    return rows


def generate(technique: str, model_id: str, inputs: list[dict], args) -> list[list[str]]:
    from dialeval.generation.nbest import (
        beam_search_nbest,
        dialogue_prompt,
        diverse_beam_search_nbest,
        nucleus_sampling_nbest,
    )
    from dialeval.hub import load_model

    lm = load_model(model_id, "language_model", device=args.device, dtype=args.dtype)
    prompts = [
        dialogue_prompt([row["history"], row["message"]], lm.tokenizer, lm.model) for row in inputs
    ]
    nbest = []
    for start in range(0, len(prompts), args.generation_batch_size):
        batch = prompts[start : start + args.generation_batch_size]
        if technique == "DBS":
            nbest += diverse_beam_search_nbest(
                lm.model,
                lm.tokenizer,
                batch,
                beam_size=args.beam_size,
                num_beam_groups=args.num_beam_groups,
                diversity_penalty=args.diversity_penalty,
                max_new_tokens=args.max_new_tokens,
            )
        elif technique == "NS":
            nbest += nucleus_sampling_nbest(
                lm.model,
                lm.tokenizer,
                batch,
                n=args.beam_size,
                top_p=args.top_p,
                max_new_tokens=args.max_new_tokens,
                seed=args.seed + start,
            )
        else:
            nbest += beam_search_nbest(
                lm.model,
                lm.tokenizer,
                batch,
                beam_size=args.beam_size,
                max_new_tokens=args.max_new_tokens,
            )
    return nbest


def figures(nbest, inputs, classifier) -> dict:
    from dialeval.metrics.nbest_contradiction.certainty_variety import nbest_contradiction

    result = nbest_contradiction(
        nbest,
        [row["expected_answer"] for row in inputs],
        classifier,
        questions=[row["message"] for row in inputs],
        input_types=[row["input_type"] for row in inputs],
    )
    return {kind: result["per_type"][kind] for kind in TYPES}


def markdown(title: str, rows: dict, paper: dict) -> str:
    def number(value):
        return "nan" if isinstance(value, float) and math.isnan(value) else f"{value:.3f}"

    lines = [
        f"### {title}",
        "",
        "| row | Certainty ENTQ | Certainty CNTQ | Variety ENTQ | Variety CNTQ | analyzed ENTQ | analyzed CNTQ |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in rows.items():
        ours = [number(row[k][f]) for f in ("certainty", "variety") for k in TYPES]
        analyzed = [f"{row[k]['num_analyzed']} / {row[k]['num_inputs']}" for k in TYPES]
        lines.append(f"| {name} (ours) | " + " | ".join(ours + analyzed) + " |")
        if name in paper:
            counts = PAPER_ANALYZED.get(name, ("-", "-"))
            lines.append(
                f"| {name} (paper) | "
                + " | ".join(f"{v:.3f}" for v in paper[name])
                + f" | {counts[0]} / 2000 | {counts[1]} / 2000 |"
            )
    return "\n".join(lines) + "\n"


def main(argv=None) -> dict:
    args = parse_args(argv)
    from dialeval.metrics.nbest_contradiction.yes_no import load_yes_no_classifier

    inputs = read_inputs(args.entq, "ENTQ", args.limit) + read_inputs(args.cntq, "CNTQ", args.limit)
    classifier = load_yes_no_classifier(
        args.classifier, device=args.device, batch_size=args.classifier_batch_size
    )
    table2, table3 = {}, {}
    for name, model in args.bs_models.items():
        table2[name] = figures(generate("BS", model, inputs, args), inputs, classifier)
        print(name, table2[name])
    if args.technique_model:
        for technique in ("BS", "DBS", "NS"):
            table3[technique] = figures(
                generate(technique, args.technique_model, inputs, args), inputs, classifier
            )
            print(technique, table3[technique])
    for name, model in args.ul_models.items():
        table3[name] = figures(generate("BS", model, inputs, args), inputs, classifier)
        print(name, table3[name])
    report = {
        "table2": table2,
        "table3": table3,
        "classifier": getattr(classifier, "name", args.classifier),
        "num_inputs": {kind: sum(row["input_type"] == kind for row in inputs) for kind in TYPES},
        "settings": {
            key: getattr(args, key)
            for key in (
                "beam_size",
                "num_beam_groups",
                "diversity_penalty",
                "top_p",
                "max_new_tokens",
                "seed",
            )
        },
        "paper": {"table2": PAPER_TABLE2, "table3": PAPER_TABLE3, "analyzed": PAPER_ANALYZED},
    }
    output = Path(args.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    (output / "tables2_3.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    text = ""
    if table2:
        text += markdown("Table 2: beam search, B = 10", table2, PAPER_TABLE2) + "\n"
    if table3:
        text += markdown("Table 3: techniques (paper: Blender 3B)", table3, PAPER_TABLE3)
    (output / "tables2_3.md").write_text(text, encoding="utf-8")
    print(text)
    return report


if __name__ == "__main__":
    main()
