"""CHANGELOG.md keeps Keep a Changelog's layout (https://keepachangelog.com/en/1.1.0/).

Each release (``## [X.Y.Z]`` or ``## [Unreleased]``) groups its entries under the standard
categories only, each at most once and in the standard order, so a reader finds what was added,
changed, deprecated, removed, fixed or secured in the same place in every release. The topic of an
entry is its bold lead-in, not a heading of its own. History belongs here, numbers of
issues do not: a reader of the released package cannot look them up.
"""

from __future__ import annotations

import re
from pathlib import Path

CHANGELOG = Path(__file__).resolve().parents[2] / "CHANGELOG.md"
CATEGORIES = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
RELEASE = re.compile(r"^## \[(?P<name>[^\]]+)\]", re.MULTILINE)
CATEGORY = re.compile(r"^### (?P<heading>.*)$", re.MULTILINE)
TRACKER_NUMBER = re.compile(r"\bissues?\s*#?\d+\b|(?<![\w&/#\\])#\d+\b", re.IGNORECASE)


def release_headings(text: str) -> dict[str, list[str]]:
    """Each release's ``###`` headings, in file order."""
    starts = list(RELEASE.finditer(text))
    releases = {}
    for match, following in zip(starts, [*starts[1:], None]):
        body = text[match.end() : following.start() if following else len(text)]
        releases[match.group("name")] = CATEGORY.findall(body)
    return releases


def layout_problems(text: str) -> list[str]:
    problems = []
    releases = release_headings(text)
    if not releases:
        problems.append("no release section")
    for release, headings in releases.items():
        for heading in headings:
            if heading not in CATEGORIES:
                problems.append(f"[{release}]: '### {heading}' is not one of {CATEGORIES}")
        known = [heading for heading in headings if heading in CATEGORIES]
        if len(set(known)) != len(known):
            problems.append(f"[{release}]: a category appears twice: {known}")
        if known != sorted(set(known), key=CATEGORIES.index):
            problems.append(f"[{release}]: categories out of order: {known}")
    return problems


def test_each_release_uses_the_standard_categories_once_each_in_order():
    assert layout_problems(CHANGELOG.read_text(encoding="utf-8")) == []


def test_the_changelog_cites_no_tracker_numbers():
    text = re.sub(r"https?://\S+", "", CHANGELOG.read_text(encoding="utf-8"))
    assert TRACKER_NUMBER.findall(text) == []


def test_a_topic_heading_or_a_repeated_category_is_found():
    text = (
        "## [Unreleased]\n\n### Changed (command line)\n- a\n\n### Added\n- b\n\n### Added\n- c\n"
        "## [0.1.0]\n\n### Fixed\n- d\n\n### Added\n- e\n"
    )
    problems = layout_problems(text)
    assert any("'### Changed (command line)'" in problem for problem in problems)
    assert any("[Unreleased]: a category appears twice" in problem for problem in problems)
    assert any("[0.1.0]: categories out of order" in problem for problem in problems)
