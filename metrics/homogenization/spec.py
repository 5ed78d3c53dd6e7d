"""The homogenization score's contract (the `diversity` package's)."""

from __future__ import annotations

from dialeval.metrics.engines.metric_spec import MetricSpec, ModelSpec, SetFigure
from dialeval.metrics.homogenization.defaults import DEFAULT_HOMOGENIZATION_MODEL
from dialeval.metrics.homogenization.job import STEPS

SPEC = MetricSpec(
    "homogenization",
    "homogenization score: mean ROUGE-L / BLEU / BERTScore of every text to the others (the "
    "`diversity` package's)",
    ("homogenization", "homogenization_per_set", "homogenization_score"),
    order=140,
    steps=STEPS,
    set_figures=tuple(
        SetFigure(step.name, step.name, step.name, more_is_diverse=False) for step in STEPS
    ),
    # only the BERTScore measure takes a model
    model=ModelSpec(
        "--homogenization-model", DEFAULT_HOMOGENIZATION_MODEL, "BERTScore encoder", required=False
    ),
)
