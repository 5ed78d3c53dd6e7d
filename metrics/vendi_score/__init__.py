"""Vendi Score (Friedman & Dieng 2023) over sentence embeddings, per response set or per corpus.

The evaluate module is ``vendi_score.py`` beside this file; its card is ``README.md``.
"""

from dialeval.metrics.vendi_score.vendi import (
    vendi_score,
    vendi_score_from_embeddings,
    vendi_score_from_kernel,
)

__all__ = ["vendi_score", "vendi_score_from_embeddings", "vendi_score_from_kernel"]
