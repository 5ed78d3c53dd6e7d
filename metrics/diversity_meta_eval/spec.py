"""The meta-evaluation statistics' contract: functions only (no job step; ``dialeval meta-eval``
itself is built on them)."""

from __future__ import annotations

from dialeval.metrics.engines.metric_spec import MetricSpec

SPEC = MetricSpec(
    "diversity_meta_eval",
    "meta-evaluation of a diversity metric: Spearman, Pearson, OCA (Tevet & Berant)",
    (
        "diversity_meta_evaluation",
        "spearman",
        "optimal_classification_accuracy",
        "bootstrap_spearman_ci",
    ),
    order=60,
)
