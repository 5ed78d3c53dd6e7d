"""``dialeval dtg-summary``: a run's records read back and summarized as the paper's tables.

:func:`read_run` reads a run (format-1 records upgraded, see :mod:`dialeval.cli.dtg_job`),
:func:`summarize` makes its row: Table 4 (starting / ending diversity, number resampled), App. C's
utterance overlap and, when the contexts come with human responses, Table 5's relevance (BLEU and
BERTScore of the starting and ending sets; :mod:`dialeval.cli.dtg_relevance`); over several
trials, the mean and standard deviation of each figure across trials.
:func:`format_summary_table` prints the rows through
:func:`~dialeval.cli.report_formats.render_table`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dialeval.cli.argument_renames import DTG_SUMMARY_BERTSCORE_ARGUMENTS, in_caller_names
from dialeval.cli.dtg_writer import settings_path
from dialeval.cli.report_formats import Table, render_table
from dialeval.io import iter_jsonl
from dialeval.type_aliases import DeviceLike

#: Table 4's figure for each metric (Baseline NLI Diversity for NLI, §6.3).
TABLE4_FIGURE = {"nli": "nli_diversity", "sent_bert": "sent_bert", "distinct_n": "distinct_n"}


def _upgrade(record: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
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
SUMMARY_FIELDS: dict[str, type | tuple[type, ...]] = {
    "initial_responses": list,
    "responses": list,
    "initial_scores": dict,
    "final_scores": dict,
    "reached_threshold": bool,
    "stop_reason": str,
    "utterance_overlap": (int, float),
    "num_pair_evaluations": (int, float),
}


def _summary_record(where: str, record: object) -> dict[str, Any]:
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


def read_run(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The settings and records of a ``dialeval dtg`` output (format-1 records upgraded, see
    :mod:`dialeval.cli.dtg_job`); a line that is not a record of one is a ValueError naming its
    ``FILE:LINE``."""
    path = Path(path)
    recorded = settings_path(path)
    settings = json.loads(recorded.read_text(encoding="utf-8")) if recorded.exists() else {}
    records = [
        _upgrade(_summary_record(where, record), settings) for where, record in iter_jsonl(path)
    ]
    return settings, records


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values))


def _trial_figures(
    metric: str,
    figure: str,
    records: list[dict[str, Any]],
    bertscore_model: str | None,
    device: DeviceLike,
) -> dict[str, float]:
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
        # BLEU and BERTScore load NLTK and numpy: only a run with human responses needs them.
        from dialeval.cli.dtg_relevance import (
            bertscore_against_references,
            corpus_bleu_against_references,
        )

        references = [r["references"] for r in records]
        starts, ends = [r["initial_responses"] for r in records], [r["responses"] for r in records]
        figures["starting_bleu"] = corpus_bleu_against_references(starts, references)
        figures["ending_bleu"] = corpus_bleu_against_references(ends, references)
        if bertscore_model:
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
    settings: dict[str, Any],
    records: list[dict[str, Any]],
    bertscore_model: str | None = None,
    device: DeviceLike = None,
) -> dict[str, Any]:
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
    trials: dict[int, list[dict[str, Any]]] = {}
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
    stops: dict[str, int] = {}
    for record in records:
        stops[record["stop_reason"]] = stops.get(record["stop_reason"], 0) + 1
    row: dict[str, Any] = {
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


def _cell(row: dict[str, Any], name: str, digits: int, scale: float = 1.0, suffix: str = "") -> str:
    if name not in row:
        return "-"
    text = f"{scale * row[name]:.{digits}f}{suffix}"
    if row.get(f"{name}_sd") is not None:
        text += f" ± {scale * row[f'{name}_sd']:.{digits}f}"
    return text


def _table(header: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    return render_table(Table(list(header), [list(cells) for cells in body]), "text").split("\n")


def format_summary_table(rows: list[dict[str, Any]]) -> str:
    """Table 4 (and, for runs with human responses, Table 5) of :func:`summarize` rows."""

    def who(row: dict[str, Any]) -> tuple[str, str, str, str]:
        return (
            Path(str(row["model"])).name or str(row["model"]),
            str(row["contexts_from"]),
            row["metric"]
            + ("" if row["figure"] == TABLE4_FIGURE.get(row["metric"]) else f" ({row['figure']})"),
            row["decoding"],
        )

    header: tuple[str, ...] = (
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
    body: list[tuple[str, ...]] = [
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
