"""Sent-BERT diversity: the §5 reduction over sentence-embedding cosine similarity.

Tevet & Berant (2021, §6.2, "sent-BERT") embed each response with Sentence-BERT and use the
cosine of two embeddings as the similarity, then apply the §5 reduction (negated mean over
unordered pairs). They used ``bert-large-nli-stsb-mean-tokens``; our default is the embedded
``sentence-transformers/all-MiniLM-L6-v2`` (works offline), and any sentence-transformers
model id or local directory can be passed as ``model``.

Each distinct text is embedded once across all sets; sentence-transformers sorts by length and
pads per batch; the model is loaded once per (model, device, dtype).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from dialeval.models import EMBEDDED_SENTENCE_MODEL, resolve_device, resolve_model_path

from .reduction import diversity_from_similarity_matrix
from .validation import check_response_sets

DEFAULT_SENTENCE_MODEL = EMBEDDED_SENTENCE_MODEL


@lru_cache(maxsize=8)
def _load(model_path: str, device: str, dtype: str | None):
    import torch
    from sentence_transformers import SentenceTransformer

    model_kwargs = {"dtype": getattr(torch, dtype)} if dtype else None
    return SentenceTransformer(model_path, device=device, model_kwargs=model_kwargs)


def load_sentence_model(model: str = DEFAULT_SENTENCE_MODEL, device=None, dtype: str | None = None):
    """Load (once per model, device and dtype) a sentence-transformers model."""
    if dtype is not None and dtype not in {"float32", "float16", "bfloat16"}:
        raise ValueError(f"`dtype` must be None, 'float32', 'float16' or 'bfloat16', got {dtype!r}")
    return _load(resolve_model_path(model), str(resolve_device(device)), dtype)


def embed_unique(texts: list[str], model=DEFAULT_SENTENCE_MODEL, batch_size: int = 64, device=None, dtype=None):
    """L2-normalized embeddings of ``texts``, each distinct text encoded once.

    Returns:
        ``(embeddings, index)`` where ``embeddings[index[t]]`` is the embedding of ``texts[t]``.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"`batch_size` must be a positive int, got {batch_size!r}")
    encoder = load_sentence_model(model, device, dtype) if isinstance(model, str) else model
    unique = list(dict.fromkeys(texts))
    position = {text: i for i, text in enumerate(unique)}
    embeddings = encoder.encode(
        unique, batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
    )
    return np.asarray(embeddings, dtype=np.float64), np.array([position[text] for text in texts], dtype=np.int64)


def sent_bert_similarity_matrices(
    response_sets: list[list[str]], model=DEFAULT_SENTENCE_MODEL, batch_size: int = 64, device=None, dtype=None
) -> list[np.ndarray]:
    """Cosine similarity matrix ``(n, n)`` of each set; every distinct text across sets is embedded once."""
    flat = [text for response_set in response_sets for text in response_set]
    embeddings, index = embed_unique(flat, model, batch_size, device, dtype)
    matrices, start = [], 0
    for response_set in response_sets:
        vectors = embeddings[index[start : start + len(response_set)]]
        start += len(response_set)
        matrices.append(vectors @ vectors.T)
    return matrices


def sent_bert_diversity(
    response_sets: list[list[str]], model=DEFAULT_SENTENCE_MODEL, batch_size: int = 64, device=None, dtype=None
) -> list[float]:
    """Sent-BERT diversity of each response set: ``-mean_{i>j} cos(e_i, e_j)``; in [-1, 1], higher is more diverse.

    Args:
        response_sets: one list of at least two responses per context.
        model: a sentence-transformers id or directory, or an already loaded model with ``encode``.
    """
    response_sets = check_response_sets(response_sets, "response_sets", min_size=2)
    matrices = sent_bert_similarity_matrices(response_sets, model, batch_size, device, dtype)
    return [diversity_from_similarity_matrix(matrix) for matrix in matrices]
