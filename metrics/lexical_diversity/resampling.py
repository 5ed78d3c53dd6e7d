"""Corpus Dist-n, Ent-n, LF and token counts of resampled units, recomputed exactly from one
sparse (units x n-gram types) count matrix per order: a resample's n-gram counts are
``counts @ C``, so no text is tokenized again (``dialeval evaluate --ci``).

The n-grams are :mod:`.corpus`'s (NLTK's casual tokens, never crossing a response), keyed as
:func:`.corpus.ngram_keys` keys them; the figures follow :mod:`.corpus`'s conventions (0 without
n-grams).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import scipy.sparse
import scipy.special

from dialeval.metrics.engines.figure_statistics import chunked, unit_of_response
from dialeval.metrics.engines.job_steps import JobData
from dialeval.metrics.lexical_diversity.corpus import ngram_keys
from dialeval.resampling import UnitStatistic
from dialeval.text import casual_token_ids

#: Chunks of resamples whose figures an :class:`NgramCounts` keeps (a few floats per figure):
#: every chunk of an interval, of each order, at the default 1,000 resamples, so that the
#: comparisons, drawing the same subsamples, find them.
KEPT_CHUNKS = 1024
#: How a corpus figure recomputed from the count matrices is described in a report.
METHOD = "recomputed on each resample from per-unit n-gram counts"


class NgramCounts:
    """Per-unit n-gram counts of ``data`` for orders ``1..max_n`` (casual tokens).

    ``matrices[n]``: CSR (units x distinct n-grams); ``vocabulary``: the token of each unigram
    column (``unigram_tokens[j]``)."""

    def __init__(self, data: JobData, max_n: int) -> None:
        index: dict[str, int] = {}
        owner = np.fromiter(
            (index.setdefault(text, len(index)) for text in data.responses),
            dtype=np.int64,
            count=len(data.responses),
        )
        distinct = list(index)
        vocabulary, ids, lengths = casual_token_ids(distinct)
        units = unit_of_response(data)
        # units x distinct texts: how often each distinct text occurs in each unit
        occurrences = scipy.sparse.csr_matrix(
            (np.ones(len(owner)), (units, owner)), shape=(data.num_units, len(distinct))
        )
        text_of_position = np.repeat(np.arange(len(distinct), dtype=np.int64), lengths)
        self.num_units = data.num_units
        self._figures: OrderedDict[tuple, dict[str, np.ndarray]] = OrderedDict()
        self.matrices: dict[int, Any] = {}
        self.unigram_tokens: list[str] = []
        longest = int(lengths.max()) if lengths.size else 0
        for n in range(1, max_n + 1):  # orders above the longest response: no n-gram
            self.matrices[n] = scipy.sparse.csr_matrix((data.num_units, 0))
        for n, keys, starts, _ in ngram_keys(ids, lengths, len(vocabulary), min(max_n, longest)):
            if not starts.any():
                continue
            types, column = np.unique(keys[starts], return_inverse=True)
            per_text = scipy.sparse.csr_matrix(
                (np.ones(column.size), (text_of_position[: starts.size][starts], column)),
                shape=(len(distinct), types.size),
            )
            self.matrices[n] = (occurrences @ per_text).tocsr()
            if n == 1:
                self.unigram_tokens = [vocabulary[token] for token in types.tolist()]

    def figures(
        self, n: int, counts: np.ndarray, functions: Mapping[str, Callable[[np.ndarray], Any]]
    ) -> dict[str, np.ndarray]:
        """``functions`` (name -> figure of the n-gram type counts) of each resample of a chunk,
        from one product ``counts @ C``. Kept per chunk (a few floats each): the figures of one
        order share the product, and the same draws come back for each figure's interval and
        for every comparison with a system (the same seed draws the same subsamples)."""
        digest = hashlib.blake2b(counts.tobytes(), digest_size=16).digest()
        key = (n, tuple(functions), counts.shape, digest)
        kept = self._figures.get(key)
        if kept is None:
            type_counts = np.asarray((self.matrices[n].T @ counts.T).T)
            kept = {name: figure(type_counts) for name, figure in functions.items()}
            self._figures[key] = kept
            if len(self._figures) > KEPT_CHUNKS:
                self._figures.popitem(last=False)
        else:
            self._figures.move_to_end(key)
        return kept

    def totals(self, n: int) -> np.ndarray:
        """The n-grams of each unit."""
        return np.asarray(self.matrices[n].sum(axis=1)).ravel()


def _distinct(type_counts: np.ndarray) -> np.ndarray:
    total = type_counts.sum(axis=1)
    present = (type_counts > 0.5).sum(axis=1)
    return np.where(total > 0, present / np.where(total > 0, total, 1), 0.0)


def _entropy(type_counts: np.ndarray) -> np.ndarray:
    # H = log2 N - sum_t c_t log2 c_t / N, the 0 log 0 terms 0
    total = type_counts.sum(axis=1)
    spread = scipy.special.xlogy(type_counts, type_counts).sum(axis=1) / np.log(2)
    with np.errstate(invalid="ignore", divide="ignore"):
        entropy = np.log2(np.where(total > 0, total, 1)) - spread / np.where(total > 0, total, 1)
    return np.where(total > 0, entropy, 0.0)


def _statistic(
    ngrams: NgramCounts, n: int, name: str, functions: Mapping[str, Callable[[np.ndarray], Any]]
) -> UnitStatistic:
    return UnitStatistic(
        ngrams.num_units,
        chunked(lambda counts: ngrams.figures(n, counts, functions)[name]),
        METHOD,
    )


def corpus_statistics(
    data: JobData,
    max_n: int,
    reference: Mapping[str, int] | None,
    threshold: int,
    ngrams: NgramCounts | None = None,
) -> dict[str, UnitStatistic]:
    """Dist-1..max_n, Ent-1..max_n, ``num_tokens`` and LF (token frequencies from ``reference``,
    or from the resample itself when None) of the resampled units of ``data``."""
    ngrams = ngrams if ngrams is not None else NgramCounts(data, max_n)
    orders: dict[int, dict[str, Callable[[np.ndarray], Any]]] = {
        n: {"distinct": _distinct, "entropy": _entropy} for n in range(1, max_n + 1)
    }
    if reference is None:

        def low_share(type_counts: np.ndarray) -> np.ndarray:
            total = type_counts.sum(axis=1)
            low = np.where(type_counts <= threshold, type_counts, 0.0).sum(axis=1)
            return np.where(total > 0, low / np.where(total > 0, total, 1), 0.0)

        orders.setdefault(1, {})["lf"] = low_share
    statistics = {}
    for n, functions in orders.items():
        for name in functions:
            figure = "lf" if name == "lf" else f"{name}_{n}"
            statistics[figure] = _statistic(ngrams, n, name, functions)
    tokens = ngrams.totals(1)
    statistics["num_tokens"] = UnitStatistic(
        ngrams.num_units, lambda counts: counts @ tokens, METHOD
    )
    if reference is not None:
        rare = np.array(
            [reference.get(token, 0) <= threshold for token in ngrams.unigram_tokens], dtype=float
        )
        low_per_unit = np.asarray(ngrams.matrices[1] @ rare).ravel()

        def low_fixed(counts: np.ndarray) -> np.ndarray:
            total = counts @ tokens
            return np.where(total > 0, (counts @ low_per_unit) / np.where(total > 0, total, 1), 0.0)

        statistics["lf"] = UnitStatistic(ngrams.num_units, low_fixed, METHOD)
    return statistics
