"""Homogenization of a resampled corpus, for ``dialeval evaluate --ci``.

ROUGE-L and BLEU, approximately: each response keeps its mean similarity to every other response
of the whole corpus, and a resample averages those (an exact recomputation is ``O(n^2)`` pairs per
resample); their mean over the corpus is the figure itself. BERTScore, exactly: the run keeps the
F1 of every pair of distinct texts (``U``), and a resample drawing unit ``a`` ``m_a`` times scores
``(m U m - m . diag U) / (n (n - 1))``, as the metric scores a multiset.
"""

from __future__ import annotations

import numpy as np

from dialeval.metrics.engines.figure_statistics import chunked
from dialeval.metrics.engines.reduction import UnitSimilarity
from dialeval.metrics.homogenization.bleu import bleu_against_each, tokenize_13a
from dialeval.resampling import UnitStatistic

#: How the BERTScore figure is resampled.
EXACT_METHOD = "recomputed on each resample from the BERTScore F1 of the distinct pairs"
#: How the ROUGE-L and BLEU figures are resampled.
METHOD = "mean of per-response homogenization against the whole corpus (the others fixed)"


def _first_seen(keys: list) -> np.ndarray:
    """The index of each key among the distinct keys, numbered in order of first occurrence."""
    index: dict = {}
    return np.array([index.setdefault(key, len(index)) for key in keys], dtype=np.int64)


def bleu_per_response(texts: list[str]) -> np.ndarray:
    """Each text's BLEU as the reference of all the other texts."""
    scores, _ = bleu_against_each(texts)
    return scores[_first_seen([tokenize_13a(text) for text in texts])]


def unit_similarity_statistic(units: UnitSimilarity) -> UnitStatistic:
    """BERTScore homogenization of resampled responses (one unit per response of the corpus)."""
    matrix = np.asarray(units.unit_matrix, dtype=np.float64)
    diagonal = np.diag(matrix).copy()
    items = np.asarray(units.unit_of_item)

    def evaluate(counts: np.ndarray) -> np.ndarray:
        weights = np.zeros((len(counts), len(matrix)))
        np.add.at(weights.T, items, counts.T)  # each response's draws on its distinct text
        total = ((weights @ matrix) * weights).sum(axis=1) - weights @ diagonal
        size = counts.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(size >= 2, total / (size * (size - 1)), np.nan)

    return UnitStatistic(
        len(items), chunked(evaluate), EXACT_METHOD, "fewer than 2 responses in the resample"
    )
