"""The contract a metric folder declares once: :class:`MetricSpec`, in ``metrics/<name>/spec.py``.

A metric is its folder: :mod:`dialeval.metrics.registry` finds every ``metrics/*/spec.py`` and
reads its ``SPEC``; the command line takes from it everything it runs and writes. A spec names
the metric's public functions, its job steps (:class:`~dialeval.metrics.engines.job_steps.JobStep`:
what ``dialeval evaluate`` runs, and what ``dialeval meta-eval`` runs for a per-set figure, with
the settings that command gives it), its per-set figures (:class:`SetFigure`), its model
(:class:`ModelSpec`) and the files it writes beside a report (:class:`OutputHook`).

A spec module is read to build ``dialeval evaluate --help``, so it imports only light modules
(this one, ``job_steps``, ``dialeval.option_fields``, ``dialeval.validation``, constants); a step
imports its metric's heavy code inside its ``run``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from dialeval.metrics.engines.job_steps import JobData, JobStep, Progress

#: The command's arguments by their names (``vars(args)``: ``plot``, ``save_sem_ent_clusters``,
#: ...), as an output hook reads them.
Arguments = Mapping[str, Any]
#: ``run(response_sets, model, batch_size=, device=, allow_empty=, progress=, backend=)`` -> the
#: step's summary figures with ``per_set``: one dict of figures per set.
SetRun = Callable[..., dict]


@dataclass(frozen=True)
class ModelSpec:
    """The model a metric's functions take.

    Attributes:
        flag: the ``dialeval evaluate`` flag that names it.
        default: the model used when none is given (None: the user must name one).
        kind: what sort of model it is, for a reader (``"NLI classifier"``, ...).
        required: False when only some of the metric's figures use a model (the metric runs
            without one by default).
    """

    flag: str
    default: str | None
    kind: str
    required: bool = True


@dataclass(frozen=True)
class SetFigure:
    """A per-response-set figure that ``dialeval meta-eval --metric NAME`` scores test sets with.

    Attributes:
        name: its ``--metric`` name (and its row in the meta-evaluation report).
        step: the name of the metric's job step that computes it.
        figure: its key in each ``per_set`` row of the step's outcome.
        more_is_diverse: False for a homogeneity figure (compression ratio, homogenization, ...),
            whose correlation with a diversity parameter is negative when it works.
        settings: the step's settings for this command, over their defaults (BERTScore without
            the baseline rescale; EAD with V counted from the test set's own responses).
        by_default: scored when ``dialeval meta-eval`` is given no ``--metric``.
    """

    name: str
    step: str
    figure: str
    more_is_diverse: bool = True
    settings: tuple[tuple[str, object], ...] = ()
    by_default: bool = False


@dataclass(frozen=True)
class SystemReport:
    """One system's finished report, as an output hook writes files from it."""

    name: str
    source: str
    report: dict
    num_systems: int


@dataclass(frozen=True)
class OutputHook:
    """Files a metric writes beside the report (plots, fitted state), and the flags naming them.

    Attributes:
        planned: ``planned(arguments, systems) -> [(flag, path)]``: every file the command may
            write for the metric (``systems``: the names of the inputs), checked before any
            work (an input, a file dialeval did not write). An empty path is an error there.
        write: ``write(arguments, system) -> [line]``: writes the files of one system's report
            (:class:`SystemReport`) and returns the lines to print about them.
        check: ``check(arguments, options, planned_steps, num_systems)``: raises ValueError when
            a flag asks for a file the planned steps cannot give (before any step runs).
        plot_help: what ``--plot`` draws for the metric, for that flag's help.
    """

    planned: Callable[[Arguments, Sequence[str]], list[tuple[str, Path | str]]]
    write: Callable[[Arguments, SystemReport], list[str]] | None = None
    check: Callable[[Arguments, object, Sequence[str], int], None] | None = None
    plot_help: str | None = None


@dataclass(frozen=True)
class MetricSpec:
    """Everything a metric folder ``metrics/<name>/`` says about itself (see the module docstring).

    Attributes:
        name: the folder's name, that of its evaluate module ``<name>.py``.
        summary: one line on what it measures, and whose it is.
        functions: the public functions ``dialeval.metrics.<name>`` exports.
        order: where its steps and figures come in the job and the reports (ascending; the
            built-in metrics are numbered by tens, so a new one can go between two of them).
        steps: what ``dialeval evaluate`` runs of it, in order.
        set_figures: the per-set figures ``dialeval meta-eval`` scores with.
        model: the model its functions take; None for a model-free metric.
        outputs: the files it writes beside a report.
    """

    name: str
    summary: str
    functions: tuple[str, ...]
    order: int
    steps: tuple[JobStep, ...] = ()
    set_figures: tuple[SetFigure, ...] = ()
    model: ModelSpec | None = None
    outputs: tuple[OutputHook, ...] = ()

    @property
    def settings(self) -> tuple[type, ...]:
        """The settings dataclasses of its steps (their fields carry the flags), each once."""
        return tuple(dict.fromkeys(cls for step in self.steps for cls in step.options))

    def step(self, name: str) -> JobStep:
        """The step ``name`` of this metric."""
        for step in self.steps:
            if step.name == name:
                return step
        raise LookupError(f"metric {self.name!r} has no job step {name!r}")


def step_settings(step: JobStep, values: Mapping[str, object]) -> SimpleNamespace:
    """Settings for ``step`` outside the evaluate job: each of its settings dataclasses built with
    the ``values`` it declares (the others keep their defaults, and each class checks its own),
    their fields merged into one object as the job's settings hold them."""
    merged: dict[str, object] = {}
    for cls in step.options:
        given = {
            f.name: values[f.name] for f in dataclasses.fields(cls) if f.init and f.name in values
        }
        merged.update(vars(cls(**given)))
    return SimpleNamespace(**merged)


def default_models(step: JobStep) -> list[str]:
    """The models ``step`` runs with under its settings' defaults (none for a model-free step)."""
    return [] if step.models is None else list(step.models(step_settings(step, {})))


def set_runner(step: JobStep, settings: Mapping[str, object]) -> SetRun:
    """The per-set run of ``step`` under ``settings``, in the call ``dialeval meta-eval`` makes:
    the step's own ``run`` over the response sets, its summary with ``per_set``."""

    def run(
        sets: Sequence[Sequence[str]],
        model: str | None = None,
        batch_size: int = 64,
        device: str | None = None,
        allow_empty: bool = False,
        progress: Progress | None = None,
        backend: str | None = None,
    ) -> dict:
        response_sets = [list(responses) for responses in sets]
        data = JobData(
            "response_set",
            [text for responses in response_sets for text in responses],
            response_sets,
        )
        options = step_settings(
            step,
            {
                **settings,
                "batch_size": batch_size,
                "device": device,
                "backend": backend,
                "allow_empty": allow_empty,
            },
        )
        outcome = step.run(data, model, options, progress if progress is not None else _ignore)
        return {**outcome.summary, "per_set": outcome.per_set}

    return run


def _ignore(count: int) -> None:
    """A progress callback for a run nobody watches."""
