"""The stored digests of a checkpoint's weight files (dialeval.runtimes): an export key found
without reading the weights again, and never a stale or wrong digest."""

import builtins
import hashlib
import io
import json
import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from dialeval import runtimes

SETTINGS = {"kind": "encoder", "opset": 17}
WEIGHTS = bytes(range(256)) * 64
CONFIG = '{"model_type": "bert"}'
#: export_key of a folder holding CONFIG and WEIGHTS under SETTINGS, as computed by reading
#: every file: an export cached under it stays found.
PINNED_KEY = "77e415c82680b0bebf41e38a825e348fb23852cf8f19a03097f613706568d723"


@pytest.fixture(autouse=True)
def cache(monkeypatch, tmp_path) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("DIALEVAL_CACHE", str(folder))
    return folder


@pytest.fixture
def settled(monkeypatch):
    """The test's files count as old enough to store at once (a file's timestamps are never
    after the clock, so this does not depend on how fast the test runs)."""
    monkeypatch.setattr(runtimes, "RECENT_CHANGE_NS", 0)


@pytest.fixture
def reads(monkeypatch) -> list[str]:
    """The names of the files opened for reading from now on, by ``open`` or ``Path.open``."""
    opened: list[str] = []
    real_open = io.open

    def counting_open(file, mode="r", *args, **kwargs):
        if isinstance(file, (str, bytes, os.PathLike)) and not set("wax+") & set(mode):
            opened.append(os.path.basename(os.fsdecode(file)))
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(io, "open", counting_open)
    monkeypatch.setattr(builtins, "open", counting_open)
    return opened


def _checkpoint(folder: Path, weights: bytes = WEIGHTS) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(CONFIG)
    (folder / "model.safetensors").write_bytes(weights)
    return folder


def _plain_key(folder: Path) -> str:
    """The key from the files' contents, read whole."""
    files = {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in runtimes.weight_files(str(folder))
    }
    payload = {"format": runtimes.EXPORT_FORMAT, "files": files, "settings": SETTINGS}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _record(path: Path) -> Path:
    return runtimes.digest_record_path(os.path.realpath(path))


def _rewrite_in_place(path: Path, data: bytes) -> None:
    """New bytes of the same size in the same inode, its mtime put back: only ctime tells."""
    before = os.stat(path)
    assert len(data) == before.st_size
    with open(path, "r+b") as handle:
        handle.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    deadline = time.monotonic() + 10
    while os.stat(path).st_ctime_ns == before.st_ctime_ns:  # the same clock tick
        assert time.monotonic() < deadline, "the file system's ctime did not move"
        time.sleep(0.001)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )


def test_a_second_key_reads_no_weight_file(tmp_path, settled, reads):
    folder = _checkpoint(tmp_path / "model")
    first = runtimes.export_key(str(folder), SETTINGS)
    assert reads.count("model.safetensors") == 1
    reads.clear()
    assert runtimes.export_key(str(folder), SETTINGS) == first == PINNED_KEY
    assert "model.safetensors" not in reads and "config.json" not in reads
    record = json.loads(_record(folder / "model.safetensors").read_text())
    status = os.stat(folder / "model.safetensors")
    assert record == {
        "format": runtimes.DIGEST_FORMAT,
        "path": os.path.realpath(folder / "model.safetensors"),
        "size": status.st_size,
        "mtime_ns": status.st_mtime_ns,
        "ctime_ns": status.st_ctime_ns,
        "inode": status.st_ino,
        "device": status.st_dev,
        "sha256": hashlib.sha256(WEIGHTS).hexdigest(),
    }


def test_linked_weights_are_digested_as_their_blob(tmp_path, settled, reads):
    """The hub cache's layout: each snapshot links to one blob, whose digest serves them all."""
    blob = tmp_path / "blobs" / "abc123"
    blob.parent.mkdir()
    blob.write_bytes(WEIGHTS)
    snapshots = []
    for name in ("first", "second"):
        snapshot = tmp_path / "snapshots" / name
        snapshot.mkdir(parents=True)
        (snapshot / "config.json").write_text(CONFIG)
        (snapshot / "model.safetensors").symlink_to(blob)
        snapshots.append(snapshot)
    assert runtimes.export_key(str(snapshots[0]), SETTINGS) == PINNED_KEY
    assert _record(blob).is_file()
    reads.clear()
    assert runtimes.export_key(str(snapshots[1]), SETTINGS) == PINNED_KEY
    assert "abc123" not in reads and "model.safetensors" not in reads


def test_contents_rewritten_in_place_give_a_new_digest(tmp_path, settled):
    folder = _checkpoint(tmp_path / "model")
    assert runtimes.export_key(str(folder), SETTINGS) == PINNED_KEY
    _rewrite_in_place(folder / "model.safetensors", WEIGHTS[::-1])
    changed = runtimes.export_key(str(folder), SETTINGS)
    assert changed != PINNED_KEY and changed == _plain_key(folder)
    recorded = json.loads(_record(folder / "model.safetensors").read_text())["sha256"]
    assert recorded == hashlib.sha256(WEIGHTS[::-1]).hexdigest()


