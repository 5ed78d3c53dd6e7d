"""Sato et al. (2022), Fig. 2 (and Table 2 at B = 10): Certainty and Variety of beam-search n-best
lists on ENTQ / CNTQ polar questions against the beam size, one line per model.

§4.2: each model answers the 2,000 ENTQ and 2,000 CNTQ inputs (a MultiNLI telephone premise as
the history, the hypothesis rewritten into a polar echo question as the message; App. A) with
beam search of beam size B, returning all B beams (ParlAI's defaults but
``beam_length_penalty=0``, App. C); a yes/no classifier (App. B) reads every response, lists
with an ambiguous response are left out (App. C), and Certainty / Variety are computed per
input type (§2). :func:`dialeval.generation.beam_size_sweep` does one model;
:func:`dialeval.generation.nbest_plots.plot_beam_size_sweep` draws the four panels.

Usage (see README.md beside this file)::

    python examples/reproduce/sato2022_fig2.py --model "DialoGPT 345M=microsoft/DialoGPT-medium" \\
        --model "Blender 400M=facebook/blenderbot-400M-distill" --classifier runs/yes-no \\
        --multinli-dir DIR_WITH_multinli_1.0 --out-dir runs/fig2
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _tables import (
    cell,
    fail,
    markdown_table,
    one_line_errors,
    require_model,
    require_path,
    write_outputs,
)

TYPES = ("ENTQ", "CNTQ")
#: Table 2 as printed (B = 10): model -> (Certainty ENTQ, CNTQ, Variety ENTQ, CNTQ).
PAPER_TABLE2 = {
    "Blender 400M": (0.806, 0.747, 0.780, 0.775),
    "Blender 1B": (0.832, 0.752, 0.832, 0.753),
    "Blender 3B": (0.856, 0.768, 0.824, 0.737),
    "DialoGPT 345M": (0.938, 0.917, 0.750, 0.669),
    "DialoGPT 762M": (0.883, 0.918, 0.671, 0.713),
}


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--model",
        action="append",
        required=True,
        metavar="NAME=MODEL",
        help="a line of the figure: its label and the generator's id or directory (repeatable)",
    )
    parser.add_argument(
        "--classifier",
        required=True,
        help="yes/no classifier directory (examples/train_yes_no_classifier.py) or 'prefix' (rule baseline)",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--multinli-dir",
        help="MultiNLI 1.0 (the polar_questions builder rewrites it; needs spaCy en_core_web_sm)",
    )
    source.add_argument(
        "--inputs",
        help="JSONL of inputs: history, message, expected_answer (yes/no), input_type (ENTQ/CNTQ)",
    )
    parser.add_argument(
        "--num-inputs", type=int, default=2000, help="ENTQ and CNTQ inputs each (§4.1: 2,000)"
    )
    parser.add_argument("--beam-sizes", type=int, nargs="+", default=[5, 10, 20, 40])
    parser.add_argument(
        "--out-dir", required=True, help="writes fig2.png, fig2.md and fig2.json here"
    )
    parser.add_argument("--batch-size", type=int, default=8, help="inputs per generate call")
    parser.add_argument("--classifier-batch-size", type=int, default=32)
    parser.add_argument("--max-new-tokens", type=int, help="default: beam_search_nbest's")
    parser.add_argument("--device", help="torch device (default: Accelerate's choice)")
    parser.add_argument(
        "--dtype", help="generator dtype, e.g. bfloat16 (default: the checkpoint's)"
    )
    parser.add_argument(
        "--limit", type=int, help="only the first N inputs of each type (smoke runs)"
    )
    return parser.parse_args(argv)


def read_inputs(args) -> list[dict]:
    """ENTQ then CNTQ records with ``history``, ``message``, ``expected_answer``, ``input_type``."""
    if args.inputs:
        from dialeval.io import iter_jsonl

        records = []
        for where, record in iter_jsonl(args.inputs):
            missing = [
                key
                for key in ("history", "message", "expected_answer", "input_type")
                if key not in record
            ]
            if missing:
                raise ValueError(f"{where}: missing {missing}")
            records.append(record)
    else:
        from dialeval.datasets_scripts import load

        records = [
            dict(row)
            for config in ("entq", "cntq")
            for row in load(
                "polar_questions",
                config,
                data_dir=args.multinli_dir,
                split="test",
                num_inputs=args.num_inputs,
            )
        ]
    by_type = {kind: [r for r in records if r["input_type"] == kind] for kind in TYPES}
    if args.limit:
        by_type = {kind: rows[: args.limit] for kind, rows in by_type.items()}
    return [record for kind in TYPES for record in by_type[kind]]


SCRIPT = Path(__file__).name


def main(argv=None) -> dict:
    """The figure (see the module docstring); a missing input exits 2 with one line saying how to get it."""
    args = parse_args(argv)
    models = {}
    for spec in args.model:
        name, _, model = spec.partition("=")
        if not name or not model:
            fail(SCRIPT, f"--model takes NAME=MODEL, got {spec!r}")
        require_model(SCRIPT, "--model", model, value=f"'{name}=DIR'")
        models[name] = model
    if args.classifier != "prefix":
        require_path(
            SCRIPT,
            "--classifier",
            args.classifier,
            folder=True,
            what="the yes/no classifier examples/train_yes_no_classifier.py writes (App. B), or 'prefix'",
        )
    if args.inputs is not None:
        require_path(
            SCRIPT,
            "--inputs",
            args.inputs,
            folder=False,
            what="JSONL with history, message, expected_answer and input_type per line",
        )
    else:
        require_path(
            SCRIPT,
            "--multinli-dir",
            args.multinli_dir,
            folder=True,
            what="the folder holding https://cims.nyu.edu/~sbowman/multinli/multinli_1.0.zip (or it unzipped)",
        )
    with one_line_errors(SCRIPT, {"data_dir": "--multinli-dir"}):
        return run(args, models)


def run(args, models: dict[str, str]) -> dict:
    from dialeval.generation import beam_size_sweep, dialogue_prompt
    from dialeval.generation.nbest_plots import plot_beam_size_sweep
    from dialeval.hub import load_model

    records = read_inputs(args)
    sweeps = {}
    options = {"max_new_tokens": args.max_new_tokens} if args.max_new_tokens else {}
    for name, model_path in models.items():
        loaded = load_model(model_path, "language_model", device=args.device, dtype=args.dtype)
        prompts = [
            dialogue_prompt([r["history"], r["message"]], loaded.tokenizer, loaded.model)
            for r in records
        ]
        sweeps[name] = beam_size_sweep(
            loaded.model,
            loaded.tokenizer,
            prompts,
            [r["expected_answer"] for r in records],
            args.classifier,
            beam_sizes=args.beam_sizes,
            input_types=[r["input_type"] for r in records],
            questions=[r["message"] for r in records],
            batch_size=args.batch_size,
            classifier_batch_size=args.classifier_batch_size,
            device=args.device,
            **options,
        )
        print(
            f"{name}: "
            + json.dumps({p["beam_size"]: [p["certainty"], p["variety"]] for p in sweeps[name]}),
            flush=True,
        )
    out = Path(args.out_dir)
    figure = plot_beam_size_sweep(
        sweeps, out / "fig2.png", title="Certainty and Variety of n-best lists (beam search)"
    )
    header = [
        "Model",
        "B",
        "Certainty ENTQ",
        "Certainty CNTQ",
        "Variety ENTQ",
        "Variety CNTQ",
        "analyzed ENTQ / CNTQ",
    ]
    body = []
    for name, points in sweeps.items():
        for point in points:
            per_type = point["per_type"]
            body.append(
                [
                    name,
                    point["beam_size"],
                    *(cell(per_type[k]["certainty"], 3) for k in TYPES),
                    *(cell(per_type[k]["variety"], 3) for k in TYPES),
                    " / ".join(str(per_type[k]["num_analyzed"]) for k in TYPES),
                ]
            )
    paper_rows = [
        [name, "10", *(f"{v:.3f}" for v in values), ""] for name, values in PAPER_TABLE2.items()
    ]
    markdown = "\n\n".join(
        [
            "Fig. 2: Certainty and Variety of n-best lists using beam search with various beam sizes (B = 10 is Table 2)",
            markdown_table(header, body),
            f"Classifier: {args.classifier}; {len(records)} inputs; figure: {figure.name}.",
            "Table 2 as printed (B = 10):",
            markdown_table(header, paper_rows),
        ]
    )
    data = {
        "classifier": args.classifier,
        "models": models,
        "num_inputs": len(records),
        "sweeps": sweeps,
    }
    table, _ = write_outputs(out, "fig2", markdown, data)
    print(markdown)
    print(f"\nwrote {figure}, {table} and fig2.json")
    return data


if __name__ == "__main__":
    main()
