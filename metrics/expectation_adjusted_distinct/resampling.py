"""EAD and Distinct-n of a resampled corpus, exactly, from per-response n-gram counts
(:class:`~dialeval.metrics.lexical_diversity.resampling.NgramCounts`: a resample's n-gram counts
are ``counts @ C``), for ``dialeval evaluate --ci``."""

from __future__ import annotations

import numpy as np

from dialeval.metrics.engines.figure_statistics import chunked
from dialeval.metrics.engines.job_steps import JobData
from dialeval.metrics.expectation_adjusted_distinct.scores import expected_distinct
from dialeval.metrics.lexical_diversity.resampling import METHOD, NgramCounts
from dialeval.resampling import UnitStatistic


def ead_statistics(data: JobData, n: int, vocab_size: int | None) -> dict[str, UnitStatistic]:
    """``ead`` and ``distinct`` of order ``n``; ``vocab_size`` None: V is the resample's distinct
    tokens (the metric's ``vocab_texts`` taken from the responses)."""
    ngrams = NgramCounts(data, n)

    def present(type_counts: np.ndarray) -> np.ndarray:
        return (type_counts > 0.5).sum(axis=1)

    def total(type_counts: np.ndarray) -> np.ndarray:
        return np.rint(type_counts.sum(axis=1)).astype(np.int64)

    def figures(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        order = ngrams.figures(n, counts, {"distinct": present, "total": total})
        distinct, totals = order["distinct"], order["total"]
        if vocab_size is None:
            sizes = ngrams.figures(1, counts, {"vocabulary": present})["vocabulary"]
        else:
            sizes = np.full(len(counts), vocab_size)
        expected = np.array(
            [
                expected_distinct(int(c), int(v), n) if v > 0 else 0.0
                for c, v in zip(totals, sizes, strict=True)
            ]
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            ead = np.where(expected > 0, distinct / np.where(expected > 0, expected, 1), 0.0)
            share = np.where(totals > 0, distinct / np.where(totals > 0, totals, 1), 0.0)
        return ead, share

    return {
        "ead": UnitStatistic(data.num_units, chunked(lambda c: figures(c)[0]), METHOD),
        "distinct": UnitStatistic(data.num_units, chunked(lambda c: figures(c)[1]), METHOD),
    }
