"""Files written whole or not at all: the one way dialeval replaces a file it owns.

A report, a checkpoint, a plot or saved Sem-Ent clusters is written to a temporary file in the
target's folder and renamed over it (``os.replace``, atomic on one file system), so an error,
Ctrl-C or a full disk leaves the previous file, never half of a new one. It sits in the root
layer so that the metrics (``SemanticClusters.save``) and the command line share it.
"""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path


def write_atomically(path: str | Path, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``.

    The folder is created if needed; an existing file keeps its permissions, a new one gets the
    umask's, as with ``open(path, "w")``. A symbolic link is written through, as ``open`` would: the
    file it points to is replaced and the link stays. Returns ``path`` as given.
    """
    given = Path(path)
    path = Path(os.path.realpath(given))
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
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
    return given
