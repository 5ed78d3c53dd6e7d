"""Similarity diversity: Tevet & Berant's §5 reduction over a choice of pairwise similarity.

``m_div(S) = -mean_{i>j} m_sim(s_i, s_j)`` (§5) with ``m_sim`` one of (§6.2):

===================  ==========================================================  =====================================
``similarity``       what ``m_sim`` is                                           default ``model``
===================  ==========================================================  =====================================
``"sent_bert"``      cosine of sentence embeddings ("sent-BERT"); any            embedded ``all-MiniLM-L6-v2`` (offline);
                     sentence-transformers model or mean-pooled encoder          the paper: ``bert-large-nli-stsb-mean-tokens``
``"bertscore"``      BERTScore F1, rescaled with bert_score's baseline           ``FacebookAI/roberta-large``, layer 17
``"cross_encoder"``  an STS cross-encoder's score ("BERT-STS")                   ``cross-encoder/stsb-roberta-large``
``"ngram_cosine"``   n-gram count cosine averaged over n = 1..5 ("cos-sim")      (no model)
===================  ==========================================================  =====================================

Every backend returns the similarities of each set's *distinct* responses
(:class:`~dialeval.metrics.engines.reduction.UnitSimilarity`), computed with each distinct
sentence embedded once (sent-BERT, BERTScore) or each distinct pair scored once
(cross-encoder); the diversity is reduced from that compact form (repeats weighted, so 10,000
copies of one response cost one pair), and :func:`similarity_matrices` expands it to one
``(n, n)`` matrix per set, so sets can be re-scored or sliced (DTG) without new model calls.
"""  # noqa: E501

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from dialeval.hub import EMBEDDED_SENTENCE_MODEL
from dialeval.metrics.engines.reduction import UnitSimilarity, units_of
from dialeval.metrics.lexical_diversity.set_level import check_orders, cosine_of_counts, ngrams
from dialeval.metrics.similarity_diversity.bertscore import (
    DEFAULT_BERTSCORE_MODEL,
    compute_bertscore_matrices,
)
from dialeval.metrics.similarity_diversity.cross_encoder import (
    DEFAULT_CROSS_ENCODER,
    cross_encoder_unit_similarities,
)
from dialeval.metrics.similarity_diversity.sent_bert import sent_bert_unit_similarities
from dialeval.text import get_tokenizer
from dialeval.validation import ArgumentError, check_response_sets

if TYPE_CHECKING:
    from dialeval.type_aliases import DeviceLike, Progress, WordTokenizer

SIMILARITIES = ("sent_bert", "bertscore", "cross_encoder", "ngram_cosine")


def default_model(similarity: str) -> str | None:
    """The model a similarity uses when none is given."""
    if similarity == "sent_bert":
        return EMBEDDED_SENTENCE_MODEL
    if similarity == "bertscore":
        return DEFAULT_BERTSCORE_MODEL
    if similarity == "cross_encoder":
        return DEFAULT_CROSS_ENCODER
    return None


def _check_similarity(similarity: object) -> None:
    if similarity not in SIMILARITIES:
        raise ArgumentError("similarity", f"must be one of {SIMILARITIES}, got {similarity!r}")


def ngram_cosine_unit_similarity(
    responses: list[str], max_n: int = 5, min_n: int = 1, tokenizer: str | WordTokenizer = "tevet"
) -> UnitSimilarity:
    """Tevet's "cos-sim" similarity of every pair of distinct token lists, averaged over n (the
    diagonal: two copies of a repeated response)."""
    min_n, max_n = check_orders(min_n, max_n)
    tokenize = get_tokenizer(tokenizer, responses)
    # Responses that tokenize alike have equal rows: score each distinct token list once.
    token_lists, unit_of_item = units_of([tuple(tokenize(response)) for response in responses])
    repeated = np.bincount(unit_of_item) > 1
    units = len(token_lists)
    matrix = np.zeros((units, units))
    self_similarity = np.zeros(units)  # a unit's copies compare as a pair of equal responses
    for order in range(min_n, max_n + 1):
        counts = [Counter(ngrams(list(tokens), order)) for tokens in token_lists]
        for i in range(units):
            for j in range(i):
                matrix[i, j] += cosine_of_counts(counts[i], counts[j])
            if repeated[i]:
                self_similarity[i] += cosine_of_counts(counts[i], counts[i])
    matrix /= max_n - min_n + 1
    self_similarity /= max_n - min_n + 1
    matrix += matrix.T
    np.fill_diagonal(matrix, self_similarity)
    return UnitSimilarity(matrix, unit_of_item)


