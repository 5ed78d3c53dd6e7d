"""``dialeval.cli.html_report``: the self-contained HTML page of an ``evaluate`` run.

The reports here are built by hand in the shape the job writes (a real report's keys, with the
intervals, drill-down and agreement of ``--ci``); ``test_html_report_browser.py`` opens the same
pages in a headless browser.
"""

from __future__ import annotations

import ast
import fnmatch
import importlib.util
import json
import random
import re
from html import escape
from html.parser import HTMLParser

import pytest
from conftest import REPO_ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from dialeval.cli.compare import comparison_table
from dialeval.cli.html_report import meta_eval_guidance, render_html_report

#: Text that would run, or break the page, if any of it reached the page unescaped.
HOSTILE = '<script>alert("x")</script><img src=x onerror="document.title=\'pwned\'">&amp;'
SECTIONS = (
    "summary",
    "differences",
    "guidance",
    "distributions",
    "agreement",
    "drill-down",
    "skipped",
    "provenance",
)
#: The elements the page is made of (the plots' SVG ones included); an input's text adds none.
ALLOWED_ELEMENTS = {
    *("html", "head", "meta", "link", "title", "style", "body", "header", "nav", "main"),
    *("section", "article", "details", "summary", "figure", "figcaption", "div", "p", "span"),
    *("h1", "h2", "h3", "h4", "h5", "ul", "ol", "li", "dl", "dt", "dd", "a", "code", "strong"),
    *("table", "caption", "thead", "tbody", "tfoot", "tr", "th", "td"),
    *("svg", "defs", "g", "path", "use", "text", "clippath", "rect"),
}
PER_SET_FIGURES = ("averaged_distinct_n", "sent_bert_diversity", "homogenization_bleu")
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
UNCERTAINTY = {"confidence": 0.95, "num_resamples": 1000, "seed": 0, "unit": "response set"}


def _interval(value: float, width: float = 0.01) -> dict:
    return {
        "low": value - width,
        "high": value + width,
        "method": "BCa bootstrap, 1000 resamples of response sets",
    }


def _set(index: int, rng: random.Random, shift: float) -> dict:
    return {
        "where": f"sets.jsonl:{index + 1}",
        "id": index,
        "context": [f"turn {index} {HOSTILE}", "how are you?"],
        "fields": {"note": HOSTILE},
        "averaged_distinct_n": 0.8 + shift + rng.random() / 10,
        "sent_bert_diversity": -0.3 + shift + rng.random() / 5,
        # undefined on one set: the page leaves it out of the plot
        "homogenization_bleu": None if index == 0 else rng.random() / 20,
    }


def _drill(rows: list[dict], figure: str, more_is_diverse: bool | None) -> dict:
    ranked = sorted((row for row in rows if row[figure] is not None), key=lambda row: row[figure])

    def entry(row: dict) -> dict:
        return {
            "index": row["id"],
            "id": row["id"],
            "where": row["where"],
            "context": row["context"],
            "responses": [f"response {HOSTILE}", "line one\nline two"],
            "value": row[figure],
        }

    low, high = [entry(row) for row in ranked[:2]], [entry(row) for row in ranked[-2:][::-1]]
    least, most = (high, low) if more_is_diverse is False else (low, high)
    return {"more_is_diverse": more_is_diverse, "least": least, "most": most}


