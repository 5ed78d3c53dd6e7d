"""Similarity diversity: Tevet & Berant's §5 reduction over sent-BERT, BERTScore, an STS
cross-encoder or n-gram cosine similarity.

The evaluate module is ``similarity_diversity.py`` beside this file; its card is ``README.md``.
"""

from dialeval.metrics.similarity_diversity.bertscore import (
    bertscore_diversity,
    bertscore_similarity_matrices,
)
from dialeval.metrics.similarity_diversity.cross_encoder import cross_encoder_similarity_matrices
from dialeval.metrics.similarity_diversity.sent_bert import (
    sent_bert_diversity,
    sent_bert_similarity_matrices,
)
from dialeval.metrics.similarity_diversity.similarity import (
    similarity_diversity,
    similarity_matrices,
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
