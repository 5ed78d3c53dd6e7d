"""Vendi Score (Friedman & Dieng 2023) over sentence embeddings, per response set or per corpus.

The evaluate module is ``vendi_score.py`` beside this file; its card is ``README.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
    from dialeval.metrics.vendi_score.vendi import (
        vendi_score,
        vendi_score_from_embeddings,
        vendi_score_from_kernel,
    )
else:
    # each name is imported from its module on first use
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".vendi": ("vendi_score", "vendi_score_from_embeddings", "vendi_score_from_kernel"),
        },
    )

__all__ = ["vendi_score", "vendi_score_from_embeddings", "vendi_score_from_kernel"]
