"""Left padding of a tokenized batch for a decoder-only model.

A decoder-only model continues from each row's last position, so a batch must be padded on the
left. A right-padded batch (a tokenizer's default ``padding_side="right"``) would put pad tokens
between each shorter prompt and its response (and transformers warns once per generate call).
DTG therefore re-pads such a batch on the left, from its ``attention_mask``: the result is the
batch a ``padding_side="left"`` tokenizer gives, so the outputs equal those of a left-padded
call. The caller's tensors are never changed (new tensors are built); a mask with a gap inside a
row (``1 0 1``) is not padding and is refused with a ValueError naming ``attention_mask``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import torch

from dialeval.validation import ArgumentError


def is_left_padded(attention_mask: torch.Tensor) -> bool:
    """Every row's zeros come before its ones (no padding at all counts)."""
    mask = attention_mask.ne(0).long()
    return bool((mask[:, 1:] >= mask[:, :-1]).all())


_Batch = TypeVar("_Batch", bound=Mapping[str, Any])


def left_padded(encoded: _Batch) -> _Batch | dict[str, Any]:
    """``encoded`` (``input_ids``, ``attention_mask``, other per-token tensors) padded on the left.

    Returned as is when it is already left-padded or has no ``attention_mask``; otherwise a new
    dict whose per-token tensors (shape ``(batch, length)``) are rebuilt row by row: each row's
    kept tokens moved to the end, its own padding entries (the caller's pad token) before them.
    """
    mask = encoded.get("attention_mask")
    ids = encoded["input_ids"]
    # nothing to go by, or not generate()'s input: left to it
    if mask is None or not isinstance(ids, torch.Tensor):
        return encoded
    if not isinstance(mask, torch.Tensor) or mask.shape != ids.shape or mask.dim() != 2:
        raise ArgumentError(
            "attention_mask",
            f"must be a tensor of the shape of `input_ids` {tuple(ids.shape)}, "
            f"got {tuple(getattr(mask, 'shape', ()))}",
        )
    if is_left_padded(mask):
        return encoded
    keep = mask.ne(0)
    for row in range(keep.shape[0]):
        kept = keep[row].nonzero().flatten()
        if len(kept) and int(kept[-1] - kept[0]) + 1 != len(kept):
            raise ArgumentError(
                "attention_mask",
                f"row {row} masks tokens inside its prompt ({mask[row].tolist()}): "
                "only padding at either end can be re-padded for a decoder-only model",
            )
    shift = keep.shape[1] - keep.sum(dim=1)  # each row's pad count once on the left
    positions = torch.arange(keep.shape[1], device=keep.device)
    # Each row's kept tokens, in order, followed by its pads; then rolled right by its pad count.
    order = torch.argsort((~keep).long() * keep.shape[1] + positions, dim=1, stable=True)
    source = torch.gather(order, 1, (positions[None, :] - shift[:, None]) % keep.shape[1])
    result = dict(encoded)
    for key, value in encoded.items():
        if isinstance(value, torch.Tensor) and value.shape == ids.shape:
            # a new tensor: the caller's is untouched
            result[key] = torch.gather(value, 1, source.to(value.device))
    return result
