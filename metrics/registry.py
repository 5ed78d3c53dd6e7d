"""THE metric registry: every metric's name, functions, evaluate module, CLI names and models,
read from the metric folders.

A metric is its folder: each ``metrics/<name>/`` holding a ``spec.py`` declares itself there
(``SPEC``, a :class:`~dialeval.metrics.engines.metric_spec.MetricSpec`), and this module finds
them all, ordered by their ``order``. Its :class:`SetScorer` entries are the per-response-set
figures the command line computes: ``dialeval meta-eval --metric NAME[=MODEL]`` takes their
names and runs the metric's own job step for each, and ``dialeval evaluate`` runs every step once
per model given with its ``--*-model`` flag. Adding a metric is creating its folder
(CONTRIBUTING.md).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path

from dialeval.metrics.engines.job_steps import JobStep
from dialeval.metrics.engines.metric_spec import (
    MetricSpec,
    OutputHook,
    SetRun,
    default_models,
    set_runner,
)
from dialeval.validation import ArgumentError

METRICS_DIR = Path(__file__).resolve().parent
#: The module each metric folder declares itself in (``SPEC``).
SPEC_MODULE = "spec"
#: The Hub namespace of the published modules: ``dialeval push-metrics --namespace dialeval`` makes
#: the Space ``dialeval/<name>`` of each, the name the docstring examples and cards load
#: (``evaluate.load("dialeval/<name>")``); tests map it to the local folder, as evaluate's own
#: doctest harness maps its module names.
HUB_NAMESPACE = "dialeval"


@dataclass(frozen=True)
class SetScorer:
    """A per-response-set figure the CLI computes (a metric's
    :class:`~dialeval.metrics.engines.metric_spec.SetFigure`, bound to its step).

    Attributes:
        name: its name for ``dialeval meta-eval --metric`` (and in reports).
        figure: the key of the figure in each ``per_set`` row of ``run``'s result.
        run: computes the figures of every set with the metric's job step (see
            :func:`~dialeval.metrics.engines.metric_spec.set_runner`); figures of one step and
            settings share one ``run``, so meta-eval computes them once.
        default_model: the model used when none is given; None for a model-free figure.
        model_flag: the ``dialeval evaluate`` flag that lists its models (None: model-free).
        more_is_diverse: False for a homogeneity figure (compression ratio, homogenization, ...),
            whose correlation with a diversity parameter is negative when it works.
        by_default: scored when ``dialeval meta-eval`` is given no ``--metric``.
    """

    name: str
    figure: str
    run: SetRun
    default_model: str | None = None
    model_flag: str | None = None
    more_is_diverse: bool = True
    by_default: bool = False

    @property
    def needs_model(self) -> bool:
        return self.default_model is not None


@dataclass(frozen=True)
class RegisteredMetric:
    """A metric subpackage ``dialeval.metrics.<name>`` and its evaluate module
    ``metrics/<name>/<name>.py``, as its ``spec.py`` declares it."""

    name: str
    summary: str
    functions: tuple[str, ...]
    needs_model: bool = False
    default_model: str | None = None
    set_scorers: tuple[SetScorer, ...] = field(default_factory=tuple)
    #: What ``dialeval evaluate`` runs of it (``metrics/<name>/job.py``), in order.
    job_steps: tuple[JobStep, ...] = field(default_factory=tuple)
    #: The files it writes beside a report.
    outputs: tuple[OutputHook, ...] = field(default_factory=tuple)

    @property
    def module_dir(self) -> Path:
        """The evaluate module's folder, for ``evaluate.load(str(module_dir))``."""
        return METRICS_DIR / self.name

    @property
    def hub_name(self) -> str:
        """The name a Hub user loads: ``evaluate.load(hub_name)`` (see :data:`HUB_NAMESPACE`)."""
        return f"{HUB_NAMESPACE}/{self.name}"


