"""Remote clique and chamfer distance (Cox et al. 2021, as in the ``diversity`` package) over
sentence embeddings, per response set or per corpus.

The evaluate module is ``embedding_distances.py`` beside this file; its card is ``README.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
    from dialeval.metrics.embedding_distances.distances import (
        chamfer_distance,
        chamfer_distance_from_embeddings,
        embedding_distances,
        remote_clique,
        remote_clique_from_embeddings,
    )
else:
    # each name is imported from its module on first use
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".distances": (
                "chamfer_distance",
                "chamfer_distance_from_embeddings",
                "embedding_distances",
                "remote_clique",
                "remote_clique_from_embeddings",
            ),
        },
    )

__all__ = [
    "chamfer_distance",
    "chamfer_distance_from_embeddings",
    "embedding_distances",
    "remote_clique",
    "remote_clique_from_embeddings",
]
