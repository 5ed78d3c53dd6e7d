"""Sent-BERT diversity: the §5 reduction over sentence-embedding cosine similarity.

Tevet & Berant (2021, §6.2, "sent-BERT") embed each response with Sentence-BERT and use the
cosine of two embeddings as the similarity, then apply the §5 reduction (negated mean over
unordered pairs). They used ``bert-large-nli-stsb-mean-tokens``; our default is the embedded
``sentence-transformers/all-MiniLM-L6-v2`` (works offline), and any sentence-transformers
model id or local directory can be passed as ``model``.

Each distinct text is embedded once across all sets; sentence-transformers sorts by length and
pads per batch; the model is loaded once per (model, device, dtype, runtime ``backend``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dialeval.metrics.engines.embedders import DEFAULT_SENTENCE_MODEL, embed_unique
from dialeval.metrics.engines.reduction import UnitSimilarity, units_of
from dialeval.validation import check_response_sets

if TYPE_CHECKING:
    from dialeval.type_aliases import DeviceLike, Progress, SentenceEncoder, StrPath


def sent_bert_unit_similarities(
    response_sets: list[list[str]],
    model: StrPath | SentenceEncoder = DEFAULT_SENTENCE_MODEL,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    progress: Progress | None = None,
    backend: str | None = None,
) -> list[UnitSimilarity]:
    """Cosine similarities of each set's distinct texts; every distinct text across sets is embedded
    once (``progress`` sees each batch the encoder runs)."""
    flat = [text for response_set in response_sets for text in response_set]
    embeddings, index = embed_unique(
        flat, model, batch_size, device, dtype, progress=progress, backend=backend
    )
    similarities, start = [], 0
    for response_set in response_sets:
        rows, unit_of_item = units_of(index[start : start + len(response_set)].tolist())
        start += len(response_set)
        vectors = embeddings[rows].astype(np.float64)
        similarities.append(UnitSimilarity(vectors @ vectors.T, unit_of_item))
    return similarities


def sent_bert_similarity_matrices(
    response_sets: list[list[str]],
    model: StrPath | SentenceEncoder = DEFAULT_SENTENCE_MODEL,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    backend: str | None = None,
) -> list[np.ndarray]:
    """Cosine similarity matrix ``(n, n)`` of each set; every distinct text across sets is embedded
    once."""
    return [
        units.full_matrix()
        for units in sent_bert_unit_similarities(
            response_sets, model, batch_size, device, dtype, backend=backend
        )
    ]


def sent_bert_diversity(
    response_sets: list[list[str]],
    model: StrPath | SentenceEncoder = DEFAULT_SENTENCE_MODEL,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    allow_empty: bool = False,
    backend: str | None = None,
) -> list[float]:
    """Sent-BERT diversity of each response set: ``-mean_{i>j} cos(e_i, e_j)``; in [-1, 1], higher
    is more diverse.

    Args:
        response_sets: one list of at least two responses per context.
        model: a sentence-transformers id or directory, or an already loaded model with ``encode``.
        allow_empty: accept empty and whitespace-only responses (embedded as the model embeds them).
        backend: the encoder's runtime, "torch", "onnx" or "openvino" (:mod:`dialeval.runtimes`).
    """
    response_sets = check_response_sets(
        response_sets, "response_sets", min_size=2, allow_empty=allow_empty
    )
    return [
        units.diversity()
        for units in sent_bert_unit_similarities(
            response_sets, model, batch_size, device, dtype, backend=backend
        )
    ]
