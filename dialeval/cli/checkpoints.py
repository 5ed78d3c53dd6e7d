"""``dialeval evaluate``'s checkpoints: each finished metric kept beside the report, for
``--resume``.

``OUTPUT.partial/`` holds ``manifest.json`` (what the run was: dialeval's version, its options,
each input file's sha256) and one JSON file per finished step (its name, summary and per-set
rows: a :class:`~dialeval.metrics.engines.job_steps.StepOutcome`, and the fingerprint of each model
it ran, as the report's provenance identifies models). JSON only, each file written whole
(:func:`~dialeval.cli.safe_output.write_atomically`, strict JSON); a successful run removes the
files it wrote there and then the folder if nothing else is in it. A folder at ``OUTPUT.partial``
that is not one of these (no checkpoint manifest, or other files in it) is the user's: the
command refuses to start (:func:`is_checkpoint_folder`, checked by
:func:`~dialeval.cli.safe_output.check_outputs`) rather than delete it.

The metric loop asks :meth:`MetricCheckpoints.get` before a step and hands the outcome to
:meth:`MetricCheckpoints.put` after it. ``--resume`` reuses the steps of a run with the same
manifest and models and refuses, saying what differs, otherwise. Without ``--resume``, the steps of
the same run are refused rather than thrown away unasked (pass ``--resume``, or delete the folder),
and those of a run with other settings, which this command could never reuse, are replaced with a
note. A step whose per-set rows do not match the input's sets (a file cut short) is computed again,
with a note.

Under ``accelerate launch`` the main process reads and writes the folder; the others get what it
read (they must skip the same steps, or the processes' collectives would not match).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dialeval import __version__
from dialeval.atomic_files import temporary_name
from dialeval.cli.provenance import input_identity, model_fingerprint, summary_models
from dialeval.cli.safe_output import json_text, linked_target, write_atomically
from dialeval.distributed import computed_on_main, process_state
from dialeval.metrics.engines.job_steps import StepOutcome

if TYPE_CHECKING:
    from collections.abc import Sized

MANIFEST = "manifest.json"
#: Options that change how a run looks, not its figures.
PRESENTATION_OPTIONS = (
    "--output",
    "--output-format",
    "--per-set-csv",
    "--decimals",
    "--plot",
    "--per-set",
    "--no-progress",
    "--resume",
    "--overwrite",
)


class CheckpointsInTheWay(ValueError):
    """The checkpoint folder holds finished steps of this very run and ``--resume`` was not given
    (the message says how to go on)."""


def is_checkpoint_folder(folder: str | Path) -> bool:
    """Whether ``folder`` is a checkpoint folder of dialeval evaluate: its manifest and nothing but
    JSON step files beside it."""
    folder = Path(folder)
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        entries = list(folder.iterdir())
    except (OSError, ValueError):
        return False
    return (
        isinstance(manifest, dict)
        and {"dialeval_version", "options", "inputs"} <= set(manifest)
        and all(entry.is_file() and entry.suffix == ".json" for entry in entries)
    )


def checkpoint_folder(output: str | Path) -> Path:
    output = linked_target(output)  # beside the file a link names, as its lock is
    return output.with_name(output.name + ".partial")


def _fingerprint(source: str | Path) -> str | None:
    """``sha256 <hex>`` of an input file or folder, ``revision <commit>`` of a Hub dataset's cached
    snapshot (as the report's provenance identifies inputs); None when neither can be known."""
    identity = input_identity(source)
    if "sha256" in identity:
        return f"sha256 {identity['sha256']}"
    return f"revision {identity['revision']}" if "revision" in identity else None


def run_identity(options: dict, inputs: list[tuple[str, str | Path | None]]) -> dict:
    """What a resumed run must share with the interrupted one: dialeval's version, the options
    that decide the figures (``options`` by flag, as the report's provenance records them) and the
    identity of every input (``(flag, path)`` pairs): a file's or folder's sha256, a Hub dataset's
    cached revision (null when it has none)."""
    return {
        "dialeval_version": __version__,
        "options": {
            flag: value for flag, value in options.items() if flag not in PRESENTATION_OPTIONS
        },
        "inputs": {flag: _fingerprint(path) for flag, path in inputs if path is not None},
    }


def _differences(recorded: dict, wanted: dict) -> list[str]:
    changes = []
    if recorded.get("dialeval_version") != wanted["dialeval_version"]:
        changes.append(
            f"dialeval {recorded.get('dialeval_version')} -> {wanted['dialeval_version']}"
        )
    for part, what in (("options", "{}: {!r} -> {!r}"), ("inputs", "{}: {} -> {}")):
        before, after = recorded.get(part, {}), wanted[part]
        for key in sorted(set(before) | set(after)):
            if before.get(key) != after.get(key):
                changes.append(what.format(key, before.get(key), after.get(key)))
    return changes


def _step_file(folder: Path, step: str) -> Path:
    # step names hold model paths: a readable part and a hash that keeps them apart
    readable = re.sub(r"[^A-Za-z0-9_.-]+", "_", step).strip("_")[:60]
    return folder / f"{readable}-{hashlib.sha256(step.encode('utf-8')).hexdigest()[:12]}.json"


def _finished_steps(folder: Path) -> dict[str, StepOutcome]:
    return {step: outcome for step, (outcome, _) in _step_records(folder).items()}


def _step_records(folder: Path) -> dict[str, tuple[StepOutcome, dict]]:
    """Each finished step's outcome and the fingerprints of the models it ran."""
    records = {}
    for path in sorted(folder.glob("*.json")):
        if path.name == MANIFEST:
            continue
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            outcome = StepOutcome(record["summary"], record["per_set"], record.get("scope"))
            records[record["step"]] = (outcome, dict(record.get("models", {})))
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(
                f"{path}: not a checkpoint of dialeval evaluate ({error}); delete {folder} to "
                "start over"
            ) from None
    return records


def _model_fingerprints(summary: dict) -> dict[str, str | None]:
    return {model: model_fingerprint(model) for model in summary_models(summary)}


def _model_differences(records: dict[str, tuple[StepOutcome, dict]]) -> list[str]:
    """The models whose weights changed since their step finished: the options name a model by
    its id or folder, and a model retrained into the same folder must not be mixed with the old
    one."""
    recorded = {
        model: fingerprint
        for _, models in records.values()
        for model, fingerprint in models.items()
    }
    changes = []
    for model, before in sorted(recorded.items()):
        now = _model_fingerprints({"model": model})[model]
        if now != before:
            changes.append(f"model {model}: {before or 'not found'} -> {now or 'not found'}")
    return changes


def _count(steps: Sized) -> str:
    return f"{len(steps)} finished metric{'s' if len(steps) != 1 else ''}"


def _open_on_main(folder: Path, identity: dict, resume: bool) -> dict[str, StepOutcome]:
    records = _step_records(folder) if folder.is_dir() else {}
    finished = {step: outcome for step, (outcome, _) in records.items()}
    if finished:
        recorded = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        changes = _differences(recorded, identity) + _model_differences(records)
        if resume and changes:
            raise ValueError(
                f"cannot --resume from {folder}: the interrupted run differs "
                f"({'; '.join(changes)}); rerun it as it was, or delete {folder} to start over"
            )
        if resume:
            print(
                f"resuming: {_count(finished)} from {folder} ({', '.join(finished)})",
                file=sys.stderr,
            )
            return finished
        if not changes:  # the same run again: its finished metrics are not thrown away unasked
            raise CheckpointsInTheWay(
                f"{folder} holds {_count(finished)} of an interrupted run of this command "
                f"({', '.join(finished)}): pass --resume to reuse them, or delete {folder} to "
                "start over"
            )
        print(
            f"note: replacing {folder}, the {_count(finished)} of a run with other settings "
            f"({'; '.join(changes)})",
            file=sys.stderr,
        )
    elif resume:
        print(f"nothing to resume at {folder}: starting from the first metric", file=sys.stderr)
    if folder.is_dir():
        if not is_checkpoint_folder(folder):  # checked before the run; made meanwhile by someone
            raise ValueError(f"{folder} is not a checkpoint folder of dialeval: move it away")
        shutil.rmtree(folder)
    return {}


def _create(folder: Path, identity: dict) -> None:
    """The folder with its manifest, filled in beside and renamed: it never exists without one."""
    building = temporary_name(folder, "building")  # a unique name: only this run's is removed
    building.mkdir(parents=True)
    try:
        write_atomically(building / MANIFEST, json_text(identity, folder / MANIFEST), record=False)
        building.rename(folder)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise


class MetricCheckpoints:
    """The finished steps of a run: :meth:`get` before a step, :meth:`put` after it.

    Build it with :func:`open_checkpoints`. Only the main process writes; the folder is created
    with the first finished step.
    """

    def __init__(
        self,
        folder: Path,
        identity: dict,
        finished: dict[str, StepOutcome],
        writes: bool,
        num_sets: int | None = None,
    ):
        self.folder, self.identity, self.finished, self.writes = (
            folder,
            identity,
            dict(finished),
            writes,
        )
        self.num_sets = num_sets

    def get(self, step: str) -> StepOutcome | None:
        """The outcome of ``step`` when an earlier run finished it, else None (also when its
        per-set rows do not match the input's ``num_sets``: the step is then computed again)."""
        outcome = self.finished.get(step)
        if outcome is None or outcome.per_set is None or self.num_sets is None:
            return outcome
        rows = outcome.per_set
        if (
            isinstance(rows, list)
            and len(rows) == self.num_sets
            and all(isinstance(row, dict) for row in rows)
        ):
            return outcome
        found = f"{len(rows)} per-set rows" if isinstance(rows, list) else "no per-set list"
        if self.writes:
            print(
                f"note: the checkpoint of {step} in {self.folder} holds {found} for "
                f"{self.num_sets} response sets (cut short?): computing {step} again",
                file=sys.stderr,
            )
        del self.finished[step]
        return None

    def put(self, step: str, outcome: StepOutcome) -> None:
        """Keep ``step``'s outcome (the main process writes it to the folder)."""
        self.finished[step] = outcome
        if self.writes:
            if not self.folder.is_dir():
                _create(self.folder, self.identity)
            record = {
                "step": step,
                "scope": outcome.scope,
                "summary": outcome.summary,
                "per_set": outcome.per_set,
                "models": _model_fingerprints(outcome.summary),
            }
            path = _step_file(self.folder, step)
            text = json_text(record, path, indent=None, note=False)  # the report notes them
            write_atomically(path, text, record=False)

    def remove(self) -> None:
        """The run is complete (its report written): the files it kept go, then the folder if
        nothing else is in it."""
        if not self.writes or not self.folder.is_dir():
            return
        for path in [self.folder / MANIFEST, *(_step_file(self.folder, s) for s in self.finished)]:
            path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # something not ours is in it: it stays
            self.folder.rmdir()


def open_checkpoints(
    output: str | Path, identity: dict, resume: bool = False, num_sets: int | None = None
) -> MetricCheckpoints:
    """The checkpoints of the run writing ``output`` (see the module docstring); ``num_sets``: the
    input's number of response sets (None for a corpus), which each kept step's per-set rows must
    match.

    Every process of a launch calls it alike, inside :func:`~dialeval.distributed.split_work`.
    """
    folder = checkpoint_folder(output)
    finished = computed_on_main(lambda: _open_on_main(folder, identity, resume))
    return MetricCheckpoints(
        folder, identity, finished, writes=process_state().is_main_process, num_sets=num_sets
    )


def resume_note(output: str | Path) -> str | None:
    """What a stopped or failed run left in its checkpoint folder and how to go on; None if
    nothing."""
    folder = checkpoint_folder(output)
    finished = _finished_steps(folder) if folder.is_dir() else {}
    if not finished:
        return None
    return (
        f"{_count(finished)} {'is' if len(finished) == 1 else 'are'} checkpointed in {folder}; "
        "rerun the same command with --resume to go on from there"
    )
