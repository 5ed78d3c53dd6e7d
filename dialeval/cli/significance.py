"""``--ci``: the interval of every summary figure of a report, and the comparison of every system
with the baseline (difference, its interval, p-value, Holm's correction over the table).

The figures enter as :class:`~dialeval.resampling.UnitStatistic` objects that the job built from
each step's outcome (:func:`~dialeval.metrics.engines.figure_statistics.figure_statistics`): a
per-set figure from its per-set values, a corpus figure from the statistics its metric kept, so
no model runs again. Two systems are paired when their response sets answer the same contexts:
matched by ``id`` when every set of both has one, else by context.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from dialeval.cli.report_formats import DESCRIPTIVE_KEYS
from dialeval.resampling import (
    CONFIDENCE,
    Difference,
    Interval,
    holm,
    interval,
    paired_difference,
    unpaired_difference,
)
from dialeval.validation import ArgumentError

if TYPE_CHECKING:  # types only
    from dialeval.metrics.engines.job_steps import Settings
    from dialeval.resampling import UnitStatistic

#: ``--pairing``: pair the systems when their sets answer the same contexts (auto), require it
#: (paired), or compare them as independent samples (unpaired).
PAIRINGS = ("auto", "paired", "unpaired")
#: Why a figure has no interval when its metric kept nothing to resample it from.
NOT_KEPT = (
    "its step was taken from a --resume checkpoint, which keeps the figures and not what "
    "resampling them needs: run without --resume for this figure's interval"
)
NO_RESAMPLING = "its metric declares no way to recompute it on a resample"


def is_figure(name: str, value: object) -> bool:
    """Whether a summary entry is a figure that gets an interval: a finite number that does not
    describe another figure."""
    return (
        name not in DESCRIPTIVE_KEYS
        and isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
    )


def uncertainty_settings(scope: str, options: Settings) -> dict:
    """The report's ``uncertainty`` entry: confidence, resamples, seed and the unit resampled."""
    return {
        "confidence": CONFIDENCE,
        "num_resamples": options.resamples,
        "seed": options.resampling_seed,
        "unit": "response set" if scope == "response_set" else "response",
    }


def _units(scope: str) -> str:
    return "response sets" if scope == "response_set" else "responses"


def add_intervals(
    report: dict, statistics: Mapping[str, Mapping[str, UnitStatistic]], options: Settings
) -> None:
    """Add ``intervals`` (figure -> interval) to every metric entry of ``report`` and the run's
    ``uncertainty`` settings; ``statistics``: report name -> figure -> statistic."""
    report["uncertainty"] = uncertainty_settings(report["scope"], options)
    for name, summary in report["metrics"].items():
        kept = statistics.get(name)
        intervals = {}
        for figure, value in summary.items():
            if not is_figure(figure, value):
                continue
            statistic = (kept or {}).get(figure)
            if statistic is None:
                reason = NOT_KEPT if kept is None else NO_RESAMPLING
                intervals[figure] = Interval(None, None, "none", reason).as_json()
                continue
            intervals[figure] = interval(
                statistic,
                options.resamples,
                options.resampling_seed,
                unit=_units(report["scope"]),
            ).as_json()
        if intervals:
            summary["intervals"] = intervals


def _keys(report: dict, field: str) -> list[str] | None:
    """Each set's ``field`` (``id`` or ``context``) as a comparable text, or None when a set lacks
    it or two sets share it."""
    rows = report.get("per_set")
    if not rows:
        return None
    keys = [row.get(field) for row in rows]
    if any(key is None for key in keys):
        return None
    texts = [json.dumps(key, sort_keys=True, ensure_ascii=False) for key in keys]
    return texts if len(set(texts)) == len(texts) else None


def _context_clash(system: dict, baseline: dict, matched: list[int]) -> str | None:
    """Why sets with the same id cannot be paired: they answer different contexts (ids that
    number each file's lines from 0 match whatever the files hold)."""
    ours, theirs = system["per_set"], baseline["per_set"]
    for index, other in enumerate(matched):
        mine, their = ours[index].get("context"), theirs[other].get("context")
        if mine is not None and their is not None and mine != their:
            return (
                f"the sets with id {ours[index].get('id')!r} answer different contexts, so the "
                "ids do not name the same contexts"
            )
    return None


def match_sets(system: dict, baseline: dict) -> tuple[list[int], list[int], str] | str:
    """The matched sets of two reports, ``(system indices, baseline indices, how)``, or why they
    cannot be paired: every set of each answers a context (or has an ``id``) that exactly one set
    of the other answers."""
    if system["scope"] != "response_set" or baseline["scope"] != "response_set":
        return "a corpus's responses answer no stated context"
    reasons = []
    for field in ("id", "context"):
        mine, theirs = _keys(system, field), _keys(baseline, field)
        if mine is None or theirs is None:
            reasons.append(f"not every set has a distinct {field}")
            continue
        position = {key: index for index, key in enumerate(theirs)}
        shared = [key for key in mine if key in position]
        if len(shared) == len(mine) == len(theirs):
            matched = [position[key] for key in mine]
            clash = _context_clash(system, baseline, matched) if field == "id" else None
            if clash is None:
                return (
                    list(range(len(mine))),
                    matched,
                    f"paired over {len(mine)} shared {'ids' if field == 'id' else 'contexts'}",
                )
            reasons.append(clash)
            continue
        reasons.append(
            f"they share {len(shared)} of {len(mine)} and {len(theirs)} {field}s"
            if shared
            else f"they share no {field}"
        )
    return "; ".join(reasons)


