"""Where a builder's source files come from: a local ``data_dir`` or a pinned public URL,
sha256-checked.

Every source file is described by a :class:`SourceFile`: the pinned download URL, the paths it
may have under a user's ``data_dir`` (an unzipped release keeps its folder layout; a user may
also drop the bare file in), and the sha256 digests it is known to have. A local file is
preferred; otherwise the URL is fetched through the ``datasets`` download manager (its cache,
its offline mode). Either way the bytes are checked against the known digests unless the
caller turns verification off, so a truncated download or an edited copy is an error, not a
silently different test set.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dialeval.validation import ArgumentError, check_flag, check_path

if TYPE_CHECKING:
    from datasets import DownloadManager


class SourceNotAvailableError(OSError):
    """A source file is neither under ``data_dir`` nor downloadable (offline, or the URL is
    gone)."""


@dataclass(frozen=True)
class SourceFile:
    name: str
    url: str
    local_paths: tuple[str, ...]
    sha256: tuple[str, ...]


def sha256_of(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _find_local(source: SourceFile, data_dir: str) -> Path | None:
    root = Path(data_dir).expanduser()
    if not root.is_dir():
        raise ArgumentError("data_dir", f"{data_dir!r} is not a directory")
    for relative in source.local_paths:
        candidate = root / relative
        if candidate.is_file():
            return candidate
    return None


def resolve_source(
    source: SourceFile,
    dl_manager: DownloadManager,
    data_dir: str | None,
    verify: bool = True,
) -> str:
    """The local path of ``source``: found under ``data_dir`` if given, else downloaded and
    cached."""
    if data_dir is not None:
        path = _find_local(source, data_dir)
        if path is None:
            tried = ", ".join(source.local_paths)
            raise SourceNotAvailableError(
                f"{source.name}: not found under `data_dir` {data_dir!r} (looked for {tried}). "
                f"Download it from {source.url}"
            )
    else:
        try:
            path = Path(dl_manager.download(source.url))
        except Exception as error:  # noqa: BLE001 - offline mode, DNS failure, HTTP error: all mean "get it yourself"
            raise SourceNotAvailableError(
                f"{source.name}: could not download {source.url} ({type(error).__name__}: "
                f"{error}). Download it on a machine with internet access and pass the folder "
                "holding it as `data_dir`."
            ) from None
    if verify:
        digest = sha256_of(path)
        if digest not in source.sha256:
            raise ValueError(
                f"{path}: sha256 {digest} is not the released {source.name} "
                f"({' or '.join(source.sha256)}); the file is truncated or edited. Pass "
                "verify_checksums=False to use it anyway."
            )
    return str(path)


def check_source_options(data_dir: object, cache_dir: object, verify_checksums: object) -> None:
    """The options every builder takes: ``data_dir`` and ``cache_dir`` a path or None,
    ``verify_checksums`` a bool (a string such as ``"no"`` is refused, not read as True)."""
    check_path(data_dir, "data_dir", optional=True)
    check_path(cache_dir, "cache_dir", optional=True)
    check_flag(verify_checksums, "verify_checksums")
