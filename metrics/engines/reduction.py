"""Similarity-to-diversity reduction (Tevet & Berant 2021, §5, the unnumbered equation).

Given a symmetric similarity ``m_sim``, the diversity of a set ``S`` is the negated mean
similarity over its unordered pairs::

    m_div(S) = - 1 / C(|S|, 2) * sum_{i > j} m_sim(s_i, s_j)

Pairs are visited in the released code's order (``for i: for j < i``) and averaged with
``numpy.mean``, so results match the authors' numbers bit for bit. Neural similarity metrics
pass a precomputed similarity matrix to :func:`diversity_from_similarity_matrix`.

A set with repeated elements can be given as its distinct elements and their counts
(:func:`similarity_to_diversity`'s ``counts``): the mean over the multiset's pairs then scores
each distinct pair once, so 10,000 copies of one response need one similarity call, not 5*10^7.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from dialeval.validation import ArgumentError, as_float_array, require_collection

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

Item = TypeVar("Item")


def similarity_to_diversity(
    items: Sequence[Item],
    similarity: Callable[[Item, Item], float],
    counts: Sequence[int] | None = None,
) -> float:
    """Negated mean of ``similarity(items[i], items[j])`` over all pairs ``i > j``.

    Args:
        items: the set's elements; with ``counts``, its *distinct* elements.
        similarity: a symmetric similarity of two elements.
        counts: how often each item occurs in the set (default: once each). The mean is then over
            the ``C(n, 2)`` unordered pairs of the multiset (``n = sum(counts)``), each distinct
            pair scored once::

                ( sum_{a>b} m_a m_b sim(a, b) + sum_a C(m_a, 2) sim(a, a) ) / C(n, 2)

            so repeated elements cost nothing, and all counts 1 give exactly the unweighted mean.

    Raises:
        ValueError: fewer than two elements (the mean over pairs is undefined), or ``counts``
            not one positive int per item.
    """
    require_collection(items, "items", "a list of the set's elements")
    if not callable(similarity):
        raise ArgumentError(
            "similarity", f"must be a function of two items, got {type(similarity).__name__}"
        )
    if counts is None:
        counts = [1] * len(items)
    else:
        require_collection(counts, "counts", "one positive int per item")
        counts = list(counts)
        if len(counts) != len(items):
            raise ArgumentError(
                "counts", f"must hold one count per item ({len(items)}), got {len(counts)}"
            )
        for index, count in enumerate(counts):
            if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
                raise ArgumentError(f"counts[{index}]", f"must be a positive int, got {count!r}")
    size = int(sum(counts))
    if size < 2:
        raise ArgumentError("items", f"must hold at least 2 elements to form a pair, got {size}")
    pairs = [(i, j) for i in range(len(items)) for j in range(i)]
    scores = [_similarity_value(similarity(items[i], items[j])) for i, j in pairs]
    if size == len(items):  # nothing repeats: the released plain mean
        return -_mean_within_range(np.asarray(scores, dtype=np.float64))
    weights = np.array([counts[i] * counts[j] for i, j in pairs], dtype=np.float64)
    repeats = [
        (count * (count - 1) // 2, _similarity_value(similarity(item, item)))
        for item, count in zip(items, counts)
        if count > 1
    ]
    num_pairs = size * (size - 1) // 2
    values = np.asarray(scores, dtype=np.float64)
    # Similarities near float's limit overflow the weighted sum; divided by their largest
    # magnitude they cannot, and the mean (never larger than that magnitude) stays finite.
    scale = _overflow_scale(np.append(values, [value for _, value in repeats]), num_pairs)
    total = float(np.add.reduce(values / scale * weights))
    for repeated_pairs, self_similarity in repeats:
        total += repeated_pairs * (self_similarity / scale)
    return -total / num_pairs * scale


def _similarity_value(value: object) -> float:
    """One similarity as a finite float: a real number (numpy's too, a 0-d array, a bool as 0 or
    1); an array, a complex number, None or a string is refused naming ``similarity``."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if not isinstance(value, (numbers.Real, np.bool_)):
        raise ArgumentError(
            "similarity",
            "must return one real number for each pair of `items`, got "
            f"{type(value).__name__}: {value!r:.60}",
        )
    number = float(value)
    if not np.isfinite(number):
        raise ArgumentError(
            "similarity", "gave a non-finite value (NaN or infinite) for a pair of `items`"
        )
    return number


def _overflow_scale(values: np.ndarray, total_weight: float) -> float:
    """1.0, unless the values are so large that their sum (``total_weight`` copies at most) could
    overflow: then their largest magnitude, to divide them by."""
    largest = float(np.abs(values).max(initial=0.0))
    return largest if largest > np.finfo(np.float64).max / max(float(total_weight), 1.0) else 1.0


