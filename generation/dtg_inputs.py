"""DTG's model, tokenizer and token batch, checked before the first generate call.

Without these checks a wrong object fails deep inside transformers with an error that names
nothing the caller wrote: a classifier has no ``generate``, ``tokenizer=None`` no
``padding_side``, a token id outside the embedding table is torch's ``IndexError: index out of
range in self``, a float ``input_ids`` an embedding ``RuntimeError``, and an empty context (no
token to continue from) an ``IndexError`` in the cache. A row whose ``attention_mask`` is all zero
is generated from nothing at all, without a word; it is refused too.

:func:`resolved_num_responses` reads n where ``generate()`` reads ``num_return_sequences``: the
explicit argument, then the ``generation_config`` passed, then ``model.generation_config``, then
DTG's default (5, §6.1). A config's ``num_return_sequences=1`` reads as unset: it is plain
``generate()``'s one sequence, not a set size.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from transformers import GenerationConfig

from dialeval.generation.dtg_checks import check_num_responses
from dialeval.validation import ArgumentError, lone_surrogate

#: n when neither the call nor a generation config sets it (§6.1).
DEFAULT_NUM_RESPONSES = 5


def check_model(model: object) -> None:
    """``model`` a language model that generates (a causal or seq2seq ``GenerationMixin``)."""
    can_generate = getattr(model, "can_generate", None)
    if (
        not callable(getattr(model, "generate", None))
        or getattr(model, "config", None) is None
        or (callable(can_generate) and not can_generate())
    ):
        raise ArgumentError(
            "model",
            "must be a causal or seq2seq language model with generate() (e.g. "
            f"AutoModelForCausalLM), got {type(model).__name__}",
        )


def check_tokenizer(tokenizer: object, encodes_text: bool) -> None:
    """``tokenizer`` decodes responses (``batch_decode``) and, for string contexts, encodes them."""
    if not callable(getattr(tokenizer, "batch_decode", None)) or (
        encodes_text and not callable(tokenizer)
    ):
        raise ArgumentError(
            "tokenizer",
            "must be the model's tokenizer (a transformers tokenizer: DTG encodes the contexts and "
            f"decodes every response), got {type(tokenizer).__name__}",
        )


def check_generation_config(generation_config: object) -> None:
    if generation_config is not None and not isinstance(generation_config, GenerationConfig):
        raise ArgumentError(
            "generation_config",
            "must be a transformers GenerationConfig or None, got "
            f"{type(generation_config).__name__}",
        )


def vocabulary_size(model: Any) -> int | None:
    """The rows of the model's input embedding table (None when the model does not say)."""
    get_embeddings = getattr(model, "get_input_embeddings", None)
    if callable(get_embeddings):
        size = getattr(get_embeddings(), "num_embeddings", None)
        if isinstance(size, int):
            return size
    config = model.config
    text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
    size = getattr(text_config, "vocab_size", None)
    return size if isinstance(size, int) else None


def check_token_batch(encoded: Mapping[str, Any], vocabulary: int | None) -> None:
    """A tokenized batch as generate() needs it: ``input_ids`` a 2-D integer tensor of token ids in
    ``[0, vocabulary)`` with at least one row and one column; ``attention_mask`` (if any) of 0s and
    1s, of the same shape, with at least one 1 in every row."""
    ids = encoded["input_ids"]
    if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or 0 in ids.shape:
        shape = tuple(ids.shape) if isinstance(ids, torch.Tensor) else None
        raise ArgumentError(
            "input_ids",
            "must be a 2-D tensor (contexts, tokens) with at least one token, got "
            + (f"shape {shape}" if shape is not None else type(ids).__name__),
        )
    if ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
        raise ArgumentError(
            "input_ids", f"must hold integer token ids (torch.long), got dtype {ids.dtype}"
        )
    low, high = int(ids.min()), int(ids.max())
    if low < 0 or (vocabulary is not None and high >= vocabulary):
        bad = low if low < 0 else high
        raise ArgumentError(
            "input_ids",
            f"holds token id {bad}, outside the model's vocabulary [0, {vocabulary}) "
            "(tokenized with another tokenizer?)",
        )
    mask = encoded.get("attention_mask")
    if mask is None:
        return
    if not isinstance(mask, torch.Tensor) or mask.shape != ids.shape:
        raise ArgumentError(
            "attention_mask",
            f"must be a tensor of the shape of `input_ids` {tuple(ids.shape)}, "
            f"got {tuple(getattr(mask, 'shape', ())) or type(mask).__name__}",
        )
    if not bool(((mask == 0) | (mask == 1)).all()):
        raise ArgumentError("attention_mask", "must hold only 0 (padding) and 1 (token)")
    empty = (mask == 0).all(dim=1).nonzero().flatten().tolist()
    if empty:
        raise ArgumentError(
            "attention_mask",
            f"masks every token of row {empty[0]}: a context needs at least one token to "
            "continue from",
        )


def check_context_rows(encoded: Mapping[str, Any], texts: list[str]) -> None:
    """Every string context encoded to at least one token (``""`` does, for most causal LMs)."""
    mask = encoded.get("attention_mask")
    if mask is None:
        mask = torch.ones_like(encoded["input_ids"])
    for index, count in enumerate(mask.ne(0).sum(dim=1).tolist()):
        if count == 0:
            raise ArgumentError(
                f"inputs[{index}]",
                f"({texts[index]!r:.40}) encodes to no token: DTG needs a context to continue from",
            )


def check_decoded(texts: object, expected: int) -> list[str]:
    """What ``tokenizer.batch_decode`` returned: ``expected`` valid Unicode strings."""
    if not isinstance(texts, (list, tuple)) or len(texts) != expected:
        raise ArgumentError(
            "tokenizer",
            f"batch_decode must return a list of {expected} strings, got {type(texts).__name__}",
        )
    for text in texts:
        if not isinstance(text, str):
            raise ArgumentError(
                "tokenizer", f"batch_decode must return strings, got {type(text).__name__}"
            )
        found = lone_surrogate(text)
        if found is not None:
            raise ArgumentError(
                "tokenizer",
                f"decoded a response holding {found} ({text!r:.40}): a response must be valid "
                "Unicode; fix the tokenizer's decode",
            )
    return list(texts)


def resolved_num_responses(
    num_responses: object,
    generation_config: GenerationConfig | None,
    model: Any,
    argument: str = "num_responses",
) -> int:
    """n as ``generate()`` reads ``num_return_sequences``: ``num_responses`` when given, else the
    passed ``generation_config``'s ``num_return_sequences``, else ``model.generation_config``'s,
    else :data:`DEFAULT_NUM_RESPONSES`; checked under the name of the place it came from."""
    if num_responses is not None:
        return check_num_responses(num_responses, argument)
    for config, name in (
        (generation_config, "generation_config.num_return_sequences"),
        (getattr(model, "generation_config", None), "model.generation_config.num_return_sequences"),
    ):
        value = getattr(config, "num_return_sequences", None)
        # 1 is plain generate()'s own count (GenerationConfig's default before transformers 5,
        # saved in many checkpoints): it asks for no set, so DTG's default applies.
        if value is not None and value != 1:
            return check_num_responses(value, name)
    return DEFAULT_NUM_RESPONSES
