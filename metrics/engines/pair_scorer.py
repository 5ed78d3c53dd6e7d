"""The pairwise scoring engine: a sequence-pair classifier over many (first, second) text pairs.

NLI Diversity (Stasaski & Hearst 2022, §3) classifies all n(n-1) ordered pairs of every
response set, and a cross-encoder STS similarity (Tevet & Berant 2021, §6.2 "BERT-STS") scores
unordered pairs: both are one ``AutoModelForSequenceClassification`` forward per pair. Scored
one pair per forward this is slow, so the engine

- scores each distinct (first, second) pair once (low-temperature sets repeat responses);
- sorts pairs by tokenized length and pads each batch only to its own longest pair (the
  longest batch first, so an out-of-memory error shows at once, not after an hour);
- runs under ``torch.inference_mode()`` with the model loaded once per (path, device, dtype,
  runtime backend);
- counts the pairs truncated to the model's maximum length instead of truncating silently.

Callers stream through large inputs by scoring a chunk of pairs at a time (see
:mod:`dialeval.metrics.nli_diversity.nli`), so memory stays bounded by the chunk, not by the corpus.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dialeval.distributed import gather_shares, work_share
from dialeval.hub import LoadedModel, ModelSource, load_model
from dialeval.metrics.engines.job_steps import announce_work
from dialeval.type_aliases import DeviceLike, Progress
from dialeval.validation import ArgumentError, check_int

if TYPE_CHECKING:
    from transformers import PreTrainedModel


@dataclass
class PairScoringStats:
    """Running counts, so a caller can report what the engine did."""

    num_pairs: int = 0
    num_unique_pairs: int = 0
    num_truncated: int = 0

    def as_dict(self) -> dict:
        return dict(vars(self))


def load_pair_classifier(
    model: ModelSource,
    device: DeviceLike = None,
    dtype: str | None = None,
    backend: str | None = None,
) -> LoadedModel[PreTrainedModel]:
    """``model`` (Hub id, directory or :class:`~dialeval.hub.LoadedModel`) as a sequence-pair
    classifier, through :func:`dialeval.hub.load_model` (once per model, device, dtype and
    runtime ``backend``)."""
    return load_model(model, "sequence_classification", device=device, dtype=dtype, backend=backend)


def _longest_first_lengths(first: int, second: int, budget: int) -> tuple[int, int]:
    """Tokens kept of each side under ``truncation="longest_first"`` with ``budget`` tokens for
    both, as the ``tokenizers`` library computes them (``utils/truncation.rs``)."""
    shorter, longer = sorted((first, second))
    longer = shorter if shorter > budget else max(shorter, budget - shorter)
    if shorter + longer > budget:
        shorter = budget // 2
        longer = shorter + budget % 2
    return (shorter, longer) if first <= second else (longer, shorter)


def _encode_with_backend(
    classifier: LoadedModel, firsts: list[str], seconds: list[str], stats: PairScoringStats
) -> list[tuple]:
    """``(input_ids, token_type_ids)`` per pair from the fast tokenizer's Rust backend.

    Each distinct text is encoded once (not once per pair it is in) and cut to the model's limit,
    so memory stays linear in the texts even for huge ones; pairs are then assembled by the
    tokenizer's own post-processor (its special tokens and type ids), which is what
    ``tokenizer(first, second)`` does. Over-long pairs are cut as ``truncation="longest_first"``.
    """
    # tokenizers: deferred, so importing this module loads no model stack
    from tokenizers import Encoding

    backend, limit = classifier.tokenizer.backend_tokenizer, classifier.max_length
    # Settings a previous transformers call left on the shared backend would apply here too.
    backend.no_truncation()
    backend.no_padding()
    texts = list(dict.fromkeys(firsts + seconds))
    encodings = dict(zip(texts, backend.encode_batch(texts, add_special_tokens=False)))
    # The full lengths decide which side longest_first cuts; no side ever keeps more than the limit.
    lengths = {text: len(encoding.ids) for text, encoding in encodings.items()}
    for encoding in encodings.values():
        if len(encoding.ids) > limit:
            encoding.truncate(limit)
    budget = limit - backend.num_special_tokens_to_add(True)
    pairs = []
    for first, second in zip(firsts, seconds):
        a, b = encodings[first], encodings[second]
        if lengths[first] + lengths[second] > budget:
            stats.num_truncated += 1
            keep_a, keep_b = _longest_first_lengths(lengths[first], lengths[second], budget)
            a, b = Encoding.merge([a]), Encoding.merge([b])  # copies: the cut is for this pair only
            a.truncate(keep_a)
            b.truncate(keep_b)
        merged = backend.post_process(a, b, add_special_tokens=True)
        pairs.append((merged.ids, merged.type_ids))
    return pairs


def _encode_with_tokenizer(
    classifier: LoadedModel, firsts: list[str], seconds: list[str], stats: PairScoringStats
) -> list[tuple]:
    """The same for a tokenizer without a Rust backend: the tokenizer on each pair."""
    tokenizer, limit = classifier.tokenizer, classifier.max_length
    full = tokenizer(firsts, seconds, truncation=False, verbose=False)
    pairs = [
        (full["input_ids"][i], full["token_type_ids"][i] if "token_type_ids" in full else None)
        for i in range(len(firsts))
    ]
    too_long = [i for i, (ids, _) in enumerate(pairs) if len(ids) > limit]
    if too_long:
        stats.num_truncated += len(too_long)
        cut = tokenizer(
            [firsts[i] for i in too_long],
            [seconds[i] for i in too_long],
            truncation="longest_first",
            max_length=limit,
        )
        for j, i in enumerate(too_long):
            pairs[i] = (
                cut["input_ids"][j],
                cut["token_type_ids"][j] if "token_type_ids" in cut else None,
            )
    return pairs


def _padded_batch(pairs: list[tuple], pad_id: int, with_type_ids: bool) -> dict:
    """Right-padded ``input_ids`` / ``attention_mask`` (/ ``token_type_ids``) tensors of one batch.

    Right padding whatever the tokenizer's default: absolute-position encoders (BERT) would
    otherwise see shifted positions.
    """
    # torch: deferred, so importing this module loads no model stack
    import torch

    width = max(len(ids) for ids, _ in pairs)
    input_ids = np.full((len(pairs), width), pad_id, dtype=np.int64)
    attention_mask = np.zeros((len(pairs), width), dtype=np.int64)
    type_ids = np.zeros((len(pairs), width), dtype=np.int64) if with_type_ids else None
    for row, (ids, types) in enumerate(pairs):
        input_ids[row, : len(ids)] = ids
        attention_mask[row, : len(ids)] = 1
        if type_ids is not None and types is not None:
            type_ids[row, : len(types)] = types
    batch = {
        "input_ids": torch.from_numpy(input_ids),
        "attention_mask": torch.from_numpy(attention_mask),
    }
    if type_ids is not None:
        batch["token_type_ids"] = torch.from_numpy(type_ids)
    return batch


def score_pairs(
    classifier: LoadedModel[PreTrainedModel],
    firsts: list[str],
    seconds: list[str],
    batch_size: int = 32,
    stats: PairScoringStats | None = None,
    activation: str = "softmax",
    progress: Progress | None = None,
) -> np.ndarray:
    """Class probabilities (``activation="softmax"``), sigmoid scores or raw logits per pair.

    Returns a float64 array of shape ``(len(firsts), num_labels)``, row ``i`` for
    ``(firsts[i], seconds[i])``. Identical pairs are scored once. Batches go to the device without
    waiting for the previous one's result (one synchronization at the end), so on a GPU the next
    batch is prepared while the current one runs. ``progress`` is called with the number of
    pairs of each batch (after :func:`~dialeval.metrics.engines.job_steps.announce_work`).
    """
    # torch: deferred, so importing this module loads no model stack
    import torch

    if len(firsts) != len(seconds):
        raise ArgumentError(
            "firsts",
            f"and `seconds` must have the same length, got {len(firsts)} and {len(seconds)}",
        )
    if activation not in {"softmax", "sigmoid", "none"}:
        raise ArgumentError(
            "activation", f"must be 'softmax', 'sigmoid' or 'none', got {activation!r}"
        )
    check_int(batch_size, "batch_size")
    stats = stats if stats is not None else PairScoringStats()
    num_labels = classifier.model.config.num_labels
    # transformers fills id2label in for every config it builds; a caller may reset it
    if num_labels is None:
        raise ArgumentError(
            "classifier",
            "has no labels: its config's id2label is None; set it (one name per output)",
        )
    if not firsts:
        return np.zeros((0, num_labels))

    unique: dict[tuple[str, str], int] = {}
    row_of_pair = np.array(
        [unique.setdefault(pair, len(unique)) for pair in zip(firsts, seconds)], dtype=np.int64
    )
    distinct = list(unique)
    stats.num_pairs += len(firsts)
    stats.num_unique_pairs += len(distinct)

    tokenizer, model = classifier.tokenizer, classifier.model
    encode = (
        _encode_with_backend
        if getattr(tokenizer, "backend_tokenizer", None) is not None
        else _encode_with_tokenizer
    )
    encoded = encode(classifier, [a for a, _ in distinct], [b for _, b in distinct], stats)
    with_type_ids = "token_type_ids" in getattr(tokenizer, "model_input_names", ())
    pad_id = classifier.pad_token_id
    order = work_share(
        sorted(range(len(distinct)), key=lambda i: len(encoded[i][0]), reverse=True), batch_size
    )
    non_blocking = classifier.device.type == "cuda"
    announce_work(progress, len(order), "pair")
    outputs = []
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            members = order[start : start + batch_size]
            batch = _padded_batch([encoded[i] for i in members], pad_id, with_type_ids)
            if non_blocking:
                batch = {key: value.pin_memory() for key, value in batch.items()}
            logits = model(
                **{k: v.to(classifier.device, non_blocking=non_blocking) for k, v in batch.items()}
            ).logits.float()
            if activation == "softmax":
                logits = logits.softmax(dim=-1)
            elif activation == "sigmoid":
                logits = logits.sigmoid()
            outputs.append(logits)
            if progress is not None:
                progress(len(members))
        values = torch.cat(outputs).cpu().double().numpy() if outputs else np.zeros((0, num_labels))
    order, values = gather_shares(order, values)
    scores = np.empty((len(distinct), num_labels), dtype=np.float64)
    scores[np.asarray(order, dtype=np.int64)] = values
    return scores[row_of_pair]
