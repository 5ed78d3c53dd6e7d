"""Response selection's contract (Sato et al. 2020): LMs scored on a question file."""

from __future__ import annotations

from dialeval.metrics.engines.metric_spec import MetricSpec, ModelSpec
from dialeval.metrics.response_selection.job import STEPS

SPEC = MetricSpec(
    "response_selection",
    "response-selection accuracy of an LM (Sato et al. 2020)",
    ("response_selection", "system_ranking_correlation", "random_protocol_correlation"),
    order=70,
    steps=STEPS,
    model=ModelSpec("--selection-model", None, "causal or seq2seq language model"),
)
