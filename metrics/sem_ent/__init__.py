"""Sem-Ent (Han et al. 2022, §3.1): the entropy of responses' semantic-cluster distribution.

The evaluate module is ``sem_ent.py`` beside this file; its card is ``README.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
    from dialeval.metrics.sem_ent.clusters import SemanticClusters, distribution_entropy, sem_ent
else:
    # each name is imported from its module on first use
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".clusters": ("SemanticClusters", "distribution_entropy", "sem_ent"),
        },
    )

__all__ = ["SemanticClusters", "distribution_entropy", "sem_ent"]
