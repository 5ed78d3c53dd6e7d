"""Meta-evaluation of diversity metrics (Tevet & Berant 2021, §6): Spearman, Pearson, OCA, bootstrap
CI.

The evaluate module is ``diversity_meta_eval.py`` beside this file; its card is ``README.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
    from dialeval.metrics.diversity_meta_eval.statistics import (
        bootstrap_spearman_ci,
        diversity_meta_evaluation,
        optimal_classification_accuracy,
        pearson,
        spearman,
        subsampled_spearman,
    )
else:
    # each name is imported from its module on first use
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".statistics": (
                "bootstrap_spearman_ci",
                "diversity_meta_evaluation",
                "optimal_classification_accuracy",
                "pearson",
                "spearman",
                "subsampled_spearman",
            ),
        },
    )

__all__ = [
    "bootstrap_spearman_ci",
    "diversity_meta_evaluation",
    "optimal_classification_accuracy",
    "pearson",
    "spearman",
    "subsampled_spearman",
]
