"""The self-repetition score's contract (Salkar et al. 2022; the `diversity` package's)."""

from __future__ import annotations

from dialeval.metrics.engines.metric_spec import MetricSpec, SetFigure
from dialeval.metrics.self_repetition.job import STEPS

SPEC = MetricSpec(
    "self_repetition",
    "self-repetition score of sets or a corpus (Salkar et al. 2022; the `diversity` package's)",
    ("self_repetition", "self_repetition_per_set", "self_repetition_scores"),
    order=130,
    steps=STEPS,
    set_figures=(SetFigure("self_repetition", "self_repetition", "self_repetition", False),),
)
