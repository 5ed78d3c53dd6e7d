"""Corpus Dist-n, Ent-n, LF and token counts of resampled units, recomputed exactly from one
sparse (units x n-gram types) count matrix per order: a resample's n-gram counts are
``counts @ C``, so no text is tokenized again (``dialeval evaluate --ci``).

The n-grams are :mod:`.corpus`'s (NLTK's casual tokens, never crossing a response), keyed as
:func:`.corpus.ngram_keys` keys them; the figures follow :mod:`.corpus`'s conventions (0 without
n-grams).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse
import scipy.special

from dialeval.metrics.engines.figure_statistics import chunked, unit_of_response
from dialeval.metrics.engines.job_steps import JobData
from dialeval.metrics.lexical_diversity.corpus import ngram_keys
from dialeval.resampling import UnitStatistic
from dialeval.text import casual_token_ids

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
        self._last: dict[int, tuple[np.ndarray, np.ndarray]] = {}
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

    def resampled(self, n: int, counts: np.ndarray) -> np.ndarray:
        """The n-gram type counts of each resample: ``(k, types)``. The last chunk's are kept per
        order: Dist-n, Ent-n (and LF on unigrams) of one chunk of resamples share one product."""
        last = self._last.get(n)
        if last is not None and last[0].shape == counts.shape and np.array_equal(last[0], counts):
            return last[1]
        type_counts = np.asarray((self.matrices[n].T @ counts.T).T)
        self._last[n] = (counts.copy(), type_counts)
        return type_counts

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


def _statistic(ngrams: NgramCounts, n: int, figure: Any) -> UnitStatistic:
    return UnitStatistic(
        ngrams.num_units, chunked(lambda counts: figure(ngrams.resampled(n, counts))), METHOD
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
    statistics = {}
    for n in range(1, max_n + 1):
        statistics[f"distinct_{n}"] = _statistic(ngrams, n, _distinct)
        statistics[f"entropy_{n}"] = _statistic(ngrams, n, _entropy)
    tokens = ngrams.totals(1)
    statistics["num_tokens"] = UnitStatistic(
        ngrams.num_units, lambda counts: counts @ tokens, METHOD
    )
    if reference is None:

        def low_share(type_counts: np.ndarray) -> np.ndarray:
            total = type_counts.sum(axis=1)
            low = np.where(type_counts <= threshold, type_counts, 0.0).sum(axis=1)
            return np.where(total > 0, low / np.where(total > 0, total, 1), 0.0)

        statistics["lf"] = _statistic(ngrams, 1, low_share)
    else:
        rare = np.array(
            [reference.get(token, 0) <= threshold for token in ngrams.unigram_tokens], dtype=float
        )
        low_per_unit = np.asarray(ngrams.matrices[1] @ rare).ravel()

        def low_fixed(counts: np.ndarray) -> np.ndarray:
            total = counts @ tokens
            return np.where(total > 0, (counts @ low_per_unit) / np.where(total > 0, total, 1), 0.0)

        statistics["lf"] = UnitStatistic(ngrams.num_units, low_fixed, METHOD)
    return statistics
