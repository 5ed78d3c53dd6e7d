"""``dialeval dtg``: Diversity Threshold Generation over a test set, written as JSONL, resumable.

One line per context (in order) holds the context and its :class:`~dialeval.generation.DTGResult`;
``OUTPUT.run.json`` records the run's settings. Lines are written and flushed a batch at a
time by the main process; a killed run restarted with the same settings keeps every complete
batch, drops a half-written one, and continues from there. Batches are seeded by their index
(:func:`dialeval.generation.dtg_runner.run_dtg`), so the resumed file equals an uninterrupted
run's. The summary is the paper's Table 4 (starting / ending diversity, number sampled) plus
App. C's utterance overlap.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from dialeval.cli.options import option
from dialeval.io import iter_jsonl

#: ``--split`` names as the paper says them -> the dataset's split names.
SPLIT_ALIASES = {"dev": "validation", "validation": "validation", "test": "test", "train": "train"}
#: Table 4's figure for each metric (Baseline NLI Diversity for NLI, §6.3).
TABLE4_FIGURE = {"nli": "nli_diversity", "sent_bert": "sent_bert", "distinct_n": "distinct_n"}


@dataclass
class DTGRunSettings:
    """Everything that decides a run's output: a resumed run must match it exactly."""

    model: str = field(metadata=option(
        "--model", help="causal (e.g. microsoft/DialoGPT-large) or seq2seq model id or directory"))
    metric: str = field(metadata=option("--metric", choices=("nli", "sent_bert", "distinct_n"), default="nli",
                                        help="the diversity the threshold applies to"))
    contexts_from: str  # "dailydialog_pp:validation" or the input file
    metric_model: str | None = field(default=None, metadata=option(
        "--metric-model", help="NLI classifier (default FacebookAI/roberta-large-mnli) or sentence model for sent_bert"))
    threshold: float | None = field(default=None, metadata=option(
        "--threshold", help="stop when diversity is above this (default: nli 10, sent_bert -0.179, distinct_n 0.98)"))
    num_responses: int = field(default=5, metadata=option("--num-responses", help="n, the set size"))
    max_samples: int = field(default=20, metadata=option(
        "--max-samples", help="S, most responses drawn per context, the first n included"))
    decoding: str = field(default="sample", metadata=option(
        "--decoding", choices=("sample", "beam"), help="nucleus sampling (§5) or App. D's beams"))
    num_beams: int = field(default=25, metadata=option("--num-beams", help="beams for --decoding beam"))
    top_p: float = field(default=0.9, metadata=option("--top-p", help="nucleus p"))
    max_new_tokens: int = field(default=40, metadata=option("--max-new-tokens", help="most tokens per response"))
    max_context_tokens: int | None = field(default=None, metadata=option(
        "--max-context-tokens", help="keep each context's last N tokens (the paper gives BlenderBot 128)"))
    turn_separator: str | None = field(default=None, metadata=option(
        "--turn-separator",
        help="joins context turns (default: EOS after every turn for causal models, newline for seq2seq)"))
    seed: int = field(default=0, metadata=option("--seed", help="batch k is sampled under seed + k"))
    batch_size: int = field(default=8, metadata=option(
        "--batch-size", help="contexts per generate call and per seeded batch"))
    limit: int | None = field(default=None, metadata=option("--limit", help="only the first N contexts"))

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def read_contexts(dataset: str | None, split: str | None, input_file: str | None, data_dir: str | None = None,
                  limit: int | None = None) -> list[tuple[object, list[str]]]:
    """``(id, turns)`` per context, from a dialeval test set or a JSONL file of ``{"context": ...}`` lines."""
    if (dataset is None) == (input_file is None):
        raise ValueError("give exactly one of `--dataset` and `--input`")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"`limit` must be a positive int, got {limit!r}")
    if dataset is not None:
        from dialeval.datasets_scripts import load

        if split not in SPLIT_ALIASES:
            raise ValueError(f"`split` must be one of {sorted(SPLIT_ALIASES)}, got {split!r}")
        rows = load(dataset, data_dir=data_dir, split=SPLIT_ALIASES[split])
        id_field = next((name for name in ("id", "dialog_id") if name in rows.column_names), None)
        contexts = [(row[id_field] if id_field else index, list(row["context"])) for index, row in enumerate(rows)]
    else:
        contexts = []
        for where, record in iter_jsonl(input_file):
            context = record.get("context") if isinstance(record, dict) else None
            if isinstance(context, str):
                context = [context]
            if not (isinstance(context, list) and context and all(isinstance(turn, str) for turn in context)):
                raise ValueError(f"{where}: `context` must be a string or a non-empty list of strings")
            contexts.append((record.get("id", len(contexts)), context))
    return contexts[:limit] if limit else contexts


