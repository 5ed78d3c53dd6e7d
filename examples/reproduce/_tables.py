"""Shared by the reproduction scripts: a Markdown table and the run's JSON, written side by side, and
the one-line errors (exit status 2) for inputs that are missing."""

from __future__ import annotations

import contextlib
import json
import math
import re
import sys
from pathlib import Path
from typing import NoReturn

#: A Hugging Face Hub model id (``name`` or ``owner/name``), as opposed to a path.
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")


def cell(value, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def markdown_table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(value) for value in row) + " |" for row in rows]
    return "\n".join(lines)


def write_outputs(out_dir: str | Path, stem: str, markdown: str, data) -> tuple[Path, Path]:
    """``OUT/stem.md`` (the table) and ``OUT/stem.json`` (every figure behind it)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table, figures = out / f"{stem}.md", out / f"{stem}.json"
    table.write_text(markdown + "\n", encoding="utf-8")
    figures.write_text(
        json.dumps(data, indent=2, ensure_ascii=False, allow_nan=True) + "\n", encoding="utf-8"
    )
    return table, figures


# ---------------------------------------------------------------- missing inputs: one line, exit status 2


def fail(script: str, message: str) -> NoReturn:
    """``SCRIPT: error: MESSAGE`` on stderr and exit status 2 (argparse's), instead of a traceback."""
    print(f"{script}: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def require_model(
    script: str, flag: str, model: str, hub_id: str | None = None, value: str = "DIR"
) -> None:
    """``model`` is a model folder here or a Hub id in the Hugging Face cache; else exit 2 saying how
    to get it: ``hub_id`` is the model to download (default: ``model`` when it reads as a Hub id),
    ``value`` how ``flag`` takes the folder."""
    from dialeval.hub import resolve_model_path

    try:
        resolve_model_path(model)
    except (
        ValueError,
        OSError,
    ):  # ModelNotAvailableError is an OSError; a path that is no folder a ValueError
        # "owner/name" reads as a Hub id unless its "owner" is a folder here (models/roberta-large-mnli)
        if hub_id is None:
            hub_id = (
                model
                if _HUB_ID.match(model) and not Path(model).parent.is_dir()
                else "<its Hub id>"
            )
        fail(
            script,
            f"{flag} {model}: neither a model folder here nor a Hub model in the Hugging Face cache; on a "
            f"machine with internet run `hf download {hub_id} --local-dir DIR`, copy DIR here and pass {flag} {value}",
        )


def require_path(script: str, flag: str, path: str, folder: bool, what: str) -> None:
    """``path`` exists (a folder when ``folder``); else exit 2 naming ``flag`` and ``what`` it should hold."""
    found = Path(path).is_dir() if folder else Path(path).is_file()
    if not found:
        fail(
            script, f"{flag} {path}: no such {'folder' if folder else 'file'}; it should be {what}"
        )


@contextlib.contextmanager
def one_line_errors(script: str, flags: dict[str, str]):
    """A ValueError / OSError of the library (a file it could not download, a malformed line) as one
    line naming the script's flags: each backticked argument name in ``flags`` becomes its flag."""
    try:
        yield
    except (ValueError, OSError) as error:
        message = str(error)
        for name, flag in flags.items():
            message = message.replace(f"`{name}`", flag)
        fail(script, message)


# ---------------------------------------------------------------- before a table: ours vs the paper, and what differs


def paper_comparison(
    title: str, rows: list[tuple[str, list[tuple[str, str, str]]]], differences: list[str]
) -> str:
    """What a script prints before its tables: ``title``, then per row ``label: name ours X (paper Y), ...``
    (``rows``: (label, [(measure, ours, paper)])), then "Settings that differ from the paper:" and
    each of ``differences`` (or "none")."""
    lines = [f"{title}, ours vs the paper:"]
    for label, measures in rows:
        lines.append(
            f"  {label}: "
            + ", ".join(f"{name} {ours} (paper {paper})" for name, ours, paper in measures)
        )
    lines.append("Settings that differ from the paper:")
    lines.extend(f"  - {item}" for item in differences or ["none"])
    return "\n".join(lines)


def locally_available(model: str) -> bool:
    """``model`` is a folder here or a Hub id in the local Hugging Face cache (``dialeval.hub``'s loader,
    ``local_only``: nothing is downloaded, so a recipe's "the paper's model when it is present" never
    waits on the network)."""
    from dialeval.hub import ModelNotAvailableError, resolve_model_path

    try:
        resolve_model_path(model, local_only=True)
    except (ModelNotAvailableError, ValueError):
        return False
    return True
