"""Text a user reads says what the code does: no tracker numbers, no narrated history.

The package folders, the docs, the metric and dataset cards, the README and the other top-level
pages, the examples and the tests are scanned line by line. A tracker reference ("issue 27",
"#36", "the tracker", "the issue's target") means nothing to a reader of the released package,
and a comment that narrates history ("the old loop", "as before", "no longer") describes code
that is gone. CHANGELOG.md is where history belongs, so it is not scanned here (its own test,
test_changelog.py, checks its layout). An external project's issue cited by its URL is a
citation, so URLs are removed from a line before it is checked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCANNED_FOLDERS = (
    "dialeval",
    "metrics",
    "generation",
    "trainers",
    "datasets_scripts",
    "docs",
    "examples",
    "tests",
)
SCANNED_FILES = ("README.md", "PYPI.md", "ARCHITECTURE.md", "CONTRIBUTING.md", "setup.py")
SUFFIXES = {".py", ".md"}
#: Data the tests read (released corpora, pinned references), not text anyone wrote about the code.
SKIPPED_FOLDERS = {"__pycache__", "data"}

URL = re.compile(r"https?://\S+")

TRACKER_PATTERNS = {
    "a tracker number": re.compile(r"\bissues?\s*#?\d+\b", re.IGNORECASE),
    "a #number": re.compile(r"(?<![\w&/#\\])#\d+\b"),
    "the tracker": re.compile(r"\btracker\b", re.IGNORECASE),
    "the issue's": re.compile(r"\bthe issue'?s\b", re.IGNORECASE),
}

HISTORY_PATTERNS = {
    phrase: re.compile(rf"\b{phrase}\b", re.IGNORECASE)
    for phrase in (
        r"the old (?:loop|code|search|argmax|default|implementation|behaviou?r|version)",
        r"as before",
        r"previously",
        r"used to (?:be|surface|skip|run|raise|return|give|accept|refuse|crash)",
        r"no longer",
        r"now does",
        r"was changed",
        r"were changed",
        r"before the fix",
        r"after the fix",
    )
}

#: (file, text) pairs where a pattern matches words that are not about this code's history.
ALLOWED = {
    # a line of EmpatheticDialogues' CSV, the dataset's own words
    ("tests/datasets_scripts/test_empathetic_dialogues.py", "We no longer talk."),
}


def scanned_paths() -> list[Path]:
    paths = [ROOT / name for name in SCANNED_FILES]
    for folder in SCANNED_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            relative = path.relative_to(ROOT)
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            if SKIPPED_FOLDERS.intersection(relative.parts[:-1]):
                continue
            paths.append(path)
    return [path for path in paths if path.resolve() != Path(__file__).resolve()]


def findings(patterns: dict[str, re.Pattern[str]]) -> list[str]:
    found = []
    for path in scanned_paths():
        relative = path.relative_to(ROOT).as_posix()
        allowed = [text for name, text in ALLOWED if name == relative]
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if any(text in line for text in allowed):
                continue
            without_urls = URL.sub("", line)
            for what, pattern in patterns.items():
                match = pattern.search(without_urls)
                if match:
                    found.append(f"{relative}:{number}: {what}: {match.group(0)!r}")
    return found


def test_the_scan_reads_the_package_docs_cards_and_tests():
    relative = {path.relative_to(ROOT).as_posix() for path in scanned_paths()}
    for expected in (
        "README.md",
        "dialeval/validation.py",
        "metrics/lexical_diversity/README.md",
        "docs/index.md",
        "tests/root/test_text.py",
    ):
        assert expected in relative


@pytest.mark.parametrize(
    "line, flagged",
    [
        ("# see issue 27", True),
        ("fixed in Issue #36", True),
        ("closes #12", True),
        ("the issue's 5x target", True),
        ("see https://github.com/huggingface/evaluate/issues/123", False),
        ('MODEL = "runs/50%_best&final#2"', False),
        ('"&#769;"', False),
        ("an issue a user may hit", False),
    ],
)
def test_the_tracker_patterns(line, flagged):
    without_urls = URL.sub("", line)
    assert any(p.search(without_urls) for p in TRACKER_PATTERNS.values()) is flagged


def test_no_tracker_numbers():
    assert findings(TRACKER_PATTERNS) == []


def test_no_history_narration():
    assert findings(HISTORY_PATTERNS) == []
