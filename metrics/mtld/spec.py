"""MTLD's contract (McCarthy & Jarvis 2010; lexicalrichness's)."""

from __future__ import annotations

from dialeval.metrics.engines.metric_spec import MetricSpec, SetFigure
from dialeval.metrics.mtld.job import STEPS

SPEC = MetricSpec(
    "mtld",
    "MTLD, the measure of textual lexical diversity (McCarthy & Jarvis 2010; lexicalrichness's)",
    ("mtld", "mtld_scores", "mtld_words"),
    order=150,
    steps=STEPS,
    set_figures=(SetFigure("mtld", "mtld", "mtld"),),
)
