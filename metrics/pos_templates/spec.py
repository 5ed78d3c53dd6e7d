"""The part-of-speech template figures' contract (the `diversity` package's)."""

from __future__ import annotations

from dialeval.metrics.engines.metric_spec import MetricSpec, SetFigure
from dialeval.metrics.pos_templates.job import STEPS

SPEC = MetricSpec(
    "pos_templates",
    "part-of-speech template rate and templates per token (the `diversity` package's figures)",
    ("template_rate", "templates_per_token", "extract_templates", "pos_template_scores"),
    order=110,
    steps=STEPS,
    # both from one run; with no tagger installed the run raises ModelNotAvailableError, which
    # meta-eval lists under "skipped"
    set_figures=(
        SetFigure("template_rate", "pos_templates", "template_rate", False),
        SetFigure("templates_per_token", "pos_templates", "templates_per_token", False),
    ),
)
