"""Similarity diversity: Tevet & Berant's §5 reduction over sent-BERT, BERTScore, an STS
cross-encoder or n-gram cosine similarity.

The evaluate module is ``similarity_diversity.py`` beside this file; its card is ``README.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
    from dialeval.metrics.similarity_diversity.bertscore import (
        bertscore_diversity,
        bertscore_similarity_matrices,
    )
    from dialeval.metrics.similarity_diversity.cross_encoder import (
        cross_encoder_similarity_matrices,
    )
    from dialeval.metrics.similarity_diversity.sent_bert import (
        sent_bert_diversity,
        sent_bert_similarity_matrices,
    )
    from dialeval.metrics.similarity_diversity.similarity import (
        similarity_diversity,
        similarity_matrices,
    )
else:
    # each name is imported from its module on first use
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".bertscore": ("bertscore_diversity", "bertscore_similarity_matrices"),
            ".cross_encoder": ("cross_encoder_similarity_matrices",),
            ".sent_bert": ("sent_bert_diversity", "sent_bert_similarity_matrices"),
            ".similarity": ("similarity_diversity", "similarity_matrices"),
        },
    )

__all__ = [
    "bertscore_diversity",
    "bertscore_similarity_matrices",
    "cross_encoder_similarity_matrices",
    "sent_bert_diversity",
    "sent_bert_similarity_matrices",
    "similarity_diversity",
    "similarity_matrices",
]
