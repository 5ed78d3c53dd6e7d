"""Remote clique and chamfer distance of a resampled corpus, from the embeddings the run read
(``dialeval evaluate --ci``).

Remote clique is exact: ``1 - ||sum_u c_u u_u||^2 / n^2`` with ``n = sum_u c_u`` is the closed
form of :mod:`.distances` on the multiset the resample draws. Chamfer distance would need every
resample's nearest neighbours (``O(n^2)`` each): each response keeps its nearest-other distance
in the whole corpus and a resample averages those (a response drawn twice is not moved to 0).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dialeval.metrics.embedding_distances.distances import (
    BLOCK_SIZE,
    ROWS_PER_CHUNK,
    _nearest_similarities,
)
from dialeval.metrics.engines.embedders import unit_rows
from dialeval.metrics.engines.figure_statistics import chunked
from dialeval.resampling import UnitStatistic


def _unit_float64(vectors: np.ndarray) -> np.ndarray:
    rows = unit_rows(vectors).astype(np.float64)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def remote_clique_statistic(vectors: np.ndarray, index: np.ndarray) -> UnitStatistic:
    """Remote clique of resampled responses; ``vectors[index[u]]`` is response ``u``'s vector."""
    index = np.asarray(index)
    # a corpus of one chunk is normalised once; a larger one a chunk at a time (one copy in all)
    whole = _unit_float64(vectors) if len(vectors) <= ROWS_PER_CHUNK else None

    def rows(start: int) -> np.ndarray:
        if whole is not None:
            return whole
        return _unit_float64(vectors[start : start + ROWS_PER_CHUNK])

    def evaluate(counts: np.ndarray) -> np.ndarray:
        weights = np.zeros((len(counts), len(vectors)))
        np.add.at(weights.T, index, counts.T)  # each response's draws on its distinct row
        total = np.zeros((len(counts), vectors.shape[1]))
        for start in range(0, len(vectors), ROWS_PER_CHUNK):
            total += weights[:, start : start + ROWS_PER_CHUNK] @ rows(start)
        n = counts.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            value = 1.0 - np.einsum("kd,kd->k", total, total) / (n * n)
        return np.where(n > 0, np.clip(value, 0.0, 2.0), np.nan)

    return UnitStatistic(
        len(index),
        chunked(evaluate),
        "recomputed on each resample from the embeddings of the one pass",
        "no response in the resample",
    )


def chamfer_statistic(vectors: np.ndarray, index: np.ndarray) -> UnitStatistic:
    """Chamfer distance of resampled responses, each keeping its nearest-other distance in the
    whole corpus (approximate)."""
    index = np.asarray(index)
    rows, counts_of_row = np.unique(index, return_counts=True)
    nearest_of_row = np.zeros(len(vectors))
    unit = unit_rows(vectors[rows])
    nearest = np.clip(1.0 - _nearest_similarities(unit, BLOCK_SIZE).astype(np.float64), 0.0, 2.0)
    nearest[counts_of_row > 1] = 0.0  # a text that occurs twice has its copy at distance 0
    nearest_of_row[rows] = nearest
    per_response = nearest_of_row[index]

    def evaluate(counts: np.ndarray) -> np.ndarray:
        drawn = counts.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(drawn > 0, (counts @ per_response) / drawn, np.nan)

    return UnitStatistic(
        len(index),
        evaluate,
        "mean of per-response nearest-other distances in the whole corpus (neighbours fixed)",
        "no response in the resample",
        exact=False,
    )


STATISTICS: dict[str, Callable[[np.ndarray, np.ndarray], UnitStatistic]] = {
    "remote_clique": remote_clique_statistic,
    "chamfer_distance": chamfer_statistic,
}
