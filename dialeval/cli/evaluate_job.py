"""The main job: every diversity metric that can run here, over a file of response sets.

Each metric is an :class:`EvaluationMetric` in :data:`METRICS`. A metric that needs a model
which is not on this machine raises :class:`~dialeval.hub.ModelNotAvailableError`; the job
records it under ``skipped`` with the reason and carries on. Later metrics (NLI diversity,
Sem-Ent, ...) join by appending to :data:`METRICS`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tqdm.auto import tqdm

from dialeval.cli.options import name_flags, option
from dialeval.io import ResponseSet, read_text_lines
from dialeval.hub import ModelNotAvailableError, resolve_model_path
from dialeval.metrics.lexical_diversity import corpus_lexical_diversity, set_lexical_diversity
from dialeval.metrics.registry import SET_SCORERS, SetScorer, scorers_with_flag


def models_or_none(models: list[str]) -> list[str]:
    """``--x-model`` values as given; ``none`` alone turns the metric off."""
    return [] if [model.lower() for model in models] == ["none"] else models


def _read_selection_questions(path: str) -> dict:
    from dialeval.metrics.response_selection import read_selection_questions

    return read_selection_questions(path)


@dataclass
class EvaluationOptions:
    """What ``dialeval evaluate`` computes, and how: every field with an ``option`` is a flag of the command."""

    sentence_models: list[str] = field(
        default_factory=lambda: [SET_SCORERS["sent_bert"].default_model],
        metadata=option(
            "--sentence-model", metavar="MODEL", repeatable=True, default_text="the embedded all-MiniLM-L6-v2",
            help="sentence-transformers id or directory for sent-BERT diversity",
            off_flag="--no-sentence-model", off_value=[], off_help="skip sent-BERT diversity and the Vendi score",
        ),
    )
    nli_models: list[str] = field(
        default_factory=lambda: [SET_SCORERS["nli"].default_model],
        metadata=option("--nli-model", metavar="MODEL", repeatable=True, convert=models_or_none,
                        help="NLI classifier for NLI Diversity; 'none' to skip"),
    )
    bertscore_models: list[str] = field(
        default_factory=lambda: [SET_SCORERS["bertscore"].default_model],
        metadata=option("--bertscore-model", metavar="MODEL", repeatable=True, convert=models_or_none,
                        default_text=f"{SET_SCORERS['bertscore'].default_model}, layer 17",
                        help="encoder for BERTScore diversity; 'none' to skip"),
    )
    bertscore_rescale: bool = field(default=True, metadata=option(
        "--bertscore-rescale", choices=("on", "off"), convert=lambda value: value == "on", default_text="on",
        aliases=("rescale_with_baseline", ("`rescale_with_baseline=False`", "`--bertscore-rescale off`")),
        help="rescale BERTScore with the model's baseline (bert_score's rescale_with_baseline): built in for "
        "roberta-large, read from an installed bert-score's published files for the models it covers",
    ))
    bertscore_baseline: str | None = field(default=None, metadata=option(
        "--bertscore-baseline", metavar="FILE",
        aliases=("baseline", ("`baseline=`", "`--bertscore-baseline FILE`")),
        help="bert_score baseline file (LAYER,P,R,F rows, as bert_score/rescale_baseline/en/MODEL.tsv) to rescale "
        "BERTScore with, for a model bert-score publishes none for",
    ))
    cross_encoder_models: list[str] = field(
        default_factory=lambda: [SET_SCORERS["cross_encoder"].default_model],
        metadata=option("--cross-encoder-model", metavar="MODEL", repeatable=True, convert=models_or_none,
                        help="STS cross-encoder for cross-encoder diversity; 'none' to skip"),
    )
    max_n: int = field(default=5, metadata=option("--max-n", help="highest n-gram order of the set-level metrics"))
    corpus_max_n: int = 3
    lf_threshold: int = field(default=100, metadata=option("--lf-threshold", help="LF low-frequency count threshold"))
    reference_corpus: list[str] | None = field(default=None, metadata=option(
        "--reference-corpus", metavar="TXT", convert=read_text_lines,
        help="UTF-8 text file, one reference (e.g. training) response per line: LF counts token frequencies in it "
        "(default: the evaluated responses themselves, as the Sem-Ent released code) and Sem-Ent fits its clusters on it",
    ))
    sem_ent_clusters: str | None = field(default=None, metadata=option(
        "--sem-ent-clusters", metavar="DIR", help="score Sem-Ent under clusters saved earlier (instead of fitting)"))
    sem_ent_embedder: str = field(default="sentence_transformers", metadata=option(
        "--sem-ent-embedder", metavar="KIND[=MODEL]",
        default_text="sentence_transformers, the embedded MiniLM",
        help="embedder Sem-Ent fits with: sentence_transformers, last_token (the paper's: microsoft/DialoGPT-large) "
        "or mean_pooling; =MODEL picks the model",
    ))
    sem_ent_embedder_model: str | None = None
    sem_ent_num_clusters: int = field(default=20, metadata=option(
        "--sem-ent-k", metavar="K", aliases=("num_clusters",), help="number of Sem-Ent clusters, as many as the paper by default"))
    sem_ent_seed: int = field(default=0, metadata=option("--sem-ent-seed", help="k-means seed of the Sem-Ent fit"))
    save_sem_ent_clusters: str | None = field(default=None, metadata=option(
        "--save-sem-ent-clusters", metavar="DIR", help="save the fitted Sem-Ent clusters here to reuse them"))
    # Response selection (Sato et al. 2020): LMs scored on questions {"contexts", "candidates", "labels"}.
    selection_models: list[str] = field(default_factory=list, metadata=option(
        "--selection-model", metavar="MODEL", repeatable=True,
        help="causal or seq2seq LM to evaluate via response selection (Sato et al. 2020) on --selection-questions",
    ))
    selection_questions: dict | None = field(default=None, metadata=option(
        "--selection-questions", metavar="FILE", convert=_read_selection_questions,
        help='response-selection questions: .jsonl/.json ({"context": [...], "candidates": [...], "label": i} per line) '
        "or, under any other name, the authors' create_test.sh output (7 tab-separated fields: 3 context turns, "
        "ground truth, 3 false candidates)",
    ))
    selection_reduction: str = field(default="sum", metadata=option(
        "--selection-reduction", choices=("sum", "mean"), help="candidate loss: summed or mean token NLL"))
    selection_batch_size: int = field(default=16, metadata=option(
        "--selection-batch-size", help="questions per forward pass"))
    allow_empty: bool = field(default=False, metadata=option(
        "--allow-empty", help='score "" as a response without tokens instead of failing'))
    batch_size: int = field(default=64, metadata=option("--batch-size", help="texts or pairs per forward pass"))
    device: str | None = field(default=None, metadata=option(
        "--device", help="torch device for model-based metrics (default: Accelerate's choice)"))
    progress: bool = field(default=True, metadata=option("--no-progress", help="hide progress bars"))

    def __post_init__(self):
        # --sem-ent-embedder KIND=MODEL names both
        if "=" in self.sem_ent_embedder:
            kind, _, model = self.sem_ent_embedder.partition("=")
            if model and self.sem_ent_embedder_model is not None:
                raise ValueError(f"`sem_ent_embedder` {self.sem_ent_embedder!r} names a model and so does `sem_ent_embedder_model`")
            self.sem_ent_embedder, self.sem_ent_embedder_model = kind, model or self.sem_ent_embedder_model


class MetricSkipped(Exception):
    """A metric cannot run on this input (e.g. too small a reference corpus); the job goes on."""


@dataclass
class MetricOutcome:
    """``summary``: name -> value; ``per_set``: one dict of name -> value per set (or None)."""

    summary: dict
    per_set: list[dict] | None = None


@dataclass(frozen=True)
class EvaluationMetric:
    name: str
    scope: str  # "response_set" (averaged over sets) or "corpus" (all responses pooled)
    run: Callable[[list[ResponseSet], EvaluationOptions], MetricOutcome]
    option: str | None = None  # the command-line option that asked for it, e.g. "--nli-model DIR"


def _bar(options: EvaluationOptions, total: int, name: str):
    return tqdm(total=total, desc=name, unit="set", disable=not options.progress, leave=False)


def _set_lexical(sets: list[ResponseSet], options: EvaluationOptions) -> MetricOutcome:
    with _bar(options, len(sets), "lexical (per set)") as bar:
        result = set_lexical_diversity(
            [s.responses for s in sets], max_n=options.max_n, allow_empty=options.allow_empty, progress=bar.update
        )
    return MetricOutcome({name: result[name] for name in ("averaged_distinct_n", "ngram_cosine_diversity")}, result["per_set"])


def _corpus_lexical(sets: list[ResponseSet], options: EvaluationOptions) -> MetricOutcome:
    corpus = [response for s in sets for response in s.responses]
    result = corpus_lexical_diversity(
        corpus,
        max_n=options.corpus_max_n,
        lf_threshold=options.lf_threshold,
        reference_corpus=options.reference_corpus,
        allow_empty=options.allow_empty,
    )
    result["lf_counted_against"] = "reference corpus" if options.reference_corpus is not None else "the evaluated responses"
    return MetricOutcome(result)


def _scorer_options(scorer: SetScorer, options: EvaluationOptions) -> dict:
    """A figure's own options (only BERTScore has any)."""
    if scorer.name != "bertscore":
        return {}
    return {"rescale_with_baseline": options.bertscore_rescale, "baseline": options.bertscore_baseline}


