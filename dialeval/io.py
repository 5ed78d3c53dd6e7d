"""THE reader of input files: JSONL and CSV, with errors that name ``file:line``.

:func:`iter_lines` / :func:`iter_jsonl` are the one way every job and metric reads a line-based
file (response sets, DTG contexts, response-selection questions). On top of them: response-set
files as JSONL (``{"context": ..., "responses": [...]}``) or Tevet & Berant's CSV.

A Tevet CSV has one row per set with ``context``, ``resp_0 .. resp_{k-1}`` and optional
``sample_id``, ``label_value``, ``label_name`` and metric columns; other columns are kept as
metadata. Files are read as UTF-8 explicitly (the released CSVs broke Windows' default codec).
"""
from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

_RESPONSE_COLUMN = re.compile(r"^resp_(\d+)$")


@dataclass
class ResponseSet:
    """The responses generated for one context, plus whatever the file said about them.

    ``context`` is a string or, for a dialogue, its turns (a list of strings); ``where`` is the
    ``"FILE:LINE"`` the set was read from, for error messages (None for sets built in code).
    """

    context: str | list[str] | None
    responses: list[str]
    metadata: dict = field(default_factory=dict)
    where: str | None = None


def iter_lines(path: str | Path):
    """``(where, line)`` for every non-blank line of a UTF-8 file, ``where`` being ``"FILE:LINE"``
    for error messages; the line without its line break."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield f"{path}:{number}", line.rstrip("\r\n")


def iter_jsonl(path: str | Path):
    """``(where, record)`` for every non-blank line of a JSONL file; bad JSON is a ValueError naming ``FILE:LINE``."""
    for where, line in iter_lines(path):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{where}: not valid JSON ({error.msg})") from None
        yield where, record


def read_jsonl(path: str | Path) -> list[ResponseSet]:
    """One JSON object per line with ``responses`` (list of strings) and optional ``context``
    (a string, or a dialogue's turns as a non-empty list of strings); other keys are metadata."""
    sets = []
    for where, record in iter_jsonl(path):
        if not isinstance(record, dict) or "responses" not in record:
            raise ValueError(f'{where}: expected an object with a "responses" list')
        responses = record.pop("responses")
        if not isinstance(responses, list) or not all(isinstance(r, str) for r in responses):
            raise ValueError(f'{where}: "responses" must be a list of strings')
        context = record.pop("context", None)
        is_turns = isinstance(context, list) and context and all(isinstance(turn, str) for turn in context)
        if context is not None and not isinstance(context, str) and not is_turns:
            raise ValueError(f'{where}: "context" must be a string or a non-empty list of strings (the turns)')
        sets.append(ResponseSet(context, responses, record, where))
    if not sets:
        raise ValueError(f"{path}: no response sets found")
    return sets


def response_columns(fieldnames: list[str], path: str | Path = "<csv>") -> list[str]:
    """``resp_i`` columns in numeric order; they must be ``resp_0 .. resp_{k-1}`` without gaps."""
    indexed = sorted((int(m.group(1)), name) for name in fieldnames if (m := _RESPONSE_COLUMN.match(name)))
    if not indexed:
        raise ValueError(f"{path}: no resp_0, resp_1, ... columns (Tevet & Berant's CSV format)")
    if [i for i, _ in indexed] != list(range(len(indexed))):
        raise ValueError(f"{path}: response columns must be resp_0..resp_{len(indexed) - 1} without gaps, got {[n for _, n in indexed]}")
    return [name for _, name in indexed]


def read_tevet_csv(path: str | Path) -> list[ResponseSet]:
    """Tevet & Berant's decTest / conTest / McDiv CSV layout (see module docstring)."""
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        columns = response_columns(reader.fieldnames or [], path)
        sets = []
        first_line = reader.line_num + 1
        for row in reader:
            responses = [row.pop(name) for name in columns]
            context = row.pop("context", None)
            sets.append(ResponseSet(context, responses, dict(row), f"{path}:{first_line}"))
            first_line = reader.line_num + 1  # a quoted field may span lines
    if not sets:
        raise ValueError(f"{path}: no rows")
    return sets


def read_response_sets(path: str | Path, file_format: str = "auto") -> list[ResponseSet]:
    """Read ``path`` as ``"jsonl"`` or ``"csv"`` (Tevet's format); ``"auto"`` goes by the suffix."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"`input` {str(path)!r} is not a file")
    if file_format == "auto":
        file_format = {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv"}.get(path.suffix.lower())
        if file_format is None:
            raise ValueError(f"cannot tell the format of {path.name!r} from its suffix; pass --format jsonl or csv")
    readers = {"jsonl": read_jsonl, "csv": read_tevet_csv}
    if file_format not in readers:
        raise ValueError(f"`format` must be 'auto', 'jsonl' or 'csv', got {file_format!r}")
    return readers[file_format](path)


def read_text_lines(path: str | Path) -> list[str]:
    """Non-blank lines of a UTF-8 text file (a reference corpus, one response per line)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"`reference_corpus` {str(path)!r} is not a file")
    lines = [line.rstrip("\r\n") for line in path.read_text(encoding="utf-8").splitlines()]
    lines = [line for line in lines if line.strip()]
    if not lines:
        raise ValueError(f"`reference_corpus` {str(path)!r} holds no text")
    return lines
