"""The evaluation report as files a paper or a spreadsheet takes: tables in CSV, Markdown or LaTeX.

A :class:`Table` (column names, rows of cells) is built from a report by :func:`summary_table`
(one row per summary figure: metric, figure, scope, value) or :func:`per_set_table` (one row per
response set: id, where, context, the input's fields, every per-set figure), and written by
:func:`render_table` as ``csv``, ``markdown``, ``latex`` or aligned ``text`` (the printed table).
Floats get a fixed number of decimals (``decimals``); None is an empty cell; lists and dicts (a
dialogue's turns) are written as JSON. Every table the CLI prints is ``text`` rendered here
(:func:`format_per_set_table`, ``dialeval dtg-summary``'s tables). The JSON report itself stays
the complete record: :func:`plan_outputs` decides where every file of ``dialeval evaluate`` goes,
and a table in another format always has the JSON report beside it (same path, suffix ``.json``).

- CSV: RFC 4180 quoting (Python's ``csv``), ``\\n`` line ends; pandas' ``read_csv`` reads it back.
- Markdown: a GitHub pipe table, numeric columns right-aligned; ``|`` in a cell is escaped, line
  breaks become spaces.
- LaTeX: a booktabs ``tabular`` (``\\usepackage{booktabs}``) to put inside your own ``table``;
  the ten special characters are escaped (:func:`latex_escape`).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from dialeval.atomic_files import is_written_through, process_descriptor
from dialeval.cli.safe_output import json_text, write_atomically
from dialeval.validation import ArgumentError

#: What ``--output-format`` names; ``json`` is the full report, ``html`` its page (tables, plots,
#: provenance), the others its summary table.
OUTPUT_FORMATS = ("json", "csv", "markdown", "latex", "html")
FORMAT_OF_SUFFIX = {
    ".json": "json",
    ".csv": "csv",
    ".md": "markdown",
    ".markdown": "markdown",
    ".tex": "latex",
    ".html": "html",
    ".htm": "html",
}
SUFFIX_OF_FORMAT = {
    "json": ".json",
    "csv": ".csv",
    "markdown": ".md",
    "latex": ".tex",
    "html": ".html",
}
DEFAULT_DECIMALS = 4

#: Keys of a ``per_set`` row that describe the input rather than hold a figure.
INPUT_KEYS = ("where", "id", "context", "fields")
#: Summary entries that describe a figure rather than being one: the settings it was computed
#: with (EAD's ``n`` and ``vocab_size``, MTLD's ``threshold``, Sem-Ent's clusters, response
#: selection's ``reduction``) and counts of the input the report already holds (a corpus's
#: ``num_responses``, Sem-Ent's ``num_texts``). They stay in the JSON report's entry, beside the
#: figure, and the options in its ``provenance``; no table makes them a score.
DESCRIPTIVE_KEYS = frozenset(
    {
        "scope",
        "model",
        "lf_counted_against",
        "max_n",
        "algorithm",
        "n",
        "vocab_size",
        "threshold",
        "num_responses",
        "num_texts",
        "num_clusters",
        "clusters",
        "embedder",
        "reduction",
    }
)

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_LATEX_PATTERN = re.compile("|".join(re.escape(character) for character in _LATEX_SPECIAL))


@dataclass(frozen=True)
class Table:
    """Column names and rows of cells (str, int, float, bool, None, or lists / dicts)."""

    columns: list[str]
    rows: list[list]


#: More decimals than a double holds (17 significant digits) add nothing but width.
MAX_DECIMALS = 20


def check_decimals(decimals: int) -> int:
    if (
        isinstance(decimals, bool)
        or not isinstance(decimals, int)
        or not 0 <= decimals <= MAX_DECIMALS
    ):
        raise ArgumentError(
            "decimals", f"must be an integer from 0 to {MAX_DECIMALS}, got {decimals!r}"
        )
    return decimals


def latex_escape(text: str) -> str:
    """``text`` for LaTeX's text mode: ``\\ & % $ # _ { } ~ ^`` escaped in one pass (so an escape's
    own braces stay as written), line breaks as spaces."""
    return (
        _LATEX_PATTERN.sub(lambda match: _LATEX_SPECIAL[match.group()], text)
        .replace("\r", " ")
        .replace("\n", " ")
    )


def cell_text(value: object, decimals: int = DEFAULT_DECIMALS) -> str:
    """A cell as text: floats with ``decimals`` decimals, None empty, lists and dicts as JSON."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{decimals}f}"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _numeric_columns(table: Table) -> list[bool]:
    def is_number(value: object) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    columns = list(zip(*table.rows)) if table.rows else [() for _ in table.columns]
    return [
        any(is_number(v) for v in column) and all(v is None or is_number(v) for v in column)
        for column in columns
    ]


