"""``dialeval dtg``'s output: a JSONL file appended a batch at a time, resumable at its batches.

One line per context (and trial), in order; ``OUTPUT.run.json`` beside it holds the run's settings
(:class:`~dialeval.cli.dtg_options.DTGOptions`, the format version and what the runner records).
A run restarted with the same settings keeps every complete batch, drops a half-written one, and
continues from there; any other setting is refused, as is a file of an older format.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from dialeval.cli.dtg_options import DTGOptions
from dialeval.cli.safe_output import (
    deferred_stop_signals,
    is_dialevals_file,
    json_text,
    write_atomically,
)

#: Version of the output files: 2 = S counts resamples; results carry num_initial / num_resampled.
FORMAT = 2


def settings_path(output: str | Path) -> Path:
    """``OUTPUT.run.json``: the settings of the run that writes ``OUTPUT``."""
    output = Path(output)
    return output.with_name(output.name + ".run.json")


def is_dtg_output(path: str | Path) -> bool:
    """Whether ``path`` is a results file of ``dialeval dtg``: its ``OUTPUT.run.json`` beside it is
    dialeval's (the results themselves grow a batch at a time, so no digest of them is kept)."""
    settings = settings_path(path)
    return settings.is_file() and is_dialevals_file(settings)


class ResumableJsonl:
    """A JSONL output of one record per context (and trial), appended a batch at a time, resumable
    at batch boundaries.

    Line ``L`` holds trial ``L // num_contexts``, context ``L % num_contexts``; without
    ``num_contexts`` every line is one context of a single trial. ``OUTPUT.run.json`` holds
    ``{"format": FORMAT, **settings, **recorded}``; resuming needs it to match exactly.
    """

    def __init__(
        self,
        path: str | Path,
        settings: DTGOptions,
        batch_size: int,
        overwrite: bool = False,
        num_contexts: int | None = None,
        recorded: dict[str, Any] | None = None,
    ) -> None:
        self.path = Path(path)
        self.settings_path = settings_path(self.path)
        self.batch_size = batch_size
        self.num_contexts = num_contexts
        wanted = json.loads(
            json.dumps({"format": FORMAT, **settings.as_dict(), **(recorded or {})})
        )
        if self.path.exists() and not overwrite:
            if not self.settings_path.exists():
                raise ValueError(
                    f"{self.path} exists but {self.settings_path} does not: pass --overwrite to "
                    "start over"
                )
            recorded_settings = json.loads(self.settings_path.read_text(encoding="utf-8"))
            if recorded_settings.get("format") != FORMAT:
                raise ValueError(
                    f"cannot resume {self.path}: it was written by an older dialeval (format "
                    f"{recorded_settings.get('format', 1)}, where max_samples counted the first n "
                    "responses; now S counts resamples only and results report num_initial / "
                    "num_resampled). `dialeval dtg-summary` still reads it; pass --overwrite to "
                    "start a new run"
                )
            changed = sorted(
                key
                for key in set(recorded_settings) | set(wanted)
                if recorded_settings.get(key) != wanted.get(key)
            )
            if changed:
                details = ", ".join(
                    f"{key}: {recorded_settings.get(key)!r} -> {wanted.get(key)!r}"
                    for key in changed
                )
                raise ValueError(
                    f"cannot resume {self.path}: its run had other settings ({details}); pass "
                    "--overwrite"
                )
        else:
            write_atomically(self.path, "")
            write_atomically(self.settings_path, json_text(wanted, self.settings_path))
        self.num_done = self._keep_complete_batches()

    def position(self, line: int) -> tuple[int, int]:
        """(trial, context index) of a line."""
        if self.num_contexts is None:
            return 0, line
        return divmod(line, self.num_contexts)

    def _keep_complete_batches(self) -> int:
        """Drops a half-written last line and a partly written batch; returns the records kept.

        Only the last piece, which has no newline yet, can be half written (lines are appended
        in order); a complete line that is not JSON means the file was damaged, and is an error
        naming its ``FILE:LINE`` rather than a reason to regenerate everything after it.
        """
        data = self.path.read_bytes()
        lines = data.split(b"\n")[:-1]  # a last piece without its newline is half written
        kept = []
        for line_number, line in enumerate(lines):
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
                reason = (
                    error.msg
                    if isinstance(error, json.JSONDecodeError)
                    else "nested too deeply"
                    if isinstance(error, RecursionError)
                    else "not UTF-8"
                )
                raise ValueError(
                    f"{self.path}:{line_number + 1}: not valid JSON ({reason}), a complete line of "
                    "the file: it was damaged, not cut short by a kill. Restore the line, or cut "
                    "the file before it to regenerate from there, or pass --overwrite to start over"
                ) from None
            trial, index = self.position(line_number)
            found = record if isinstance(record, dict) else {}
            if found.get("index") != index or found.get("trial", 0) != trial:
                raise ValueError(
                    f"{self.path}:{line_number + 1}: trial {found.get('trial', 0)!r}, index "
                    f"{found.get('index')!r}; expected trial {trial}, index {index}"
                )
            kept.append(line)
        _, index = self.position(len(kept))
        # batches start at multiples of batch_size in each trial
        kept = kept[: len(kept) - index % self.batch_size]
        text = b"".join(line + b"\n" for line in kept)
        if text != data:
            write_atomically(self.path, text)
        return len(kept)

    def append(self, records: list[dict[str, Any]]) -> None:
        """Appends a batch's lines; a stop signal meanwhile takes effect once the batch is on
        disk."""
        with deferred_stop_signals(), open(self.path, "a", encoding="utf-8") as handle:
            handle.writelines(json_text(record, self.path, indent=None) for record in records)
            handle.flush()
            os.fsync(handle.fileno())
        self.num_done += len(records)
