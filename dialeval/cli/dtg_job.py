"""``dialeval dtg``: Diversity Threshold Generation over a test set, written as JSONL, resumable.

One line per context (in order) holds the context and its :class:`~dialeval.generation.DTGResult`;
``OUTPUT.run.json`` records the run's settings. Lines are written and flushed a batch at a
time by the main process; a killed run restarted with the same settings keeps every complete
batch, drops a half-written one, and continues from there. Batches are seeded by their index
(:func:`dialeval.generation.dtg_runner.run_dtg`), so the resumed file equals an uninterrupted
run's. ``--trials K`` repeats the run K times (§6.1: "all experiments are averaged over 10
trials"), trial ``t`` seeding batch ``k`` with ``seed + t * num_batches + k``; the lines of trial
``t`` follow those of trial ``t - 1``, each with its ``trial`` number.

The summary is the paper's Table 4 (starting / ending diversity, number resampled), App. C's
utterance overlap and, when the contexts come with human responses, Table 5's relevance (BLEU and
BERTScore of the starting and ending sets; :mod:`dialeval.cli.dtg_relevance`); over several trials,
the mean and standard deviation of each figure across trials.

``OUTPUT.run.json`` records the settings, the format version and the effective decoding settings
(:func:`dialeval.generation.dtg_decoding.decoding_record`). Format 2 changed what ``max_samples``
means (S counts resamples, not the first n draws): a file of format 1 (no ``format`` key) is
still summarized (its ``num_sampled`` minus n is its number of resamples) but not resumed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from dialeval.cli.options import option
from dialeval.cli.safe_output import (
    Interrupted,
    deferred_stop_signals,
    is_dialevals_file,
    json_text,
    write_atomically,
)
from dialeval.deprecation import renamed_attributes
from dialeval.io import iter_jsonl
from dialeval.validation import ArgumentError

#: Table 4's figure for each metric (Baseline NLI Diversity for NLI, §6.3).
TABLE4_FIGURE = {"nli": "nli_diversity", "sent_bert": "sent_bert", "distinct_n": "distinct_n"}
#: Version of the output files: 2 = S counts resamples; results carry num_initial / num_resampled.
FORMAT = 2
#: A dataset's column of human responses (Table 5's references).
REFERENCE_COLUMNS = ("positive_responses", "references")


class DTGContext(NamedTuple):
    id: object
    turns: list[str]
    references: list[str] | None  # human responses, when the input has them (Table 5)


@dataclass
class DTGOptions:
    """Everything that decides a run's output: a resumed run must match it exactly."""

    model: str = field(
        metadata=option(
            "--model",
            help="causal (e.g. microsoft/DialoGPT-large) or seq2seq model id or directory",
        )
    )
    metric: str = field(
        metadata=option(
            "--metric",
            choices=("nli", "sent_bert", "distinct_n"),
            default="nli",
            help="the diversity the threshold applies to",
        )
    )
    contexts_from: str  # "dailydialog_pp:validation" or the input file
    metric_model: str | None = field(
        default=None,
        metadata=option(
            "--metric-model",
            help="NLI classifier (default FacebookAI/roberta-large-mnli) or sentence model for "
            "sent_bert",
        ),
    )
    threshold: float | None = field(
        default=None,
        metadata=option(
            "--threshold",
            help="stop when diversity is above this (default: nli 10, distinct_n 0.98, sent_bert "
            "the one calibrated for --metric-model: -0.1597 all-MiniLM-L6-v2, -0.179 the paper's "
            "bert-large-nli-stsb-mean-tokens)",
        ),
    )
    num_responses: int = field(
        default=5, metadata=option("--num-responses", help="n, the set size")
    )
    max_samples: int = field(
        default=20,
        metadata=option("--max-samples", help="S, most resamples per context after the first n"),
    )
    decoding: str = field(
        default="sample",
        metadata=option(
            "--decoding", choices=("sample", "beam"), help="nucleus sampling (§5) or App. D's beams"
        ),
    )
    num_beams: int = field(
        default=25, metadata=option("--num-beams", help="beams for --decoding beam")
    )
    top_p: float = field(default=0.9, metadata=option("--top-p", help="nucleus p"))
    max_new_tokens: int = field(
        default=40, metadata=option("--max-new-tokens", help="most tokens per response")
    )
    max_context_tokens: int | None = field(
        default=None,
        metadata=option(
            "--max-context-tokens",
            help="keep each context's last N tokens (the paper gives BlenderBot 128)",
        ),
    )
    turn_separator: str | None = field(
        default=None,
        metadata=option(
            "--turn-separator",
            help="joins context turns (default: EOS after every turn for causal models, newline "
            "for seq2seq)",
        ),
    )
    seed: int = field(
        default=0, metadata=option("--seed", help="batch k is sampled under seed + k")
    )
    batch_size: int = field(
        default=8,
        metadata=option("--batch-size", help="contexts per generate call and per seeded batch"),
    )
    limit: int | None = field(
        default=None, metadata=option("--limit", help="only the first N contexts")
    )
    top_k: int = field(
        default=0,
        metadata=option(
            "--top-k", help="top-k cut of the sampling (0: none; §6.2 is nucleus only)"
        ),
    )
    temperature: float = field(
        default=1.0, metadata=option("--temperature", help="sampling temperature")
    )
    min_new_tokens: int | None = field(
        default=None,
        metadata=option(
            "--min-new-tokens",
            help="at least this many new tokens (default: the checkpoint's min_length)",
        ),
    )
    no_repeat_ngram_size: int | None = field(
        default=None,
        metadata=option(
            "--no-repeat-ngram-size",
            help="block repeated n-grams (default: the checkpoint's setting)",
        ),
    )
    repetition_penalty: float | None = field(
        default=None,
        metadata=option(
            "--repetition-penalty",
            help="CTRL repetition penalty (default: the checkpoint's setting)",
        ),
    )
    nli_objective: str = field(
        default="nli_diversity",
        metadata=option(
            "--nli-objective",
            choices=("nli_diversity", "contradictions"),
            help="how --metric nli ranks leave-one-out subsets: Baseline NLI Diversity (§6.2) or "
            "contradiction counts",
        ),
    )
    tie_break: str = field(
        default="random",
        metadata=option(
            "--tie-break",
            choices=("random", "first"),
            help="tied subsets: random, or first (the lowest slot)",
        ),
    )
    trials: int = field(
        default=1,
        metadata=option(
            "--trials", help="seeded repeats of the whole run (§6.1 averages 10 trials)"
        ),
    )
    dtype: str | None = field(
        default=None,
        metadata=option(
            "--dtype",
            choices=("float32", "float16", "bfloat16"),
            help="generator weights (default: the checkpoint's)",
        ),
    )
    metric_dtype: str | None = field(
        default=None,
        metadata=option(
            "--metric-dtype",
            choices=("float32", "float16", "bfloat16"),
            help="NLI / sentence model weights (default: the checkpoint's)",
        ),
    )
    nli_batch_size: int = field(
        default=32,
        metadata=option(
            "--nli-batch-size",
            help="NLI pairs (Sent-BERT sentences) per forward pass of the metric model",
        ),
    )

    def __post_init__(self) -> None:
        # Refused before any model loads or output is written (a flag's value, named by its flag).
        from dialeval.generation.dtg_checks import (
            check_dtg_settings,
            check_max_samples,
            check_num_beams,
            check_num_responses,
        )
        from dialeval.validation import check_int, check_unicode_text

        check_int(self.batch_size, "batch_size")
        check_max_samples(self.max_samples)
        num_responses = check_num_responses(self.num_responses)
        if self.decoding == "beam":
            check_num_beams(self.num_beams, num_responses)
        else:
            check_int(self.num_beams, "num_beams")
        if self.turn_separator is not None:
            # argv bytes that are not UTF-8 arrive as lone surrogates; every context would hold one
            check_unicode_text(self.turn_separator, "turn_separator")
        check_dtg_settings(
            self.threshold,
            self.top_p,
            self.min_new_tokens,
            self.max_new_tokens,
            self.temperature,
            self.repetition_penalty,
        )

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def read_contexts(
    dataset: str | None,
    split: str | None,
    input_file: str | None,
    data_dir: str | None = None,
    limit: int | None = None,
    verify_checksums: bool = True,
) -> list[DTGContext]:
    """The contexts of a dialeval test set or of a JSONL file of
    ``{"context": ..., "references": [...]}`` lines.

    ``references`` (a dataset's ``positive_responses``) are the human responses Table 5 compares
    with.
    """
    if (dataset is None) == (input_file is None):
        raise ValueError("give exactly one of `--dataset` and `--input`")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ArgumentError("limit", f"must be a positive int, got {limit!r}")
    if dataset is not None:
        from dialeval.datasets_scripts import load, split_name

        rows = load(
            dataset, data_dir=data_dir, split=split_name(split), verify_checksums=verify_checksums
        )  # the same split names as `load` ("dev" too)
        id_field = next((name for name in ("id", "dialog_id") if name in rows.column_names), None)
        reference_field = next(
            (name for name in REFERENCE_COLUMNS if name in rows.column_names), None
        )
        contexts = [
            DTGContext(
                row[id_field] if id_field else index,
                list(row["context"]),
                list(row[reference_field]) if reference_field else None,
            )
            for index, row in enumerate(rows)
        ]
    else:
        contexts = []
        for where, record in iter_jsonl(input_file):
            context = record.get("context") if isinstance(record, dict) else None
            if isinstance(context, str):
                context = [context]
            if not (
                isinstance(context, list)
                and context
                and all(isinstance(turn, str) for turn in context)
            ):
                raise ValueError(
                    f"{where}: `context` must be a string or a non-empty list of strings"
                )
            references = record.get("references")
            if references is not None and not (
                isinstance(references, list)
                and references
                and all(isinstance(text, str) for text in references)
            ):
                raise ValueError(f"{where}: `references` must be a non-empty list of strings")
            contexts.append(DTGContext(record.get("id", len(contexts)), context, references))
    return contexts[:limit] if limit else contexts