def test_a_file_changed_just_before_it_was_hashed_gets_no_record(tmp_path):
    """Changed again within the same timestamp tick, it would match its record field by field."""
    folder = _checkpoint(tmp_path / "model")
    assert runtimes.export_key(str(folder), SETTINGS) == PINNED_KEY
    assert not _record(folder / "model.safetensors").exists()
    weights = folder / "model.safetensors"
    status = os.stat(weights)
    with open(weights, "r+b") as handle:
        handle.write(WEIGHTS[::-1])
    os.utime(weights, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert runtimes.export_key(str(folder), SETTINGS) == _plain_key(folder) != PINNED_KEY


def test_a_file_changed_while_it_was_hashed_gets_no_record(tmp_path, monkeypatch, settled):
    folder = _checkpoint(tmp_path / "model")
    weights = folder / "model.safetensors"

    class AppendingOnFirstBlock:
        """sha256 that, once the file's first block is read, appends to the file."""

        def __init__(self) -> None:
            self.digest = hashlib.sha256()

        def update(self, block: bytes) -> None:
            if block == WEIGHTS:
                with open(weights, "ab") as handle:
                    handle.write(b"more")
            self.digest.update(block)

        def hexdigest(self) -> str:
            return self.digest.hexdigest()

    def sha256(data: bytes = b"", **options):
        return hashlib.sha256(data, **options) if data else AppendingOnFirstBlock()

    with monkeypatch.context() as patch:
        patch.setattr(runtimes, "hashlib", SimpleNamespace(sha256=sha256))
        runtimes.export_key(str(folder), SETTINGS)
    assert not _record(weights).exists()
    assert runtimes.export_key(str(folder), SETTINGS) == _plain_key(folder) != PINNED_KEY


@pytest.mark.parametrize("field", ["size", "mtime_ns", "ctime_ns", "inode", "device"])
def test_a_record_is_used_only_when_every_stat_field_matches(tmp_path, settled, reads, field):
    folder = _checkpoint(tmp_path / "model")
    runtimes.export_key(str(folder), SETTINGS)
    record_path = _record(folder / "model.safetensors")
    record = json.loads(record_path.read_text())
    record.update({field: record[field] + 1, "sha256": "0" * 64})
    record_path.write_text(json.dumps(record))
    reads.clear()
    assert runtimes.export_key(str(folder), SETTINGS) == PINNED_KEY
    assert "model.safetensors" in reads


def _forged(record: dict) -> list[bytes]:
    valid = json.dumps(record).encode()
    return [
        b"",
        valid[: len(valid) // 2],
        b"\xff\xfe not text",
        b"[]",
        json.dumps({**record, "format": runtimes.DIGEST_FORMAT + 1}).encode(),
        json.dumps({**record, "path": record["path"] + ".other"}).encode(),
        json.dumps({**record, "sha256": "z" * 64}).encode(),
        json.dumps({**record, "sha256": None}).encode(),
        json.dumps({**record, "size": str(record["size"])}).encode(),
        json.dumps({**record, "padding": " " * (1 << 16)}).encode(),
    ]


@pytest.mark.parametrize("case", range(10))
def test_a_corrupt_or_foreign_record_is_hashed_over(tmp_path, settled, case):
    folder = _checkpoint(tmp_path / "model")
    runtimes.export_key(str(folder), SETTINGS)
    record_path = _record(folder / "model.safetensors")
    record = json.loads(record_path.read_text())
    # a forged digest: whatever the damage, it must never come back
    forged = _forged({**record, "sha256": hashlib.sha256(b"other weights").hexdigest()})
    assert len(forged) == 10
    record_path.write_bytes(forged[case])
    assert runtimes.export_key(str(folder), SETTINGS) == PINNED_KEY
    assert json.loads(record_path.read_text()) == record  # written again, whole


def test_an_unwritable_cache_still_gives_the_digest(tmp_path, monkeypatch, settled):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("DIALEVAL_CACHE", str(blocker / "cache"))
    folder = _checkpoint(tmp_path / "model")
    assert runtimes.export_key(str(folder), SETTINGS) == PINNED_KEY
    assert runtimes.export_key(str(folder), SETTINGS) == PINNED_KEY


def test_a_failing_record_write_still_gives_the_digest(tmp_path, monkeypatch, settled):
    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(runtimes, "write_atomically", full_disk)
    folder = _checkpoint(tmp_path / "model")
    assert runtimes.export_key(str(folder), SETTINGS) == PINNED_KEY
    assert not _record(folder / "model.safetensors").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_cache_folder_still_gives_the_digest(tmp_path, cache, settled):
    (cache / "digests").mkdir(parents=True)
    (cache / "digests").chmod(0o555)
    try:
        folder = _checkpoint(tmp_path / "model")
        assert runtimes.export_key(str(folder), SETTINGS) == PINNED_KEY
        assert list((cache / "digests").iterdir()) == []
    finally:
        (cache / "digests").chmod(0o755)


def test_the_key_is_the_digest_of_the_contents(tmp_path, settled):
    """Cold, from the records, and for a copy elsewhere: the key of plain hashing, so the
    exports already cached stay found."""
    folder = _checkpoint(tmp_path / "model")
    assert runtimes.export_key(str(folder), SETTINGS) == _plain_key(folder) == PINNED_KEY
    assert runtimes.export_key(str(folder), SETTINGS) == PINNED_KEY
    copy = _checkpoint(tmp_path / "copy")
    assert runtimes.export_key(str(copy), SETTINGS) == PINNED_KEY
