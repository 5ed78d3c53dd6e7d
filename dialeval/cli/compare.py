"""Several systems in one ``dialeval evaluate``: one input per system, one row per system.

``dialeval evaluate sysA.jsonl sysB.jsonl`` (or ``NAME=FILE``) runs the job once per system in one
process (models load once: the loader's cache spans the systems) and gives a table with a row per
system and a column per summary figure (:func:`comparison_table`), plus each system's own report.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from dialeval.cli.report_formats import (
    DEFAULT_DECIMALS,
    OutputPlan,
    Table,
    cell_text,
    per_set_table,
    render_table,
    summary_rows,
    write_text,
)
from dialeval.cli.safe_output import json_text
from dialeval.validation import ArgumentError

_NAME = re.compile(r"^[\w.+-]+$")


def comparison_note(comparison: dict) -> str:
    """What the marks and intervals of the comparison table mean, and how each system was
    paired."""
    settings = comparison["uncertainty"]
    lines = [
        (
            f"[low, high]: {settings['confidence']:.0%} interval from "
            f"{settings['num_resamples']} resamples of the {settings['unit']}s (bootstrap or "
            "subsamples: each report names the method), "
            f"seed {settings['seed']}; *: differs from {comparison['baseline']} "
            f"(p < 0.05, {comparison['correction']})"
        )
    ]
    lines += [f"{system}: {how}" for system, how in comparison["pairing"].items()]
    return "\n".join(lines)


#: The per-set distributions plot ``--plot DIR`` writes for several systems.
PLOT_FILE = "per_set_distributions.png"


def systems_from_inputs(inputs: list[str]) -> dict[str, str]:
    """System name -> input, in the order given: ``NAME=INPUT`` names a system, a bare input is
    named by its file stem (a folder or Hub id by its last part). With several inputs, names are
    letters, digits and ``_ . + -`` and must differ; a single input's name is written nowhere (its
    report goes beside it or to ``--output``), so any file name will do."""
    systems: dict[str, str] = {}
    for given in inputs:
        name, separator, source = given.partition("=")
        if not separator or Path(given).exists():  # a path that holds "=" is a path
            source = given
            name = Path(given).name if Path(given).is_dir() else Path(given).stem
        if not source:
            raise ArgumentError("input", f"{given!r}: NAME=INPUT needs an input after '='")
        if len(inputs) > 1 and not _NAME.match(name):
            raise ArgumentError(
                "input",
                f"{given!r}: a system name is letters, digits and _ . + - "
                f"(name it with NAME=INPUT), got {name!r}",
            )
        if name in systems:
            raise ArgumentError(
                "input",
                f": two systems are named {name!r} ({systems[name]}, {source}): "
                "name them with NAME=INPUT",
            )
        systems[name] = source
    return systems


def figure_columns(reports: dict[str, dict]) -> dict[tuple[str, str], str]:
    """``(metric, figure)`` -> its column in the comparison table: FIGURE, or FIGURE[MODEL] for a
    model-backed metric (METRIC/FIGURE where two metrics share that label)."""
    labels: dict[tuple[str, str], str] = {}
    for report in reports.values():
        for metric, figure, _, _ in summary_rows(report):
            if (metric, figure) in labels:
                continue
            label = figure + (metric[metric.index("[") :] if "[" in metric else "")
            labels[(metric, figure)] = f"{metric}/{figure}" if label in labels.values() else label
    return labels


def interval_cell(value: object, bounds: dict | None, decimals: int, mark: str = "") -> object:
    """``0.412 [0.405, 0.419]`` (``[undefined]`` when the interval is), ``mark`` after it; the
    value as it is without an interval."""
    if bounds is None or not isinstance(value, (int, float)) or isinstance(value, bool):
        return value
    number = cell_text(float(value), decimals)
    if bounds.get("low") is None or bounds.get("high") is None:
        return f"{number} [undefined]{mark}"
    low, high = (cell_text(float(bounds[end]), decimals) for end in ("low", "high"))
    return f"{number} [{low}, {high}]{mark}"


#: The mark of a figure that differs from the baseline's (Holm-corrected p < 0.05).
SIGNIFICANT = " *"


def comparison_table(
    reports: dict[str, dict], comparison: dict | None = None, decimals: int = DEFAULT_DECIMALS
) -> Table:
    """A row per system (name -> report), a column per summary figure (:func:`figure_columns`)
    after ``system``, ``num_sets`` (empty for a corpus) and ``num_responses``; a figure a system
    lacks (a skipped metric) is empty. With ``comparison`` (``--ci``,
    :func:`~dialeval.cli.significance.compare_systems`), each cell is ``value [low, high]``,
    marked ``*`` where it differs from the baseline's (the baseline's row says so)."""
    labels = figure_columns(reports)
    intervals = comparison.get("intervals", {}) if comparison else {}
    significant = {
        (entry["system"], entry["column"])
        for entry in (comparison or {}).get("differences", [])
        if entry.get("significant")
    }
    baseline = comparison.get("baseline") if comparison else None
    rows = []
    for system, report in reports.items():
        values = {(metric, figure): value for metric, figure, _, value in summary_rows(report)}
        cells = [
            interval_cell(
                values.get(key),
                intervals.get(system, {}).get(column) if comparison else None,
                decimals,
                SIGNIFICANT if (system, column) in significant else "",
            )
            for key, column in labels.items()
        ]
        name = f"{system} (baseline)" if system == baseline else system
        rows.append([name, report.get("num_sets"), report.get("num_responses"), *cells])
    return Table(["system", "num_sets", "num_responses", *labels.values()], rows)


#: Decimals a printed p-value keeps whatever ``--decimals`` asks (the HTML page shows three).
P_VALUE_DECIMALS = 3


def p_value_text(value: float | None, decimals: int = DEFAULT_DECIMALS) -> str:
    """A p-value as printed: at least :data:`P_VALUE_DECIMALS` decimals, and one that would print
    as zero as a bound (``<0.0001``), since a resampling or normal test never shows p = 0."""
    if value is None:
        return ""
    places = max(decimals, P_VALUE_DECIMALS)
    smallest = 10.0**-places
    if value < smallest:
        return f"<{smallest:.{places}f}"
    return f"{value:.{places}f}"


def differences_table(comparison: dict, decimals: int = DEFAULT_DECIMALS) -> Table:
    """One row per test of ``comparison``: system, column, the difference from the baseline with
    its interval, p-value, Holm's p-value (:func:`p_value_text`), significance and pairing (or why
    it is undefined)."""
    rows = []
    for entry in comparison["differences"]:
        if entry["low"] is None:
            bounds = "undefined: " + (entry.get("undefined") or "")
        else:
            bounds = f"[{cell_text(entry['low'], decimals)}, {cell_text(entry['high'], decimals)}]"
            if entry.get("undefined"):  # the interval stands, the p-value does not
                bounds += f" ({entry['undefined']})"
        rows.append(
            [
                entry["system"],
                entry["column"],
                entry["difference"],
                bounds,
                p_value_text(entry["p_value"], decimals),
                p_value_text(entry["p_holm"], decimals),
                "yes" if entry["significant"] else "no",
                "paired" if entry["paired"] else "unpaired",
            ]
        )
    return Table(
        [
            "system",
            f"figure (minus {comparison['baseline']})",
            "difference",
            "95% interval",
            "p",
            "p (Holm)",
            "significant",
            "test",
        ],
        rows,
    )


def write_comparison(
    reports: dict[str, dict],
    path: Path,
    output_format: str,
    decimals: int,
    report_paths: dict[str, Path],
    comparison: dict | None = None,
    render_page: Callable[[dict[str, dict], dict | None], str] | None = None,
) -> Path:
    """The comparison table in ``output_format``; as JSON, its rows as objects with each system's
    input and report path, and with ``--ci`` every interval and test (``comparison``); as HTML,
    the page ``render_page(reports, comparison)`` makes
    (:func:`dialeval.cli.html_report.render_html_report`, which builds on this module)."""
    if output_format == "html":
        if render_page is None:
            raise ArgumentError("output_format", "html needs the page's renderer")
        return write_text(path, render_page(reports, comparison))
    if output_format != "json":
        table = comparison_table(reports, comparison, decimals)
        return write_text(path, render_table(table, output_format, decimals))
    table = comparison_table(reports)
    rows = [
        {
            "system": row[0],
            "input": reports[row[0]].get("input"),
            "report": str(report_paths[row[0]]),
            **dict(zip(table.columns[1:], row[1:])),
        }
        for row in table.rows
    ]
    return write_text(path, json_text({"systems": rows, **(comparison or {})}, path))


def write_run_outputs(
    reports: dict[str, dict],
    plan: OutputPlan,
    decimals: int,
    plot_dir: str | None,
    comparison: dict | None = None,
    render_page: Callable[[dict[str, dict], dict | None], str] | None = None,
) -> list[str]:
    """What a run writes once every system's report is in (system name -> report): the per-set CSV
    and, for several systems, the comparison table (printed as text too, and written where
    ``plan`` says) and the per-set distributions plot under ``plot_dir``; returns the lines to
    print."""
    lines = []
    if reports and plan.per_set_csv is not None:
        lines.append(
            "per-set table: "
            f"{write_text(plan.per_set_csv, render_table(per_set_table(reports), 'csv', decimals))}"
        )
    if len(reports) < 2:
        return lines
    lines.append(
        "\n" + render_table(comparison_table(reports, comparison, decimals), "text", decimals)
    )
    if comparison is not None:
        lines.append(comparison_note(comparison))
        differences = differences_table(comparison, decimals)
        lines.append("\n" + render_table(differences, "text", decimals))
    if plan.comparison is not None:
        written = write_comparison(
            reports,
            plan.comparison,
            plan.output_format,
            decimals,
            plan.reports,
            comparison,
            render_page,
        )
        lines.append(f"comparison: {written}")
    if plot_dir is not None:
        # plots: matplotlib, loaded only when a plot is asked for
        from dialeval.cli.plots import plot_per_set_distributions

        path = plot_per_set_distributions(reports, Path(plot_dir) / PLOT_FILE)
        lines.append(
            f"plot: {path}"
            if path is not None
            else "plot: the systems share no per-set figure to plot"
        )
    return lines
