"""Several systems in one ``dialeval evaluate``: one input per system, one row per system.

``dialeval evaluate sysA.jsonl sysB.jsonl`` (or ``NAME=FILE``) runs the job once per system in one
process (models load once: the loader's cache spans the systems) and gives a table with a row per
system and a column per summary figure (:func:`comparison_table`), plus each system's own report.
"""

from __future__ import annotations

import re
from pathlib import Path

from dialeval.cli.report_formats import (
    OutputPlan,
    Table,
    per_set_table,
    render_table,
    summary_rows,
    write_text,
)
from dialeval.cli.safe_output import json_text
from dialeval.validation import ArgumentError

_NAME = re.compile(r"^[\w.+-]+$")


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


def comparison_table(reports: dict[str, dict]) -> Table:
    """A row per system (name -> report), a column per summary figure: ``system``, ``num_sets``
    (empty for a corpus), ``num_responses``, then each figure as FIGURE, or FIGURE[MODEL] for a
    model-backed metric (METRIC/FIGURE where two metrics share that label); a figure a system lacks
    (a skipped metric) is empty."""
    labels: dict[tuple[str, str], str] = {}
    for report in reports.values():
        for metric, figure, _, _ in summary_rows(report):
            if (metric, figure) in labels:
                continue
            label = figure + (metric[metric.index("[") :] if "[" in metric else "")
            labels[(metric, figure)] = f"{metric}/{figure}" if label in labels.values() else label
    rows = []
    for system, report in reports.items():
        values = {(metric, figure): value for metric, figure, _, value in summary_rows(report)}
        rows.append(
            [
                system,
                report.get("num_sets"),
                report.get("num_responses"),
                *(values.get(key) for key in labels),
            ]
        )
    return Table(["system", "num_sets", "num_responses", *labels.values()], rows)


def write_comparison(
    reports: dict[str, dict],
    path: Path,
    output_format: str,
    decimals: int,
    report_paths: dict[str, Path],
) -> Path:
    """The comparison table in ``output_format``; as JSON, its rows as objects with each system's
    input and report path."""
    table = comparison_table(reports)
    if output_format != "json":
        return write_text(path, render_table(table, output_format, decimals))
    rows = [
        {
            "system": row[0],
            "input": reports[row[0]].get("input"),
            "report": str(report_paths[row[0]]),
            **dict(zip(table.columns[1:], row[1:])),
        }
        for row in table.rows
    ]
    return write_text(path, json_text({"systems": rows}, path))


def write_run_outputs(
    reports: dict[str, dict], plan: OutputPlan, decimals: int, plot_dir: str | None
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
    lines.append("\n" + render_table(comparison_table(reports), "text", decimals))
    if plan.comparison is not None:
        written = write_comparison(
            reports, plan.comparison, plan.output_format, decimals, plan.reports
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
