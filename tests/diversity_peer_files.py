"""The `diversity` package's (0.3.1, the peer of its measures) module files, loaded one by one as
benchmarks/bench_peers.py loads them (``diversity/__init__.py`` imports qudsim, openai and spaCy),
and DailyDialog++ responses to compare on. Tests skip, with the reason, when either is absent."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest


def peer_module(name: str):
    """``diversity/<name>.py`` as a module of its own; skips when the package is not installed."""
    spec = importlib.util.find_spec("diversity")
    if spec is None or spec.origin is None:
        pytest.skip(
            "the `diversity` package is not installed (pip install --no-deps diversity==0.3.1, the bench extra)"
        )
    location = Path(spec.origin).parent / f"{name}.py"
    module_spec = importlib.util.spec_from_file_location(f"peer_diversity_{name}", location)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def dailydialog_responses(shared_data: Path, count: int) -> list[str]:
    """The first ``count`` responses (every ``*_responses`` list, file order, duplicates kept) of
    DailyDialog++'s dev file."""
    path = shared_data / "dailydialog-plusplus" / "dev.json"
    if not path.is_file():
        pytest.skip(f"DailyDialog++ is not at {path}")
    responses: list[str] = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                responses += [
                    text for key in record if key.endswith("_responses") for text in record[key]
                ]
            if len(responses) >= count:
                break
    return responses[:count]
