"""``dialeval`` command line: ``dialeval evaluate INPUT`` (later issues add sub-commands)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _models(given: list[str] | None, default: list[str]) -> list[str]:
    """``--x-model`` values (repeatable); ``none`` turns the metric off."""
    if not given:
        return default
    return [] if [model.lower() for model in given] == ["none"] else given


def _evaluate(args: argparse.Namespace) -> int:
    from dialeval.evaluation import EvaluationOptions, evaluate_response_sets, format_per_set_table, format_table
    from dialeval.io import read_response_sets, read_text_lines

    sets = read_response_sets(args.input, args.format)
    reference_corpus = read_text_lines(args.reference_corpus) if args.reference_corpus else None
    defaults = EvaluationOptions()
    options = EvaluationOptions(
        sentence_models=[] if args.no_sentence_model else (args.sentence_model or defaults.sentence_models),
        nli_models=_models(args.nli_model, defaults.nli_models),
        bertscore_models=_models(args.bertscore_model, defaults.bertscore_models),
        cross_encoder_models=_models(args.cross_encoder_model, defaults.cross_encoder_models),
        max_n=args.max_n,
        lf_threshold=args.lf_threshold,
        reference_corpus=reference_corpus,
        allow_empty=args.allow_empty,
        batch_size=args.batch_size,
        device=args.device,
        progress=not args.no_progress,
    )
    report = evaluate_response_sets(sets, options)
    report["input"] = str(args.input)
    output = Path(args.output) if args.output else Path(args.input).with_suffix(".diversity.json")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.per_set:
        print(format_per_set_table(report) + "\n")
    print(format_table(report))
    print(f"\n{report['num_sets']} response sets, {report['num_responses']} responses; report: {output}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dialeval", description="Diversity evaluation of multi-response dialogue generation.")
    commands = parser.add_subparsers(dest="command", required=True)

    evaluate = commands.add_parser("evaluate", help="score a file of response sets with every metric available offline")
    evaluate.add_argument("input", help='JSONL ({"context": ..., "responses": [...]} per line) or a Tevet & Berant CSV')
    evaluate.add_argument("--format", default="auto", choices=["auto", "jsonl", "csv"])
    evaluate.add_argument("--output", "-o", help="JSON report path (default: INPUT with suffix .diversity.json)")
    evaluate.add_argument(
        "--sentence-model", action="append", metavar="MODEL",
        help="sentence-transformers id or directory for sent-BERT diversity (repeatable; default: the embedded all-MiniLM-L6-v2)",
    )
    evaluate.add_argument("--no-sentence-model", action="store_true", help="skip sent-BERT diversity and the Vendi score")
    evaluate.add_argument(
        "--nli-model", action="append", metavar="MODEL",
        help="NLI classifier for NLI Diversity (repeatable; default FacebookAI/roberta-large-mnli; 'none' to skip)",
    )
    evaluate.add_argument(
        "--bertscore-model", action="append", metavar="MODEL",
        help="encoder for BERTScore diversity (repeatable; default FacebookAI/roberta-large, layer 17; 'none' to skip)",
    )
    evaluate.add_argument(
        "--cross-encoder-model", action="append", metavar="MODEL",
        help="STS cross-encoder for cross-encoder diversity (repeatable; default cross-encoder/stsb-roberta-large; 'none' to skip)",
    )
    evaluate.add_argument("--max-n", type=int, default=5, help="highest n-gram order of the set-level metrics (default 5)")
    evaluate.add_argument("--lf-threshold", type=int, default=100, help="LF low-frequency count threshold (default 100)")
    evaluate.add_argument(
        "--reference-corpus", metavar="TXT",
        help="UTF-8 text file, one reference (e.g. training) response per line, that LF counts token frequencies in "
        "(default: the evaluated responses themselves, as the Sem-Ent released code)",
    )
    evaluate.add_argument("--per-set", action="store_true", help="also print one row of figures per response set")
    evaluate.add_argument("--allow-empty", action="store_true", help='score "" as a response without tokens instead of failing')
    evaluate.add_argument("--batch-size", type=int, default=64)
    evaluate.add_argument("--device", help="torch device for model-based metrics (default: Accelerate's choice)")
    evaluate.add_argument("--no-progress", action="store_true", help="hide progress bars")
    evaluate.set_defaults(handler=_evaluate)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except ValueError as error:  # bad input: a message, not a traceback
        print(f"dialeval {args.command}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