def format_context(turns: list[str], tokenizer, is_encoder_decoder: bool, separator: str | None = None) -> str:
    """Turns joined as the model was trained: DialoGPT ends every turn with EOS; seq2seq default ``"\\n"``."""
    if separator is None:
        separator = "\n" if is_encoder_decoder else tokenizer.eos_token
    text = separator.join(turn.strip() for turn in turns)
    return text if is_encoder_decoder else text + separator


def load_generator(model: str, device=None, dtype: str | None = None):
    """A causal or seq2seq model (by its config) and its tokenizer, through :func:`dialeval.hub.load_model`."""
    from dialeval.hub import load_model

    loaded = load_model(model, "language_model", device=device, dtype=dtype)
    return loaded.model, loaded.tokenizer


class ResumableJsonl:
    """A JSONL output of one record per context, appended a batch at a time, resumable at batch boundaries."""

    def __init__(self, path: str | Path, settings: DTGRunSettings, batch_size: int, overwrite: bool = False):
        self.path = Path(path)
        self.settings_path = self.path.with_name(self.path.name + ".run.json")
        self.batch_size = batch_size
        wanted = json.loads(json.dumps(settings.as_dict()))
        if self.path.exists() and not overwrite:
            if not self.settings_path.exists():
                raise ValueError(f"{self.path} exists but {self.settings_path} does not: pass --overwrite to start over")
            recorded = json.loads(self.settings_path.read_text(encoding="utf-8"))
            changed = sorted(key for key in set(recorded) | set(wanted) if recorded.get(key) != wanted.get(key))
            if changed:
                details = ", ".join(f"{key}: {recorded.get(key)!r} -> {wanted.get(key)!r}" for key in changed)
                raise ValueError(f"cannot resume {self.path}: its run had other settings ({details}); pass --overwrite")
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("", encoding="utf-8")
            self.settings_path.write_text(json.dumps(wanted, indent=2) + "\n", encoding="utf-8")
        self.num_done = self._keep_complete_batches()

    def _keep_complete_batches(self) -> int:
        """Drops a half-written last line and a partly written batch; returns the records kept."""
        data = self.path.read_bytes()
        lines = data.split(b"\n")[:-1]  # a last piece without its newline is half written
        kept = []
        for index, line in enumerate(lines):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                break
            if record.get("index") != index:
                raise ValueError(f"{self.path}: line {index + 1} has index {record.get('index')!r}, expected {index}")
            kept.append(line)
        kept = kept[: len(kept) - len(kept) % self.batch_size]
        text = b"".join(line + b"\n" for line in kept)
        if text != data:
            self.path.write_bytes(text)
        return len(kept)

    def append(self, records: list[dict]) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


