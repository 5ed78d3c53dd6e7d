"""Sem-Ent of resampled units, exactly, from each response's cluster: a resample's cluster
histogram is ``counts @ H`` with ``H`` the (units x clusters) histogram of the data
(``dialeval evaluate --ci``)."""

from __future__ import annotations

import numpy as np

from dialeval.metrics.engines.figure_statistics import unit_of_response
from dialeval.metrics.engines.job_steps import JobData
from dialeval.resampling import UnitStatistic


def sem_ent_statistic(data: JobData, labels: np.ndarray, num_clusters: int) -> UnitStatistic:
    """Sem-Ent (nats) of resampled units; ``labels[i]``: the cluster of ``data.responses[i]``."""
    histogram = np.zeros((data.num_units, num_clusters))
    np.add.at(histogram, (unit_of_response(data), np.asarray(labels)), 1.0)

    def evaluate(counts: np.ndarray) -> np.ndarray:
        clusters = counts @ histogram
        total = clusters.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            p = clusters / np.where(total > 0, total, 1)
            terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0.0)
        return np.where(total[:, 0] > 0, -terms.sum(axis=1), np.nan)

    return UnitStatistic(
        data.num_units,
        evaluate,
        "recomputed on each resample from each response's cluster",
        "no response in the resample",
    )