def _set_scorer_runner(scorer: SetScorer, model: str) -> Callable[[list[ResponseSet], EvaluationOptions], MetricOutcome]:
    """A model-backed per-set figure of the registry, for one model."""

    def run(sets: list[ResponseSet], options: EvaluationOptions) -> MetricOutcome:
        resolve_model_path(model)  # fail fast (-> skipped) before any work
        with _bar(options, len(sets), f"{scorer.name} ({model})") as bar:
            result = scorer.run([s.responses for s in sets], model, batch_size=options.batch_size, device=options.device,
                                allow_empty=options.allow_empty, progress=bar.update, **_scorer_options(scorer, options))
        summary = {key: result[key] for key in scorer.summary_keys}
        per_set = result["per_set"] if scorer.report_keys else [{scorer.figure: row[scorer.figure]} for row in result["per_set"]]
        return MetricOutcome({**summary, "model": model}, per_set)

    return run


class _ReportingEmbedder:
    """An embedder that reports each batch it embeds to ``progress`` (SemanticClusters calls
    ``embed(texts)`` itself, so the bar is handed over here)."""

    def __init__(self, embedder, progress):
        self.embedder, self.progress = embedder, progress

    def identity(self) -> dict:
        return self.embedder.identity()

    def embed(self, texts: list[str]):
        return self.embedder.embed(texts, progress=self.progress)


