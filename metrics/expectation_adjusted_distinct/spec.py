"""EAD's contract (Liu et al. 2022)."""

from __future__ import annotations

from dialeval.metrics.engines.metric_spec import MetricSpec, SetFigure
from dialeval.metrics.expectation_adjusted_distinct.job import STEPS

SPEC = MetricSpec(
    "expectation_adjusted_distinct",
    "EAD: distinct n-grams over their expected number (Liu et al. 2022)",
    (
        "expectation_adjusted_distinct",
        "expectation_adjusted_distinct_scores",
        "expected_distinct",
    ),
    order=100,
    steps=STEPS,
    # a meta-evaluated test set does not say which model generated it, and EAD has no default V:
    # V is the distinct tokens of the test's own responses
    set_figures=(SetFigure("ead", "ead", "ead", settings=(("ead_vocab_from_responses", True),)),),
)
