"""Files written whole or not at all, and a record of which files dialeval wrote.

The one way dialeval writes an output file is :func:`write_atomically`. What it does depends on
what the path names:

* ``-``: standard output (the bytes are written to it; nothing is renamed).
* a descriptor of this process (``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``): written to
  that descriptor at its current position, so ``-o /dev/stdout >> run.log`` appends to the log.
* an existing path that is not a regular file, or a symbolic link to one (a character device such
  as ``/dev/null``, a FIFO, a socket): opened and written through; never renamed over.
* a regular file or a new path: a temporary file with a unique name in the target's folder,
  renamed over it (``os.replace``, atomic on one file system), so an error, Ctrl-C or a full disk
  leaves the previous file, never half of a new one. A symbolic link to a regular file is written
  through: the file it points to is replaced and the link stays.

Each regular file written this way is recorded in its folder's manifest, ``.dialeval-outputs.json``
(``{"files": {NAME: SHA256}}``), updated under an exclusive lock on the folder (``flock`` on the
folder's descriptor, so two runs writing into one folder keep both entries). A later run may
replace a file whose content still has the recorded digest (:func:`written_by_dialeval`); a file
edited since, or never recorded, is the user's, and the command line refuses to replace it unless
asked (``--overwrite``; see :mod:`dialeval.cli.safe_output`). The module sits in the root layer so
that the metrics (``SemanticClusters.save``) and the command line share it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no folder locks; a manifest update may then lose a concurrent entry
    fcntl = None  # type: ignore[assignment]

#: The manifest of the files dialeval wrote in a folder (hidden: it is bookkeeping, not output).
MANIFEST_NAME = ".dialeval-outputs.json"
#: ``/dev/stdout``, ``/dev/fd/1``, ``/proc/self/fd/1``, ``/proc/<pid>/fd/1``: a descriptor.
_DESCRIPTOR_PATH = re.compile(r"^/(?:dev/fd|proc/(?:self|thread-self|\d+)/fd)/(\d+)$")
_STANDARD_STREAMS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


def temporary_name(path: Path, kind: str = "tmp") -> Path:
    """A name beside ``path`` no other process or run can hold: ``.NAME.PID.RANDOM.KIND``."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.{kind}")


def process_descriptor(path: str | Path) -> int | None:
    """The descriptor ``path`` names when it is one of this process's (``/dev/stdout``,
    ``/dev/fd/N``, ``/proc/self/fd/N`` or a link to one of these), else None.

    Such a path resolves to whatever the descriptor is open on (the file a shell redirected into,
    a pipe); opening or renaming over it would truncate or replace that file, so it is written
    through the descriptor instead.
    """
    current = os.path.abspath(str(path))
    for _ in range(40):  # the kernel's own limit on links followed
        if current in _STANDARD_STREAMS:
            return _STANDARD_STREAMS[current]
        match = _DESCRIPTOR_PATH.match(current)
        if match and (not current.startswith("/proc/") or _names_this_process(current)):
            return int(match.group(1))
        if not os.path.islink(current):
            return None
        current = os.path.normpath(os.path.join(os.path.dirname(current), os.readlink(current)))
    return None


def _names_this_process(path: str) -> bool:
    part = path.split("/")[2]
    return part in ("self", "thread-self") or part == str(os.getpid())


def is_written_through(path: str | Path) -> bool:
    """Whether :func:`write_atomically` writes ``path`` in place (standard output, a descriptor of
    this process, an existing device, FIFO or socket) rather than replacing a regular file."""
    if str(path) == "-" or process_descriptor(path) is not None:
        return True
    try:
        mode = os.stat(path).st_mode  # follows links
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _write_all(descriptor: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(descriptor, view) :]


def _write_to_standard_output(payload: bytes) -> None:
    stream = sys.stdout
    stream.flush()
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        buffer.write(payload)
        buffer.flush()
    else:  # a text stream without bytes underneath (a test's capture)
        stream.write(payload.decode("utf-8"))
        stream.flush()


def write_atomically(path: str | Path, data: bytes | str, record: bool = True) -> Path:
    """Write ``data`` to ``path`` as the module docstring says; returns ``path`` as given.

    The folder is created if needed; an existing file keeps its permissions, a new one gets the
    umask's, as with ``open(path, "w")``. ``record``: note the file in its folder's manifest
    (False for files inside a folder dialeval owns whole, such as checkpoints).
    """
    given = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if str(path) == "-":
        _write_to_standard_output(payload)
        return given
    descriptor = process_descriptor(given)
    if descriptor is not None:
        sys.stdout.flush()
        _write_all(descriptor, payload)
        return given
    if is_written_through(given):
        target = os.open(given, os.O_WRONLY)  # no O_TRUNC, no rename: a device or FIFO stays
        try:
            _write_all(target, payload)
        finally:
            os.close(target)
        return given
    resolved = Path(os.path.realpath(given))
    if resolved.is_dir():
        raise IsADirectoryError(f"{given} is a folder, not a file")
    resolved.parent.mkdir(parents=True, exist_ok=True)
    _replace(resolved, payload)
    if record:
        record_written(resolved, hashlib.sha256(payload).hexdigest())
    return given


def _replace(path: Path, payload: bytes) -> None:
    temporary = temporary_name(path)
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            shutil.copymode(path, temporary)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


# -- the manifest of dialeval's files ------------------------------------------------------------


@contextlib.contextmanager
def _folder_locked(folder: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``folder`` itself (no lock file left behind)."""
    if fcntl is None:
        yield
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock


def _read_manifest(folder: Path) -> dict[str, str]:
    try:
        manifest = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
        files = manifest["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}  # none, or unreadable: no file counts as dialeval's, the safe side
    if not isinstance(files, dict):
        return {}
    return {name: digest for name, digest in files.items() if isinstance(digest, str)}


def record_written(path: str | Path, digest: str) -> None:
    """Note ``path`` (a regular file dialeval just wrote, with content ``digest``) in its folder's
    manifest."""
    path = Path(path)
    folder = path.parent
    with _folder_locked(folder):
        files = _read_manifest(folder)
        files[path.name] = digest
        text = json.dumps({"files": dict(sorted(files.items()))}, indent=2) + "\n"
        _replace(folder / MANIFEST_NAME, text.encode("utf-8"))


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def written_by_dialeval(path: str | Path) -> bool:
    """Whether the regular file ``path`` (links followed) is one dialeval wrote and nobody changed
    since: its folder's manifest records it with its current sha256."""
    resolved = Path(os.path.realpath(path))
    if not resolved.is_file():
        return False
    recorded = _read_manifest(resolved.parent).get(resolved.name)
    return recorded is not None and recorded == file_sha256(resolved)
