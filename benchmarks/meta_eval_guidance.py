"""The meta-evaluation's guidance, shipped with the package: ``dialeval/cli/meta_eval_guidance.json``.

``dialeval evaluate -o report.html`` shows, for each per-set measure, how well it tracked
diversity on Tevet & Berant's test sets: the mean Spearman rho over the three tasks of each test
of this folder's ``RESULTS.md`` section ``meta_eval_table`` (decTest: rho with the sampling
temperature; conTest, McDiv, McDiv_nuggets: rho with the content-diversity class), in the
diversity reading (homogeneity measures negated). ``benchmarks/`` is not in the installed package,
so this script reads the section's tables and writes the numbers into the package, keyed by the
report's per-set figure name (``SetScorer.figure`` of the ``dialeval meta-eval --metric`` name).
``tests/cli/test_html_report.py`` checks that the file agrees with ``RESULTS.md``.

Command (after ``meta_eval_table.py`` rewrites its section)::

    .venv/bin/python benchmarks/meta_eval_guidance.py
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _report

from dialeval.metrics.registry import SET_SCORERS

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
GUIDANCE = Path(__file__).resolve().parents[1] / "dialeval" / "cli" / "meta_eval_guidance.json"
HUMAN_ROW = "absHDS"
#: A test's heading (``### decTest (configs): ...``) -> its key in the JSON.
_HEADING = re.compile(r"^### (\S+) \(")
_ROW = re.compile(r"^\| `([^`]+)`( †)? \|(.*)\|$")
_DATE = re.compile(r"^- Date: (\S+)$")


def _mean_rho(cell: str) -> float | None:
    """The rho of a ``mean`` cell (``0.855`` or ``0.417 / 0.709``, rho / OCA); None when blank."""
    cell = cell.strip()
    return float(cell.split("/")[0]) if cell else None


def guidance_from_results(text: str) -> dict:
    """The guidance JSON from RESULTS.md's text: per figure, its measure, the model it was
    meta-evaluated with, whether it is a homogeneity measure, and the mean rho of each test."""
    start, end = _report.section_markers("meta_eval_table")
    section = text[text.index(start) : text.index(end)].splitlines()
    tests: list[str] = []
    measures: dict[str, dict] = {}
    human: dict[str, float | None] = {}
    date = None
    test = None
    for line in section:
        if heading := _HEADING.match(line):
            test = heading.group(1)
            tests.append(test)
        elif (date_line := _DATE.match(line)) is not None:
            date = date_line.group(1)
        elif (row := _ROW.match(line)) is not None and test is not None:
            label, dagger, cells = row.groups()
            rho = _mean_rho(cells.split("|")[-1])
            if label == HUMAN_ROW:
                human[test] = rho
                continue
            name, _, model = label.partition("[")
            figure = SET_SCORERS[name].figure
            entry = measures.setdefault(
                figure,
                {
                    "measure": name,
                    "model": model.rstrip("]") or None,
                    "homogeneity": bool(dagger),
                    "rho": {},
                },
            )
            entry["rho"][test] = rho
    return {
        "source": "benchmarks/RESULTS.md, section meta_eval_table",
        "date": date,
        "statistic": (
            "mean Spearman rho over storyGen, respGen and promptGen (Tevet & Berant's test "
            "sets), in the diversity reading: a homogeneity measure is negated, so higher is "
            "better for every measure"
        ),
        "tests": tests,
        "measures": measures,
        "human": {"measure": HUMAN_ROW, "rho": human},
    }


def guidance_text(results: Path = RESULTS) -> str:
    """The JSON file's text, as this script writes it."""
    guidance = guidance_from_results(results.read_text(encoding="utf-8"))
    return json.dumps(guidance, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    GUIDANCE.write_text(guidance_text(), encoding="utf-8")
    print(f"wrote {GUIDANCE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
