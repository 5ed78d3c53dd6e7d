"""NLI Diversity (Stasaski & Hearst 2022, §3): Baseline, Neutral and Confidence.

The evaluate module is ``nli_diversity.py`` beside this file; its card is ``README.md``.
"""

from dialeval.metrics.nli_diversity.nli import (
    DEFAULT_NLI_MODEL,
    NLIPairMatrix,
    NLIScorer,
    iter_nli_pair_matrices,
    nli_diversity,
    nli_pair_matrices,
)

__all__ = [
    "DEFAULT_NLI_MODEL",
    "NLIPairMatrix",
    "NLIScorer",
    "iter_nli_pair_matrices",
    "nli_diversity",
    "nli_pair_matrices",
]