def unit_similarities(
    response_sets: list[list[str]],
    similarity: str = "sent_bert",
    model: str | None = None,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    allow_empty: bool = False,
    progress: Progress | None = None,
    backend: str | None = None,
    **options: Any,  # the similarity's own options, checked against it below
) -> list[UnitSimilarity]:
    """The similarities of each response set's distinct responses (see :class:`UnitSimilarity`).

    Args:
        similarity: one of :data:`SIMILARITIES`.
        model: id or directory; default :func:`default_model` of ``similarity``.
        progress: called as the model works (texts embedded, sentences encoded, pairs scored),
            after :func:`~dialeval.metrics.engines.job_steps.announce_work` says how many.
        backend: the model's runtime, "torch", "onnx" or "openvino" (:mod:`dialeval.runtimes`).
        options: the similarity's own options: ``num_layers``, ``rescale_with_baseline``,
            ``baseline`` (BERTScore); ``max_n``, ``min_n``, ``tokenizer`` (n-gram cosine).
    """
    _check_similarity(similarity)
    response_sets = check_response_sets(
        response_sets, "response_sets", min_size=2, allow_empty=allow_empty
    )
    model = model if model is not None else default_model(similarity)
    allowed = {
        "bertscore": {"num_layers", "rescale_with_baseline", "baseline"},
        "ngram_cosine": {"max_n", "min_n", "tokenizer"},
    }
    unknown = set(options) - allowed.get(similarity, set())
    if unknown:
        first, *others = sorted(unknown)
        also = f" (nor {', '.join(f'`{name}`' for name in others)})" if others else ""
        raise ArgumentError(first, f"does not apply to similarity={similarity!r}{also}")
    if similarity == "ngram_cosine":
        if model is not None:
            raise ArgumentError("model", "does not apply to similarity='ngram_cosine'")
        return [ngram_cosine_unit_similarity(responses, **options) for responses in response_sets]
    assert model is not None  # default_model names one for every model-backed similarity
    if similarity == "sent_bert":
        return sent_bert_unit_similarities(
            response_sets, model, batch_size, device, dtype, progress=progress, backend=backend
        )
    if similarity == "cross_encoder":
        return cross_encoder_unit_similarities(
            response_sets,
            model,
            batch_size,
            device,
            dtype,
            allow_empty=allow_empty,
            progress=progress,
            backend=backend,
        )

    return compute_bertscore_matrices(
        response_sets,
        model=model,
        batch_size=batch_size,
        device=device,
        dtype=dtype,
        allow_empty=allow_empty,
        progress=progress,
        backend=backend,
        **options,
    ).unit_similarities


def similarity_matrices(
    response_sets: list[list[str]],
    similarity: str = "sent_bert",
    model: str | None = None,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    allow_empty: bool = False,
    backend: str | None = None,
    **options: Any,  # as unit_similarities
) -> list[np.ndarray]:
    """One ``(n, n)`` similarity matrix per response set (arguments as :func:`unit_similarities`).

    The diagonal is 1.0 for the cross-encoder and n-gram cosine and the self-similarity for
    sent-BERT and BERTScore; the §5 reduction never reads it.
    """
    diagonal = 1.0 if similarity in ("cross_encoder", "ngram_cosine") else None
    return [
        units.full_matrix(diagonal)
        for units in unit_similarities(
            response_sets,
            similarity,
            model,
            batch_size,
            device,
            dtype,
            allow_empty,
            backend=backend,
            **options,
        )
    ]


def similarity_diversity(
    response_sets: list[list[str]],
    similarity: str = "sent_bert",
    model: str | None = None,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    allow_empty: bool = False,
    progress: Progress | None = None,
    backend: str | None = None,
    **options: Any,  # as unit_similarities
) -> dict:
    """Negated mean pairwise similarity of each set (Tevet & Berant §5) and its mean over sets
    (``progress``: see :func:`unit_similarities`).

    Returns:
        ``similarity_diversity`` (mean over sets; higher is more diverse), ``per_set`` (one
        ``{"similarity_diversity": value}`` per set), ``num_sets``, ``similarity`` and ``model``.
    """
    _check_similarity(similarity)
    model = model if model is not None else default_model(similarity)
    scores = [
        units.diversity()
        for units in unit_similarities(
            response_sets,
            similarity,
            model,
            batch_size,
            device,
            dtype,
            allow_empty,
            progress,
            backend=backend,
            **options,
        )
    ]
    return {
        "similarity_diversity": float(np.mean(scores)),
        "num_sets": len(scores),
        "similarity": similarity,
        "model": model,
        "per_set": [{"similarity_diversity": score} for score in scores],
    }