def _csv(table: Table, decimals: int) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.columns)
    writer.writerows([cell_text(value, decimals) for value in row] for row in table.rows)
    return buffer.getvalue()


def _markdown(table: Table, decimals: int) -> str:
    def cell(text: str) -> str:
        return text.replace("|", r"\|").replace("\r", " ").replace("\n", " ")

    header = [cell(name) for name in table.columns]
    rows = [[cell(cell_text(value, decimals)) for value in row] for row in table.rows]
    widths = [max(3, *(len(row[i]) for row in [header, *rows])) for i in range(len(header))]
    numeric = _numeric_columns(table)
    rule = [
        "-" * (width - 1) + ":" if right else ":" + "-" * (width - 1)
        for width, right in zip(widths, numeric)
    ]

    def line(cells: list[str]) -> str:
        padded = [
            text.rjust(width) if right else text.ljust(width)
            for text, width, right in zip(cells, widths, numeric)
        ]
        return "| " + " | ".join(padded) + " |"

    return (
        "\n".join([line(header), "| " + " | ".join(rule) + " |", *(line(row) for row in rows)])
        + "\n"
    )


def _latex(table: Table, decimals: int) -> str:
    alignment = "".join("r" if right else "l" for right in _numeric_columns(table))
    lines = [
        r"% dialeval table; needs \usepackage{booktabs}",
        rf"\begin{{tabular}}{{{alignment}}}",
        r"\toprule",
        " & ".join(latex_escape(name) for name in table.columns) + r" \\",
        r"\midrule",
    ]
    lines += [
        " & ".join(latex_escape(cell_text(value, decimals)) for value in row) + r" \\"
        for row in table.rows
    ]
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def _text(table: Table, decimals: int) -> str:
    rows = [table.columns, *([cell_text(value, decimals) for value in row] for row in table.rows)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(table.columns))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


_RENDERERS = {"csv": _csv, "markdown": _markdown, "latex": _latex, "text": _text}


def render_table(table: Table, table_format: str, decimals: int = DEFAULT_DECIMALS) -> str:
    """``table`` as ``csv``, ``markdown``, ``latex`` (each ending with a line break) or ``text``."""
    if table_format not in _RENDERERS:
        raise ArgumentError(
            "table_format", f"must be one of {', '.join(_RENDERERS)}, got {table_format!r}"
        )
    return _RENDERERS[table_format](table, check_decimals(decimals))


def summary_rows(report: dict) -> list[tuple[str, str, str, object]]:
    """``(metric, figure, scope, value)`` for every summary figure of ``report``: its numbers and
    texts, without the entries that describe a figure (scope, model) or hold lists and dicts."""
    return [
        (name, figure, summary["scope"], value)
        for name, summary in report["metrics"].items()
        for figure, value in summary.items()
        if figure not in DESCRIPTIVE_KEYS
        and value is not None
        and not isinstance(value, (list, dict))
    ]


def summary_table(report: dict) -> Table:
    """One row per summary figure: metric, figure, scope, value; with ``--ci`` (the report's
    ``uncertainty``), the interval's ends too (empty where it is undefined)."""
    if "uncertainty" not in report:
        return Table(
            ["metric", "figure", "scope", "value"], [list(row) for row in summary_rows(report)]
        )
    rows = []
    for metric, figure, scope, value in summary_rows(report):
        bounds = report["metrics"][metric].get("intervals", {}).get(figure, {})
        rows.append(
            [
                metric,
                figure,
                scope,
                value,
                bounds.get("low"),
                bounds.get("high"),
                bounds.get("undefined") or bounds.get("method"),
            ]
        )
    level = f"{report['uncertainty']['confidence']:.0%}"
    columns = ["metric", "figure", "scope", "value", f"{level} low", f"{level} high", "interval"]
    return Table(columns, rows)


def _unique(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))


