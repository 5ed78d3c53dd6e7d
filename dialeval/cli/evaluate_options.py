"""``dialeval evaluate``'s settings: one dataclass, :data:`EvaluationOptions`, made of every
registered step's settings dataclasses (their fields carry the command-line flags),
:class:`JobControl` and :class:`UncertaintyOptions`. Apart from the job
(:mod:`dialeval.cli.evaluate_job`), so the parser loads no engine."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from dialeval.cli.options import option
from dialeval.metrics import registry
from dialeval.resampling import DEFAULT_RESAMPLES, check_num_resamples
from dialeval.validation import ArgumentError, check_int


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


@dataclass
class UncertaintyOptions:
    """``--ci``: an interval on every summary figure, and with several systems a test of
    each against the baseline (:mod:`dialeval.resampling`)."""

    ci: bool = field(
        default=False,
        metadata=option(
            "--ci",
            help="a 95%% interval on every summary figure from resamples of the response sets "
            "(the responses of a corpus): the bootstrap for a per-set figure, subsamples for a "
            "corpus figure; with several inputs, each system's difference from --baseline with "
            "its interval and Holm-corrected p-value",
        ),
    )
    num_resamples: int | None = field(
        default=None,
        metadata=option(
            "--num-resamples",
            metavar="N",
            default_text=str(DEFAULT_RESAMPLES),
            help="bootstrap resamples (and permutations) of --ci, 100 to 100,000",
        ),
    )
    seed: int | None = field(
        default=None,
        metadata=option(
            "--seed",
            metavar="N",
            default_text="0",
            help="the seed of --ci's resamples: the same seed gives the same intervals",
        ),
    )

    def __post_init__(self) -> None:
        if not self.ci:
            for name in ("num_resamples", "seed"):
                if getattr(self, name) is not None:
                    raise ArgumentError(name, "sets up --ci's resamples: pass `ci` too")
            return
        if self.num_resamples is not None:
            check_num_resamples(self.num_resamples)
        if self.seed is not None:
            check_int(self.seed, "seed", minimum=0, maximum=2**32 - 1)

    @property
    def resamples(self) -> int:
        """The number of resamples ``--ci`` draws."""
        return DEFAULT_RESAMPLES if self.num_resamples is None else self.num_resamples

    @property
    def resampling_seed(self) -> int:
        """The seed of ``--ci``'s resamples."""
        return 0 if self.seed is None else self.seed


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
EvaluationOptions = _compose((*registry.job_option_classes(), JobControl, UncertaintyOptions))