def format_context(
    turns: list[str], tokenizer, is_encoder_decoder: bool, separator: str | None = None
) -> str:
    """Turns joined as the model was trained: DialoGPT ends every turn with EOS; seq2seq default
    ``"\\n"``."""
    if separator is None:
        separator = "\n" if is_encoder_decoder else tokenizer.eos_token
    text = separator.join(turn.strip() for turn in turns)
    return text if is_encoder_decoder else text + separator


def contexts_sha256(contexts: list[DTGContext]) -> str:
    """sha256 over the contexts as read (id, turns, references, in order)."""
    canonical = json.dumps(
        [[context.id, context.turns, context.references] for context in contexts],
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def settings_path(output: str | Path) -> Path:
    """``OUTPUT.run.json``: the settings of the run that writes ``OUTPUT``."""
    output = Path(output)
    return output.with_name(output.name + ".run.json")


def is_dtg_output(path: str | Path) -> bool:
    """Whether ``path`` is a results file of ``dialeval dtg``: its ``OUTPUT.run.json`` beside it is
    dialeval's (the results themselves grow a batch at a time, so no digest of them is kept)."""
    settings = settings_path(path)
    return settings.is_file() and is_dialevals_file(settings)


def load_generator(model: str, device=None, dtype: str | None = None):
    """A causal or seq2seq model (by its config) and its tokenizer,
    through :func:`dialeval.hub.load_model`."""
    from dialeval.hub import load_model

    loaded = load_model(model, "language_model", device=device, dtype=dtype)
    return loaded.model, loaded.tokenizer


class ResumableJsonl:
    """A JSONL output of one record per context (and trial), appended a batch at a time, resumable
    at batch boundaries.

    Line ``L`` holds trial ``L // num_contexts``, context ``L % num_contexts``; without
    ``num_contexts`` every line is one context of a single trial. ``OUTPUT.run.json`` holds
    ``{"format": FORMAT, **settings, **recorded}``; resuming needs it to match exactly.
    """

    def __init__(
        self,
        path: str | Path,
        settings: DTGOptions,
        batch_size: int,
        overwrite: bool = False,
        num_contexts: int | None = None,
        recorded: dict | None = None,
    ):
        self.path = Path(path)
        self.settings_path = settings_path(self.path)
        self.batch_size = batch_size
        self.num_contexts = num_contexts
        wanted = json.loads(
            json.dumps({"format": FORMAT, **settings.as_dict(), **(recorded or {})})
        )
        if self.path.exists() and not overwrite:
            if not self.settings_path.exists():
                raise ValueError(
                    f"{self.path} exists but {self.settings_path} does not: pass --overwrite to "
                    "start over"
                )
            recorded_settings = json.loads(self.settings_path.read_text(encoding="utf-8"))
            if recorded_settings.get("format") != FORMAT:
                raise ValueError(
                    f"cannot resume {self.path}: it was written by an older dialeval (format "
                    f"{recorded_settings.get('format', 1)}, where max_samples counted the first n "
                    "responses; now S counts resamples only and results report num_initial / "
                    "num_resampled). `dialeval dtg-summary` still reads it; pass --overwrite to "
                    "start a new run"
                )
            changed = sorted(
                key
                for key in set(recorded_settings) | set(wanted)
                if recorded_settings.get(key) != wanted.get(key)
            )
            if changed:
                details = ", ".join(
                    f"{key}: {recorded_settings.get(key)!r} -> {wanted.get(key)!r}"
                    for key in changed
                )
                raise ValueError(
                    f"cannot resume {self.path}: its run had other settings ({details}); pass "
                    "--overwrite"
                )
        else:
            write_atomically(self.path, "")
            write_atomically(self.settings_path, json_text(wanted, self.settings_path))
        self.num_done = self._keep_complete_batches()

    def position(self, line: int) -> tuple[int, int]:
        """(trial, context index) of a line."""
        if self.num_contexts is None:
            return 0, line
        return divmod(line, self.num_contexts)

    def _keep_complete_batches(self) -> int:
        """Drops a half-written last line and a partly written batch; returns the records kept.

        Only the last piece, which has no newline yet, can be half written (lines are appended
        in order); a complete line that is not JSON means the file was damaged, and is an error
        naming its ``FILE:LINE`` rather than a reason to regenerate everything after it.
        """
        data = self.path.read_bytes()
        lines = data.split(b"\n")[:-1]  # a last piece without its newline is half written
        kept = []
        for line_number, line in enumerate(lines):
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
                reason = (
                    error.msg
                    if isinstance(error, json.JSONDecodeError)
                    else "nested too deeply"
                    if isinstance(error, RecursionError)
                    else "not UTF-8"
                )
                raise ValueError(
                    f"{self.path}:{line_number + 1}: not valid JSON ({reason}), a complete line of "
                    "the file: it was damaged, not cut short by a kill. Restore the line, or cut "
                    "the file before it to regenerate from there, or pass --overwrite to start over"
                ) from None
            trial, index = self.position(line_number)
            found = record if isinstance(record, dict) else {}
            if found.get("index") != index or found.get("trial", 0) != trial:
                raise ValueError(
                    f"{self.path}:{line_number + 1}: trial {found.get('trial', 0)!r}, index "
                    f"{found.get('index')!r}; expected trial {trial}, index {index}"
                )
            kept.append(line)
        _, index = self.position(len(kept))
        kept = kept[
            : len(kept) - index % self.batch_size
        ]  # batches start at multiples of batch_size in each trial
        text = b"".join(line + b"\n" for line in kept)
        if text != data:
            write_atomically(self.path, text)
        return len(kept)

    def append(self, records: list[dict]) -> None:
        """Appends a batch's lines; a stop signal meanwhile takes effect once the batch is on
        disk."""
        with deferred_stop_signals(), open(self.path, "a", encoding="utf-8") as handle:
            handle.writelines(json_text(record, self.path, indent=None) for record in records)
            handle.flush()
            os.fsync(handle.fileno())
        self.num_done += len(records)


def _upgrade(record: dict, settings: dict) -> dict:
    """A format-1 record (``num_sampled`` counted the first n) in format 2's terms."""
    if "num_resampled" in record:
        return record
    num_initial = settings.get("num_responses", len(record["initial_responses"]))
    return {
        **record,
        "num_initial": num_initial,
        "num_resampled": record["num_sampled"] - num_initial,
    }


#: What the summary reads of every record, with the type each must have (format 1 has
#: ``num_sampled`` where format 2 has ``num_resampled``).
SUMMARY_FIELDS = {
    "initial_responses": list,
    "responses": list,
    "initial_scores": dict,
    "final_scores": dict,
    "reached_threshold": bool,
    "stop_reason": str,
    "utterance_overlap": (int, float),
    "num_pair_evaluations": (int, float),
}


def _summary_record(where: str, record) -> dict:
    """``record`` if it holds what :func:`summarize` reads, else a ValueError naming ``where``
    (``FILE:LINE``)."""
    if not isinstance(record, dict):
        raise ValueError(
            f"{where}: not a `dialeval dtg` record (a JSON object), got {type(record).__name__}"
        )
    count = (
        "num_resampled"
        if "num_resampled" in record or "num_sampled" not in record
        else "num_sampled"
    )
    missing = [key for key in [*SUMMARY_FIELDS, count] if key not in record]
    if missing:
        raise ValueError(
            f"{where}: not a `dialeval dtg` record: no {', '.join(map(repr, missing))}"
        )
    for key, kind in [*SUMMARY_FIELDS.items(), (count, (int, float))]:
        value = record[key]
        wrong = not isinstance(value, kind) or (kind is not bool and isinstance(value, bool))
        if not wrong and kind is dict:
            wrong = not value or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in value.values()
            )
        if wrong:
            raise ValueError(
                f"{where}: {key!r} of a `dialeval dtg` record must be "
                + (
                    "a non-empty object of numbers"
                    if kind is dict
                    else getattr(kind, "__name__", "a number")
                )
                + f", got {json.dumps(value)[:60]}"
            )
    return record


