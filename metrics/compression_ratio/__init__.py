"""Compression ratio: how much a compressor shrinks the responses (higher = more repetitive).

The figure users know from the ``diversity`` package (Shaib et al. 2024, "Standardizing the
Measurement of Text Diversity", §3): the UTF-8 size of the texts joined by spaces divided by
their compressed size. Repeated n-grams and templates compress well, so a homogeneous corpus
scores high and a diverse one low (about 1 for short unrelated texts, up to ~100+ for one text
repeated). Unlike the package, the compressed size is taken from one in-memory compression
with a fixed header (gzip ``mtime=0``), so the value is deterministic and needs no temporary
files; the card lists the differences.

The evaluate module is ``compression_ratio.py`` beside this file; its card is ``README.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
    from dialeval.metrics.compression_ratio.scores import (
        ALGORITHMS,
        compression_ratio,
        compression_ratio_per_set,
        compression_ratio_scores,
    )
else:
    # each name is imported from its module on first use: the metric's declaration (spec.py)
    # is read without loading numpy
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".scores": (
                "ALGORITHMS",
                "compression_ratio",
                "compression_ratio_per_set",
                "compression_ratio_scores",
            )
        },
    )

__all__ = [
    "ALGORITHMS",
    "compression_ratio",
    "compression_ratio_per_set",
    "compression_ratio_scores",
]