def response_set_report(
    name: str, shift: float = 0.0, num_sets: int = 12, with_ci: bool = True
) -> dict:
    """A report over ``num_sets`` response sets of five responses, in the job's shape."""
    rng = random.Random(name)
    rows = [_set(index, rng, shift) for index in range(num_sets)]

    def mean(figure: str) -> float:
        values = [row[figure] for row in rows if row[figure] is not None]
        return sum(values) / len(values)

    metrics = {
        "lexical_diversity": {
            "scope": "response_set",
            "averaged_distinct_n": mean("averaged_distinct_n"),
        },
        "corpus_lexical_diversity": {
            "scope": "corpus",
            "distinct_1": 0.157 + shift,
            "num_tokens": 10493,
            "lf_counted_against": "the evaluated responses",
        },
        f"sent_bert_diversity[{MODEL}]": {
            "scope": "response_set",
            "sent_bert_diversity": mean("sent_bert_diversity"),
            "model": MODEL,
        },
        "homogenization_bleu": {
            "scope": "response_set",
            "homogenization_bleu": mean("homogenization_bleu"),
        },
    }
    report = {
        "scope": "response_set",
        "num_sets": num_sets,
        "num_responses": 5 * num_sets,
        "metrics": metrics,
        "skipped": [{"metric": "pos_templates", "reason": f"no tagger {HOSTILE}"}],
        "per_set": rows,
        "input": f"{name}.jsonl",
        "provenance": {
            "dialeval_version": "0.1.0",
            "command": "evaluate",
            "options": {"input": f"{name}.jsonl", "--ci": True, "--note": HOSTILE, "--seed": 0},
            "input": {"path": f"{name}.jsonl", "sha256": "ab" * 32},
            "models": {
                MODEL: {"id": MODEL, "path": "/models/minilm", "sha256": "cd" * 32, "package": "x"}
            },
        },
    }
    if with_ci:
        report["uncertainty"] = dict(UNCERTAINTY)
        for summary in metrics.values():
            summary["intervals"] = {
                figure: _interval(value)
                for figure, value in summary.items()
                if isinstance(value, float)
            }
        metrics["homogenization_bleu"]["intervals"]["homogenization_bleu"] = {
            "low": None,
            "high": None,
            "method": "BCa bootstrap",
            "undefined": "undefined on 3 resamples",
        }
        report["drill_down"] = {
            "averaged_distinct_n": _drill(rows, "averaged_distinct_n", True),
            "homogenization_bleu": _drill(rows, "homogenization_bleu", False),
        }
        report["agreement"] = {
            "method": "Spearman's rho over the sets",
            "figures": list(PER_SET_FIGURES),
            "rho": [[1.0, 0.42, -0.3], [0.42, 1.0, None], [-0.3, None, 1.0]],
        }
    return report


def corpus_report() -> dict:
    """A report over a one-response-per-line corpus: no per-set rows."""
    return {
        "scope": "corpus",
        "num_sets": None,
        "num_responses": 40,
        "metrics": {
            "corpus_lexical_diversity": {
                "scope": "corpus",
                "distinct_1": 0.31,
                "intervals": {"distinct_1": _interval(0.31)},
            }
        },
        "skipped": [],
        "input": "corpus.txt",
        "uncertainty": {**UNCERTAINTY, "unit": "response"},
        "provenance": {
            "dialeval_version": "0.1.0",
            "command": "evaluate",
            "options": {"input": "corpus.txt"},
            "input": {"path": "corpus.txt", "sha256": "ef" * 32},
            "models": {},
        },
    }


def comparison_of(reports: dict[str, dict], significant: set[str]) -> dict:
    """The comparison JSON of ``reports`` against the first, with a difference per figure column
    of each other system (significant where the column is in ``significant``)."""
    table = comparison_table(reports)
    baseline = next(iter(reports))
    systems = [
        {"system": row[0], "input": reports[row[0]]["input"], "report": f"{row[0]}.json"}
        | dict(zip(table.columns[1:], row[1:]))
        for row in table.rows
    ]
    figure_columns = table.columns[3:]
    intervals = {
        row[0]: {
            column: _interval(value)
            for column, value in zip(figure_columns, row[3:])
            if isinstance(value, float)
        }
        for row in table.rows
    }
    differences = [
        {
            "system": row[0],
            "baseline": baseline,
            "column": column,
            "metric": column,
            "figure": column,
            "difference": value - dict(zip(figure_columns, table.rows[0][3:]))[column],
            "low": 0.01,
            "high": 0.2,
            "p_value": 0.0004,
            "p_holm": 0.002 if column in significant else 0.3,
            "significant": column in significant,
            "paired": True,
            "method": "paired bootstrap over matched sets",
        }
        for row in table.rows[1:]
        for column, value in zip(figure_columns, row[3:])
        if isinstance(value, float)
    ]
    return {
        "systems": systems,
        "baseline": baseline,
        "uncertainty": dict(UNCERTAINTY),
        "intervals": intervals,
        "differences": differences,
        "pairing": {row[0]: "paired by context (12 of 12 sets)" for row in table.rows[1:]},
    }


def two_systems() -> tuple[dict[str, dict], dict]:
    reports = {"baseline": response_set_report("baseline"), "dtg": response_set_report("dtg", 0.05)}
    return reports, comparison_of(reports, significant={"averaged_distinct_n"})


def _section(page: str, key: str) -> str:
    match = re.search(rf'<section id="{key}".*?(?=<section id=|</main>)', page, re.DOTALL)
    assert match, key
    return match.group(0)


def _tables(page: str, table_id: str) -> list[str]:
    return re.findall(rf'<table id="{table_id}".*?</table>', page, re.DOTALL)