def discover_specs(metrics_dir: Path = METRICS_DIR) -> tuple[MetricSpec, ...]:
    """The ``SPEC`` of every ``metrics_dir/<name>/spec.py``, by ``order`` (then name)."""
    specs = []
    for path in sorted(metrics_dir.glob(f"*/{SPEC_MODULE}.py")):
        module = importlib.import_module(f"{__package__}.{path.parent.name}.{SPEC_MODULE}")
        spec = getattr(module, "SPEC", None)
        if not isinstance(spec, MetricSpec) or spec.name != path.parent.name:
            raise TypeError(
                f"{path} must define SPEC, a MetricSpec named {path.parent.name!r}, got {spec!r}"
            )
        specs.append(spec)
    return tuple(sorted(specs, key=lambda spec: (spec.order, spec.name)))


#: One run per (step, settings): the figures of one step share it.
_RUNS: dict[tuple[int, tuple[tuple[str, object], ...]], SetRun] = {}


def _set_scorers(spec: MetricSpec) -> tuple[SetScorer, ...]:
    scorers = []
    for figure in spec.set_figures:
        step = spec.step(figure.step)
        run = _RUNS.setdefault((id(step), figure.settings), set_runner(step, dict(figure.settings)))
        models = default_models(step)
        scorers.append(
            SetScorer(
                figure.name,
                figure.figure,
                run,
                default_model=models[0] if models else None,
                model_flag=step.model_flag if step.models is not None else None,
                more_is_diverse=figure.more_is_diverse,
                by_default=figure.by_default,
            )
        )
    return tuple(scorers)


def registered(spec: MetricSpec) -> RegisteredMetric:
    """The registry's entry of ``spec``."""
    model = spec.model if spec.model is not None and spec.model.required else None
    return RegisteredMetric(
        spec.name,
        spec.summary,
        spec.functions,
        needs_model=model is not None,
        default_model=None if model is None else model.default,
        set_scorers=_set_scorers(spec),
        job_steps=spec.steps,
        outputs=spec.outputs,
    )


#: Every metric folder's declaration, in job order.
SPECS: tuple[MetricSpec, ...] = discover_specs()
METRICS: tuple[RegisteredMetric, ...] = tuple(registered(spec) for spec in SPECS)

BY_NAME: dict[str, RegisteredMetric] = {metric.name: metric for metric in METRICS}
#: Every step of ``dialeval evaluate``, in registry order.
JOB_STEPS: tuple[JobStep, ...] = tuple(step for metric in METRICS for step in metric.job_steps)
#: Every per-set figure by its CLI name (``dialeval meta-eval --metric``).
SET_SCORERS: dict[str, SetScorer] = {
    scorer.name: scorer for metric in METRICS for scorer in metric.set_scorers
}
#: Per-set scorer names renamed (old -> new), still accepted for one release with a warning:
#: ``distinct_n`` is corpus Dist-n everywhere else in dialeval, and the n-gram cosine measure has
#: one name, the similarity's (``similarity="ngram_cosine"``) as ``sent_bert`` / ``bertscore`` do.
RENAMED_SET_SCORERS = {"distinct_n": "averaged_distinct_n", "cos_sim": "ngram_cosine"}
#: Every file-writing hook, in registry order (Sem-Ent's plot and saved clusters, ...).
OUTPUT_HOOKS: tuple[OutputHook, ...] = tuple(hook for metric in METRICS for hook in metric.outputs)


def get(name: str) -> RegisteredMetric:
    """The registered metric ``name``; a ValueError lists the names otherwise."""
    if name not in BY_NAME:
        raise ArgumentError("name", f"must be one of the metrics {sorted(BY_NAME)}, got {name!r}")
    return BY_NAME[name]


def set_scorer(name: str) -> SetScorer:
    """The per-set figure ``name`` (``dialeval meta-eval --metric`` names); a ValueError lists them
    otherwise."""
    if name not in SET_SCORERS:
        raise ArgumentError("metric", f"must be one of {sorted(SET_SCORERS)}, got {name!r}")
    return SET_SCORERS[name]


def job_option_classes() -> tuple[type, ...]:
    """The settings dataclasses of every job step, each once, in registry order."""
    return tuple(dict.fromkeys(cls for step in JOB_STEPS for cls in step.options))
