"""The CLI's figures, built on ``matplotlib.figure.Figure`` (no pyplot state, no GUI backend).

``dialeval meta-eval --plot``: Tevet & Berant's Fig. 1/4 and Fig. 3, one PNG per metric.

- Binary parameter (conTest, McDiv): the metric's distribution over high (blue) and low
  (orange) content-diversity sets, with the OCA threshold dotted (paper Fig. 1 and 4).
- Temperature (decTest): each set's score against its temperature; absHDS with the standard
  deviation of its 10 ratings as error bars (paper Fig. 3).

``dialeval evaluate --plot`` with several inputs (systems): the per-set figures' distributions,
one panel per figure, one box per system, each set's value drawn over its box. A metric's own
plots (Sem-Ent's cluster distribution) come from its output hook (``metrics/<name>/spec.py``).
"""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from dialeval.cli.meta_eval_job import MetaEvalReport, MetricRow
from dialeval.cli.report_formats import INPUT_KEYS
from dialeval.cli.safe_output import write_atomically

HIGH_COLOUR, LOW_COLOUR = "tab:blue", "tab:orange"


def _save(figure: Figure, path: str | Path) -> Path:
    """The PNG rendered in memory, then written whole (a stopped run never leaves half a figure)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=120)
    return write_atomically(path, buffer.getvalue())


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_")


def _title(report: MetaEvalReport, row: MetricRow) -> str:
    rho = row.result["spearman"]
    figures = "rho undefined" if rho is None else f"rho={rho:.2f}"  # undefined_reason says why
    if "oca" in row.result:
        figures += f", OCA={row.result['oca']:.2f}"
    return f"{row.label}: {report.title} ({figures})"


def plot_class_histograms(report: MetaEvalReport, row: MetricRow, path: Path) -> Path:
    figure = Figure(figsize=(6, 4), layout="constrained")
    axes = figure.add_subplot()
    bins = np.histogram_bin_edges(row.scores, bins=min(30, max(5, len(row.scores) // 10)))
    high = row.parameters == 1.0
    axes.hist(
        row.scores[high],
        bins=bins,  # type: ignore[arg-type]  # matplotlib's stubs omit the array hist() documents
        alpha=0.6,
        color=HIGH_COLOUR,
        label=f"high content diversity ({high.sum()})",
    )
    axes.hist(
        row.scores[~high],
        bins=bins,  # type: ignore[arg-type]  # matplotlib's stubs omit the array hist() documents
        alpha=0.6,
        color=LOW_COLOUR,
        label=f"low content diversity ({(~high).sum()})",
    )
    if "oca_threshold" in row.result:
        axes.axvline(
            row.result["oca_threshold"], color="black", linestyle=":", label="OCA threshold"
        )
    axes.set_xlabel(row.label)
    axes.set_ylabel("sets")
    axes.set_title(_title(report, row), fontsize=9)
    axes.legend(fontsize=8)
    return _save(figure, path)


def plot_parameter_scatter(report: MetaEvalReport, row: MetricRow, path: Path) -> Path:
    figure = Figure(figsize=(6, 4), layout="constrained")
    axes = figure.add_subplot()
    if row.errors is not None:
        axes.errorbar(
            row.parameters,
            row.scores,
            yerr=row.errors,
            fmt="o",
            markersize=3,
            alpha=0.5,
            elinewidth=0.8,
        )
    else:
        axes.scatter(row.parameters, row.scores, s=6, alpha=0.5)
    axes.set_xlabel("softmax temperature")
    axes.set_ylabel(row.label)
    axes.set_title(_title(report, row), fontsize=9)
    return _save(figure, path)


#: The names ``meta-eval --plot DIR`` writes, after ``TEST_TASK_`` (checked before the run, when
#: the rows' labels are not known yet).
PLOT_PATTERNS = ("*_classes.png", "*_vs_temperature.png")


def write_plots(report: MetaEvalReport, out_dir: str | Path) -> list[Path]:
    """One PNG per row of ``report`` under ``out_dir``; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for row in report.rows:
        stem = f"{report.test}_{report.task}_{_slug(row.label)}"
        if report.binary:
            paths.append(plot_class_histograms(report, row, out / f"{stem}_classes.png"))
        else:
            paths.append(plot_parameter_scatter(report, row, out / f"{stem}_vs_temperature.png"))
    return paths


def per_set_figures(reports: dict[str, dict]) -> list[str]:
    """The per-set figures with a number in every system's report (name -> report), in report
    order."""

    def numeric(report: dict) -> set[str]:
        return {
            key
            for row in report["per_set"]
            for key, value in row.items()
            if key not in INPUT_KEYS
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
        }

    shared = set.intersection(*(numeric(report) for report in reports.values()))
    ordered = dict.fromkeys(
        key for report in reports.values() for row in report["per_set"] for key in row
    )
    return [key for key in ordered if key in shared]


def plot_per_set_distributions(reports: dict[str, dict], path: str | Path) -> Path | None:
    """One panel per per-set figure, one box per system (name -> report; boxes in that order, with
    the sets' values drawn over them); None when the systems share no per-set figure."""
    figures = per_set_figures(reports)
    if not figures:
        return None
    columns = min(3, len(figures))
    rows = math.ceil(len(figures) / columns)
    figure = Figure(
        figsize=(1.2 + 1.1 * len(reports) * columns + 1.5 * columns, 3.2 * rows),
        layout="constrained",
    )
    names = list(reports)
    for index, name in enumerate(figures):
        axes = figure.add_subplot(rows, columns, index + 1)
        values = [
            [row[name] for row in report["per_set"] if isinstance(row.get(name), (int, float))]
            for report in reports.values()
        ]
        axes.boxplot(values, tick_labels=names, showfliers=False)
        for position, system_values in enumerate(values, start=1):
            jitter = (
                np.linspace(-0.12, 0.12, len(system_values))
                if len(system_values) > 1
                else np.zeros(1)
            )
            axes.scatter(position + jitter, system_values, s=6, alpha=0.4, color="tab:blue")
        axes.set_title(name, fontsize=9)
        axes.tick_params(axis="x", labelrotation=30 if len(names) > 3 else 0, labelsize=8)
    figure.suptitle("per-set figures by system", fontsize=10)
    return _save(figure, path)
