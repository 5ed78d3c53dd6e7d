"""``dialeval evaluate``'s settings: one dataclass, :data:`EvaluationOptions`, made of every
registered step's settings dataclasses (their fields carry the command-line flags) and
:class:`JobControl`. Apart from the job (:mod:`dialeval.cli.evaluate_job`), so the parser loads
no engine."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from dialeval.cli.options import option
from dialeval.metrics import registry


def step_names() -> list[str]:
    """Every ``--metric`` name, in the order the job runs the steps."""
    return [step.name for step in registry.JOB_STEPS]


@dataclass
class JobControl:
    """Which steps run and what the job shows (not what a metric computes)."""

    metrics: list[str] | None = field(
        default=None,
        metadata=option(
            "--metric",
            metavar="NAME",
            repeatable=True,
            aliases=("metric",),
            help="run only this step (repeatable; default: every step that fits the input): "
            + ", ".join(step_names()),
        ),
    )
    progress: bool = field(
        default=True, metadata=option("--no-progress", help="hide progress bars")
    )


def _compose(classes: tuple[type, ...]) -> type:
    """One dataclass with the fields of ``classes`` (in that order) that runs each one's
    ``__post_init__``."""
    owner: dict[str, type] = {}
    for cls in classes:
        for f in dataclasses.fields(cls):
            if owner.setdefault(f.name, cls) is not cls:
                raise TypeError(
                    f"the job setting {f.name!r} is declared by both {owner[f.name].__name__} and "
                    f"{cls.__name__}"
                )

    def __post_init__(self: object) -> None:
        for cls in classes:
            hook = cls.__dict__.get("__post_init__")
            if hook is not None:
                hook(self)

    # dataclass() collects base fields from the last base to the first
    composed = dataclasses.make_dataclass(
        "EvaluationOptions",
        [],
        bases=tuple(reversed(classes)),
        namespace={"__post_init__": __post_init__},
    )
    composed.__module__ = __name__
    composed.__doc__ = (
        "What ``dialeval evaluate`` computes, and how: the fields of every registered step's "
        "settings ("
        + ", ".join(cls.__name__ for cls in classes)
        + "); each field with an ``option`` is a flag."
    )
    return composed


#: The job's settings: every registered step's settings dataclass and :class:`JobControl`.
EvaluationOptions = _compose((*registry.job_option_classes(), JobControl))
