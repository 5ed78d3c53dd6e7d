"""The HTML report in a real browser: Debian's headless chromium, driven by selenium.

The page must load with no console error, show the comparison table and every plot, and run
none of the scripts its input holds; a screenshot is kept as a test artifact
(``build/test-artifacts/html_report.png``). Where chromium, chromedriver or selenium is missing
the test is skipped, saying how to get them (``.ci/run`` installs them, so CI always runs it).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO_ROOT
from headless_chromium import headless_chromium, missing
from test_html_report import PER_SET_FIGURES, corpus_report, two_systems

from dialeval.cli.html_report import render_html_report

ARTIFACTS = REPO_ROOT / "build" / "test-artifacts"


@pytest.fixture(scope="module")
def browser():
    reason = missing()
    if reason:
        pytest.skip(reason)
    with headless_chromium() as driver:
        yield driver


def _open(driver, page: str, path: Path) -> list[dict]:
    """Load ``page`` from ``path``; the browser's console entries it logged."""
    path.write_text(page, encoding="utf-8")
    driver.get_log("browser")  # what an earlier page logged
    driver.get(path.as_uri())
    driver.execute_script("return document.readyState")  # the load has finished
    return driver.get_log("browser")


def _count(driver, selector: str) -> int:
    return driver.execute_script("return document.querySelectorAll(arguments[0]).length", selector)


def _drawn(driver, selector: str) -> list[float]:
    """The rendered width of each element ``selector`` matches (0 when not drawn)."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]))"
        ".map(e => e.getBoundingClientRect().width * e.getBoundingClientRect().height)",
        selector,
    )


def test_the_report_loads_with_no_error_and_shows_its_table_and_plots(browser, tmp_path):
    reports, comparison = two_systems()
    errors = _open(browser, render_html_report(reports, comparison), tmp_path / "report.html")
    assert [entry for entry in errors if entry["level"] == "SEVERE"] == []
    assert browser.title == "dialeval report: baseline vs dtg"  # no script of the input ran
    assert _count(browser, "#summary-table tbody tr") == len(reports)
    assert _count(browser, "#summary-table .mark.up") == 1
    assert _count(browser, "#differences-table tbody tr") == len(comparison["differences"])
    plots = _drawn(browser, "figure.plot svg")
    assert len(plots) == len(PER_SET_FIGURES) and all(area > 0 for area in plots)
    heatmaps = _drawn(browser, "table.heatmap")
    assert len(heatmaps) == len(reports) and all(area > 0 for area in heatmaps)
    assert _count(browser, "table.heatmap tbody td") == len(reports) * len(PER_SET_FIGURES) ** 2
    assert _count(browser, "#guidance-table tbody tr") >= len(PER_SET_FIGURES)
    assert _count(browser, "script") == 0
    for section in ("summary", "distributions", "agreement", "drill-down", "provenance"):
        assert _drawn(browser, f"#{section}")[0] > 0, section
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(ARTIFACTS / "html_report.png"))


def test_a_corpus_report_loads_with_no_error(browser, tmp_path):
    errors = _open(browser, render_html_report({"corpus": corpus_report()}), tmp_path / "c.html")
    assert [entry for entry in errors if entry["level"] == "SEVERE"] == []
    assert _count(browser, "#summary-table tbody tr") == 1
    assert _count(browser, "figure.plot") == 0


def test_a_load_the_page_would_make_is_a_console_error(browser, tmp_path):
    """The check above has teeth: anything the page tried to fetch is refused by its policy, and
    the refusal is a SEVERE console entry."""
    page = render_html_report({"corpus": corpus_report()})
    fetching = page.replace("</main>", '<img alt="" src="https://example.invalid/x.png"></main>')
    errors = _open(browser, fetching, tmp_path / "fetching.html")
    assert [entry for entry in errors if entry["level"] == "SEVERE"]
