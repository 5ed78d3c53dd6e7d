"""Self-repetition of a resampled corpus, exactly: with ``D`` the (responses x distinct 4-grams)
incidence matrix, a resample drawing response ``u`` ``c_u`` times has document frequencies
``df = c @ D``, response ``u`` scores ``log(1 + D_u . df - |D_u|)`` and the figure is the
``c``-weighted mean of those scores (``dialeval evaluate --ci``)."""

from __future__ import annotations

import numpy as np

from dialeval.metrics.engines.figure_statistics import chunked, sparse_unit_counts
from dialeval.metrics.engines.job_steps import JobData
from dialeval.metrics.self_repetition.scores import distinct_ngrams
from dialeval.resampling import UnitStatistic

#: The job's n-gram order (the metric's default).
ORDER = 4


def self_repetition_statistic(data: JobData, n: int = ORDER) -> UnitStatistic:
    """The corpus figure of ``data`` (one unit per response) on resampled responses."""
    incidence = sparse_unit_counts(data, lambda texts: [distinct_ngrams(t, n) for t in texts])
    sizes = np.asarray(incidence.sum(axis=1)).ravel()

    def evaluate(counts: np.ndarray) -> np.ndarray:
        frequencies = np.asarray((incidence.T @ counts.T).T)  # (k, n-grams)
        others = np.asarray((incidence @ frequencies.T).T) - sizes  # (k, responses)
        scores = np.log1p(np.maximum(others, 0.0))
        drawn = counts.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(drawn > 0, (counts * scores).sum(axis=1) / drawn, np.nan)

    return UnitStatistic(
        data.num_units,
        chunked(evaluate),
        "recomputed on each resample from which 4-grams each response holds",
        "no response in the resample",
    )