def read_run(path: str | Path) -> tuple[dict, list[dict]]:
    """The settings and records of a ``dialeval dtg`` output (format-1 records upgraded, see the
    module docstring); a line that is not a record of one is a ValueError naming its
    ``FILE:LINE``."""
    path = Path(path)
    recorded = settings_path(path)
    settings = json.loads(recorded.read_text(encoding="utf-8")) if recorded.exists() else {}
    records = [
        _upgrade(_summary_record(where, record), settings) for where, record in iter_jsonl(path)
    ]
    return settings, records


def _mean(values) -> float:
    return float(sum(values) / len(values))


def _trial_figures(
    metric: str, figure: str, records: list[dict], bertscore_model: str | None, device
) -> dict:
    figures = {
        "starting_diversity": _mean([r["initial_scores"][figure] for r in records]),
        "ending_diversity": _mean([r["final_scores"][figure] for r in records]),
        "num_resampled": _mean([r["num_resampled"] for r in records]),
        "reached_threshold": _mean([1.0 if r["reached_threshold"] else 0.0 for r in records]),
        "utterance_overlap": _mean([r["utterance_overlap"] for r in records]),
        "num_pair_evaluations": _mean([r["num_pair_evaluations"] for r in records]),
    }
    if metric == "nli":
        figures["starting_contradictions"] = _mean(
            [r["initial_scores"]["contradictions"] for r in records]
        )
        figures["ending_contradictions"] = _mean(
            [r["final_scores"]["contradictions"] for r in records]
        )
    if all(r.get("references") for r in records):
        from dialeval.cli.dtg_relevance import (
            bertscore_against_references,
            corpus_bleu_against_references,
        )

        references = [r["references"] for r in records]
        starts, ends = [r["initial_responses"] for r in records], [r["responses"] for r in records]
        figures["starting_bleu"] = corpus_bleu_against_references(starts, references)
        figures["ending_bleu"] = corpus_bleu_against_references(ends, references)
        if bertscore_model:
            from dialeval.cli.argument_renames import (
                DTG_SUMMARY_BERTSCORE_ARGUMENTS,
                in_caller_names,
            )

            try:
                scores = bertscore_against_references(
                    {"start": starts, "end": ends}, references, bertscore_model, device=device
                )
            except (ValueError, OSError) as error:  # BERTScore's `model` is our bertscore_model
                raise in_caller_names(error, DTG_SUMMARY_BERTSCORE_ARGUMENTS) from error
            figures["starting_bertscore"], figures["ending_bertscore"] = (
                scores["start"],
                scores["end"],
            )
    return figures


