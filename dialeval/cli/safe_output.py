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
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterable
from pathlib import Path

from dialeval.atomic_files import write_atomically

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
    outputs = [(flag, Path(path)) for flag, path in outputs if path is not None]
    for input_flag, source in inputs:
        if source is None:
            continue
        for output_flag, output in outputs:
            if _is_or_inside(output, Path(source)):
                where = "the same file as" if not Path(source).is_dir() else "inside the folder"
                unless = f" (not even with {overwrite_flag})" if overwrite_flag else ""
                raise ValueError(
                    f"{output_flag} {output} is {where} {input_flag} {source}: dialeval does not "
                    f"write over its inputs{unless}; choose another {output_flag}"
                )


# -- whole files or nothing --------------------------------------------------------------------


def write_report(path: str | Path, report) -> Path:
    """A JSON report (indented, UTF-8, a final newline), written whole or not at all."""
    return write_atomically(path, json.dumps(report, indent=2, ensure_ascii=False) + "\n")


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


def _pid_is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
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
        return holder if isinstance(holder, dict) else None

    def _refuse(self, holder: dict | None):
        if holder is None:
            who = "a run whose lock file cannot be read"
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
            and isinstance(holder.get("pid"), int)
            and not _pid_is_running(holder["pid"])
        )

    def _take_over_if_stale(self) -> None:
        holder = self._read(self.path)
        if holder == {}:  # removed meanwhile: try again
            return
        if not self._is_stale(holder):
            raise self._refuse(holder)
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

_signals = {"deferred": 0, "pending": None, "received": 0}


def _on_stop_signal(signum, frame) -> None:
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
def stop_signals_raise():
    """Inside the block, SIGINT and SIGTERM raise :class:`Interrupted` (main thread only; elsewhere
    Python cannot install handlers and the block runs unchanged)."""
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
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def deferred_stop_signals():
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
def held_output(output: str | Path, command: str):
    """The block runs holding ``OUTPUT.lock``; under ``accelerate launch`` the main process holds
    it.

    Every process calls this alike. The main process takes the lock and tells the others whether
    it did (if not, they raise as well instead of waiting for it); the other processes, which
    write nothing, keep the default signal actions from here on.
    """
    from dialeval.distributed import computed_on_main, process_state, split_work

    state = process_state()
    if not state.is_main_process:
        default_stop_signals()
    lock = OutputLock(output, command)
    try:
        with (
            split_work()
        ):  # computed_on_main shares the main process's outcome only inside split_work
            computed_on_main(lock.acquire)
        yield lock
    finally:
        lock.release()
