"""Similarity-to-diversity reduction (Tevet & Berant 2021, §5, the unnumbered equation).

Given a symmetric similarity ``m_sim``, the diversity of a set ``S`` is the negated mean
similarity over its unordered pairs::

    m_div(S) = - 1 / C(|S|, 2) * sum_{i > j} m_sim(s_i, s_j)

Pairs are visited in the released code's order (``for i: for j < i``) and averaged with
``numpy.mean``, so results match the authors' numbers bit for bit. Neural similarity metrics
pass a precomputed similarity matrix to :func:`diversity_from_similarity_matrix`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

Item = TypeVar("Item")


def similarity_to_diversity(items: Sequence[Item], similarity: Callable[[Item, Item], float]) -> float:
    """Negated mean of ``similarity(items[i], items[j])`` over all pairs ``i > j``.

    Raises:
        ValueError: fewer than two items (the mean over pairs is undefined).
    """
    if len(items) < 2:
        raise ValueError(f"`items` must hold at least 2 elements to form a pair, got {len(items)}")
    scores = [similarity(items[i], items[j]) for i in range(len(items)) for j in range(i)]
    if not np.isfinite(scores).all():
        raise ValueError("`similarity` gave a non-finite value (NaN or infinite) for a pair of `items`")
    return -float(np.mean(scores))


def diversity_from_similarity_matrix(similarity_matrix) -> float:
    """The §5 reduction from an ``(n, n)`` similarity matrix (symmetric; the diagonal is ignored).

    Only the strict lower triangle (``i > j``) is read, in the released code's order.
    """
    matrix = np.asarray(similarity_matrix, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"`similarity_matrix` must be a square 2-D array, got shape {matrix.shape}")
    if matrix.shape[0] < 2:
        raise ValueError(f"`similarity_matrix` must be at least 2x2 to hold a pair, got {matrix.shape}")
    rows, cols = np.tril_indices(matrix.shape[0], k=-1)
    pairs = matrix[rows, cols]
    if not np.isfinite(pairs).all():
        raise ValueError("`similarity_matrix` holds NaN or infinite similarities off the diagonal")
    return -float(np.mean(pairs))
