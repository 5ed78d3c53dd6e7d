"""Shared by the reproduction scripts: a Markdown table and the run's JSON, written side by side."""
from __future__ import annotations

import json
import math
from pathlib import Path


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
    figures.write_text(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=True) + "\n", encoding="utf-8")
    return table, figures
