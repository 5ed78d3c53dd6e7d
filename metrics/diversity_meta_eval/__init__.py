"""Meta-evaluation of diversity metrics (Tevet & Berant 2021, §6): Spearman, Pearson, OCA, bootstrap
CI.

The evaluate module is ``diversity_meta_eval.py`` beside this file; its card is ``README.md``.
"""

from dialeval.metrics.diversity_meta_eval.statistics import (
    bootstrap_spearman_ci,
    diversity_meta_evaluation,
    optimal_classification_accuracy,
    pearson,
    spearman,
    subsampled_spearman,
)

__all__ = [
    "bootstrap_spearman_ci",
    "diversity_meta_evaluation",
    "optimal_classification_accuracy",
    "pearson",
    "spearman",
    "subsampled_spearman",
]
