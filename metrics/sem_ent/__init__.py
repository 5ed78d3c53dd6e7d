"""Sem-Ent (Han et al. 2022, §3.1): the entropy of responses' semantic-cluster distribution.

The evaluate module is ``sem_ent.py`` beside this file; its card is ``README.md``.
"""

from dialeval.metrics.sem_ent.clusters import SemanticClusters, distribution_entropy, sem_ent

__all__ = ["SemanticClusters", "distribution_entropy", "sem_ent"]
