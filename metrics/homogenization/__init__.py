"""Homogenization score: the mean similarity of every text to every other (higher = more
homogeneous).

The figure of the ``diversity`` package (Shaib et al. 2024, "Standardizing the Measurement of Text
Diversity", §3), defined by Padmakumar & He (2023, "Does Writing with Language Models Reduce
Content Diversity?", arXiv:2309.05196)::

    hom(T) = 1/n sum_i  1/(n - 1) sum_{j != i}  sim(prediction = t_j, reference = t_i)

with ``sim`` the ROUGE-L F-measure (``rouge_score``), BERTScore F1 (``bert_score``, through
dialeval's BERTScore engine) or BLEU, where the inner term is the corpus BLEU of the ``n - 1``
other texts against ``t_i`` (as the package computes it with evaluate's ``bleu``): it pools their
clipped n-gram counts and lengths, so it is not the mean of their sentence BLEUs. Unlike the
package, each distinct text is scored once (identical texts still count as pairs), ROUGE-L's LCS
runs in rapidfuzz's compiled scorer and BLEU's clipped counts of all pairs come from sparse
matrices; the value is the true mean, unrounded (README.md lists every difference and how to
get the package's number).

The evaluate module is ``homogenization.py`` beside this file; its card is ``README.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
    from dialeval.metrics.homogenization.scores import (
        DEFAULT_HOMOGENIZATION_MODEL,
        MEASURES,
        homogenization,
        homogenization_per_set,
        homogenization_score,
        rouge_tokens,
    )
else:
    # each name is imported from its module on first use: the metric's declaration (spec.py)
    # is read without loading numpy
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".scores": (
                "DEFAULT_HOMOGENIZATION_MODEL",
                "MEASURES",
                "homogenization",
                "homogenization_per_set",
                "homogenization_score",
                "rouge_tokens",
            )
        },
    )

__all__ = [
    "DEFAULT_HOMOGENIZATION_MODEL",
    "MEASURES",
    "homogenization",
    "homogenization_per_set",
    "homogenization_score",
    "rouge_tokens",
]
