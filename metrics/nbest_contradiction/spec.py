"""The n-best contradiction figures' contract (Sato et al. 2022): functions only (no job step)."""

from __future__ import annotations

from dialeval.metrics.engines.metric_spec import MetricSpec

SPEC = MetricSpec(
    "nbest_contradiction",
    "Certainty and Variety of n-best lists (Sato et al. 2022)",
    ("nbest_contradiction", "certainty_variety"),
    order=80,
)