def _difference(
    system: UnitStatistic | None,
    baseline: UnitStatistic | None,
    matched: tuple[list[int], list[int], str] | None,
    options: Settings,
    unit: str,
) -> Difference:
    if system is None or baseline is None:
        return Difference(None, None, None, None, matched is not None, "none", NO_RESAMPLING)
    if matched is not None:
        return paired_difference(
            system,
            baseline,
            matched[0],
            matched[1],
            options.resamples,
            options.resampling_seed,
            unit=unit,
        )
    return unpaired_difference(
        system, baseline, options.resamples, options.resampling_seed, unit=unit
    )


def compare_systems(
    reports: Mapping[str, dict],
    statistics: Mapping[str, Mapping[str, Mapping[str, UnitStatistic]]],
    columns: Mapping[tuple[str, str], str],
    baseline: str,
    pairing: str,
    options: Settings,
) -> dict:
    """The comparison's ``--ci`` part: each system's interval per column, and each other system's
    difference from ``baseline`` per column with Holm's correction over every test of the table.

    ``statistics``: system -> report name -> figure -> statistic; ``columns``: ``(metric,
    figure)`` -> the comparison table's column. ``pairing`` (:data:`PAIRINGS`): ``paired`` refuses
    systems whose sets cannot be matched, naming ``--pairing``.
    """
    first = next(iter(reports.values()))
    unit = _units(first["scope"])
    intervals = {
        system: {
            columns[(metric, figure)]: value
            for metric, summary in report["metrics"].items()
            for figure, value in summary.get("intervals", {}).items()
            if (metric, figure) in columns
        }
        for system, report in reports.items()
    }
    pairings, differences = {}, []
    for system, report in reports.items():
        if system == baseline:
            continue
        matched = None
        if pairing != "unpaired":
            found = match_sets(report, reports[baseline])
            if isinstance(found, str):
                if pairing == "paired":
                    raise pairing_refused(system, baseline, found)
                pairings[system] = f"unpaired: {found}"
            else:
                matched = found
                pairings[system] = found[2]
        else:
            pairings[system] = "unpaired: asked for with --pairing unpaired"
        for (metric, figure), column in columns.items():
            if figure not in report["metrics"].get(metric, {}):
                continue
            if figure not in reports[baseline]["metrics"].get(metric, {}):
                continue
            difference = _difference(
                statistics.get(system, {}).get(metric, {}).get(figure),
                statistics.get(baseline, {}).get(metric, {}).get(figure),
                matched,
                options,
                unit,
            )
            differences.append(
                {
                    "system": system,
                    "baseline": baseline,
                    "column": column,
                    "metric": metric,
                    "figure": figure,
                    **difference.as_json(),
                }
            )
    adjusted = holm([entry["p_value"] for entry in differences])
    alpha = 1 - CONFIDENCE
    for entry, p_holm in zip(differences, adjusted):
        entry["p_holm"] = p_holm
        entry["significant"] = p_holm is not None and p_holm < alpha
    return {
        "baseline": baseline,
        "uncertainty": uncertainty_settings(first["scope"], options),
        "correction": f"Holm over the {sum(p is not None for p in adjusted)} tests of the table",
        "intervals": intervals,
        "differences": differences,
        "pairing": pairings,
    }


def pairing_refused(system: str, baseline: str, reason: str) -> ArgumentError:
    """The refusal of ``--pairing paired`` for two systems that cannot be paired."""
    return ArgumentError(
        "pairing",
        f"paired: {system} and {baseline} cannot be paired ({reason}); use `pairing` auto or "
        "unpaired to compare them as independent samples",
    )


def check_baseline(baseline: str | None, systems: list[str], ci: bool, pairing: str) -> str:
    """The baseline system of a ``--ci`` comparison (default: the first); ``--baseline`` and
    ``--pairing`` are refused where nothing is compared."""
    if pairing not in PAIRINGS:
        raise ArgumentError("pairing", f"must be one of {', '.join(PAIRINGS)}, got {pairing!r}")
    compared = ci and len(systems) > 1
    for name, given in (("baseline_system", baseline is not None), ("pairing", pairing != "auto")):
        if given and not compared:
            raise ArgumentError(
                name,
                "sets up the comparison of several systems that `ci` makes: "
                + ("pass `ci`" if not ci else "give two inputs or more"),
            )
    if baseline is None:
        return systems[0]
    if baseline not in systems:
        raise ArgumentError(
            "baseline_system", f"names no system: {baseline!r} (the systems: {', '.join(systems)})"
        )
    return baseline