def _mean_within_range(values: np.ndarray) -> float:
    """``numpy.mean`` of finite ``values`` (the released code's figure, bit for bit), computed on
    values scaled by their largest magnitude when the plain sum would overflow to infinity."""
    scale = _overflow_scale(values, len(values))
    if scale == 1.0:
        return float(np.mean(values))
    return float(np.mean(values / scale)) * scale


def diversity_from_similarity_matrix(similarity_matrix: ArrayLike) -> float:
    """The §5 reduction from an ``(n, n)`` similarity matrix (symmetric; the diagonal is ignored).

    Only the strict lower triangle (``i > j``) is read, in the released code's order.
    """
    matrix = as_float_array(similarity_matrix, "similarity_matrix")
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ArgumentError(
            "similarity_matrix", f"must be a square 2-D array, got shape {matrix.shape}"
        )
    if matrix.shape[0] < 2:
        raise ArgumentError(
            "similarity_matrix", f"must be at least 2x2 to hold a pair, got {matrix.shape}"
        )
    rows, cols = np.tril_indices(matrix.shape[0], k=-1)
    pairs = matrix[rows, cols]
    if not np.isfinite(pairs).all():
        raise ArgumentError(
            "similarity_matrix", "holds NaN or infinite similarities off the diagonal"
        )
    return -_mean_within_range(pairs)


@dataclass(frozen=True)
class UnitSimilarity:
    """A set's pairwise similarities stored once per distinct element ("unit").

    A set of ``n`` elements with ``d`` distinct ones needs a ``(d, d)`` matrix, not ``(n, n)``:
    10,000 copies of "I don't know." are one unit. ``unit_matrix[a, b]`` is the similarity of
    units ``a`` and ``b``; its diagonal ``unit_matrix[a, a]`` is the similarity of two copies of
    unit ``a`` (read only where the unit repeats). Units are numbered in order of first
    occurrence, so a set without repeats has ``unit_matrix`` equal to its full matrix.

    Attributes:
        unit_matrix: ``(d, d)`` symmetric similarities of the units.
        unit_of_item: ``(n,)`` the unit of each element of the set, in set order.
    """

    unit_matrix: np.ndarray
    unit_of_item: np.ndarray

    @property
    def counts(self) -> np.ndarray:
        return np.bincount(self.unit_of_item, minlength=self.unit_matrix.shape[0])

    def diversity(self) -> float:
        """The §5 reduction over the set's ``C(n, 2)`` pairs, each distinct pair scored once.

        A set without repeats gives :func:`diversity_from_similarity_matrix` of its matrix bit
        for bit; with repeats, ``(sum_{a>b} m_a m_b U[a, b] + sum_a C(m_a, 2) U[a, a]) / C(n, 2)``.
        """
        counts = self.counts
        if (counts == 1).all():
            return diversity_from_similarity_matrix(self.unit_matrix)
        size = int(counts.sum())
        if size < 2:
            raise ValueError(f"a set needs at least 2 elements to form a pair, got {size}")
        matrix = np.asarray(self.unit_matrix, dtype=np.float64)
        rows, cols = np.tril_indices(len(counts), k=-1)
        repeated = np.flatnonzero(counts > 1)
        copies = (counts[repeated] * (counts[repeated] - 1) // 2).astype(np.float64)
        pairs, self_pairs = matrix[rows, cols], np.diag(matrix)[repeated]
        if not (np.isfinite(pairs).all() and np.isfinite(self_pairs).all()):
            raise ValueError("the similarities hold NaN or infinite values")
        total = float(np.add.reduce(pairs * (counts[rows] * counts[cols]).astype(np.float64)))
        total += float(np.add.reduce(self_pairs * copies))
        return -total / (size * (size - 1) // 2)

    def full_matrix(self, diagonal: float | None = None) -> np.ndarray:
        """The ``(n, n)`` matrix of the set (memory ``n^2``); ``diagonal`` overwrites its
        diagonal."""
        matrix = self.unit_matrix[np.ix_(self.unit_of_item, self.unit_of_item)]
        if diagonal is not None:
            np.fill_diagonal(matrix, diagonal)
        return matrix


def units_of(
    items: Sequence[Item], key: Callable[[Item], Hashable] | None = None
) -> tuple[list[Item], np.ndarray]:
    """The distinct items (by ``key(item)``, default the item) in order of first occurrence, and
    the unit of each item."""
    unit_index: dict[Hashable, int] = {}
    unit_of_item = np.fromiter(
        (
            unit_index.setdefault(item if key is None else key(item), len(unit_index))
            for item in items
        ),
        dtype=np.intp,
        count=len(items),
    )
    first: dict[int, Item] = {}
    for item, unit in zip(items, unit_of_item.tolist()):
        first.setdefault(unit, item)
    return [first[unit] for unit in range(len(unit_index))], unit_of_item
