"""The pairwise scoring engine: a sequence-pair classifier over many (first, second) text pairs.

NLI Diversity (Stasaski & Hearst 2022, §3) classifies all n(n-1) ordered pairs of every
response set, and a cross-encoder STS similarity (Tevet & Berant 2021, §6.2 "BERT-STS") scores
unordered pairs: both are one ``AutoModelForSequenceClassification`` forward per pair. Scored
one pair per forward this is slow, so the engine

- scores each distinct (first, second) pair once (low-temperature sets repeat responses);
- sorts pairs by tokenized length and pads each batch only to its own longest pair (the
  longest batch first, so an out-of-memory error shows at once, not after an hour);
- runs under ``torch.inference_mode()`` with the model loaded once per (path, device, dtype);
- counts the pairs truncated to the model's maximum length instead of truncating silently.

Callers stream through large inputs by scoring a chunk of pairs at a time (see
:mod:`dialeval.metrics.nli_diversity.nli`), so memory stays bounded by the chunk, not by the corpus.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dialeval.hub import LoadedModel, load_model
from dialeval.validation import check_int

@dataclass
class PairScoringStats:
    """Running counts, so a caller can report what the engine did."""

    num_pairs: int = 0
    num_unique_pairs: int = 0
    num_truncated: int = 0

    def as_dict(self) -> dict:
        return dict(vars(self))


def load_pair_classifier(model, device=None, dtype: str | None = None) -> LoadedModel:
    """``model`` (Hub id, directory or :class:`~dialeval.hub.LoadedModel`) as a sequence-pair
    classifier, through :func:`dialeval.hub.load_model` (once per model, device and dtype)."""
    return load_model(model, "sequence_classification", device=device, dtype=dtype)


def _encode(classifier: LoadedModel, firsts: list[str], seconds: list[str], stats: PairScoringStats) -> list[dict]:
    """Tokenizer features per pair (ids, and token types for BERT-style models); over-long pairs are truncated and counted."""
    tokenizer, limit = classifier.tokenizer, classifier.max_length
    full = tokenizer(firsts, seconds, truncation=False, verbose=False)
    features = [{key: values[i] for key, values in full.items()} for i in range(len(firsts))]
    too_long = [i for i, feature in enumerate(features) if len(feature["input_ids"]) > limit]
    if too_long:
        stats.num_truncated += len(too_long)
        cut = tokenizer(
            [firsts[i] for i in too_long], [seconds[i] for i in too_long], truncation="longest_first", max_length=limit
        )
        for j, i in enumerate(too_long):
            features[i] = {key: values[j] for key, values in cut.items()}
    return features


def score_pairs(
    classifier: LoadedModel,
    firsts: list[str],
    seconds: list[str],
    batch_size: int = 32,
    stats: PairScoringStats | None = None,
    activation: str = "softmax",
) -> np.ndarray:
    """Class probabilities (``activation="softmax"``), sigmoid scores or raw logits per pair.

    Returns a float64 array of shape ``(len(firsts), num_labels)``, row ``i`` for
    ``(firsts[i], seconds[i])``. Identical pairs are scored once.
    """
    import torch

    if len(firsts) != len(seconds):
        raise ValueError(f"`firsts` and `seconds` must have the same length, got {len(firsts)} and {len(seconds)}")
    if activation not in {"softmax", "sigmoid", "none"}:
        raise ValueError(f"`activation` must be 'softmax', 'sigmoid' or 'none', got {activation!r}")
    check_int(batch_size, "batch_size")
    stats = stats if stats is not None else PairScoringStats()
    num_labels = classifier.model.config.num_labels
    if not firsts:
        return np.zeros((0, num_labels))

    unique: dict[tuple[str, str], int] = {}
    row_of_pair = np.array([unique.setdefault(pair, len(unique)) for pair in zip(firsts, seconds)], dtype=np.int64)
    pairs = list(unique)
    stats.num_pairs += len(firsts)
    stats.num_unique_pairs += len(pairs)

    features = _encode(classifier, [a for a, _ in pairs], [b for _, b in pairs], stats)
    order = sorted(range(len(pairs)), key=lambda i: len(features[i]["input_ids"]), reverse=True)
    scores = np.empty((len(pairs), num_labels), dtype=np.float64)
    tokenizer, model = classifier.tokenizer, classifier.model
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            members = order[start : start + batch_size]
            # Right padding whatever the tokenizer's default: absolute-position encoders (BERT)
            # would otherwise see shifted positions.
            batch = tokenizer.pad([features[i] for i in members], padding_side="right", return_tensors="pt")
            logits = model(**{k: v.to(classifier.device) for k, v in batch.items()}).logits.float()
            if activation == "softmax":
                logits = logits.softmax(dim=-1)
            elif activation == "sigmoid":
                logits = logits.sigmoid()
            scores[members] = logits.cpu().double().numpy()
    return scores[row_of_pair]
