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
:mod:`dialeval.metrics.nli`), so memory stays bounded by the chunk, not by the corpus.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from dialeval.models import resolve_device, resolve_model_path

#: dtypes a classifier may be loaded in; half precision is meant for GPUs.
DTYPES = ("float32", "float16", "bfloat16")


@dataclass
class PairScoringStats:
    """Running counts, so a caller can report what the engine did."""

    num_pairs: int = 0
    num_unique_pairs: int = 0
    num_truncated: int = 0

    def as_dict(self) -> dict:
        return dict(vars(self))


@dataclass(frozen=True)
class PairClassifier:
    """A loaded sequence-pair classifier; build it with :func:`load_pair_classifier`."""

    model: object
    tokenizer: object
    device: object
    name: str

    @property
    def id2label(self) -> dict[int, str]:
        return {int(i): str(label) for i, label in self.model.config.id2label.items()}

    @property
    def max_length(self) -> int:
        """The tokenizer's limit, capped by the position table (some tokenizers report 1e30)."""
        limit = getattr(self.tokenizer, "model_max_length", None) or 10**9
        positions = getattr(self.model.config, "max_position_embeddings", None)
        if positions:
            # RoBERTa-style models offset positions by pad_token_id + 1.
            offset = (self.model.config.pad_token_id + 1) if self.model.config.model_type in {"roberta", "xlm-roberta", "camembert"} else 0
            limit = min(limit, positions - offset)
        return int(limit)


@lru_cache(maxsize=4)
def _load(model_path: str, device: str, dtype: str | None) -> PairClassifier:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForSequenceClassification.from_pretrained(
        model_path, dtype=getattr(torch, dtype) if dtype else None
    )
    model.to(device).eval()
    return PairClassifier(model, tokenizer, torch.device(device), model_path)


def load_pair_classifier(model: str, device=None, dtype: str | None = None) -> PairClassifier:
    """Load ``model`` (Hub id or directory) once per (model, device, dtype).

    Raises:
        ValueError: ``dtype`` is not one of :data:`DTYPES` or None.
        ModelNotAvailableError: the weights are not on this machine (the message says how to get them).
    """
    if isinstance(model, PairClassifier):
        return model
    if dtype is not None and dtype not in DTYPES:
        raise ValueError(f"`dtype` must be None or one of {DTYPES}, got {dtype!r}")
    return _load(resolve_model_path(model), str(resolve_device(device)), dtype)


def _check_batch_size(batch_size) -> None:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"`batch_size` must be a positive int, got {batch_size!r}")


def _encode(classifier: PairClassifier, firsts: list[str], seconds: list[str], stats: PairScoringStats) -> list[dict]:
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
    classifier: PairClassifier,
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
    _check_batch_size(batch_size)
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
