"""``dialeval evaluate -o report.html``: one self-contained HTML page a researcher reads.

The page holds, in this order: the comparison table (a row per system, each figure with its
interval and a mark where it differs significantly from the baseline), the paired differences,
the per-set distributions (a plot per per-set figure, systems side by side), the
meta-evaluation's guidance per measure (its rho on Tevet & Berant's decTest and conTest, from
``meta_eval_guidance.json``, which ``benchmarks/meta_eval_guidance.py`` writes from
``benchmarks/RESULTS.md``), the agreement matrices, the drill-down sets, the skipped metrics and
the provenance.

Nothing on the page is fetched: the styles are inline, the plots inline SVG, there is no script,
and a Content-Security-Policy forbids every load, so the page reads the same offline, from a mail
attachment or an archive. Every text that comes from the input or the options (contexts,
responses, system names, paths) is HTML-escaped.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from html import escape
from importlib import resources

from dialeval import __version__
from dialeval.cli.compare import comparison_table
from dialeval.cli.report_formats import INPUT_KEYS, summary_rows

#: The columns of the comparison table that describe a system rather than score it.
_SYSTEM_COLUMNS = 3
#: The tests of the guidance the comparison table shows (the guidance section shows them all).
_TABLE_TESTS = ("decTest", "conTest")
_TEST_READING = {
    "decTest": "rho with the sampling temperature: tracks the form of the responses",
    "conTest": "rho with the content-diversity class: tracks their content",
    "McDiv": "rho with the content-diversity class on McDiv",
    "McDiv_nuggets": "rho on McDiv_nuggets, where content and words disagree",
}

_STYLE = """
:root { color-scheme: light; --ink: #1a1a1a; --muted: #5c5c5c; --rule: #c8c8c8; --band: #f3f5f8;
  --accent: #1f4e79; --up: #0b6e2f; --down: #a4161a; }
* { box-sizing: border-box; }
body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--ink); background: #fff; line-height: 1.45; }
header, main, nav { max-width: 90rem; margin: 0 auto; padding: 0 1.25rem; }
header { padding-top: 1.25rem; }
h1 { font-size: 1.6rem; margin: 0.2rem 0; }
h2 { font-size: 1.3rem; margin-top: 2.2rem; border-bottom: 2px solid var(--accent);
  padding-bottom: 0.2rem; }
h3 { font-size: 1.1rem; margin-top: 1.4rem; }
h4 { font-size: 1rem; margin: 0.8rem 0 0.3rem; }
h5 { font-size: 0.95rem; margin: 0.2rem 0; }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 0.4rem 1.2rem; }
a { color: var(--accent); }
a:focus, summary:focus, [tabindex]:focus { outline: 3px solid #f2a900; outline-offset: 2px; }
.note { color: var(--muted); }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 0.6rem 0; font-size: 0.9rem; }
caption { text-align: left; color: var(--muted); padding-bottom: 0.3rem; caption-side: top; }
th, td { border: 1px solid var(--rule); padding: 0.3rem 0.5rem; vertical-align: top; }
thead th { background: var(--band); }
th { text-align: left; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.ci { color: var(--muted); }
.undefined { color: var(--down); font-style: italic; white-space: normal; }
.mark { font-weight: bold; margin-left: 0.25rem; }
.mark.up { color: var(--up); }
.mark.down { color: var(--down); }
tr.baseline th { font-style: italic; }
#summary-table tbody th, #summary-table tfoot th { position: sticky; left: 0; background: #fff;
  z-index: 1; }