def _sem_ent(sets: list[ResponseSet], options: EvaluationOptions) -> MetricOutcome:
    from dialeval.distributed import process_state
    from dialeval.metrics.engines.embedders import load_embedder
    from dialeval.metrics.sem_ent.clusters import SemanticClusters, sem_ent

    runtime = {"batch_size": options.batch_size, "device": options.device}
    if options.sem_ent_clusters is not None:
        clusters = SemanticClusters.load(options.sem_ent_clusters, **runtime)
        source = f"saved clusters {options.sem_ent_clusters}"
    else:
        distinct = len(set(options.reference_corpus))
        if distinct < options.sem_ent_num_clusters:
            raise MetricSkipped(
                f"the reference corpus has {distinct} distinct texts, fewer than the {options.sem_ent_num_clusters} "
                "clusters to fit (--sem-ent-k)"
            )
        embedder = load_embedder(options.sem_ent_embedder, options.sem_ent_embedder_model, **runtime)
        # one step per distinct text embedded, one for PCA + k-means
        with tqdm(total=distinct + 1, desc="Sem-Ent: embedding the reference corpus", unit="text",
                  disable=not options.progress, leave=False) as bar:
            clusters = SemanticClusters.fit(
                options.reference_corpus, _ReportingEmbedder(embedder, bar.update),
                num_clusters=options.sem_ent_num_clusters, seed=options.sem_ent_seed,
            )
            bar.update(1)
        clusters.embedder = embedder
        source = f"fitted on the reference corpus ({len(options.reference_corpus)} texts)"
        if options.save_sem_ent_clusters and process_state().is_main_process:
            # every process holds the same clusters (the main one fitted them); one writes them
            clusters.save(options.save_sem_ent_clusters)
    responses = [response for s in sets for response in s.responses]
    with tqdm(total=len(set(responses)), desc="Sem-Ent: embedding the responses", unit="text",
              disable=not options.progress, leave=False) as bar:
        embedder, clusters.embedder = clusters.embedder, _ReportingEmbedder(clusters.embedder, bar.update)
        try:
            result = sem_ent(responses, clusters)
        finally:
            clusters.embedder = embedder
    return MetricOutcome({
        **result, "num_clusters": clusters.num_clusters, "clusters": source, "embedder": clusters.embedder_identity,
        "reference_distribution": [float(v) for v in clusters.reference_distribution],
    })


