"""The one place dialeval touches ``evaluate.Metric``'s private queue state (evaluate 0.4).

``evaluate.Metric`` keeps the inputs of ``add`` / ``add_batch`` in an Arrow writer and cache
files with locks; it has no public call to drop them, nor to ask which feature format the queued
inputs were encoded with. :class:`~dialeval.metrics.engines.evaluate_module.DialevalMetric`
needs both (nothing stays queued after an error; one scope per ``compute``), so this adapter is
the only code that reads or writes those attributes. setup.py caps evaluate below 0.5; a new
evaluate that renames them fails tests/root/test_host_adapters.py, which checks that each still
exists.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import datasets
    import evaluate

#: evaluate.Metric's private attributes this adapter reads or resets.
QUEUE_ATTRIBUTES = (
    "writer",
    "data",
    "buf_writer",
    "selected_feature_format",
    "cache_file_name",
    "filelock",
    "file_paths",
    "filelocks",
    "keep_in_memory",
)


def queued_feature_format(metric: evaluate.Metric) -> datasets.Features | None:
    """The ``Features`` the queued inputs were encoded with, or None when nothing is queued."""
    return metric.selected_feature_format


def discard_queued(metric: evaluate.Metric) -> None:
    """Drop every queued input, its cache files and their locks, as if nothing had been added."""
    if metric.writer is not None:
        metric.writer.close()
    paths, locks = list(metric.file_paths or []), list(metric.filelocks or [])
    if metric.cache_file_name is not None and metric.cache_file_name not in paths:
        paths.append(metric.cache_file_name)
        locks.append(metric.filelock)
    metric.writer = metric.data = metric.buf_writer = metric.selected_feature_format = None
    metric.cache_file_name = metric.filelock = metric.file_paths = metric.filelocks = None
    if not metric.keep_in_memory:
        for path in paths:
            if os.path.exists(path):
                os.remove(path)
    for lock in locks:
        if lock is not None:
            lock.release()
