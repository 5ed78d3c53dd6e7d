"""The Vendi score of a resampled corpus, exactly, from the embeddings the run read: a resample
drawing response ``u`` ``c_u`` times is the multiset of its rows, whose score
:func:`.vendi._score_occurrences` computes from the row counts (the eigenvalues of
``X^T diag(w) X / sum(w)`` for normalised rows), as the metric does on that input
(``dialeval evaluate --ci``)."""

from __future__ import annotations

import numpy as np

from dialeval.metrics.vendi_score.vendi import _score_occurrences
from dialeval.resampling import UnitStatistic


def vendi_statistic(vectors: np.ndarray, index: np.ndarray) -> UnitStatistic:
    """Vendi (q = 1) of resampled responses; ``vectors[index[u]]`` is response ``u``'s vector."""
    index = np.asarray(index)

    def evaluate(counts: np.ndarray) -> np.ndarray:
        values = np.full(len(counts), np.nan)
        for row, drawn in enumerate(np.rint(counts).astype(np.int64)):
            if drawn.sum() > 0:
                occurrences = np.repeat(index, drawn)
                values[row] = _score_occurrences(vectors, occurrences, [1.0])["vendi_score"]
        return values

    return UnitStatistic(
        len(index),
        evaluate,
        "recomputed on each resample from the embeddings of the one pass",
        "no response in the resample",
    )
