"""DRESS's negative-training bookkeeping as pure functions (Han et al. 2022, §4.2; the authors'
released code, hyperconnect/sem-ent ``codes/train_diversify_base.py`` and
``codes/dm_generator.py``).

What the released code does each cycle (``clustering`` + ``diversifying``):

* the model greedily answers ``--dm-samples`` training contexts; each generation whose cluster
  holds more than 0.1 of the generations gets weight -1, every other generation weight **0**;
* the generations are cut into batches of ``--batchsize`` in order and every batch is one
  optimizer step whose loss is ``sum_i w_i * NLL_i / (target tokens of the whole batch)``
  (``compute_loss_with_weight``): the weight-0 generations stay in the batch, so a batch is
  divided by *all* its generated tokens, not only those of its head-cluster generations;
* those generated batches are shuffled together with the gold batches of the epoch, so they
  are interleaved with the gold steps across the whole epoch.

:func:`group_normalizers` gives each generation the token count its batch ("group") is divided
by; :func:`slot_rows` spreads the negatives evenly over the micro-batches of a cycle's period.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: ``"all_generated"``: the released code (non-head generations count with weight 0);
#: ``"head_only"``: divide by the head-cluster generations' tokens only (a stronger negative term).
NORMALIZATIONS = ("all_generated", "head_only")


def group_normalizers(
    token_counts: ArrayLike,
    is_head: ArrayLike,
    group_size: int,
    normalization: str = "all_generated",
) -> np.ndarray:
    """The token count each generation's group is divided by (one int per generation).

    Groups are consecutive runs of ``group_size`` generations (the last one may be shorter), as
    the released code batches them. ``"all_generated"`` sums the tokens of every generation of
    the group, ``"head_only"`` those of its head-cluster generations only (0 for a group without
    one, whose rows then carry no loss).
    """
    counts = np.asarray(token_counts, dtype=np.int64)
    head = np.asarray(is_head, dtype=bool)
    if counts.ndim != 1 or head.shape != counts.shape:
        raise ArgumentError(
            "token_counts",
            f"and `is_head` must be 1-D of one length, got {counts.shape} and {head.shape}",
        )
    if (counts < 0).any():
        raise ArgumentError("token_counts", "must be >= 0")
    if isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 1:
        raise ArgumentError("group_size", f"must be an int >= 1, got {group_size!r}")
    if normalization not in NORMALIZATIONS:
        raise ArgumentError(
            "normalization", f"must be one of {NORMALIZATIONS}, got {normalization!r}"
        )
    counted = counts if normalization == "all_generated" else counts * head
    normalizers = np.zeros_like(counts)
    for start in range(0, counts.size, group_size):
        normalizers[start : start + group_size] = counted[start : start + group_size].sum()
    return normalizers


def slot_rows(num_rows: int, num_slots: int, slot: int) -> tuple[int, int]:
    """``[start, stop)``: the rows that micro-batch slot ``slot`` of ``num_slots`` carries when
    ``num_rows`` rows are spread evenly (``floor(slot * n / m)`` onwards); empty past the last slot.

    Slots count the micro-batches of a cycle's period over all processes, so a step takes the
    same rows whatever its split into processes and accumulation steps.
    """
    if num_slots < 1:
        raise ArgumentError("num_slots", f"must be >= 1, got {num_slots!r}")
    if slot >= num_slots:
        return num_rows, num_rows
    return (slot * num_rows) // num_slots, ((slot + 1) * num_rows) // num_slots


def max_rows_per_slot(num_rows: int, num_slots: int) -> int:
    """The most rows one slot carries under :func:`slot_rows`."""
    return math.ceil(num_rows / num_slots) if num_rows else 0
