"""``dialeval push-metrics``: the evaluate modules as Hugging Face Spaces, or their folders written
offline.

Each metric's Space holds what evaluate's own module template holds: the module script
``<name>.py`` (``evaluate.load("ORG/<name>")`` downloads it), the metric card ``README.md`` (its
front matter configures the Space), ``app.py`` (evaluate's gradio widget) and ``requirements.txt``.
The script imports the metric from the ``dialeval`` package, so nothing else is copied; the
``requirements.txt`` names ``dialeval``, which is not published on PyPI yet: until it is, a
Space's app cannot install it, and ``evaluate.load("ORG/<name>")`` works only where dialeval is
installed already (docs/hf_contracts.md).
"""

from __future__ import annotations

import importlib
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from dialeval.atomic_files import MANIFEST_NAME, write_atomically
from dialeval.cli.safe_output import PlannedOutput
from dialeval.metrics.registry import METRICS, get
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    from huggingface_hub import HfApi


def space_files(name: str) -> list[Path]:
    """The files of metric ``name``'s Space, from its folder in the package."""
    folder = get(name).module_dir
    files = [
        folder / f"{name}.py",
        folder / "README.md",
        folder / "app.py",
        folder / "requirements.txt",
    ]
    missing = [str(path) for path in files if not path.is_file()]
    if missing:
        raise ValueError(f"the evaluate module {name!r} is not Hub-ready: missing {missing}")
    return files


def planned_folders(to: str | Path, names: list[str] | None = None) -> list:
    """Every file ``--to DIR`` receives, for :func:`~dialeval.cli.safe_output.check_outputs`."""
    return [
        PlannedOutput("--to", Path(to) / name / path.name)
        for name in names or [metric.name for metric in METRICS]
        for path in space_files(name)
    ]


def write_metric_folders(to: str | Path, names: list[str] | None = None) -> list[Path]:
    """Write ``to/<name>/`` for each metric (default: all registered); ``evaluate.load`` reads
    each."""
    written = []
    for name in names or [metric.name for metric in METRICS]:
        files = space_files(name)
        folder = Path(to) / name
        for path in files:  # whole files, recorded as dialeval's: a rerun may replace them
            write_atomically(folder / path.name, path.read_bytes())
        written.append(folder)
    return written


def push_metrics(
    namespace: str,
    names: list[str] | None = None,
    to: str | Path | None = None,
    private: bool = False,
    token: str | None = None,
) -> list[str]:
    """Create (if needed) the Space ``namespace/<name>`` of each metric and upload its folder.

    ``to``: also keep the uploaded folders there (default: a temporary folder). Returns the Space
    ids.
    """
    if not namespace or "/" in namespace:
        raise ArgumentError(
            "namespace", f"must be a Hub user or organization name (no '/'), got {namespace!r}"
        )
    # huggingface_hub: deferred to the one path that needs it
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    try:
        return _upload(api, namespace, names, to, private)
    # no network, DNS, proxy: a sentence, not httpx's traceback
    except _hub_transport_errors() as error:
        raise ConnectionError(
            f"the Hugging Face Hub is unreachable ({type(error).__name__}: {error}); check the "
            "network, or write the folders offline with --to DIR alone"
        ) from None


def _hub_transport_errors() -> tuple[type[BaseException], ...]:
    """The network errors of the HTTP client huggingface_hub uses (httpx2, httpx, or requests in
    older releases)."""
    errors = []
    for module, name in (
        ("httpx2", "TransportError"),
        ("httpx", "TransportError"),
        ("requests", "ConnectionError"),
    ):
        try:
            errors.append(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            continue
    return tuple(errors)


def _upload(
    api: HfApi, namespace: str, names: list[str] | None, to: str | Path | None, private: bool
) -> list[str]:
    with tempfile.TemporaryDirectory() as scratch:
        folders = write_metric_folders(to if to is not None else scratch, names)
        repo_ids = []
        for folder in folders:
            repo_id = f"{namespace}/{folder.name}"
            api.create_repo(
                repo_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True
            )
            api.upload_folder(
                repo_id=repo_id,
                repo_type="space",
                folder_path=str(folder),
                commit_message=f"dialeval push-metrics {folder.name}",
                ignore_patterns=[MANIFEST_NAME],  # dialeval's bookkeeping, not the Space's
            )
            repo_ids.append(repo_id)
    return repo_ids


def run(
    namespace: str | None, to: str | None, names: list[str] | None, private: bool = False
) -> int:
    """The command: upload with ``namespace``, write offline with ``to`` alone."""
    if namespace is None and to is None:
        raise ValueError(
            "give --namespace ORG (upload each metric as the Space ORG/<metric>) and/or --to DIR "
            "(write the folders)"
        )
    if namespace is None:
        assert to is not None  # refused above when both are None
        for folder in write_metric_folders(to, names):
            print(f"wrote {folder}")
        return 0
    for repo_id in push_metrics(namespace, names, to=to, private=private):
        print(f"pushed https://huggingface.co/spaces/{repo_id}")
    return 0