def _selection_runner(model: str) -> Callable[[list[ResponseSet], EvaluationOptions], MetricOutcome]:
    """Response-selection accuracy of ``model`` on the question file (it does not read the response sets)."""

    def run(sets: list[ResponseSet], options: EvaluationOptions) -> MetricOutcome:
        from dialeval.metrics.response_selection import response_selection

        resolve_model_path(model)
        questions = options.selection_questions
        with _bar(options, len(questions["contexts"]), f"response selection ({model})") as bar:
            result = response_selection(
                questions["contexts"], questions["candidates"], questions["labels"], model=model,
                reduction=options.selection_reduction, batch_size=options.selection_batch_size, device=options.device,
                progress=bar.update,
            )
        keys = ("accuracy", "num_correct", "num_questions", "num_ties", "num_truncated_contexts", "reduction", "per_question")
        return MetricOutcome({**{key: result[key] for key in keys}, "model": model})

    return run


#: Metrics that need no model.
METRICS: list[EvaluationMetric] = [
    EvaluationMetric("lexical_diversity", "response_set", _set_lexical),
    EvaluationMetric("corpus_lexical_diversity", "corpus", _corpus_lexical),
]


def metrics_for(options: EvaluationOptions) -> list[EvaluationMetric]:
    """The model-free metrics plus one entry per (registry figure, requested model)."""
    models_by_flag = {
        "--sentence-model": options.sentence_models,
        "--nli-model": options.nli_models,
        "--bertscore-model": options.bertscore_models,
        "--cross-encoder-model": options.cross_encoder_models,
    }
    entries = []
    for flag, models in models_by_flag.items():
        for model in models:
            for scorer in scorers_with_flag(flag):
                entries.append(EvaluationMetric(f"{scorer.figure}[{model}]", "response_set", _set_scorer_runner(scorer, model),
                                                f"{flag} {model}"))
    if options.sem_ent_clusters is not None or options.reference_corpus is not None:
        option_used = ("--sem-ent-clusters " + options.sem_ent_clusters if options.sem_ent_clusters is not None
                       else "--sem-ent-embedder " + options.sem_ent_embedder
                       + (f"={options.sem_ent_embedder_model}" if options.sem_ent_embedder_model else ""))
        entries.append(EvaluationMetric("sem_ent", "corpus", _sem_ent, option_used))
    if options.selection_questions is not None:
        entries += [
            EvaluationMetric(f"response_selection[{model}]", "questions", _selection_runner(model), f"--selection-model {model}")
            for model in options.selection_models
        ]
    return METRICS + entries


def check_sets(sets: list[ResponseSet], allow_empty: bool = False) -> None:
    """Every set holds at least two responses (the metrics compare pairs), none of them empty
    unless ``allow_empty``; an error names the set's ``FILE:LINE``."""
    if not sets:
        raise ValueError("no response sets to evaluate")
    for index, response_set in enumerate(sets):
        where = response_set.where or f"`sets[{index}]`"
        if len(response_set.responses) < 2:
            raise ValueError(f"{where}: a response set needs at least 2 responses (the metrics compare pairs), "
                             f"got {len(response_set.responses)}")
        if not allow_empty:
            for position, response in enumerate(response_set.responses):
                if not response.strip():
                    raise ValueError(f"{where}: response {position} is {'empty' if not response else 'white space only'};"
                                     " pass allow_empty=True to score it as a response without tokens")


def _input_row(response_set: ResponseSet) -> dict:
    """What the input said about a set: where it was, its ``id``, context and other fields."""
    fields = dict(response_set.metadata)
    row = {"where": response_set.where, "id": fields.pop("id", None), "context": response_set.context}
    if fields:
        row["fields"] = fields
    return row


def _about(metric: EvaluationMetric, error: Exception) -> str:
    """``error``'s message naming the option that asked for ``metric`` instead of the argument ``model``."""
    if metric.option is None:
        return str(error)
    message = name_flags(str(error), {"model": metric.option.split(" ")[0]})
    return message if isinstance(error, (ModelNotAvailableError, MetricSkipped)) else f"{metric.option}: {message}"