def per_set_table(reports: dict[str, dict]) -> Table:
    """One row per response set of every report in ``reports`` (system name -> report; a
    ``system`` column first when there are several): id, where, context, the input's other fields
    (a field named like another column becomes ``fields.NAME``) and every per-set figure."""
    rows_by_system = [
        (system, row) for system, report in reports.items() for row in report.get("per_set", [])
    ]
    figures = _unique(key for _, row in rows_by_system for key in row if key not in INPUT_KEYS)
    fields = _unique(name for _, row in rows_by_system for name in row.get("fields", {}))
    several = len(reports) > 1
    taken = {"system", "id", "where", "context", *figures}
    columns = (["system"] if several else []) + ["id", "where", "context"]
    columns += [f"fields.{name}" if name in taken else name for name in fields] + figures
    rows = []
    for system, row in rows_by_system:
        cells = [system] if several else []
        cells += [row.get("id"), row.get("where"), row.get("context")]
        cells += [row.get("fields", {}).get(name) for name in fields]
        cells += [row.get(figure) for figure in figures]
        rows.append(cells)
    return Table(columns, rows)


def _shortened_cell(value: object, width: int) -> str:
    if isinstance(value, float):
        return f"{value:.{DEFAULT_DECIMALS}f}"
    if isinstance(value, list):  # a dialogue's turns
        value = " | ".join(str(turn) for turn in value)
    text = "" if value is None else str(value)
    return text if len(text) < width else text[: width - 2] + ".."


def format_per_set_table(report: dict, width: int = 40) -> str:
    """The printed per-set table: one row per set, its id (when the input has ids), context, the
    input's other fields and every per-set figure, each cell cut to under ``width`` characters."""
    rows = report["per_set"]
    figures = [key for key in rows[0] if key not in INPUT_KEYS] if rows else []
    fields = _unique(name for row in rows for name in row.get("fields", {}))
    show_id = any(row.get("id") is not None for row in rows)
    columns = (["id"] if show_id else []) + ["context"] + fields + figures
    cells = []
    for row in rows:
        line = [_shortened_cell(row.get("id"), width)] if show_id else []
        line.append(_shortened_cell(row.get("context") or "", width))
        line += [_shortened_cell(row.get("fields", {}).get(name), width) for name in fields]
        line += [_shortened_cell(row.get(figure), width) for figure in figures]
        cells.append(line)
    return render_table(Table(columns, cells), "text")


def format_report(report: dict, output_format: str, decimals: int = DEFAULT_DECIMALS) -> str:
    """The file text of ``report`` in ``output_format``: the whole report as JSON, else its summary
    table (with each figure's interval under ``--ci``); its HTML page is
    :func:`dialeval.cli.html_report.render_html_report`'s."""
    if output_format == "json":
        return json_text(report, f"the report of {report.get('input', 'the input')}")
    if output_format not in OUTPUT_FORMATS:
        raise ArgumentError(
            "output_format", f"must be one of {', '.join(OUTPUT_FORMATS)}, got {output_format!r}"
        )
    return render_table(summary_table(report), output_format, decimals)


def write_text(path: str | Path, text: str) -> Path:
    """The one place ``dialeval evaluate`` writes an output file: whole or not at all (a temporary
    file in the same folder, renamed into place; the folder made as needed), or written through
    for ``-``, a device or a FIFO (:func:`~dialeval.atomic_files.write_atomically`)."""
    return write_atomically(path, text)


def output_format_of(output: str | None, explicit: str | None) -> str:
    """The format of ``output``: its suffix (``.json .csv .md .markdown .tex``) or ``explicit``
    (``--output-format``); both must agree, and one must say it."""
    if explicit is not None and explicit not in OUTPUT_FORMATS:
        raise ArgumentError(
            "output_format", f"must be one of {', '.join(OUTPUT_FORMATS)}, got {explicit!r}"
        )
    by_suffix = FORMAT_OF_SUFFIX.get(Path(output).suffix.lower()) if output else None
    if by_suffix and explicit and by_suffix != explicit:
        raise ArgumentError(
            "output", f"{output!r} names a {by_suffix} file but `output_format` is {explicit}"
        )
    if output and not by_suffix and not explicit:
        raise ArgumentError(
            "output",
            f"{output!r}: cannot tell its format from its suffix "
            f"({', '.join(FORMAT_OF_SUFFIX)}); pass `output_format`",
        )
    return by_suffix or explicit or "json"


def default_report_path(source: str) -> Path:
    """Where an input's JSON report goes when ``--output`` does not say: beside the file (its suffix
    replaced by ``.diversity.json``) or folder; a Hub dataset id's in the working directory."""
    path = Path(source)
    if path.is_file():
        return path.with_suffix(".diversity.json")
    if path.is_dir():
        return path.parent / f"{path.name}.diversity.json"
    return Path(source.replace("/", "__") + ".diversity.json")


