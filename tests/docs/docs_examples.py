"""The code examples of README.md, PYPI.md and docs/*.md, as test_docs_examples.py runs them.

Every fenced block is an example. A ```python block runs, in page order, in one namespace per page
(a later block may use what an earlier one made), unless a marker on the line right above its
opening fence says otherwise:

    <!-- example: not run (REASON) -->        shown, never run; REASON starts with one of NOT_RUN_REASONS
    <!-- example: with FIXTURE[, FIXTURE] --> run after the named fixtures (test_docs_examples.FIXTURES)

A fixture stands in for what this machine lacks while the example's text stays the real usage: it
maps a Hub model id the block names to a tiny model built in code (tests/tiny_models.py), or puts
into the page's namespace the objects a fragment takes as given (``model``, ``tokenizer``, ...).
Blocks in another language (bash, text output, yaml) are commands or printed output, not Python:
they are counted per language, and a fence without a language is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
NOT_RUN_REASONS = ("GPU", "multi-process", "released data", "checkpoint", "placeholders")
MARKER = re.compile(r"^\s*<!-- example: (?P<body>.*?) -->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<language>[\w+-]*)\s*$")


@dataclass
class Example:
    page: str
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    fixtures: list[str] = field(default_factory=list)
    not_run: str | None = None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def not_run_category(self) -> str | None:
        """The NOT_RUN_REASONS entry the not-run reason starts with."""
        return (
            next((reason for reason in NOT_RUN_REASONS if self.not_run.startswith(reason)), None)
            if self.not_run
            else None
        )


def example_pages() -> list[Path]:
    return [
        REPO_ROOT / "README.md",
        REPO_ROOT / "PYPI.md",
        *sorted((REPO_ROOT / "docs").glob("*.md")),
    ]


def _marker(line: str, where: str) -> tuple[list[str], str | None]:
    body = MARKER.match(line).group("body")
    if body.startswith("not run (") and body.endswith(")"):
        reason = body[len("not run (") : -1]
        if not reason.startswith(NOT_RUN_REASONS):
            raise ValueError(
                f"{where}: a not-run reason starts with one of {NOT_RUN_REASONS}, not {reason!r}"
            )
        return [], reason
    if body.startswith("with "):
        return [name.strip() for name in body[len("with ") :].split(",")], None
    raise ValueError(f"{where}: unknown example marker {line.strip()!r}")


def extract_examples(page: Path, root: Path = REPO_ROOT) -> list[Example]:
    """The fenced blocks of ``page`` (its path shown relative to ``root``)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    name = str(page.relative_to(root))
    examples, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            if MARKER.match(lines[index]) and not (
                index + 1 < len(lines) and FENCE.match(lines[index + 1])
            ):
                raise ValueError(
                    f"{name}:{index + 1}: an example marker must sit right above a code fence"
                )
            index += 1
            continue
        indent, language = opening.group("indent"), opening.group("language")
        if not language:
            raise ValueError(
                f"{name}:{index + 1}: a code fence without a language (```python, ```bash, ```text)"
            )
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if end == len(lines):
            raise ValueError(f"{name}:{index + 1}: a code fence that is never closed")
        body = [line.removeprefix(indent) for line in lines[index + 1 : end]]
        fixtures, not_run = [], None
        if index and MARKER.match(lines[index - 1]):
            fixtures, not_run = _marker(lines[index - 1], f"{name}:{index}")
        examples.append(
            Example(name, index + 1, language, "\n".join(body) + "\n", fixtures, not_run)
        )
        index = end + 1
    return examples
