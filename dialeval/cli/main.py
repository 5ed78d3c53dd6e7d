"""``dialeval`` command line: ``evaluate`` (the main job), ``meta-eval``, ``export-dataset``, ``dtg`` and ``dtg-summary``."""
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
    from dialeval.cli.evaluate_job import (
        EvaluationOptions,
        evaluate_response_sets,
        format_per_set_table,
        format_table,
    )
    from dialeval.io import read_response_sets, read_text_lines

    sets = read_response_sets(args.input, args.format)
    reference_corpus = read_text_lines(args.reference_corpus) if args.reference_corpus else None
    if bool(args.selection_model) != bool(args.selection_questions):
        raise ValueError("response selection needs both --selection-model and --selection-questions")
    selection_questions = None
    if args.selection_questions:
        from dialeval.metrics.response_selection import read_selection_questions

        selection_questions = read_selection_questions(args.selection_questions)
    defaults = EvaluationOptions()
    options = EvaluationOptions(
        sentence_models=[] if args.no_sentence_model else (args.sentence_model or defaults.sentence_models),
        nli_models=_models(args.nli_model, defaults.nli_models),
        bertscore_models=_models(args.bertscore_model, defaults.bertscore_models),
        cross_encoder_models=_models(args.cross_encoder_model, defaults.cross_encoder_models),
        max_n=args.max_n,
        lf_threshold=args.lf_threshold,
        reference_corpus=reference_corpus,
        sem_ent_clusters=args.sem_ent_clusters,
        sem_ent_embedder=args.sem_ent_embedder.partition("=")[0],
        sem_ent_embedder_model=args.sem_ent_embedder.partition("=")[2] or None,
        sem_ent_num_clusters=args.sem_ent_k,
        sem_ent_seed=args.sem_ent_seed,
        save_sem_ent_clusters=args.save_sem_ent_clusters,
        allow_empty=args.allow_empty,
        selection_models=args.selection_model or [],
        selection_questions=selection_questions,
        selection_reduction=args.selection_reduction,
        selection_batch_size=args.selection_batch_size,
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
    if args.plot and "sem_ent" in report["metrics"]:
        from dialeval.cli.plots import plot_cluster_distribution

        summary = report["metrics"]["sem_ent"]
        path = plot_cluster_distribution(
            summary["cluster_distribution"], Path(args.plot) / "sem_ent_clusters.png", title=Path(args.input).name,
            reference_distribution=summary["reference_distribution"],
        )
        print(f"plot: {path}")
    print(f"\n{report['num_sets']} response sets, {report['num_responses']} responses; report: {output}")
    return 0


def _meta_eval(args: argparse.Namespace) -> int:
    from dialeval.cli.meta_eval_job import MetaEvalOptions, format_report, report_as_dict, run_meta_eval

    options = MetaEvalOptions(
        batch_size=args.batch_size, device=args.device, round_scores=args.round_scores, bootstrap=args.bootstrap,
        num_resamples=args.num_resamples, seed=args.seed, data_dir=args.data_dir, cache_dir=args.cache_dir,
        rated_subset=args.rated,
    )
    reports = []
    for task in args.task or ["story", "resp", "prompt"]:
        report = run_meta_eval(args.metric or ["distinct_n", "cos_sim", "sent_bert"], args.test, task, options, human=not args.no_human)
        reports.append(report)
        print(format_report(report) + "\n")
        if args.plot:
            from dialeval.cli.plots import write_plots

            for path in write_plots(report, args.plot):
                print(f"plot: {path}")
    if args.output:
        Path(args.output).write_text(json.dumps([report_as_dict(r) for r in reports], indent=2) + "\n", encoding="utf-8")
    return 0


def _export_dataset(args: argparse.Namespace) -> int:
    from dialeval.datasets_scripts import export_dataset

    out = export_dataset(
        args.name, args.to, configs=args.config, data_dir=args.data_dir, cache_dir=args.cache_dir,
        verify_checksums=not args.no_verify, push_to_hub=args.push_to_hub, private=args.private,
    )
    print(f"wrote {out}/README.md and Parquet files" + (f"; pushed to https://huggingface.co/datasets/{args.push_to_hub}" if args.push_to_hub else ""))
    return 0


def _dtg(args: argparse.Namespace) -> int:
    from dialeval.distributed import end_processes, process_state
    from dialeval.cli.dtg_job import DTGRunSettings, format_summary_table, read_contexts, run_dtg_job

    contexts = read_contexts(args.dataset, args.split, args.input, data_dir=args.data_dir, limit=args.limit)
    settings = DTGRunSettings(
        model=args.model, metric=args.metric, metric_model=args.metric_model, threshold=args.threshold,
        contexts_from=f"{args.dataset}:{args.split}" if args.dataset else str(args.input),
        num_responses=args.num_responses, max_samples=args.max_samples, decoding=args.decoding,
        num_beams=args.num_beams, top_p=args.top_p, max_new_tokens=args.max_new_tokens,
        max_context_tokens=args.max_context_tokens, turn_separator=args.turn_separator, seed=args.seed,
        batch_size=args.batch_size, limit=args.limit, top_k=args.top_k, temperature=args.temperature,
        min_new_tokens=args.min_new_tokens, no_repeat_ngram_size=args.no_repeat_ngram_size,
        repetition_penalty=args.repetition_penalty, nli_objective=args.nli_objective, tie_break=args.tie_break,
        trials=args.trials, dtype=args.dtype, metric_dtype=args.metric_dtype, nli_batch_size=args.nli_batch_size,
    )
    row = run_dtg_job(settings, contexts, args.output, overwrite=args.overwrite, device=args.device,
                      progress=not args.no_progress)
    state = process_state()
    if state.is_main_process:
        print(format_summary_table([row]))
        print(f"\n{row['num_contexts']} contexts ({state.num_processes} process(es)); stopped by {row['stop_reasons']}; "
              f"results: {args.output}")
    end_processes()
    return 0


def _dtg_summary(args: argparse.Namespace) -> int:
    from dialeval.cli.dtg_job import format_summary_table, read_run, summarize

    rows = [summarize(*read_run(path), bertscore_model=args.bertscore_model, device=args.device) for path in args.runs]
    print(format_summary_table(rows))
    if args.output:
        Path(args.output).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


def _add_dtg_commands(commands) -> None:
    dtg = commands.add_parser(
        "dtg", help="Diversity Threshold Generation over a test set (JSONL, resumable; runs under accelerate launch)",
    )
    dtg.add_argument("--model", required=True, help="causal (e.g. microsoft/DialoGPT-large) or seq2seq model id or directory")
    source = dtg.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", help="a dialeval test set with a `context` column, e.g. dailydialog_pp")
    source.add_argument("--input", help='JSONL file, one {"context": [turns...] or "text", "id": ...} per line')
    dtg.add_argument("--split", default="dev", help="split of --dataset: dev (= validation), test, train (default dev)")
    dtg.add_argument("--data-dir", help="folder with the dataset's released files (default: pinned download)")
    dtg.add_argument("--metric", default="nli", choices=["nli", "sent_bert", "distinct_n"])
    dtg.add_argument("--metric-model", help="NLI classifier (default FacebookAI/roberta-large-mnli) or sentence model for sent_bert")
    dtg.add_argument("--threshold", type=float, help="stop when diversity is above this (default: nli 10, sent_bert -0.179, distinct_n 0.98)")
    dtg.add_argument("--num-responses", type=int, default=5, help="n, the set size (default 5)")
    dtg.add_argument("--max-samples", type=int, default=20, help="S, most resamples per context after the first n (default 20)")
    dtg.add_argument("--decoding", default="sample", choices=["sample", "beam"], help="nucleus sampling (§5) or App. D's beams")
    dtg.add_argument("--num-beams", type=int, default=25, help="beams for --decoding beam (default 25)")
    dtg.add_argument("--top-p", type=float, default=0.9, help="nucleus p (default 0.9)")
    dtg.add_argument("--max-new-tokens", type=int, default=40)
    dtg.add_argument("--max-context-tokens", type=int, help="keep each context's last N tokens (the paper gives BlenderBot 128)")
    dtg.add_argument("--turn-separator", help="joins context turns (default: EOS after every turn for causal models, newline for seq2seq)")
    dtg.add_argument("--seed", type=int, default=0, help="batch k is sampled under seed + k")
    dtg.add_argument("--batch-size", type=int, default=8, help="contexts per generate call and per seeded batch")
    dtg.add_argument("--limit", type=int, help="only the first N contexts")
    dtg.add_argument("--output", "-o", required=True, help="JSONL results (resumed if it exists with the same settings)")
    dtg.add_argument("--overwrite", action="store_true", help="start over instead of resuming")
    dtg.add_argument("--device", help="torch device (default: Accelerate's choice for this process)")
    dtg.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    dtg.add_argument("--top-k", type=int, default=0, help="top-k cut of the sampling (default 0: none)")
    dtg.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (default 1)")
    dtg.add_argument("--min-new-tokens", type=int, help="at least this many new tokens (default: the checkpoint's)")
    dtg.add_argument("--no-repeat-ngram-size", type=int, help="block repeated n-grams (default: the checkpoint's)")
    dtg.add_argument("--repetition-penalty", type=float, help="repetition penalty (default: the checkpoint's)")
    dtg.add_argument("--nli-objective", default="nli_diversity", choices=["nli_diversity", "contradictions"],
                     help="how --metric nli ranks leave-one-out subsets (default nli_diversity, §6.2)")
    dtg.add_argument("--tie-break", default="random", choices=["random", "first"], help="tied subsets (default random)")
    dtg.add_argument("--trials", type=int, default=1, help="seeded repeats of the run (the paper averages 10)")
    dtg.add_argument("--dtype", choices=["float32", "float16", "bfloat16"], help="generator weights (default: the checkpoint's)")
    dtg.add_argument("--metric-dtype", choices=["float32", "float16", "bfloat16"], help="NLI / sentence model weights")
    dtg.add_argument("--nli-batch-size", type=int, default=32, help="NLI pairs (Sent-BERT sentences) per forward pass")
    dtg.set_defaults(handler=_dtg)

    summary = commands.add_parser("dtg-summary", help="Table 4 of one or more `dialeval dtg` outputs")
    summary.add_argument("runs", nargs="+", help="JSONL outputs of dialeval dtg")
    summary.add_argument("--output", "-o", help="also write the rows as JSON")
    summary.add_argument("--bertscore-model", help="BERTScore model for Table 5's relevance (the paper's: FacebookAI/roberta-large)")
    summary.add_argument("--device", help="torch device for --bertscore-model")
    summary.set_defaults(handler=_dtg_summary)


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
        help="UTF-8 text file, one reference (e.g. training) response per line: LF counts token frequencies in it "
        "(default: the evaluated responses themselves, as the Sem-Ent released code) and Sem-Ent fits its clusters on it",
    )
    evaluate.add_argument("--sem-ent-clusters", metavar="DIR", help="score Sem-Ent under clusters saved earlier (instead of fitting)")
    evaluate.add_argument(
        "--sem-ent-embedder", default="sentence_transformers", metavar="KIND[=MODEL]",
        help="embedder Sem-Ent fits with: sentence_transformers (default, the embedded MiniLM), "
        "last_token (the paper's: microsoft/DialoGPT-large) or mean_pooling; =MODEL picks the model",
    )
    evaluate.add_argument("--sem-ent-k", type=int, default=20, help="number of Sem-Ent clusters (default 20, as the paper)")
    evaluate.add_argument("--sem-ent-seed", type=int, default=0, help="k-means seed of the Sem-Ent fit")
    evaluate.add_argument("--save-sem-ent-clusters", metavar="DIR", help="save the fitted Sem-Ent clusters here to reuse them")
    evaluate.add_argument("--plot", metavar="DIR", help="write sem_ent_clusters.png: the sorted cluster distribution (paper Fig. 2/3)")
    evaluate.add_argument("--per-set", action="store_true", help="also print one row of figures per response set")
    evaluate.add_argument("--allow-empty", action="store_true", help='score "" as a response without tokens instead of failing')
    evaluate.add_argument(
        "--selection-model", action="append", metavar="MODEL",
        help="causal or seq2seq LM to evaluate via response selection (Sato et al. 2020) on --selection-questions (repeatable)",
    )
    evaluate.add_argument(
        "--selection-questions", metavar="FILE",
        help='response-selection questions: .jsonl/.json ({"context": [...], "candidates": [...], "label": i} per line) '
        "or, under any other name, the authors' create_test.sh output (7 tab-separated fields: 3 context turns, "
        "ground truth, 3 false candidates)",
    )
    evaluate.add_argument("--selection-reduction", choices=["sum", "mean"], default="sum",
                          help="candidate loss: summed (default) or mean token NLL")
    evaluate.add_argument("--selection-batch-size", type=int, default=16, help="questions per forward pass (default 16)")
    evaluate.add_argument("--batch-size", type=int, default=64)
    evaluate.add_argument("--device", help="torch device for model-based metrics (default: Accelerate's choice)")
    evaluate.add_argument("--no-progress", action="store_true", help="hide progress bars")
    evaluate.set_defaults(handler=_evaluate)

    from dialeval.cli.meta_eval_job import TESTS

    meta = commands.add_parser(
        "meta-eval", help="how well diversity metrics track diversity on Tevet & Berant's decTest / conTest / McDiv"
    )
    meta.add_argument(
        "--metric", action="append", metavar="NAME[=MODEL]",
        help="distinct_n, cos_sim, sent_bert, bertscore, cross_encoder, nli, nli_neutral, nli_confidence, vendi, "
        "or released:<distinct_n|cos_sim|sent_bert|bert_score> (the release's stored scores); repeatable "
        "(default: distinct_n, cos_sim, sent_bert)",
    )
    meta.add_argument("--test", required=True, choices=sorted(TESTS))
    meta.add_argument("--task", action="append", choices=["story", "resp", "prompt"], help="repeatable (default: all three)")
    meta.add_argument("--data-dir", help="folder with the released CSVs (an unzipped data.zip); default: download, pinned and sha256-checked")
    meta.add_argument("--cache-dir", help="datasets cache directory")
    meta.add_argument(
        "--round-scores", type=int, metavar="DECIMALS",
        help="round scores before ranking, as the release's 3-decimal files do (OCA depends on the ties this makes)",
    )
    meta.add_argument("--bootstrap", action="store_true", help="add the 95%% CI of rho (Stasaski & Hearst App. A: 1000 resamples of 50%%)")
    meta.add_argument("--num-resamples", type=int, default=1000)
    meta.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and of decTest's 200-set subsets")
    meta.add_argument("--no-human", action="store_true", help="leave out the absHDS row")
    meta.add_argument(
        "--rated", action="store_true",
        help="score the human-rated sets (decTest 200, conTest, McDiv_nuggets 200) so every row covers the same sets as absHDS",
    )
    meta.add_argument("--plot", metavar="DIR", help="write the per-metric PNGs (class histograms, Fig. 1/4; score vs temperature, Fig. 3)")
    meta.add_argument("--output", "-o", help="also write the figures as JSON")
    meta.add_argument("--batch-size", type=int, default=64)
    meta.add_argument("--device", help="torch device for model-based metrics (default: Accelerate's choice)")
    meta.set_defaults(handler=_meta_eval)

    from dialeval.datasets_scripts.registry import BUILDERS

    export = commands.add_parser("export-dataset", help="write a test set as Parquet + dataset card (and push it to the Hub)")
    export.add_argument("name", choices=sorted(BUILDERS))
    export.add_argument("--to", required=True, metavar="DIR")
    export.add_argument("--config", action="append", help="config to export (repeatable; default: all)")
    export.add_argument("--data-dir", help="folder with the released files (default: download, pinned and sha256-checked)")
    export.add_argument("--cache-dir", help="datasets cache directory")
    export.add_argument("--no-verify", action="store_true", help="accept source files whose sha256 differs from the release")
    export.add_argument("--push-to-hub", metavar="REPO", help="dataset repo id to create (if needed) and upload to")
    export.add_argument("--private", action="store_true", help="create the Hub repo as private")
    export.set_defaults(handler=_export_dataset)

    _add_dtg_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except (ValueError, OSError) as error:  # bad input, a missing model or data file: a message, not a traceback
        print(f"dialeval {args.command}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