def summarize(
    settings: dict, records: list[dict], bertscore_model: str | None = None, device=None
) -> dict:
    """Table 4's row (means over contexts), App. C's overlap and, with references, Table 5's
    relevance.

    Each figure is computed per trial; the row holds its mean over trials and, under
    ``FIGURE_sd``, the sample standard deviation across trials (None for one trial).
    BERTScore needs ``bertscore_model`` (e.g. ``FacebookAI/roberta-large``, the paper's).
    """
    if not records:
        raise ValueError("no records to summarize")
    metric = settings.get("metric", "")
    figure = TABLE4_FIGURE.get(metric)
    if figure is None or figure not in records[0]["initial_scores"]:
        figure = next(iter(records[0]["initial_scores"]))
    trials: dict[int, list[dict]] = {}
    for record in records:
        trials.setdefault(record.get("trial", 0), []).append(record)
    sizes = {trial: len(group) for trial, group in trials.items()}
    if len(set(sizes.values())) > 1:
        raise ValueError(
            f"the trials hold different numbers of contexts ({sizes}): finish the run first "
            "(rerun the same `dialeval dtg` command)"
        )
    per_trial = [
        _trial_figures(metric, figure, trials[trial], bertscore_model, device)
        for trial in sorted(trials)
    ]
    stops = {}
    for record in records:
        stops[record["stop_reason"]] = stops.get(record["stop_reason"], 0) + 1
    row = {
        "model": settings.get("model", "?"),
        "contexts_from": settings.get("contexts_from", "?"),
        "metric": metric,
        "decoding": settings.get("decoding", "sample"),
        "figure": figure,
        "num_contexts": len(trials[min(trials)]),
        "num_trials": len(trials),
        "format": settings.get("format", 1),
    }
    for name in per_trial[0]:
        values = [figures[name] for figures in per_trial]
        row[name] = _mean(values)
        row[f"{name}_sd"] = (
            math.sqrt(sum((v - row[name]) ** 2 for v in values) / (len(values) - 1))
            if len(values) > 1
            else None
        )
    row["stop_reasons"] = stops
    return row


