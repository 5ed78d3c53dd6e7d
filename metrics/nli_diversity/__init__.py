"""NLI Diversity (Stasaski & Hearst 2022, §3): Baseline, Neutral and Confidence.

The evaluate module is ``nli_diversity.py`` beside this file; its card is ``README.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
    from dialeval.metrics.nli_diversity.nli import (
        DEFAULT_NLI_MODEL,
        NLIPairMatrix,
        NLIScorer,
        iter_nli_pair_matrices,
        nli_diversity,
        nli_pair_matrices,
    )
else:
    # each name is imported from its module on first use
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".nli": (
                "DEFAULT_NLI_MODEL",
                "NLIPairMatrix",
                "NLIScorer",
                "iter_nli_pair_matrices",
                "nli_diversity",
                "nli_pair_matrices",
            ),
        },
    )

__all__ = [
    "DEFAULT_NLI_MODEL",
    "NLIPairMatrix",
    "NLIScorer",
    "iter_nli_pair_matrices",
    "nli_diversity",
    "nli_pair_matrices",
]