class _Elements(HTMLParser):
    """Every element's name and attributes names of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.add(tag)
        self.attributes |= {name for name, _ in attrs}


def elements(page: str) -> _Elements:
    parser = _Elements()
    parser.feed(page)
    return parser


def test_every_user_text_is_escaped():
    reports = {HOSTILE: response_set_report("one")}
    page = render_html_report(reports)
    found = elements(page)
    assert found.tags <= ALLOWED_ELEMENTS, found.tags - ALLOWED_ELEMENTS
    assert not [name for name in found.attributes if name.startswith("on")]
    assert escape(HOSTILE) in page  # the contexts, responses, fields, options and the name
    drill = _section(page, "drill-down")
    assert drill.count(escape(f"response {HOSTILE}")) == 2 * 2 * 2  # 2 figures x least/most x 2


def test_one_system_page_has_every_section_and_its_intervals():
    report = response_set_report("one")
    page = render_html_report({"one": report})
    for key in SECTIONS:
        assert f'<section id="{key}"' in page
    (table,) = _tables(page, "summary-table")
    assert table.count('<tr class="system">') == 1 and "baseline" not in table
    value = report["metrics"]["lexical_diversity"]["averaged_distinct_n"]
    assert f"{value:.3f} " in table and f"[{value - 0.01:.3f}, {value + 0.01:.3f}]" in table
    assert "[undefined: undefined on 3 resamples]" in table
    # the small homogenization figure keeps three significant digits
    small = report["metrics"]["homogenization_bleu"]["homogenization_bleu"]
    assert f">{small:.4f}" in table
    assert "nothing to compare" in _section(page, "differences")
    assert "1000 resamples of the response sets (seed 0)" in page
    assert page.count("<svg") == len(PER_SET_FIGURES)
    assert _section(page, "agreement").count('class="heatmap"') == 1


def test_several_systems_mark_the_significant_differences_only():
    reports, comparison = two_systems()
    page = render_html_report(reports, comparison)
    (table,) = _tables(page, "summary-table")
    rows = re.findall(r"<tr class=\"(?:baseline|system)\">.*?</tr>", table, re.DOTALL)
    assert len(rows) == 2 and "(baseline)" in rows[0]
    assert rows[1].count('class="mark up"') == 1 and "mark" not in rows[0]
    marked = re.search(
        r'<td class="num" title="([^"]*)">[^<]*<span class="ci"[^>]*>[^<]*</span>'
        r'<span class="mark up"',
        rows[1],
    )
    assert marked and "Holm p = 0.002" in marked.group(1) and "&amp;lt;" not in marked.group(1)
    (differences,) = _tables(page, "differences-table")
    assert differences.count('<tr><th scope="row">') == len(comparison["differences"])
    assert differences.count(">yes<") == 1
    assert "paired by context (12 of 12 sets)" in _section(page, "differences")
    assert page.count("<svg") == len(PER_SET_FIGURES)
    assert _section(page, "agreement").count('class="heatmap"') == 2


def test_several_systems_without_a_comparison_take_each_report_s_intervals():
    reports, _ = two_systems()
    page = render_html_report(reports)
    (table,) = _tables(page, "summary-table")
    value = reports["dtg"]["metrics"]["lexical_diversity"]["averaged_distinct_n"]
    assert f"[{value - 0.01:.3f}, {value + 0.01:.3f}]" in table
    assert "run <code>dialeval evaluate --ci</code>" in _section(page, "differences")


def test_a_corpus_page_has_every_section_and_no_plot():
    page = render_html_report({"corpus": corpus_report()})
    for key in SECTIONS:
        assert f'<section id="{key}"' in page
    assert "<svg" not in page
    assert "a corpus (one response per line)" in _section(page, "distributions")
    assert "[0.300, 0.320]" in _section(page, "summary")
    assert "of the responses (seed 0)" in page


def test_a_report_without_intervals_says_how_to_get_them():
    page = render_html_report({"one": response_set_report("one", with_ci=False)})
    assert "run <code>dialeval evaluate --ci</code> for them" in page
    body = re.search(r"<tbody>.*</tbody>", _tables(page, "summary-table")[0], re.DOTALL)
    assert "[" not in re.sub(r"<[^>]*>", "", body.group(0))
    assert "No drill-down" in page and "No agreement matrix" in page


@pytest.mark.parametrize(
    "make", [lambda: {"one": response_set_report("one")}, lambda: {"c": corpus_report()}]
)
def test_the_page_loads_nothing(make):
    reports = make()
    pages = [render_html_report(reports)]
    if len(reports) == 1 and "one" in reports:
        pages.append(render_html_report(*two_systems()))
    for page in pages:
        assert not re.search(r"""(?:src|href|action|data)\s*=\s*["']?\s*(?:https?:)?//""", page)
        assert not re.search(r"url\(\s*['\"]?(?!#)", page), "only in-page url(#id) references"
        assert (
            "@import" not in page and "<script" not in page and '<link rel="stylesheet' not in page
        )
        assert "default-src 'none'" in page  # the browser refuses any load that slipped in
        assert "nan" not in re.sub(r"<[^>]*>", "", page).lower().split()