def read_run(path: str | Path) -> tuple[dict, list[dict]]:
    """The settings and records of a ``dialeval dtg`` output."""
    path = Path(path)
    settings_path = path.with_name(path.name + ".run.json")
    settings = json.loads(settings_path.read_text(encoding="utf-8")) if settings_path.exists() else {}
    with open(path, encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    return settings, records


def summarize(settings: dict, records: list[dict]) -> dict:
    """Table 4's row (means over contexts) plus App. C's overlap and how the contexts stopped."""
    if not records:
        raise ValueError("no records to summarize")
    metric = settings.get("metric", "")
    figure = TABLE4_FIGURE.get(metric)
    if figure is None or figure not in records[0]["initial_scores"]:
        figure = next(iter(records[0]["initial_scores"]))

    def mean(values):
        return float(sum(values) / len(values))

    stops = {}
    for record in records:
        stops[record["stop_reason"]] = stops.get(record["stop_reason"], 0) + 1
    row = {
        "model": settings.get("model", "?"), "contexts_from": settings.get("contexts_from", "?"), "metric": metric,
        "decoding": settings.get("decoding", "sample"), "figure": figure, "num_contexts": len(records),
        "starting_diversity": mean([r["initial_scores"][figure] for r in records]),
        "ending_diversity": mean([r["final_scores"][figure] for r in records]),
        "num_sampled": mean([r["num_sampled"] for r in records]),
        "reached_threshold": mean([1.0 if r["reached_threshold"] else 0.0 for r in records]),
        "utterance_overlap": mean([r["utterance_overlap"] for r in records]),
        "num_pair_evaluations": mean([r["num_pair_evaluations"] for r in records]),
        "stop_reasons": stops,
    }
    if metric == "nli":
        row["starting_contradictions"] = mean([r["initial_scores"]["contradictions"] for r in records])
        row["ending_contradictions"] = mean([r["final_scores"]["contradictions"] for r in records])
    return row


def format_summary_table(rows: list[dict]) -> str:
    header = ("model", "contexts", "metric", "decoding", "n", "start div.", "end div.", "num sampled", "reached", "overlap")
    body = [(
        Path(str(row["model"])).name or str(row["model"]), str(row["contexts_from"]),
        row["metric"] + ("" if row["figure"] == TABLE4_FIGURE.get(row["metric"]) else f" ({row['figure']})"),
        row["decoding"], str(row["num_contexts"]), f"{row['starting_diversity']:.2f}", f"{row['ending_diversity']:.2f}",
        f"{row['num_sampled']:.1f}", f"{100 * row['reached_threshold']:.0f}%", f"{row['utterance_overlap']:.2f}",
    ) for row in rows]
    widths = [max(len(cells[i]) for cells in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip() for cells in [header, *body]]
    lines.insert(1, "  ".join("-" * width for width in widths))
    note = ("start/end div.: Baseline NLI Diversity for nli (Table 4), the metric itself otherwise; "
            "num sampled counts the first n (max S); overlap: App. C")
    return "\n".join(lines + ["", note])


def run_dtg_job(settings: DTGRunSettings, contexts: list[tuple[object, list[str]]], output: str | Path,
                overwrite: bool = False, device=None, progress: bool = True) -> dict:
    """Runs (or resumes) DTG over ``contexts`` into ``output``; returns the Table 4 summary row.

    Under ``accelerate launch`` every process runs its share of the batches; only the main
    process writes, and only it returns the summary (the others return ``{}``).
    """
    from tqdm.auto import tqdm

    from dialeval.distributed import process_state

    from dialeval.generation.dtg import make_objective
    from dialeval.generation.dtg_runner import run_dtg

    state = process_state()
    model, tokenizer = load_generator(settings.model, device=device)
    is_encoder_decoder = model.config.is_encoder_decoder
    texts = [format_context(turns, tokenizer, is_encoder_decoder, settings.turn_separator) for _, turns in contexts]
    metric_options = {}
    if settings.metric_model:
        if settings.metric == "distinct_n":
            raise ValueError("`metric_model` does not apply to distinct_n (a lexical metric)")
        metric_options = {"model": settings.metric_model}
    objective = make_objective(settings.metric, **metric_options)
    writer = None
    num_done = 0
    if state.is_main_process:
        writer = ResumableJsonl(output, settings, settings.batch_size, overwrite=overwrite)
        num_done = writer.num_done
    num_done = _broadcast_int(num_done)
    bar = tqdm(total=len(contexts), initial=num_done, disable=not (progress and state.is_main_process), desc="DTG contexts")

    def write_batch(batch_index: int, results) -> None:
        first = batch_index * settings.batch_size
        if writer is not None:
            writer.append([
                {"index": first + offset, "id": contexts[first + offset][0], "context": contexts[first + offset][1],
                 **result.to_dict()}
                for offset, result in enumerate(results)
            ])
        bar.update(len(results))

    sampling = {"top_p": settings.top_p} if settings.decoding == "sample" else {}
    run_dtg(
        model, tokenizer, texts, seed=settings.seed, batch_size=settings.batch_size,
        start_batch=num_done // settings.batch_size, on_batch=write_batch, metric=objective,
        threshold=settings.threshold, num_responses=settings.num_responses, max_samples=settings.max_samples,
        decoding=settings.decoding, num_beams=settings.num_beams, max_context_tokens=settings.max_context_tokens,
        max_new_tokens=settings.max_new_tokens, **sampling,
    )
    bar.close()
    state.wait_for_everyone()
    if not state.is_main_process:
        return {}
    _, records = read_run(output)
    return summarize(settings.as_dict(), records)


def _broadcast_int(value: int) -> int:
    from accelerate.utils import broadcast_object_list

    from dialeval.distributed import process_state

    if process_state().num_processes == 1:
        return value
    holder = [value]
    broadcast_object_list(holder, from_process=0)
    return int(holder[0])
