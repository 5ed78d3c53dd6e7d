"""Cross-encoder STS similarity ("BERT-STS" of Tevet & Berant 2021, §6.2) on the pairwise engine.

A cross-encoder reads both sentences at once and regresses their semantic similarity (one
output). Tevet & Berant used a BERT fine-tuned on STS-B (``swen128/bert-sts``, not on the Hub);
the maintained equivalent is a sentence-transformers ``CrossEncoder`` such as
``cross-encoder/stsb-roberta-large``, our default.

Scores follow sentence-transformers' ``CrossEncoder.predict``: the single logit through the
activation the checkpoint records (``config.sentence_transformers.activation_fn``, or the
older ``sbert_ce_default_activation_function``), Sigmoid
when it records none, as CrossEncoder does for one-label models. A cross-encoder is not
exactly symmetric, so each unordered pair is scored in both orders and averaged (the §5
reduction assumes a symmetric similarity).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dialeval.metrics.engines.pair_scorer import PairScoringStats, load_pair_classifier, score_pairs
from dialeval.metrics.engines.reduction import UnitSimilarity, units_of
from dialeval.metrics.similarity_diversity.defaults import DEFAULT_CROSS_ENCODER
from dialeval.validation import ArgumentError, check_response_sets

if TYPE_CHECKING:
    from transformers import PretrainedConfig

    from dialeval.type_aliases import DeviceLike, Progress

_ACTIVATIONS = {
    "torch.nn.modules.activation.Sigmoid": "sigmoid",
    "torch.nn.modules.linear.Identity": "none",
}


def cross_encoder_activation(config: PretrainedConfig) -> str:
    """``"sigmoid"`` or ``"none"``: what sentence-transformers would apply to this checkpoint's
    logit."""
    recorded = (getattr(config, "sentence_transformers", None) or {}).get("activation_fn")
    # sentence-transformers < 4 stored it under another key.
    recorded = recorded or getattr(config, "sbert_ce_default_activation_function", None)
    if recorded is None:
        return "sigmoid"
    if recorded not in _ACTIVATIONS:
        raise ValueError(
            f"unsupported cross-encoder activation {recorded!r}; supported: {sorted(_ACTIVATIONS)}"
        )
    return _ACTIVATIONS[recorded]


def cross_encoder_unit_similarities(
    response_sets: list[list[str]],
    model: str = DEFAULT_CROSS_ENCODER,
    batch_size: int = 32,
    device: DeviceLike = None,
    dtype: str | None = None,
    allow_empty: bool = False,
    stats: PairScoringStats | None = None,
    progress: Progress | None = None,
    backend: str | None = None,
) -> list[UnitSimilarity]:
    """The STS score of every pair of each set's distinct texts, both orders averaged
    (``progress``: see :func:`~dialeval.metrics.engines.pair_scorer.score_pairs`).

    A text that repeats is also scored against itself (the similarity of two of its copies), so
    a set of 10,000 copies of one response needs one pair, not 5*10^7.
    """
    response_sets = check_response_sets(
        response_sets, "response_sets", min_size=2, allow_empty=allow_empty
    )
    classifier = load_pair_classifier(model, device=device, dtype=dtype, backend=backend)
    if classifier.model.config.num_labels != 1:
        raise ArgumentError(
            "model",
            f"must be a one-output STS cross-encoder, got {classifier.model.config.num_labels} "
            f"labels ({classifier.id2label}); for NLI models use nli_diversity",
        )
    firsts: list[str] = []
    seconds: list[str] = []
    layouts: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
    for responses in response_sets:
        units, unit_of_item = units_of(responses)
        repeated = np.flatnonzero(np.bincount(unit_of_item) > 1)
        rows, cols = np.triu_indices(len(units), k=1)
        rows, cols = np.concatenate([rows, repeated]), np.concatenate([cols, repeated])
        layouts.append((len(firsts), rows, cols, unit_of_item))
        firsts += [units[i] for i in rows] + [units[j] for j in cols]
        seconds += [units[j] for j in cols] + [units[i] for i in rows]
    scores = score_pairs(
        classifier,
        firsts,
        seconds,
        batch_size,
        stats,
        activation=cross_encoder_activation(classifier.model.config),
        progress=progress,
    )[:, 0]
    similarities = []
    for start, rows, cols, unit_of_item in layouts:
        count = len(rows)
        forward = scores[start : start + count]
        backward = scores[start + count : start + 2 * count]
        matrix = np.eye(int(unit_of_item.max()) + 1)
        matrix[rows, cols] = matrix[cols, rows] = (forward + backward) / 2
        similarities.append(UnitSimilarity(matrix, unit_of_item))
    return similarities


def cross_encoder_similarity_matrices(
    response_sets: list[list[str]],
    model: str = DEFAULT_CROSS_ENCODER,
    batch_size: int = 32,
    device: DeviceLike = None,
    dtype: str | None = None,
    allow_empty: bool = False,
    stats: PairScoringStats | None = None,
    backend: str | None = None,
) -> list[np.ndarray]:
    """One symmetric ``(n, n)`` similarity matrix per set (diagonal 1.0, never read by the
    reduction)."""
    similarities = cross_encoder_unit_similarities(
        response_sets, model, batch_size, device, dtype, allow_empty, stats, backend=backend
    )
    return [units.full_matrix(diagonal=1.0) for units in similarities]