def test_the_guidance_shows_each_measure_s_dectest_and_contest_rho():
    page = render_html_report({"one": response_set_report("one")})
    guidance = meta_eval_guidance()["measures"]
    table = _tables(page, "guidance-table")[0]
    for figure in PER_SET_FIGURES:
        rho = guidance[figure]["rho"]
        assert f"{rho['decTest']:.3f}" in table and f"{rho['conTest']:.3f}" in table
        # and in the comparison table's footer row, decTest / conTest
        assert f"{rho['decTest']:.3f} / {rho['conTest']:.3f}" in _section(page, "summary")
    assert "distinct_1" not in table  # a corpus figure was not meta-evaluated


def _benchmark_script(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_packaged_guidance_agrees_with_the_benchmark_results():
    """Rebuild it with ``.venv/bin/python benchmarks/meta_eval_guidance.py``."""
    script = _benchmark_script("meta_eval_guidance")
    packaged = REPO_ROOT / "dialeval" / "cli" / "meta_eval_guidance.json"
    assert packaged.read_text(encoding="utf-8") == script.guidance_text()
    guidance = json.loads(packaged.read_text(encoding="utf-8"))
    assert {"decTest", "conTest"} <= set(guidance["tests"])
    assert all("decTest" in entry["rho"] for entry in guidance["measures"].values())


def test_the_guidance_file_is_package_data():
    tree = ast.parse((REPO_ROOT / "setup.py").read_text(encoding="utf-8"))
    (call,) = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setup"
    ]
    (package_data,) = [k.value for k in call.keywords if k.arg == "package_data"]
    patterns = ast.literal_eval(package_data)["dialeval.cli"]
    assert any(fnmatch.fnmatch("meta_eval_guidance.json", pattern) for pattern in patterns)
    assert meta_eval_guidance()["measures"]


def test_no_report_is_refused():
    with pytest.raises(ValueError, match="at least one system"):
        render_html_report({})


def test_many_sets_keep_the_page_small():
    """A dot per set up to MAX_DOTS per system, then evenly spaced quantiles: the page does not
    grow with the sets (each dot is an SVG element)."""
    from dialeval.cli.html_report_plots import MAX_DOTS

    reports = {
        name: response_set_report(name, shift, num_sets=3 * MAX_DOTS, with_ci=False)
        for name, shift in (("a", 0.0), ("b", 0.1))
    }
    page = render_html_report(reports)
    plots = re.findall(r"<svg.*?</svg>", page, re.DOTALL)
    assert len(plots) == len(PER_SET_FIGURES)
    ticks = 40  # the axes' tick marks are <use> elements too
    assert all(2 * MAX_DOTS - 2 <= plot.count("<use ") <= 2 * MAX_DOTS + ticks for plot in plots)
    assert len(page) < 2_000_000


def test_no_two_elements_of_the_page_share_an_id():
    page = render_html_report(*two_systems())
    ids = re.findall(r'\sid="([^"]*)"', page)
    assert len(ids) == len(set(ids)) and len(ids) > 20
    # and every in-page reference (a plot's clip path or marker, a section link) finds its target
    references = set(re.findall(r'(?:href="|url\()#([^")]+)', page))
    assert references and references <= set(ids)


def _drill_only(text: str) -> dict:
    """A report whose one drill-down set holds ``text`` as its context and its response (no
    per-set rows: no plot, so a property runs fast)."""
    report = corpus_report()
    entry = {"index": 0, "id": text, "where": text, "context": [text], "responses": [text]}
    report["drill_down"] = {
        "averaged_distinct_n": {"more_is_diverse": True, "least": [entry], "most": []}
    }
    report["skipped"] = [{"metric": text, "reason": text}]
    return report


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.texts.append(data)


@settings(max_examples=30)
@given(
    st.text(
        alphabet=st.one_of(
            st.sampled_from("<>&\"'/=! -"),
            st.characters(blacklist_categories=("Cs", "Cc")),
        ),
        min_size=1,
    )
)
def test_any_text_reaches_the_page_as_text(text):
    page = render_html_report({"system": _drill_only(text)})
    found = elements(page)
    assert found.tags <= ALLOWED_ELEMENTS, found.tags - ALLOWED_ELEMENTS
    parser = _Text()
    parser.feed(page)
    # the context, the response and the skipped metric's name and reason, each whole
    assert sum(data == text for data in parser.texts) >= 3 or text.isspace()


def test_a_lone_surrogate_is_written_as_its_escape():
    page = render_html_report({"system": _drill_only("bad \udc80 byte")})
    page.encode("utf-8")
    assert "bad \\udc80 byte" in page