def _checkpointed(metric: EvaluationMetric, sets: list[ResponseSet], options: EvaluationOptions, checkpoint) -> MetricOutcome:
    """``metric.run``, or its outcome kept by an earlier run; a new outcome is handed to ``checkpoint``."""
    outcome = checkpoint.get(metric.name) if checkpoint is not None else None
    if outcome is None:
        outcome = metric.run(sets, options)
        if checkpoint is not None:
            checkpoint.put(metric.name, outcome)
    return outcome


def evaluate_response_sets(sets: list[ResponseSet], options: EvaluationOptions | None = None, checkpoint=None) -> dict:
    """Run every available metric; returns the JSON-ready report.

    ``checkpoint`` (e.g. :class:`~dialeval.cli.checkpoints.MetricCheckpoints`, for ``--resume``):
    ``get(step) -> MetricOutcome | None`` before each step, ``put(step, outcome)`` after a step ran.
    """
    options = options or EvaluationOptions()
    check_sets(sets, options.allow_empty)
    report = {"num_sets": len(sets), "num_responses": sum(len(s.responses) for s in sets), "metrics": {}, "skipped": []}
    per_set = [_input_row(s) for s in sets]
    for metric in metrics_for(options):
        try:
            outcome = _checkpointed(metric, sets, options, checkpoint)
        except (ModelNotAvailableError, MetricSkipped) as error:
            report["skipped"].append({"metric": metric.name, "reason": _about(metric, error)})
            continue
        except (ValueError, OSError) as error:  # e.g. a directory that holds no model
            raise (ValueError if isinstance(error, ValueError) else OSError)(_about(metric, error)) from error
        report["metrics"][metric.name] = {"scope": metric.scope, **outcome.summary}
        for row, values in zip(per_set, outcome.per_set or []):
            for key, value in values.items():
                # Two models of one metric would overwrite each other's per-set figures.
                row[f"{key}[{outcome.summary.get('model', metric.name)}]" if key in row else key] = value
    report["per_set"] = per_set
    return report


def models_used(report: dict) -> list[str]:
    """The models behind the report's figures (skipped metrics excluded), in report order."""
    models = []
    for summary in report["metrics"].values():
        if isinstance(summary.get("model"), str):
            models.append(summary["model"])
        embedder = summary.get("embedder")
        if isinstance(embedder, dict) and isinstance(embedder.get("model"), str):
            models.append(embedder["model"])
    return list(dict.fromkeys(models))


def format_table(report: dict) -> str:
    """A plain-text table of the summary figures and the skipped metrics."""
    rows = [("metric", "figure", "scope", "value")]
    for name, summary in report["metrics"].items():
        for figure, value in summary.items():
            if figure in {"scope", "model", "lf_counted_against"} or value is None or isinstance(value, (list, dict)):
                continue
            shown = f"{value:.4f}" if isinstance(value, float) else str(value)
            rows.append((name, figure, summary["scope"], shown))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    for skipped in report["skipped"]:
        lines.append(f"skipped {skipped['metric']}: {skipped['reason']}")
    return "\n".join(lines)


#: Keys of a ``per_set`` row that describe the input rather than hold a figure.
INPUT_KEYS = ("where", "id", "context", "fields")


def _cell(value, width: int) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, list):  # a dialogue's turns
        value = " | ".join(str(turn) for turn in value)
    text = "" if value is None else str(value)
    return text if len(text) < width else text[: width - 2] + ".."


def format_per_set_table(report: dict, width: int = 40) -> str:
    """One row per set: its id (when the input has ids), context (shortened), the input's other
    fields and every per-set figure."""
    rows = report["per_set"]
    figures = [key for key in rows[0] if key not in INPUT_KEYS] if rows else []
    fields = list(dict.fromkeys(name for row in rows for name in row.get("fields", {})))
    show_id = any(row.get("id") is not None for row in rows)
    header = (["id"] if show_id else []) + ["context"] + fields + figures
    lines = []
    for row in rows:
        cells = [_cell(row.get("id"), width)] if show_id else []
        cells.append(_cell(row.get("context") or "", width))
        cells += [_cell(row.get("fields", {}).get(name), width) for name in fields]
        cells += [_cell(row.get(figure), width) for figure in figures]
        lines.append(cells)
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *lines)]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(header, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    out += ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines]
    return "\n".join(out)