tr.guidance th, tr.guidance td { background: var(--band); font-size: 0.85rem; }
.plots { display: flex; flex-wrap: wrap; gap: 1rem; }
figure.plot { margin: 0; border: 1px solid var(--rule); padding: 0.4rem; background: #fff; }
figure.plot figcaption { font-size: 0.85rem; color: var(--muted); text-align: center; }
svg.plot-svg { max-width: 100%; height: auto; display: block; }
table.heatmap td { text-align: center; min-width: 3.5rem; }
.drill { display: grid; grid-template-columns: repeat(auto-fit, minmax(22rem, 1fr));
  gap: 1rem; }
article.set { border: 1px solid var(--rule); padding: 0.4rem 0.7rem; margin-bottom: 0.6rem; }
article.set ol { margin: 0.2rem 0; padding-left: 1.4rem; }
.turns li { color: var(--muted); }
.responses li { white-space: pre-wrap; overflow-wrap: anywhere; }
details { margin: 0.5rem 0; }
summary { cursor: pointer; font-weight: 600; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
  font-size: 0.85rem; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
"""

#: No load of any kind (no script, font, image or frame from anywhere); inline styles and data:
#: images only.
_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_SECTIONS = (
    ("summary", "Comparison table"),
    ("differences", "Differences from the baseline"),
    ("distributions", "Per-set distributions"),
    ("guidance", "Which measure to trust"),
    ("agreement", "Agreement between measures"),
    ("drill-down", "What drives each figure"),
    ("skipped", "Skipped metrics"),
    ("provenance", "Provenance"),
)


@lru_cache(maxsize=1)
def meta_eval_guidance() -> dict:
    """The packaged guidance: per per-set figure, its mean rho on each of Tevet & Berant's tests."""
    text = resources.files("dialeval.cli").joinpath("meta_eval_guidance.json").read_text("utf-8")
    return json.loads(text)


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _decimals(reference: float) -> int:
    """3 decimals, or as many as 3 significant digits of a smaller ``reference`` need."""
    if reference == 0 or abs(reference) >= 0.1:
        return 3
    return min(8, 2 - math.floor(math.log10(abs(reference))))


def _number(value: object, reference: object = None) -> str:
    """A figure as text: an int as is, a float with :func:`_decimals` of ``reference`` (so a
    value and its interval share their decimals), None or a non-finite float as undefined."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "undefined" if value is None else str(value)
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return "undefined"
    basis = reference if isinstance(reference, float) and math.isfinite(reference) else value
    return f"{value:.{_decimals(basis)}f}"


def _p(value: object) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "undefined"
    return "&lt; 0.001" if value < 0.001 else f"{value:.3f}"


def _interval_html(interval: dict | None, reference: object) -> str:
    if not interval:
        return ""
    if interval.get("undefined") or interval.get("low") is None or interval.get("high") is None:
        reason = interval.get("undefined") or "undefined"
        return f' <span class="undefined">[undefined: {_e(reason)}]</span>'
    low, high = _number(interval["low"], reference), _number(interval["high"], reference)
    return f' <span class="ci" title="{_e(interval.get("method", ""))}">[{low}, {high}]</span>'


def _column_keys(reports: dict[str, dict], columns: list[str]) -> dict[str, tuple[str, str]]:
    """Each figure column of :func:`comparison_table` -> its (metric, figure): the table's
    figure columns are the reports' distinct (metric, figure) pairs in report order."""
    keys = dict.fromkeys(
        (metric, figure)
        for report in reports.values()
        for metric, figure, _, _ in summary_rows(report)
    )
    return dict(zip(columns[_SYSTEM_COLUMNS:], keys))


def _report_interval(report: dict, key: tuple[str, str]) -> dict | None:
    metric, figure = key
    intervals = report.get("metrics", {}).get(metric, {}).get("intervals") or {}
    found = intervals.get(figure)
    return found if isinstance(found, dict) else None


def _guidance_title(figure: str) -> str:
    entry = meta_eval_guidance()["measures"].get(figure)
    if entry is None:
        return "not meta-evaluated (a corpus figure, or a measure without a per-set score)"
    rhos = ", ".join(
        f"{test} rho {rho:.3f}" for test, rho in entry["rho"].items() if rho is not None
    )
    model = f" with {entry['model']}" if entry["model"] else ""
    return f"meta-evaluation ({entry['measure']}{model}): {rhos}"


def _guidance_cell(figure: str) -> str:
    entry = meta_eval_guidance()["measures"].get(figure)
    if entry is None:
        return '<td class="num note">—</td>'
    cells = [entry["rho"].get(test) for test in _TABLE_TESTS]
    text = " / ".join("—" if rho is None else f"{rho:.3f}" for rho in cells)
    return f'<td class="num" title="{_e(_guidance_title(figure))}">{text}</td>'


def _difference_text(difference: dict) -> str:
    if difference.get("undefined") or difference.get("difference") is None:
        return f"difference undefined: {difference.get('undefined') or 'no value'}"
    value = difference["difference"]
    return (
        f"{difference['system']} - {difference['baseline']} = {_number(value)} "
        f"[{_number(difference.get('low'), value)}, {_number(difference.get('high'), value)}], "
        f"p = {_p(difference.get('p_value')).replace('&lt;', '<')}, "
        f"Holm p = {_p(difference.get('p_holm')).replace('&lt;', '<')}"
        f"{'' if difference.get('paired') else ', unpaired'}"
    )


def _mark(difference: dict | None) -> str:
    if not difference or not difference.get("significant"):
        return ""
    up = (difference.get("difference") or 0) > 0
    text = _difference_text(difference)
    return (
        f'<span class="mark {"up" if up else "down"}" title="{_e(text)}" '
        f'aria-label="significantly {"higher" if up else "lower"} than the baseline: {_e(text)}"'
        f">{'▲' if up else '▼'}</span>"
    )


def _uncertainty_note(reports: dict[str, dict], comparison: dict | None) -> str:
    uncertainty = (comparison or {}).get("uncertainty") or next(
        (report["uncertainty"] for report in reports.values() if report.get("uncertainty")), None
    )
    if not uncertainty:
        return "No intervals: run <code>dialeval evaluate --ci</code> for them."
    confidence = uncertainty.get("confidence", 0.95)
    return (
        f"Intervals: {_e(f'{100 * confidence:g}')}% intervals from "
        f"{_e(uncertainty.get('num_resamples'))} resamples of the {_e(uncertainty.get('unit'))}s "
        f"(seed {_e(uncertainty.get('seed'))}): the bootstrap for a per-set figure, subsamples "
        "without replacement for a figure recomputed on the whole input; a cell's tooltip names "
        "its method."
    )


def _summary_section(reports: dict[str, dict], comparison: dict | None) -> str:
    table = comparison_table(reports)
    keys = _column_keys(reports, table.columns)
    baseline = (comparison or {}).get("baseline") or next(iter(reports))
    intervals = (comparison or {}).get("intervals") or {}
    differences = {
        (entry.get("system"), entry.get("column")): entry
        for entry in (comparison or {}).get("differences") or []
    }
    head = "".join(
        f'<th scope="col" title="{_e(_guidance_title(keys[column][1]))}">{_e(column)}</th>'
        if column in keys
        else f'<th scope="col">{_e(column)}</th>'
        for column in table.columns
    )
    several = len(reports) > 1
    body = []
    for row in table.rows:
        system = row[0]
        is_baseline = several and system == baseline
        label = _e(system) + (' <span class="note">(baseline)</span>' if is_baseline else "")
        cells = [f'<th scope="row">{label}</th>']
        cells += [
            f'<td class="num">{_e(_number(value)) if value is not None else ""}</td>'
            for value in row[1:_SYSTEM_COLUMNS]
        ]
        for column, value in zip(table.columns[_SYSTEM_COLUMNS:], row[_SYSTEM_COLUMNS:]):
            if value is None:
                cells.append('<td class="num note">—</td>')
                continue
            interval = intervals.get(system, {}).get(column) or _report_interval(
                reports[system], keys[column]
            )
            difference = differences.get((system, column))
            title = f' title="{_e(_difference_text(difference))}"' if difference else ""
            text = _e(_number(value)) if isinstance(value, (int, float)) else _e(value)
            cells.append(
                f'<td class="num"{title}>{text}{_interval_html(interval, value)}'
                f"{_mark(difference)}</td>"
            )
        body.append(f'<tr class="{"baseline" if is_baseline else "system"}">{"".join(cells)}</tr>')
    guidance = '<tr class="guidance"><th scope="row">meta-eval rho: decTest / conTest</th>'
    guidance += '<td class="note"></td>' * (_SYSTEM_COLUMNS - 1)
    guidance += "".join(
        _guidance_cell(keys[column][1]) for column in table.columns[_SYSTEM_COLUMNS:]
    )
    guidance += "</tr>"
    if not several:
        caption = "The summary figures of the one system."
    elif differences:
        caption = (
            "A row per system; ▲ / ▼: significantly above / below the baseline "
            f"<strong>{_e(baseline)}</strong> after Holm's correction (the tooltip gives the "
            "difference, its interval, p and Holm p)."
        )
    else:
        caption = f"A row per system; the baseline is <strong>{_e(baseline)}</strong>."
    return (
        f'<p class="note">{_uncertainty_note(reports, comparison)}</p>'
        f'<div class="scroll" tabindex="0" role="region" aria-label="comparison table">'
        f'<table id="summary-table"><caption>{caption}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
        f"<tfoot>{guidance}</tfoot></table></div>"
    )


def _differences_section(reports: dict[str, dict], comparison: dict | None) -> str:
    if len(reports) < 2:
        return '<p class="note">One system: nothing to compare.</p>'
    differences = (comparison or {}).get("differences")
    if not differences:
        return (
            '<p class="note">No tests of the differences: run <code>dialeval evaluate --ci</code> '
            "with several systems for them.</p>"
        )
    pairing = (comparison or {}).get("pairing") or {}
    pairs = "".join(
        f"<li><strong>{_e(system)}</strong>: {_e(how)}</li>" for system, how in pairing.items()
    )
    rows = []
    for entry in differences:
        value = entry.get("difference")
        if entry.get("undefined") or value is None:
            numbers = (
                f'<td class="undefined" colspan="4">undefined: {_e(entry.get("undefined"))}</td>'
            )
        else:
            numbers = (
                f'<td class="num">{_e(_number(value))}</td>'
                f'<td class="num">[{_e(_number(entry.get("low"), value))}, '
                f"{_e(_number(entry.get('high'), value))}]</td>"
                f'<td class="num">{_p(entry.get("p_value"))}</td>'
                f'<td class="num">{_p(entry.get("p_holm"))}</td>'
            )
        significant = "yes" + _mark(entry) if entry.get("significant") else "no"
        rows.append(
            f'<tr><th scope="row">{_e(entry.get("system"))}</th><td>{_e(entry.get("column"))}</td>'
            f"{numbers}<td>{significant}</td><td>{'paired' if entry.get('paired') else 'unpaired'}"
            f'</td><td class="note">{_e(entry.get("method", ""))}</td></tr>'
        )
    return (
        (
            f"<p>How each system's sets were matched to the baseline's:</p><ul>{pairs}</ul>"
            if pairs
            else ""
        )
        + '<div class="scroll" tabindex="0" role="region" aria-label="differences">'
        '<table id="differences-table"><caption>Each system minus the baseline, per figure: '
        "the difference, its interval, the p-value of no difference and its Holm correction "
        'over the table\'s figures.</caption><thead><tr><th scope="col">system</th>'
        '<th scope="col">figure</th><th scope="col">difference</th><th scope="col">interval</th>'
        '<th scope="col">p</th><th scope="col">Holm p</th><th scope="col">significant</th>'
        '<th scope="col">pairing</th><th scope="col">method</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _rho_cell(rho: float | None) -> str:
    return f'<td class="num">{"—" if rho is None else f"{rho:.3f}"}</td>'


def _guidance_section(reports: dict[str, dict]) -> str:
    guidance = meta_eval_guidance()
    tests = guidance["tests"]
    figures = dict.fromkeys(
        figure for report in reports.values() for _, figure, _, _ in summary_rows(report)
    )
    measured = [figure for figure in figures if figure in guidance["measures"]]
    head = "".join(
        f'<th scope="col" title="{_e(_TEST_READING.get(test, ""))}">{_e(test)} rho</th>'
        for test in tests
    )
    rows = []
    for figure in measured:
        entry = guidance["measures"][figure]
        rhos = "".join(_rho_cell(entry["rho"].get(test)) for test in tests)
        reading = (
            "lower is more diverse (negated in rho)"
            if entry["homogeneity"]
            else "higher is more diverse"
        )
        model = f" ({_e(entry['model'])})" if entry["model"] else ""
        rows.append(
            f'<tr><th scope="row">{_e(figure)}</th>'
            f"<td><code>{_e(entry['measure'])}</code>{model}</td>{rhos}<td>{reading}</td></tr>"
        )
    human = guidance.get("human") or {}
    if human:
        rhos = "".join(_rho_cell(human["rho"].get(test)) for test in tests)
        rows.append(
            '<tr class="guidance"><th scope="row">human score</th>'
            f"<td><code>{_e(human['measure'])}</code></td>{rhos}"
            "<td>human ratings, on the rated subset</td></tr>"
        )
    readings = "".join(
        f"<li><strong>{_e(test)}</strong>: {_e(_TEST_READING.get(test, ''))}</li>" for test in tests
    )
    note = (
        "" if measured else '<p class="note">None of this report\'s figures was meta-evaluated.</p>'
    )
    return (
        "<p>How well each measure of this report tracked diversity in the meta-evaluation: "
        f"{_e(guidance['statistic'])} ({_e(guidance['source'])}, {_e(guidance['date'])}). "
        "Compare systems on form with a measure high on decTest, on content with one high on "
        "conTest, and report both.</p>"
        f"<ul>{readings}</ul>{note}"
        '<div class="scroll" tabindex="0" role="region" aria-label="meta-evaluation guidance">'
        '<table id="guidance-table"><thead><tr><th scope="col">figure</th>'
        f'<th scope="col">meta-eval measure</th>{head}<th scope="col">reading</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _per_set_figures(reports: dict[str, dict]) -> list[str]:
    """Every per-set figure of any system, in report order."""
    return list(
        dict.fromkeys(
            key
            for report in reports.values()
            for row in report.get("per_set") or []
            for key, value in row.items()
            if key not in INPUT_KEYS
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
        )
    )


def _distributions_section(reports: dict[str, dict]) -> str:
    figures = _per_set_figures(reports)
    if not figures:
        return (
            '<p class="note">No per-set figures: a corpus (one response per line) is scored as a '
            "whole.</p>"
        )
    # plots: matplotlib loads only when a page is rendered, never at the CLI's start-up
    from dialeval.cli.html_report_plots import MAX_DOTS, distribution_svg, finite_values

    plots = []
    for index, figure in enumerate(figures):
        values = {
            system: finite_values(report.get("per_set") or [], figure)
            for system, report in reports.items()
        }
        svg = distribution_svg(figure, values, salt=f"dialeval-plot-{index}")
        plots.append(
            f'<figure class="plot" data-figure="{_e(figure)}">{svg}'
            f"<figcaption>{_e(figure)}</figcaption></figure>"
        )
    return (
        f'<p class="note">A plot per per-set figure: a box per system (median, quartiles, '
        f"whiskers at 1.5 times the interquartile range), a dot per set (at most {MAX_DOTS} "
        f'per system: evenly spaced quantiles of more sets).</p><div class="plots">'
        f"{''.join(plots)}</div>"
    )


def _heat(rho: object) -> str:
    """A cell's background: blue for agreement, red for disagreement, paler near 0 (light
    enough everywhere for black text)."""
    if not isinstance(rho, (int, float)) or isinstance(rho, bool) or not math.isfinite(rho):
        return "background:#eeeeee"
    strength = min(1.0, abs(rho))
    target = (107, 174, 214) if rho >= 0 else (239, 138, 128)
    red, green, blue = (round(255 + (channel - 255) * strength) for channel in target)
    return f"background:rgb({red},{green},{blue})"


def _agreement_table(system: str, agreement: dict) -> str:
    figures = agreement.get("figures") or []
    matrix = agreement.get("rho") or []
    head = "".join(f'<th scope="col">{_e(figure)}</th>' for figure in figures)
    rows = []
    for figure, values in zip(figures, matrix):
        cells = "".join(
            f'<td style="{_heat(rho)}" title="{_e(figure)} vs {_e(other)}">'
            f"{_e(_number(rho)) if rho is not None else '—'}</td>"
            for other, rho in zip(figures, values)
        )
        rows.append(f'<tr><th scope="row">{_e(figure)}</th>{cells}</tr>')
    return (
        f'<div class="scroll" tabindex="0" role="region" aria-label="agreement of {_e(system)}">'
        f'<table class="heatmap" data-system="{_e(system)}"><caption>{_e(system)}: '
        f"{_e(agreement.get('method', 'rank correlation'))} between the per-set figures "
        "(blue: they rank sets alike; red: they disagree; — undefined)</caption>"
        f"<thead><tr><td></td>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _agreement_section(reports: dict[str, dict]) -> str:
    tables = [
        _agreement_table(system, report["agreement"])
        for system, report in reports.items()
        if report.get("agreement")
    ]
    if not tables:
        return (
            '<p class="note">No agreement matrix: it needs at least two per-set figures over '
            "response sets.</p>"
        )
    return "".join(tables)


def _context_html(context: object) -> str:
    if isinstance(context, list):
        turns = "".join(f"<li>{_e(turn)}</li>" for turn in context)
        return f'<ol class="turns" aria-label="context">{turns}</ol>'
    if context in (None, ""):
        return '<p class="note">(no context)</p>'
    return f'<p class="turns">{_e(context)}</p>'


def _set_html(entry: dict, reference: object) -> str:
    responses = "".join(f"<li>{_e(response)}</li>" for response in entry.get("responses") or [])
    where = entry.get("where")
    place = f' · <span class="mono">{_e(where)}</span>' if where else ""
    return (
        f'<article class="set"><h5>{_e(_number(entry.get("value"), reference))} · '
        f"set {_e(entry.get('id', entry.get('index')))}{place}</h5>"
        f"<div><strong>context</strong>{_context_html(entry.get('context'))}</div>"
        f'<div><strong>responses</strong><ol class="responses">{responses}</ol></div></article>'
    )


def _drill_html(figure: str, drill: dict) -> str:
    direction = drill.get("more_is_diverse")
    if direction is None:
        names, reading = ("lowest values", "highest values"), "direction unknown"
    else:
        names = ("least diverse", "most diverse")
        reading = "higher is more diverse" if direction else "lower is more diverse"
    groups = "".join(
        f"<section><h4>{name}</h4>"
        + "".join(_set_html(entry, entry.get("value")) for entry in drill.get(key) or [])
        + "</section>"
        for name, key in zip(names, ("least", "most"))
    )
    return (
        f'<details><summary>{_e(figure)} <span class="note">({reading})</span></summary>'
        f'<div class="drill">{groups}</div></details>'
    )


def _drill_down_section(reports: dict[str, dict]) -> str:
    parts = []
    for system, report in reports.items():
        drills = report.get("drill_down") or {}
        if drills:
            parts.append(f"<h3>{_e(system)}</h3>")
            parts += [_drill_html(figure, drill) for figure, drill in drills.items()]
    if not parts:
        return '<p class="note">No drill-down: it needs per-set figures over response sets.</p>'
    return (
        "<p>The least and most diverse sets per figure, with their context and responses.</p>"
        + "".join(parts)
    )


def _skipped_section(reports: dict[str, dict]) -> str:
    items = [
        f"<li><strong>{_e(system)}</strong>: <code>{_e(entry.get('metric'))}</code>: "
        f"{_e(entry.get('reason'))}</li>"
        for system, report in reports.items()
        for entry in report.get("skipped") or []
    ]
    return f"<ul>{''.join(items)}</ul>" if items else '<p class="note">No metric was skipped.</p>'


def _facts(pairs: list[tuple[str, object]]) -> str:
    rows = "".join(
        f'<dt>{_e(name)}</dt><dd class="mono">{_e(value)}</dd>'
        for name, value in pairs
        if value is not None
    )
    return f'<dl class="facts">{rows}</dl>'


def _provenance_html(system: str, report: dict) -> str:
    provenance = report.get("provenance") or {}
    given = provenance.get("input") or {}
    uncertainty = report.get("uncertainty") or {}
    facts = _facts(
        [
            ("dialeval", provenance.get("dialeval_version")),
            ("command", provenance.get("command")),
            ("input", given.get("path", report.get("input"))),
            ("input sha256", given.get("sha256")),
            ("scope", report.get("scope")),
            ("response sets", report.get("num_sets")),
            ("responses", report.get("num_responses")),
            ("resampling seed", uncertainty.get("seed")),
            ("resamples", uncertainty.get("num_resamples")),
            ("confidence", uncertainty.get("confidence")),
            ("resampled unit", uncertainty.get("unit")),
        ]
    )
    models = "".join(
        f'<tr><th scope="row">{_e(model.get("id", name))}</th>'
        f'<td class="mono">{_e(model.get("sha256", ""))}</td>'
        f'<td class="mono">{_e(model.get("path", ""))}</td>'
        f"<td>{_e(model.get('package', ''))}</td></tr>"
        for name, model in (provenance.get("models") or {}).items()
    )
    model_table = (
        '<div class="scroll"><table><thead><tr><th scope="col">model</th>'
        '<th scope="col">sha256</th><th scope="col">path</th><th scope="col">package</th>'
        f"</tr></thead><tbody>{models}</tbody></table></div>"
        if models
        else '<p class="note">No model ran.</p>'
    )
    options = "".join(
        f'<tr><th scope="row" class="mono">{_e(flag)}</th>'
        f'<td class="mono">{_e(json.dumps(value, ensure_ascii=False))}</td></tr>'
        for flag, value in (provenance.get("options") or {}).items()
    )
    return (
        f"<h3>{_e(system)}</h3>{facts}<h4>Models</h4>{model_table}"
        f"<details><summary>Options</summary><table><tbody>{options}</tbody></table></details>"
    )


def _provenance_section(reports: dict[str, dict]) -> str:
    return "".join(_provenance_html(system, report) for system, report in reports.items())


def _counts(report: dict) -> str:
    if report.get("scope") == "corpus":
        return f"a corpus of {report.get('num_responses')} responses"
    return f"{report.get('num_sets')} response sets, {report.get('num_responses')} responses"


def render_html_report(reports: dict[str, dict], comparison: dict | None = None) -> str:
    """The HTML page of one ``dialeval evaluate`` run: ``reports`` (system name -> its JSON
    report, in the systems' order) and, for several systems, the ``comparison`` JSON (None for
    one). Self-contained: nothing on the page loads anything."""
    if not reports:
        raise ValueError("an HTML report needs at least one system's report")
    sections = {
        "summary": _summary_section(reports, comparison),
        "differences": _differences_section(reports, comparison),
        "guidance": _guidance_section(reports),
        "distributions": _distributions_section(reports),
        "agreement": _agreement_section(reports),
        "drill-down": _drill_down_section(reports),
        "skipped": _skipped_section(reports),
        "provenance": _provenance_section(reports),
    }
    systems = list(reports)
    title = "dialeval report: " + (" vs ".join(systems) if len(systems) > 1 else systems[0])
    subtitle = "; ".join(
        f"{_e(system) + ': ' if len(systems) > 1 else ''}{_e(report.get('input', ''))}, "
        f"{_e(_counts(report))}"
        for system, report in reports.items()
    )
    navigation = "".join(f'<li><a href="#{key}">{_e(name)}</a></li>' for key, name in _SECTIONS)
    body = "".join(
        f'<section id="{key}" aria-labelledby="{key}-title"><h2 id="{key}-title">{_e(name)}</h2>'
        f"{sections[key]}</section>"
        for key, name in _SECTIONS
    )
    page = (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="dialeval {_e(__version__)}">'
        '<link rel="icon" href="data:,">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head>\n"
        f'<body><header><h1>{_e(title)}</h1><p class="note">{subtitle}</p></header>'
        f'<nav aria-label="sections"><ul>{navigation}</ul></nav>'
        f"<main>{body}</main></body></html>\n"
    )
    # a lone surrogate (an input may hold one) has no UTF-8: shown as its escape, \udc80
    return page.encode("utf-8", "backslashreplace").decode("utf-8")
