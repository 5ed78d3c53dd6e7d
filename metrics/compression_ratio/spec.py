"""The compression ratio's contract (the `diversity` package's figure)."""

from __future__ import annotations

from dialeval.metrics.compression_ratio.job import STEPS
from dialeval.metrics.engines.metric_spec import MetricSpec, SetFigure

SPEC = MetricSpec(
    "compression_ratio",
    "compression ratio of sets or a corpus (the `diversity` package's figure)",
    ("compression_ratio", "compression_ratio_per_set"),
    order=90,
    steps=STEPS,
    set_figures=(SetFigure("compression_ratio", "compression_ratio", "compression_ratio", False),),
)
