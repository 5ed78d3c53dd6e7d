"""Remote clique and chamfer distance (Cox et al. 2021, as in the ``diversity`` package) over
sentence embeddings, per response set or per corpus.

The evaluate module is ``embedding_distances.py`` beside this file; its card is ``README.md``.
"""

from dialeval.metrics.embedding_distances.distances import (
    chamfer_distance,
    chamfer_distance_from_embeddings,
    embedding_distances,
    remote_clique,
    remote_clique_from_embeddings,
)

__all__ = [
    "chamfer_distance",
    "chamfer_distance_from_embeddings",
    "embedding_distances",
    "remote_clique",
    "remote_clique_from_embeddings",
]
