"""Tokenized dialogue examples and their collator, shared by the DRESS and unlikelihood trainers.

An example is ``input_ids`` + ``labels`` (``-100`` where nothing is predicted):

* causal LMs, DialoGPT style: ``turn_1 <eos> ... turn_n <eos> response <eos>``, labels only on
  ``response <eos>`` (the loss is on the response only);
* encoder-decoder models (BART, BlenderBot): ``input_ids`` is the context (turns joined by the
  tokenizer's separator), ``labels`` the response's ids.

Unlikelihood examples also carry ``negative_input_ids`` / ``negative_labels`` built the same way
for the negative response; DRESS examples carry a float ``dress_weight``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from dialeval.trainers.losses import IGNORE_INDEX
from dialeval.trainers.text_checks import check_text
from dialeval.type_aliases import Tokenizer
from dialeval.validation import ArgumentError

#: Float per-example columns the collator stacks as they are.
FLOAT_COLUMNS = ("dress_weight",)
NEGATIVE_PREFIX = "negative_"


def _check_turns(context: object) -> list[str]:
    if isinstance(context, str):
        check_text(context, "context")
        return [context]
    if (
        not isinstance(context, Sequence)
        or not context
        or not all(isinstance(turn, str) for turn in context)
    ):
        raise ArgumentError("context", "must be a string or a non-empty list of strings")
    for index, turn in enumerate(context):
        check_text(turn, f"context[{index}]")
    return list(context)


def _template(tokenizer: Tokenizer) -> tuple[list[int], list[int]]:
    """The special tokens the tokenizer puts before and after a single sequence."""
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    full = tokenizer("a")["input_ids"]
    for start in range(len(full) - len(plain) + 1):
        if full[start : start + len(plain)] == plain:
            return full[:start], full[start + len(plain) :]
    raise ArgumentError(
        "tokenizer",
        "changes a text's own tokens when it adds its special tokens; cannot truncate around them",
    )


def encode_dialogue(
    tokenizer: Tokenizer,
    context: str | Sequence[str],
    response: str,
    is_encoder_decoder: bool,
    max_length: int = 128,
) -> dict[str, list[int]]:
    """``input_ids`` / ``attention_mask`` / ``labels`` of one (context, response) pair.

    Causal: the context keeps its *last* tokens when too long (the recent turns matter most); the
    response is cut to ``max_length // 2`` tokens first so that some context always remains.
    Encoder-decoder: the turns joined by eos in the tokenizer's template, keeping their last tokens
    when too long (as ParlAI, the authors' framework, truncates inputs); the labels are the response
    in the template and always end with eos (BlenderBot-small's template adds none).
    """
    turns = _check_turns(context)
    if not isinstance(response, str):
        raise ArgumentError("response", f"must be a string, got {type(response).__name__}")
    check_text(response, "response")
    if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 4:
        raise ArgumentError("max_length", f"must be an int >= 4, got {max_length!r}")
    eos = tokenizer.eos_token_id
    if eos is None:
        raise ArgumentError("tokenizer", "has no eos_token_id; dialogue turns are separated by it")
    response_ids = tokenizer(response, add_special_tokens=False)["input_ids"]
    if is_encoder_decoder:
        # The tokenizer's own template (BART: <s> x </s>, BlenderBot / T5: x </s>, BlenderBot-small:
        # none) around a context cut from the left (ParlAI truncates inputs so); the labels always
        # end with eos, or a model whose template adds none would never learn to stop.
        prefix, suffix = _template(tokenizer)
        room = max(max_length - len(prefix) - len(suffix), 1)
        context_ids: list[int] = tokenizer(
            f" {tokenizer.eos_token} ".join(turns), add_special_tokens=False
        )["input_ids"]
        source = prefix + context_ids[-room:] + suffix
        labels = prefix + response_ids[: room - (0 if suffix[-1:] == [eos] else 1)] + suffix
        if not labels or labels[-1] != eos:
            labels.append(eos)
        return {"input_ids": source, "attention_mask": [1] * len(source), "labels": labels}
    response_ids = response_ids[: max_length // 2 - 1] + [eos]
    context_ids = []
    for turn in turns:
        context_ids += tokenizer(turn, add_special_tokens=False)["input_ids"] + [eos]
    context_ids = context_ids[-(max_length - len(response_ids)) :]
    input_ids = context_ids + response_ids
    return {
        "input_ids": input_ids,
        "attention_mask": [1] * len(input_ids),
        "labels": [IGNORE_INDEX] * len(context_ids) + response_ids,
    }


def encode_unlikelihood_example(
    tokenizer: Tokenizer,
    context: str | Sequence[str],
    response: str,
    negative_response: str,
    is_encoder_decoder: bool,
    max_length: int = 128,
    negative_context: str | Sequence[str] | None = None,
) -> dict[str, list[int]]:
    """A gold example plus its negative under ``negative_*`` keys (UnlikelihoodTrainer's input).

    ``negative_context``: the negative's own context when it is not the gold one (Negative
    Training's frequent responses are negatives for the contexts that produced them,
    :mod:`dialeval.trainers.frequent_negatives`); default: the gold context.
    """
    gold = encode_dialogue(tokenizer, context, response, is_encoder_decoder, max_length)
    negative = encode_dialogue(
        tokenizer,
        context if negative_context is None else negative_context,
        negative_response,
        is_encoder_decoder,
        max_length,
    )
    return {**gold, **{NEGATIVE_PREFIX + key: value for key, value in negative.items()}}


def _pad(rows: list, value: int, length: int | None = None) -> torch.Tensor:
    length = max(len(row) for row in rows) if length is None else length
    # Right padding: the real tokens keep positions 0..n-1, as in training without padding.
    return torch.tensor(
        [list(row) + [value] * (length - len(row)) for row in rows], dtype=torch.long
    )


class DialogueCollator:
    """Pads ``input_ids`` / ``attention_mask`` / ``labels`` (and their ``negative_`` twins) on the
    right.

    ``pad_token_id`` pads ids, 0 the attention mask, ``-100`` the labels; ``dress_weight`` is
    stacked as float32. Keys it does not know are refused rather than dropped silently.
    """

    def __init__(self, pad_token_id: int) -> None:
        if isinstance(pad_token_id, bool) or not isinstance(pad_token_id, int) or pad_token_id < 0:
            raise ArgumentError("pad_token_id", f"must be an int >= 0, got {pad_token_id!r}")
        self.pad_token_id = pad_token_id

    def __call__(self, features: list[dict]) -> dict[str, torch.Tensor]:
        if not features:
            raise ArgumentError("features", "is empty")
        batch: dict[str, torch.Tensor] = {}
        for key in features[0]:
            values = [feature[key] for feature in features]
            base = key.removeprefix(NEGATIVE_PREFIX)
            if key in FLOAT_COLUMNS:
                batch[key] = torch.tensor([float(value) for value in values], dtype=torch.float32)
            elif base == "input_ids":
                batch[key] = _pad(values, self.pad_token_id)
            elif base in ("attention_mask", "decoder_attention_mask"):
                batch[key] = _pad(values, 0)
            elif base == "labels":
                batch[key] = _pad(values, IGNORE_INDEX)
            else:
                raise ArgumentError(
                    "features",
                    f"has a column {key!r} that DialogueCollator does not know how to collate",
                )
        return batch
