"""What keeps a job's files safe: no output over an input, reports replaced whole, one run per
output, and a clean stop on Ctrl-C (SIGINT) or SIGTERM.

* :func:`refuse_outputs_over_inputs` compares every output path with every input path (the same
  file after resolving symbolic and hard links, or a file inside an input folder) before a job
  starts.
* :func:`write_atomically` / :func:`write_report` write a temporary file in the target's folder
  and rename it into place (``os.replace``): an error or a signal leaves either the old file or
  the complete new one, never a truncated one.
* :class:`OutputLock` is ``OUTPUT.lock``, created with ``O_CREAT | O_EXCL`` and holding the pid
  and host of the run that writes ``OUTPUT``; a second run fails at once. A lock whose pid is
  dead on this host (a run killed with SIGKILL) is taken over with a warning.
* :func:`stop_signals_raise` turns SIGINT and SIGTERM into :class:`Interrupted` (a
  ``KeyboardInterrupt``), so ``finally`` blocks run, locks are removed and the command line
  prints one line and exits with ``128 + signal``; :func:`deferred_stop_signals` holds a signal
  back until a block that must not be cut (a batch of output lines) is done.
* :func:`held_output` ties these to a job under ``accelerate launch``: only the main process
  takes the lock (the others learn whether it got it), and the other processes, which write
  nothing, keep the default signal actions, so that a signal ends them at once even while they
  wait in a collective for a main process that is gone.

Every file a command will write is planned before any work starts: each command builds a list of
:class:`PlannedOutput` (the path and the flag that put it there) right after reading its
arguments and hands it to :func:`check_outputs`. A planned path that exists and that dialeval did
not write is refused, naming the file and the flag, unless the command's ``--overwrite`` is given.
dialeval's own files are those its folder's manifest records with their current sha256
(:mod:`dialeval.atomic_files`), and, for files written before the manifest existed, a JSON report
carrying dialeval's ``provenance`` block or a DTG run's settings file; a rerun replaces them
without ``--overwrite``. ``-`` is standard output; a path that is not a regular file (a device, a
FIFO, ``/dev/stdout``) is written through and never renamed over. Checkpoint folders
(``OUTPUT.partial``) are dialeval's when they hold its checkpoint manifest; any other folder there
is refused even with ``--overwrite`` (dialeval deletes only what it made). Temporary files carry a
unique name (:func:`~dialeval.atomic_files.temporary_name`) and are the only things cleaned up.

Every JSON file the command line writes is strict JSON (:func:`json_text`): a NaN or infinity
(an input's metadata, a figure) is written as ``null``, with a note on standard error naming where.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import math
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from dialeval.atomic_files import (
    is_written_through,
    process_descriptor,
    write_atomically,
    written_by_dialeval,
)
from dialeval.distributed import computed_on_main, process_state, split_work

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import FrameType

#: The signals a job stops on cleanly.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A job stopped by SIGINT or SIGTERM. ``detail`` says what was kept and how to resume."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.detail: str | None = None

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        """The shell's convention for a process ended by a signal: 130 for SIGINT, 143 for
        SIGTERM."""
        return 128 + self.signum


# -- outputs that are inputs -------------------------------------------------------------------


def _is_or_inside(output: Path, source: Path) -> bool:
    """``output`` is the file ``source`` (links resolved) or lies inside the folder ``source``."""
    if output.exists() and source.exists() and os.path.samefile(output, source):  # hard links too
        return True
    resolved_output, resolved_source = os.path.realpath(output), os.path.realpath(source)
    return resolved_output == resolved_source or (
        source.is_dir() and resolved_output.startswith(resolved_source.rstrip(os.sep) + os.sep)
    )


def refuse_outputs_over_inputs(
    inputs: Iterable[tuple[str, str | Path | None]],
    outputs: Iterable[tuple[str, str | Path | None]],
    overwrite_flag: str | None = None,
) -> None:
    """Raise a ValueError naming both flags when an output would write over an input.

    ``inputs`` and ``outputs`` are ``(flag, path)`` pairs (a ``None`` path is skipped); an input
    may be a folder, whose files are then inputs too. ``overwrite_flag`` names the command's
    ``--overwrite``, which does not lift this refusal.
    """
    outputs = [
        (flag, Path(path))
        for flag, path in outputs
        if path is not None and str(path) not in ("", "-") and process_descriptor(path) is None
    ]
    for input_flag, source in inputs:
        if source is None:
            continue
        for output_flag, output in outputs:
            if _is_or_inside(cast(Path, output), Path(source)):
                where = "the same file as" if not Path(source).is_dir() else "inside the folder"
                unless = f" (not even with {overwrite_flag})" if overwrite_flag else ""
                raise ValueError(
                    f"{output_flag} {output} is {where} {input_flag} {source}: dialeval does not "
                    f"write over its inputs{unless}; choose another {output_flag}"
                )


# -- whole files or nothing --------------------------------------------------------------------


def _finite(value: object, where: str, replaced: list[str]) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        replaced.append(f"{where or 'the value'} = {value!r}")
        return None
    if isinstance(value, dict):
        return {
            key: _finite(item, f"{where}.{key}" if where else str(key), replaced)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_finite(item, f"{where}[{index}]", replaced) for index, item in enumerate(value)]
    return value


def json_text(
    value: object, path: str | Path | None = None, indent: int | None = 2, note: bool = True
) -> str:
    """``value`` as strict JSON (UTF-8 text, a final newline): JSON has no NaN or infinity, so
    each is written as null, with one note on standard error naming ``path`` and where they were
    (a strict parser would refuse the whole file otherwise; ``note=False`` for bookkeeping whose
    figures reach a report that notes them)."""
    replaced: list[str] = []
    value = _finite(value, "", replaced)
    if replaced and note:
        shown = ", ".join(replaced[:5]) + (
            f" and {len(replaced) - 5} more" if len(replaced) > 5 else ""
        )
        print(
            f"note: {path or 'JSON output'}: {shown} written as null (JSON has no NaN or infinity)",
            file=sys.stderr,
        )
    return json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False) + "\n"


def write_report(path: str | Path, report: object) -> Path:
    """A JSON report (indented, strict JSON, UTF-8, a final newline), written whole or not at
    all."""
    return write_atomically(path, json_text(report, path))


# -- every output planned and checked before work -------------------------------------------------


@dataclass(frozen=True)
class PlannedOutput:
    """A file a command will write (``pattern``: every file in the folder ``path`` whose name
    matches this glob, when the names are known only after the work) and the flag that named it.

    ``recognised``: another test that the file is dialeval's (a DTG output by its run settings).
    ``folder``: a folder dialeval fills and deletes whole (checkpoints): an existing one is
    accepted only when ``recognised`` says it is dialeval's.
    """

    flag: str
    path: str | Path
    pattern: str | None = None
    recognised: Callable[[Path], bool] | None = None
    folder: bool = False


def standard_output_named(path: str | Path | None) -> bool:
    """Whether ``path`` is standard output (``-``, ``/dev/stdout``): printed tables then go to
    standard error, so that standard output holds the file alone."""
    return path is not None and (str(path) == "-" or process_descriptor(path) == 1)


def _dialeval_json(path: Path) -> bool:
    """A JSON file dialeval wrote before its folder had a manifest: a report with its
    ``provenance`` block, or a DTG run's settings (every format of them has its model, metric,
    num_responses and max_samples)."""
    if path.suffix.lower() != ".json":
        return False
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if isinstance(value, dict):
        block = value.get("provenance")
        return (isinstance(block, dict) and {"dialeval_version", "command"} <= set(block)) or (
            {"model", "metric", "num_responses", "max_samples"} <= set(value)  # DTG's settings
        )
    return False


def is_dialevals_file(path: str | Path) -> bool:
    """Whether dialeval may replace the regular file ``path`` unasked (see the module
    docstring)."""
    return written_by_dialeval(path) or _dialeval_json(Path(os.path.realpath(path)))


def _planned_files(planned: PlannedOutput) -> list[Path]:
    path = Path(planned.path)
    if planned.pattern is None:
        return [path]
    return sorted(path.glob(planned.pattern)) if path.is_dir() else []


def _check_folders_above(flag: str, path: Path) -> None:
    """The folders ``path`` needs are folders, or can be made: a file in the way is refused."""
    for above in path.parents:
        if above.exists() or above.is_symlink():
            if not above.is_dir():
                raise ValueError(
                    f"{flag} {path}: {above} is a file, not a folder; choose another {flag}"
                )
            return


def _refusal(planned: PlannedOutput, path: Path) -> str | None:
    """Why ``path`` may not be written (None: it may)."""
    if is_written_through(path):
        return None
    if planned.folder:
        if not path.exists() and not path.is_symlink():
            return None
        if path.is_dir() and planned.recognised is not None and planned.recognised(path):
            return None
        return f"{planned.flag} {path} is a folder dialeval did not make"
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_dir():
        return f"{planned.flag} {path} is a folder"
    if not path.exists():  # a link to nowhere: writing it would create the file it names
        return None
    if is_dialevals_file(path) or (planned.recognised is not None and planned.recognised(path)):
        return None
    return f"{planned.flag} {path}"


def check_outputs(
    planned: Iterable[PlannedOutput],
    overwrite: bool = False,
    overwrite_flag: str | None = "--overwrite",
) -> None:
    """Refuse, before any work, to write where the user's files are (see the module docstring).

    Raises a ValueError listing each existing file that dialeval did not write, with the flag
    that named it; ``overwrite`` (the command's ``overwrite_flag``) allows replacing them. A
    folder in the way of a file, an empty path, a folder where a file goes and a foreign folder
    where a checkpoint folder goes are refused even with ``overwrite``.
    """
    refused, always = [], []
    for entry in planned:
        if str(entry.path) == "":
            raise ValueError(
                f"{entry.flag} is an empty path: name a file (or - for standard "
                "output where the command writes one file)"
            )
        if str(entry.path) == "-" or process_descriptor(entry.path) is not None:
            continue
        for path in _planned_files(entry):
            _check_folders_above(entry.flag, path)
            reason = _refusal(entry, path)
            if reason is None:
                continue
            if entry.folder or path.is_dir():
                always.append(reason)
            else:
                refused.append(reason)
    if always:
        raise ValueError(
            "dialeval deletes or replaces only what it wrote, and these are not files it wrote: "
            + "; ".join(always)
            + ". Move them, or choose another output"
        )
    if refused and not overwrite:
        unless = f", or pass {overwrite_flag} to replace them" if overwrite_flag else ""
        raise ValueError(
            "would replace files that dialeval did not write: "
            + "; ".join(refused)
            + f". Choose other outputs{unless}"
        )


# -- one run per output ------------------------------------------------------------------------


def lock_path(output: str | Path) -> Path:
    """``OUTPUT.lock``; for a link, beside the file it points to: two names of one file share it."""
    output = linked_target(output)
    return output.with_name(output.name + ".lock")


def linked_target(output: str | Path) -> Path:
    """``output``, or the file it points to when it is a symbolic link (other paths are kept as the
    user wrote them, for the messages)."""
    output = Path(output)
    return Path(os.path.realpath(output)) if output.is_symlink() else output


#: The largest process id any system hands out (Linux's ``pid_max`` limit is 2**22).
_MAX_PID = 2**31 - 1


def _valid_pid(pid: object) -> bool:
    return isinstance(pid, int) and not isinstance(pid, bool) and 0 < pid <= _MAX_PID


def _pid_is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:  # another user's process
        return True
    return True


class OutputLock:
    """``OUTPUT.lock``: ``{"pid", "host", "command", "started"}``, created atomically, removed
    by :meth:`release`."""

    def __init__(self, output: str | Path, command: str):
        self.output, self.path, self.command = Path(output), lock_path(output), command
        self.held = False

    def _owner(self) -> dict:
        return {"pid": os.getpid(), "host": socket.gethostname(), "command": self.command}

    def acquire(self) -> None:
        """Create the lock or raise a ValueError saying who holds it; take over a stale one."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(3):  # a stale lock taken over, then one more try
            try:
                descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                self._take_over_if_stale()
                continue
            with deferred_stop_signals(), os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                started = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
                handle.write(json.dumps({**self._owner(), "started": started}) + "\n")
                self.held = True  # before a deferred signal is raised: the lock is then released
            return
        raise ValueError(f"could not create {self.path}: other runs keep taking it")

    def _read(self, path: Path) -> dict | None:
        try:
            holder = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return None
        # a pid no process can have is not a lock of dialeval's: unreadable, never taken over
        if not isinstance(holder, dict) or not _valid_pid(holder.get("pid")):
            return None
        return holder

    def _refuse(self, holder: dict | None) -> ValueError:
        if holder is None:
            who = "a run whose lock file cannot be read (not JSON with a valid pid and host)"
        else:
            who = (
                f"`{holder.get('command', 'dialeval')}` (pid {holder.get('pid')} on "
                f"{holder.get('host')}, since {holder.get('started', '?')})"
            )
        return ValueError(
            f"{self.output} is being written by another run, {who}: wait for it to finish, or, if "
            f"no such run is alive, delete {self.path}"
        )

    def _is_stale(self, holder: dict | None) -> bool:
        return (
            holder is not None
            and holder.get("host") == socket.gethostname()
            and _valid_pid(holder.get("pid"))
            and not _pid_is_running(holder["pid"])
        )

    def _take_over_if_stale(self) -> None:
        holder = self._read(self.path)
        if holder == {}:  # removed meanwhile: try again
            return
        if not self._is_stale(holder):
            raise self._refuse(holder)
        assert holder is not None  # a stale holder was read
        # Moved aside rather than deleted: of two runs that both found it stale, only one moves
        # this file; the other would move the first one's new lock, sees a live pid and puts it
        # back.
        aside = self.path.with_name(f"{self.path.name}.stale.{os.getpid()}")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return
        moved = self._read(aside)
        if moved != holder and not self._is_stale(moved):
            os.rename(aside, self.path)
            raise self._refuse(moved)
        aside.unlink(missing_ok=True)
        print(
            f"warning: took over the lock {self.path} of a run that is gone (pid {holder['pid']} "
            f"on {holder['host']}, `{holder.get('command', 'dialeval')}`)",
            file=sys.stderr,
        )

    def release(self) -> None:
        """Remove the lock if this process still holds it."""
        holder = self._read(self.path) if self.held else None
        if holder and (holder.get("pid"), holder.get("host")) == (
            os.getpid(),
            socket.gethostname(),
        ):
            self.path.unlink(missing_ok=True)
        self.held = False


# -- stopping on a signal ----------------------------------------------------------------------

# two counters and the pending signal number (None when no signal waits)
_signals: dict[str, Any] = {"deferred": 0, "pending": None, "received": 0}


def _on_stop_signal(signum: int, frame: FrameType | None) -> None:
    if _signals["deferred"]:
        _signals["pending"] = _signals["pending"] or signum
        return
    _signals["received"] += 1
    if _signals["received"] == 1:
        raise Interrupted(signum)
    if _signals["received"] >= 3:  # a third signal while cleaning up: the default action, at once
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    # a second one (torchrun repeats the terminal's Ctrl-C to its workers) lets the cleanup finish


@contextlib.contextmanager
def stop_signals_raise() -> Iterator[None]:
    """Inside the block, SIGINT and SIGTERM raise :class:`Interrupted` (main thread only; elsewhere
    Python cannot install handlers and the block runs unchanged). A second signal lets the cleanup
    finish, a third ends the process at once; once a signal was received, the block's end keeps
    that handler (the process is exiting) instead of restoring the previous ones."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    _signals.update(deferred=0, pending=None, received=0)
    for signum in STOP_SIGNALS:
        signal.signal(signum, _on_stop_signal)
    try:
        yield
    finally:
        # After a stop signal the process is ending: a repeated one (a second Ctrl-C, torchrun's
        # copy of it) must not kill it by signal before it exits with 128 + signal, while a third
        # still ends it at once should the exit hang.
        if not _signals["received"]:
            for signum, handler in previous.items():
                signal.signal(signum, handler)


@contextlib.contextmanager
def deferred_stop_signals() -> Iterator[None]:
    """A stop signal received inside the block is raised when the block ends, so that the block
    (appending a batch of lines, say) is never cut in the middle."""
    _signals["deferred"] += 1
    try:
        yield
    finally:
        _signals["deferred"] -= 1
        pending = _signals["pending"]
        if not _signals["deferred"] and pending is not None:
            _signals["pending"] = None
            _on_stop_signal(pending, None)


def default_stop_signals() -> None:
    """SIGINT and SIGTERM end this process at once (for processes that hold no file open)."""
    if threading.current_thread() is threading.main_thread():
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_DFL)


@contextlib.contextmanager
def held_output(output: str | Path, command: str) -> Iterator[OutputLock]:
    """The block runs holding ``OUTPUT.lock``; under ``accelerate launch`` the main process holds
    it.

    Every process calls this alike. The main process takes the lock and tells the others whether
    it did (if not, they raise as well instead of waiting for it); the other processes, which
    write nothing, keep the default signal actions from here on.
    """
    state = process_state()
    if not state.is_main_process:
        default_stop_signals()
    lock = OutputLock(output, command)
    try:
        # computed_on_main shares the main process's outcome only inside split_work
        with split_work():
            computed_on_main(lock.acquire)
        yield lock
    finally:
        lock.release()