def _cell(row: dict, name: str, digits: int, scale: float = 1.0, suffix: str = "") -> str:
    if name not in row:
        return "-"
    text = f"{scale * row[name]:.{digits}f}{suffix}"
    if row.get(f"{name}_sd") is not None:
        text += f" ± {scale * row[f'{name}_sd']:.{digits}f}"
    return text


def _table(header: tuple, body: list[tuple]) -> list[str]:
    widths = [max(len(cells[i]) for cells in [header, *body]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip()
        for cells in [header, *body]
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return lines


def format_summary_table(rows: list[dict]) -> str:
    """Table 4 (and, for runs with human responses, Table 5) of :func:`summarize` rows."""

    def who(row):
        return (
            Path(str(row["model"])).name or str(row["model"]),
            str(row["contexts_from"]),
            row["metric"]
            + ("" if row["figure"] == TABLE4_FIGURE.get(row["metric"]) else f" ({row['figure']})"),
            row["decoding"],
        )

    header = (
        "model",
        "data",
        "metric",
        "decoding",
        "contexts",
        "trials",
        "start div.",
        "end div.",
        "num resampled",
        "reached",
        "overlap",
    )
    body = [
        (
            *who(row),
            str(row["num_contexts"]),
            str(row.get("num_trials", 1)),
            _cell(row, "starting_diversity", 2),
            _cell(row, "ending_diversity", 2),
            _cell(row, "num_resampled", 1),
            _cell(row, "reached_threshold", 0, 100, "%"),
            _cell(row, "utterance_overlap", 2),
        )
        for row in rows
    ]
    lines = _table(header, body)
    relevance = [row for row in rows if "starting_bleu" in row]
    if relevance:
        header = (
            "model",
            "data",
            "metric",
            "decoding",
            "start BLEU",
            "end BLEU",
            "start BERTScore",
            "end BERTScore",
        )
        body = [
            (
                *who(row),
                _cell(row, "starting_bleu", 3),
                _cell(row, "ending_bleu", 3),
                _cell(row, "starting_bertscore", 3),
                _cell(row, "ending_bertscore", 3),
            )
            for row in relevance
        ]
        lines += ["", "Relevance against the human responses (Table 5):"] + _table(header, body)
    note = (
        "contexts: contexts per trial; start/end div.: Baseline NLI Diversity for nli (Table 4), "
        "the metric itself otherwise; num resampled: responses drawn after the first n, at most S "
        '(Table 4\'s "Num. Sampled"); '
        "overlap: App. C; mean ± sd over trials; BERTScore only with --bertscore-model"
    )
    return "\n".join(lines + ["", note])


def _metric_options(settings: DTGOptions, device) -> dict:
    if settings.metric == "distinct_n":
        if settings.metric_model:
            raise ArgumentError("metric_model", "does not apply to distinct_n (a lexical metric)")
        if settings.metric_dtype:
            raise ArgumentError("metric_dtype", "does not apply to distinct_n (a lexical metric)")
        return {}
    options = {
        "device": device,
        "dtype": settings.metric_dtype,
        "batch_size": settings.nli_batch_size,
    }
    if settings.metric_model:
        options["model"] = settings.metric_model
    if settings.metric == "nli":
        options["nli_objective"] = settings.nli_objective
    return options


def _generation_options(settings: DTGOptions) -> dict:
    options = {"max_new_tokens": settings.max_new_tokens}
    sampling = {
        "top_p": settings.top_p,
        "top_k": settings.top_k,
        "temperature": settings.temperature,
    }
    if settings.decoding == "sample":
        options.update(sampling)
    else:
        defaults = {"top_p": 0.9, "top_k": 0, "temperature": 1.0}
        changed = sorted(key for key, value in sampling.items() if value != defaults[key])
        if changed:
            raise ValueError(f"{changed} apply to --decoding sample, not to beam search")
    for key in ("min_new_tokens", "no_repeat_ngram_size", "repetition_penalty"):
        if getattr(settings, key) is not None:
            options[key] = getattr(settings, key)
    return options


def run_dtg_job(
    settings: DTGOptions,
    contexts: list[DTGContext],
    output: str | Path,
    overwrite: bool = False,
    device=None,
    progress: bool = True,
) -> dict:
    """Runs (or resumes) DTG over ``contexts`` into ``output``; returns the Table 4 summary row.

    Under ``accelerate launch`` every process runs its share of the batches; only the main
    process writes, and only it returns the summary (the others return ``{}``).
    """
    from tqdm.auto import tqdm

    from dialeval.cli.argument_renames import DTG_METRIC_ARGUMENTS, in_caller_names
    from dialeval.distributed import process_state
    from dialeval.generation.dtg import build_objective, context_token_limit
    from dialeval.generation.dtg_decoding import decoding_record, dtg_generation_config
    from dialeval.generation.dtg_runner import run_dtg
    from dialeval.validation import check_int

    check_int(settings.trials, "trials")
    if not contexts:
        raise ValueError("no contexts to run DTG on")
    if settings.metric != "nli" and settings.nli_objective != "nli_diversity":
        raise ArgumentError("nli_objective", "applies to --metric nli")
    state = process_state()
    model, tokenizer = load_generator(settings.model, device=device, dtype=settings.dtype)
    is_encoder_decoder = model.config.is_encoder_decoder
    texts = [
        format_context(context.turns, tokenizer, is_encoder_decoder, settings.turn_separator)
        for context in contexts
    ]
    try:
        objective = build_objective(settings.metric, _metric_options(settings, device))
    except (
        ValueError,
        OSError,
    ) as error:  # the objective's `model` is our --metric-model, not --model
        raise in_caller_names(error, DTG_METRIC_ARGUMENTS) from error
    generation = _generation_options(settings)
    config, _ = dtg_generation_config(
        model, tokenizer, settings.decoding, settings.num_beams, None, generation
    )
    max_context_tokens = settings.max_context_tokens
    if max_context_tokens is None:
        max_context_tokens = context_token_limit(model, tokenizer, config)
    recorded = {
        "effective_decoding": {
            **decoding_record(config, settings.decoding),
            "max_context_tokens": max_context_tokens,
        },
        # the contexts themselves, not their file's name: an input rewritten in place must not be
        # resumed
        "contexts_sha256": contexts_sha256(contexts),
    }
    if (
        settings.metric == "sent_bert"
    ):  # its default threshold depends on the embedder: a resumed run must keep it
        recorded["effective_threshold"] = (
            objective.default_threshold if settings.threshold is None else settings.threshold
        )
    num_contexts = len(contexts)
    num_batches = -(-num_contexts // settings.batch_size)
    writer = None
    num_done = 0
    if state.is_main_process:
        writer = ResumableJsonl(
            output,
            settings,
            settings.batch_size,
            overwrite=overwrite,
            num_contexts=num_contexts,
            recorded=recorded,
        )
        num_done = writer.num_done
    num_done = _broadcast_int(num_done)
    total = num_contexts * settings.trials
    bar = tqdm(
        total=total,
        initial=num_done,
        disable=not (progress and state.is_main_process),
        desc="DTG contexts",
    )
    first_trial, done_in_trial = divmod(num_done, num_contexts)
    try:
        for trial in range(first_trial, settings.trials):

            def write_batch(batch_index: int, results, trial=trial) -> None:
                first = batch_index * settings.batch_size
                if writer is not None:
                    writer.append(
                        [
                            {
                                "trial": trial,
                                "index": first + offset,
                                "id": contexts[first + offset].id,
                                "context": contexts[first + offset].turns,
                                **(
                                    {"references": contexts[first + offset].references}
                                    if contexts[first + offset].references
                                    else {}
                                ),
                                **result.to_dict(),
                            }
                            for offset, result in enumerate(results)
                        ]
                    )
                bar.update(len(results))

            run_dtg(
                model,
                tokenizer,
                texts,
                seed=settings.seed + trial * num_batches,
                batch_size=settings.batch_size,
                start_batch=done_in_trial // settings.batch_size if trial == first_trial else 0,
                on_batch=write_batch,
                metric=objective,
                threshold=settings.threshold,
                num_responses=settings.num_responses,
                max_samples=settings.max_samples,
                decoding=settings.decoding,
                max_context_tokens=max_context_tokens,
                tie_break=settings.tie_break,
                **({"num_beams": settings.num_beams} if settings.decoding == "beam" else {}),
                **generation,
            )
    except Interrupted as stop:  # the appends are whole batches: the file ends at one
        if writer is not None:
            trials = f" ({settings.trials} trials of {num_contexts})" if settings.trials > 1 else ""
            stop.detail = (
                f"{writer.num_done} of {total} contexts{trials} are in {output}; rerun "
                "the same command to resume"
            )
        raise
    bar.close()
    state.wait_for_everyone()
    if not state.is_main_process:
        return {}
    recorded_settings, records = read_run(output)
    return summarize(recorded_settings, records)


def _broadcast_int(value: int) -> int:
    from accelerate.utils import broadcast_object_list

    from dialeval.distributed import process_state

    if process_state().num_processes == 1:
        return value
    holder = [value]
    broadcast_object_list(holder, from_process=0)
    return int(holder[0])


# The settings class was DTGRunSettings, beside every other command's *Options.
__getattr__ = renamed_attributes(__name__, {"DTGRunSettings": "DTGOptions"})
