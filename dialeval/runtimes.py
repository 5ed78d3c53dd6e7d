"""The runtimes a loaded model can run on, and the on-disk cache of exported models.

``torch`` runs the transformers model itself. ``onnx`` (ONNX Runtime) and ``openvino`` run a
graph exported once per weights with torch's own ONNX exporter (:mod:`dialeval.exported_models`
builds it and wraps the runtime as a ``torch.nn.Module``). sentence-transformers' and optimum's
own ONNX / OpenVINO backends are not used: optimum's exporters pin an older transformers than the
project's.

Importing this module loads neither torch nor a runtime: :func:`check_backend` asks the import
system whether a runtime is installed without importing it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import time
from pathlib import Path

from dialeval.atomic_files import write_atomically
from dialeval.validation import ArgumentError

#: The runtimes :func:`dialeval.hub.load_model` can run a model on; ``auto`` picks one of the
#: others per model (:func:`resolve_auto`).
BACKENDS = ("auto", "torch", "onnx", "openvino")
#: What every model-backed function, evaluate module and job uses unless told otherwise.
DEFAULT_BACKEND = "auto"
#: The runtime ``auto`` gives an encoder, a classifier or a sentence-transformers model on the
#: CPU: the fastest of the float32 backends on MiniLM in docs/runtimes.md (ONNX Runtime, about
#: 1.8x torch), with torch's figures within 1e-5.
AUTO_EXPORTED_BACKEND = "onnx"
#: The model kinds ``auto`` runs exported on the CPU; language models stay on torch (seq2seq
#: models cannot be exported, and no speed-up of a causal LM's graph was measured).
AUTO_EXPORTED_KINDS = ("encoder", "sequence_classification", "sentence_transformers")
#: What each non-torch backend imports, and the extra that installs it.
_RUNTIME_PACKAGES = {"onnx": ("onnxruntime", "onnx"), "openvino": ("openvino", "openvino")}
#: The export needs the ``onnx`` package (torch's exporter serializes through it).
_EXPORT_PACKAGE = "onnx"
#: The dtypes each backend runs: float32 everywhere; OpenVINO's reduced inference precisions
#: only when asked for (their agreement with float32 is in docs/runtimes.md).
BACKEND_DTYPES = {
    "torch": ("float32", "float16", "bfloat16"),
    "onnx": ("float32",),
    "openvino": ("float32", "float16", "bfloat16"),
}
#: Where exported models are kept when ``DIALEVAL_CACHE`` is not set.
DEFAULT_CACHE = Path("~/.cache/dialeval")
#: Bumped whenever what an export contains changes, so that an older export is never reused.
EXPORT_FORMAT = 1
#: Weight files a transformers checkpoint folder may hold (single or sharded, with its index).
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".index.json")
_WEIGHT_PREFIXES = ("model", "pytorch_model")
#: Bumped whenever what a stored digest record holds changes; another format is never read.
DIGEST_FORMAT = 1
#: The stat fields a stored digest is reused under: all must equal the file's. An in-place
#: rewrite with its mtime restored still moves ``ctime_ns``; a replacement moves ``inode``.
_DIGEST_STAT_FIELDS = {
    "size": "st_size",
    "mtime_ns": "st_mtime_ns",
    "ctime_ns": "st_ctime_ns",
    "inode": "st_ino",
    "device": "st_dev",
}
#: A file changed less than this before it was hashed gets no stored digest: a second change
#: within the file system's timestamp granularity (up to 2 s on some) would leave every stat
#: field as recorded. The next process, later, stores it.
RECENT_CHANGE_NS = 3_000_000_000
#: Bytes of a digest record read at most (a record of the longest path is far smaller): any
#: other file in its place is not a record.
_DIGEST_RECORD_LIMIT = 1 << 16


def _installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # a broken or half-removed install
        return False


def check_backend(backend: object, argument: str = "backend") -> str:
    """``backend`` itself when it is one of :data:`BACKENDS` and its runtime is installed;
    :data:`DEFAULT_BACKEND` for None (the default of every function that takes ``backend``).

    Raises:
        ArgumentError: ``backend`` is not one of :data:`BACKENDS`, or its runtime (or the
            ``onnx`` package the export needs) is not installed; the message names ``argument``
            and the extra that installs it. A missing runtime is never replaced by another one.
    """
    if backend is None:
        return DEFAULT_BACKEND
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ArgumentError(argument, f"must be one of {BACKENDS}, got {backend!r}")
    if backend in ("torch", "auto"):  # auto's runtime is checked once it is picked
        return backend
    runtime, extra = _RUNTIME_PACKAGES[backend]
    missing = [name for name in dict.fromkeys((runtime, _EXPORT_PACKAGE)) if not _installed(name)]
    if missing:
        raise ArgumentError(
            argument,
            f"={backend!r} needs the package(s) {', '.join(missing)}, which are not installed "
            f'here: `pip install "dialeval[{extra}]"`, or pass {argument}="torch"',
        )
    return backend


class ExportFailedError(ArgumentError):
    """A model could not be exported to, or run on, an exported backend (an ArgumentError naming
    ``backend``); ``backend="auto"`` runs such a model on torch instead, with a warning."""


def resolve_auto(kind: str, device_type: str, argument: str = "backend") -> str:
    """The runtime ``backend="auto"`` gives a model of ``kind`` on a ``device_type`` device:
    :data:`AUTO_EXPORTED_BACKEND` for the :data:`AUTO_EXPORTED_KINDS` on the CPU, else torch
    (the exported backends run on the CPU only). A documented rule, not a fall-back: a missing
    runtime is an error naming ``argument``, and the report names the runtime each model ran on."""
    if device_type == "cpu" and kind in AUTO_EXPORTED_KINDS:
        return check_backend(AUTO_EXPORTED_BACKEND, argument)
    return "torch"


def backend_precision(backend: str, dtype: str | None, argument: str = "dtype") -> str:
    """The precision ``backend`` computes in for ``dtype`` (None: float32, the checkpoint's dtype
    on torch is named by torch itself); an ArgumentError naming ``argument`` when ``backend`` does
    not run that dtype (ONNX Runtime runs the exported float32 graph only)."""
    precision = dtype or "float32"
    if precision not in BACKEND_DTYPES[backend]:
        raise ArgumentError(
            argument,
            f"={dtype!r} is not available with backend={backend!r}, which runs "
            f"{' or '.join(BACKEND_DTYPES[backend])}; pass dtype=None or 'float32', or "
            "backend='openvino' (reduced precision on request) or 'torch'",
        )
    return precision


def cache_root() -> Path:
    """Where dialeval keeps what it builds once per machine: ``$DIALEVAL_CACHE``, else
    ``~/.cache/dialeval``."""
    configured = os.environ.get("DIALEVAL_CACHE")
    return Path(configured).expanduser() if configured else DEFAULT_CACHE.expanduser()


def weight_files(model_path: str, argument: str = "backend") -> list[Path]:
    """The files a transformers checkpoint folder's weights and config are read from; an
    ArgumentError naming ``argument`` when the folder holds no weight file dialeval can digest
    (an export is reused only for the weights it was made from)."""
    folder = Path(model_path)
    weights = sorted(
        entry
        for entry in folder.iterdir()
        if entry.is_file()
        and entry.name.startswith(_WEIGHT_PREFIXES)
        and entry.name.endswith(_WEIGHT_SUFFIXES)
    )
    if not weights or not (folder / "config.json").is_file():
        raise ArgumentError(
            argument,
            f"cannot export {model_path!r}: it holds no config.json and model*.safetensors / "
            "pytorch_model*.bin weights to key the export on; pass backend='torch'",
        )
    return [folder / "config.json", *weights]


def _file_digest(path: Path) -> str:
    """The sha256 of the file ``path`` names (links followed to the file itself, such as a hub
    cache's blob), from its stored record in ``<cache root>/digests`` when every stat field of
    the record equals the file's; else read whole, and the record written for the next process.

    The record is a convenience: an unreadable, corrupt or foreign record is ignored and an
    unwritable cache skipped, so the digest is always the file's.
    """
    resolved = os.path.realpath(path)
    record_path = digest_record_path(resolved)
    recorded = _stored_digest(record_path, resolved, _stat_fields(os.stat(resolved)))
    if recorded is not None:
        return recorded
    started_ns = time.time_ns()
    with open(resolved, "rb") as handle:
        before = _stat_fields(os.fstat(handle.fileno()))
        digest = hashlib.sha256()
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
        after = _stat_fields(os.fstat(handle.fileno()))
    changed_ns = max(before["mtime_ns"], before["ctime_ns"])
    if before == after and changed_ns <= started_ns - RECENT_CHANGE_NS:
        _store_digest(record_path, resolved, before, digest.hexdigest())
    return digest.hexdigest()


def digest_record_path(resolved: str) -> Path:
    """Where the stored digest of the file at the absolute, link-free path ``resolved`` is kept:
    ``<cache root>/digests/<sha256 of the path>.json``."""
    name = hashlib.sha256(os.fsencode(resolved)).hexdigest()
    return cache_root() / "digests" / f"{name}.json"


def _stat_fields(status: os.stat_result) -> dict[str, int]:
    return {field: getattr(status, name) for field, name in _DIGEST_STAT_FIELDS.items()}


def _stored_digest(record_path: Path, resolved: str, fields: dict[str, int]) -> str | None:
    """The digest ``record_path`` holds for ``resolved`` in its current state ``fields``; None
    when there is none, it cannot be read, it is of another path or format, or any field
    differs."""
    try:
        with open(record_path, "rb") as handle:
            text = handle.read(_DIGEST_RECORD_LIMIT + 1)
        record = json.loads(text) if len(text) <= _DIGEST_RECORD_LIMIT else None
    except (OSError, ValueError):  # none, unreadable, truncated or not JSON
        return None
    if not isinstance(record, dict) or record.get("format") != DIGEST_FORMAT:
        return None
    if record.get("path") != resolved or any(
        type(record.get(field)) is not int or record[field] != value
        for field, value in fields.items()
    ):
        return None
    digest = record.get("sha256")
    if not isinstance(digest, str) or len(digest) != 64:
        return None
    if any(character not in "0123456789abcdef" for character in digest):
        return None
    return digest


def _store_digest(record_path: Path, resolved: str, fields: dict[str, int], digest: str) -> None:
    record = {"format": DIGEST_FORMAT, "path": resolved, **fields, "sha256": digest}
    try:  # written whole or not at all: a concurrent reader sees the old record or the new one
        write_atomically(record_path, json.dumps(record, indent=2) + "\n", record=False)
    except OSError:  # a read-only or full cache: the next process hashes the file again
        pass


def export_key(model_path: str, settings: dict[str, object], argument: str = "backend") -> str:
    """The name of an export in the cache: the sha256 of the checkpoint's weight and config
    files' contents (not their paths: a copy of the weights reuses the export) and of
    ``settings`` (what was exported and how: kind, opset, exporter, torch version)."""
    files = {path.name: _file_digest(path) for path in weight_files(model_path, argument)}
    payload = {"format": EXPORT_FORMAT, "files": files, "settings": settings}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def export_folder(key: str) -> Path:
    """The folder an export with ``key`` is kept in: ``<cache root>/exported/<key>``."""
    return cache_root() / "exported" / key
