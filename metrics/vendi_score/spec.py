"""The Vendi Score's contract (Friedman & Dieng 2023)."""

from __future__ import annotations

from dialeval.hub import EMBEDDED_SENTENCE_MODEL
from dialeval.metrics.engines.metric_spec import MetricSpec, ModelSpec, SetFigure
from dialeval.metrics.vendi_score.job import STEPS

SPEC = MetricSpec(
    "vendi_score",
    "Vendi Score of sentence embeddings (Friedman & Dieng 2023)",
    ("vendi_score", "vendi_score_from_embeddings", "vendi_score_from_kernel"),
    order=40,
    steps=STEPS,
    set_figures=(SetFigure("vendi", "vendi", "vendi_score"),),
    model=ModelSpec("--sentence-model", EMBEDDED_SENTENCE_MODEL, "sentence-transformers encoder"),
)