@dataclass(frozen=True)
class OutputPlan:
    """Every file ``dialeval evaluate`` writes. Per system (name -> path): its JSON ``reports`` and,
    for one input with a table format, that ``table``; for several inputs the ``comparison`` table
    (None: printed only); ``per_set_csv`` (one row per set of every system)."""

    output_format: str
    reports: dict[str, Path]
    table: Path | None = None
    comparison: Path | None = None
    per_set_csv: Path | None = None
    sources: dict[str, str] = field(default_factory=dict)

    def anchor(self, name: str) -> Path:
        """Where system ``name``'s lock and checkpoints go: beside its report, or, for a report
        written through (standard output, a device, a FIFO), beside its default report."""
        report = self.reports[name]
        if is_written_through(report) and name in self.sources:
            return default_report_path(self.sources[name])
        return report

    def paths(self) -> list[Path]:
        return [
            *self.reports.values(),
            *(p for p in (self.table, self.comparison, self.per_set_csv) if p is not None),
        ]

    @property
    def uses_standard_output(self) -> bool:
        """Whether an output goes to standard output (``-``, ``/dev/stdout``): the printed
        tables then go to standard error, so that standard output holds the file alone."""
        return any(str(path) == "-" or process_descriptor(path) == 1 for path in self.paths())


def plan_outputs(
    inputs: dict[str, str],
    output: str | None = None,
    output_format: str | None = None,
    per_set_csv: str | None = None,
) -> OutputPlan:
    """Where the outputs of ``inputs`` (system name -> input path) go.

    One input: ``output`` (default: :func:`default_report_path`, suffix by ``output_format``) in its
    format; a table format also writes the JSON report beside it (suffix ``.json``). Several inputs:
    ``output`` is the comparison table (JSON: its rows as objects) and each system's JSON report
    goes beside it as ``STEM.NAME.json`` (without ``output``: beside each input, and the comparison
    is printed only). ``output`` ``-`` is standard output (the JSON report, or the table or
    comparison in ``output_format``); the JSON reports a table on standard output has beside it go
    where they go without ``output``. No two outputs may share a path, nor an output be an input.
    """
    if output == "":
        raise ArgumentError(
            "output", "(-o) is an empty path: name a file, or - for standard output"
        )
    stdout = output == "-"
    if len(inputs) > 1 and output is None and output_format is not None:
        raise ArgumentError(
            "output_format",
            "names the comparison table's format: with several inputs it needs `output`",
        )
    table_format = output_format_of(None if stdout else output, output_format)
    per_set = Path(per_set_csv) if per_set_csv is not None else None
    if per_set is not None and Path(per_set).suffix.lower() != ".csv":
        raise ArgumentError("per_set_csv", f"{per_set_csv!r} must end with .csv")
    if len(inputs) == 1:
        ((name, source),) = inputs.items()
        main = (
            Path(output)
            if output
            else default_report_path(source).with_suffix(SUFFIX_OF_FORMAT[table_format])
        )
        report = main if table_format == "json" else main.with_suffix(".json")
        if stdout and table_format != "json":
            report = default_report_path(source)
        plan = OutputPlan(
            table_format,
            {name: report},
            table=None if table_format == "json" else main,
            per_set_csv=per_set,
            sources=dict(inputs),
        )
    else:
        comparison = Path(output) if output else None
        reports = {
            name: comparison.parent / f"{comparison.stem}.{name}.json"
            if comparison and not stdout
            else default_report_path(source)
            for name, source in inputs.items()
        }
        plan = OutputPlan(
            table_format,
            reports,
            comparison=comparison,
            per_set_csv=per_set,
            sources=dict(inputs),
        )
    _check_distinct(plan, inputs)
    return plan


def _check_distinct(plan: OutputPlan, inputs: dict[str, str]) -> None:
    seen: dict[Path, Path] = {}
    for path in plan.paths():
        if str(path) == "-":
            continue
        resolved = path.resolve()
        if resolved in seen:
            raise ArgumentError(
                "output",
                f"would have two outputs written to {str(path)!r}: name the outputs with `output`",
            )
        seen[resolved] = path
    for source in inputs.values():
        if Path(source).exists() and Path(source).resolve() in seen:
            raise ArgumentError(
                "output", f"would overwrite the input {source!r}: choose another `output`"
            )
