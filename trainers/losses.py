"""Pure loss functions of the diversity trainers, each unit-tested with hand-computed values.

* :func:`dress_weights`: DRESS's focal-style response weight ``w(r) = (1 - p(cluster(r)))^gamma``
  (Han et al., Findings of EMNLP 2022, §4.2, Eq. 5).
* :func:`head_cluster_mask`: which generations become DRESS's negatives (§4.2, last paragraph:
  clusters holding more than 0.1 of the generations are head clusters).
* :func:`weighted_nll_loss`: the weighted NLL of Eq. 4, summed over target tokens and divided by
  a target-token count; weight ``-1`` is Negative Training (He & Glass 2020), weight 1 plain MLE.
* :func:`unlikelihood_loss`: token-level unlikelihood ``-log(1 - p(token))`` (Li et al. 2020,
  used with alpha in {0, 1, 10} by the n-best contradiction paper, §4.3 and App. C).

Every loss takes ``num_items_in_batch``: the number of target tokens it is normalized by. The
trainers pass the count over the whole gradient-accumulation window (and over all processes),
as transformers 5 does, so that accumulated micro-batches give the same update as one big batch.

Hostile input:

* **Non-finite values** (NaN / inf in ``logits``, ``example_weights`` or ``num_items_in_batch``)
  raise a ValueError naming the argument and the first bad entry. The check is on the finished
  loss (one scalar per call): scanning every logit (batch x length x vocab) on every step would
  cost a pass over the largest tensor of training; only when the loss is not finite are the
  inputs examined to say which one is to blame. So a non-finite logit that cannot reach the
  loss (a ``-inf`` mask on a token that is not a target) is accepted, as the loss is exact.
* **No target token** (every label ``-100``, or ``num_items_in_batch`` 0): the loss is 0, with a
  zero gradient, and the logger ``dialeval.trainers.losses`` warns once per process. This is the
  sum-over-items convention of transformers (a batch with no items adds nothing to the window's
  sum); transformers' own ``ForCausalLMLoss`` would give 0/0 = NaN there, and ``Trainer`` does not
  refuse it (its ``logging_nan_inf_filter`` only hides such losses from the logs), so neither
  does dialeval, but it returns 0 and says so instead of a NaN.
* **Arguments of the wrong kind** are refused naming them, before torch or numpy fail on them:
  ``logits`` must be a floating-point tensor (integer scores are not logits), ``labels`` an
  integer tensor of ids in ``[0, vocab)`` or ``-100`` (an id outside the vocabulary would index
  past the logits; another negative id is neither a token nor the ignore index), and
  ``num_items_in_batch`` a whole number at least this batch's own target-token count (it counts
  the window the batch is part of). The labels are checked on every call: one pass over a
  (batch, length) tensor, small beside the logits.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F

from dialeval.validation import ArgumentError, as_float_array

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

IGNORE_INDEX = -100

logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=1)
def warn_no_target_tokens() -> None:
    """Once per process (``warn_no_target_tokens.cache_clear()`` re-arms it)."""
    logger.warning(
        "a loss was computed over no target token (every label is -100, or num_items_in_batch is "
        "0): it is 0 with a zero gradient. Check that the responses are not truncated away or "
        "masked entirely."
    )


def describe_non_finite(values: torch.Tensor) -> str | None:
    """ "holds N non-finite value(s), the first nan at [i, j]", or None when every
    value is finite."""
    values = torch.as_tensor(values).detach().float()
    bad = ~torch.isfinite(values)
    if not bad.any():
        return None
    index = tuple(int(i) for i in bad.nonzero()[0])
    where = f"[{', '.join(map(str, index))}]" if index else ""
    return (
        f"holds {int(bad.sum())} non-finite value(s), the first {values[index].item()!r} at "
        f"{where or 'the scalar'}"
    )


def check_finite_loss(loss: torch.Tensor, **inputs: torch.Tensor | None) -> torch.Tensor:
    """``loss`` if it is finite; else a ValueError naming the first input (keyword = argument) that
    is not.

    One scalar check per call (a device sync on GPU); the inputs are scanned only for a non-finite
    loss.
    """
    if bool(torch.isfinite(loss).all()):
        return loss
    for argument, values in inputs.items():
        if values is None:
            continue
        problem = describe_non_finite(values)
        if problem is not None:
            raise ArgumentError(
                argument, f"{problem}: the loss would be {loss.detach().float().max().item()!r}"
            )
    raise ValueError(
        f"the loss is {loss.detach().float().max().item()!r} although every input is finite "
        "(float32 overflow: are the logits of order 1e38?)"
    )


#: How far from 1 a cluster distribution's sum may be (float rounding of shares that sum to 1).
DISTRIBUTION_SUM_TOLERANCE = 1e-6


def dress_weights(
    cluster_ids: ArrayLike, cluster_distribution: ArrayLike, gamma: float
) -> np.ndarray:
    """``w(r) = (1 - p(phi(e(r))))^gamma`` for each response (§4.2, Eq. 5).

    Args:
        cluster_ids: the cluster id of each training response (ints in ``0..k-1``).
        cluster_distribution: ``p``, the share of the training responses in each cluster (Eq. 1).
        gamma: the re-weighting strength (paper: 30; Table 5 sweeps 1 to 100); 0 gives weight 1.
    """
    ids = np.asarray(cluster_ids)
    distribution = as_float_array(cluster_distribution, "cluster_distribution")
    # NaN compares False both ways: it is refused explicitly (it would make every weight NaN).
    if (
        distribution.ndim != 1
        or distribution.size == 0
        or not np.isfinite(distribution).all()
        or (distribution < 0).any()
        or (distribution > 1).any()
    ):
        raise ArgumentError("cluster_distribution", "must be a 1-D vector of shares in [0, 1]")
    # Eq. 1's p is a distribution; shares that do not sum to 1 would scale every weight.
    if abs(distribution.sum() - 1.0) > DISTRIBUTION_SUM_TOLERANCE:
        raise ArgumentError(
            "cluster_distribution",
            f"must sum to 1 (each cluster's share of the training responses), sums to "
            f"{distribution.sum():.6g}",
        )
    if (
        ids.ndim != 1
        or ids.size == 0
        or not np.issubdtype(ids.dtype, np.integer)
        or ids.min() < 0
        or ids.max() >= distribution.size
    ):
        raise ArgumentError(
            "cluster_ids",
            f"must be a non-empty 1-D vector of ints in [0, {distribution.size - 1}]",
        )
    if (
        isinstance(gamma, bool)
        or not isinstance(gamma, (int, float))
        or gamma < 0
        or not np.isfinite(gamma)
    ):
        raise ArgumentError("gamma", f"must be a finite number >= 0, got {gamma!r}")
    return (1.0 - distribution[ids]) ** float(gamma)


def head_cluster_mask(
    cluster_ids: ArrayLike, num_clusters: int, head_threshold: float
) -> np.ndarray:
    """True for each generation whose cluster holds more than ``head_threshold`` of the generations.

    §4.2: "If generated responses are included in head clusters (here, the assigned probability of
    clusters is bigger than 0.1), then those generated responses are assumed as negative examples".
    The probability is that of the *generations* of the current cycle (their Eq. 1 histogram).
    """
    ids = np.asarray(cluster_ids)
    if (
        isinstance(num_clusters, bool)
        or not isinstance(num_clusters, (int, np.integer))
        or num_clusters < 1
    ):
        raise ArgumentError("num_clusters", f"must be an int >= 1, got {num_clusters!r}")
    if (
        ids.ndim != 1
        or ids.size == 0
        or not np.issubdtype(ids.dtype, np.integer)
        or ids.min() < 0
        or ids.max() >= num_clusters
    ):
        raise ArgumentError(
            "cluster_ids", f"must be a non-empty 1-D vector of ints in [0, {num_clusters - 1}]"
        )
    if (
        isinstance(head_threshold, bool)
        or not isinstance(head_threshold, (int, float))
        or not 0 <= head_threshold < 1
    ):
        raise ArgumentError("head_threshold", f"must be in [0, 1), got {head_threshold!r}")
    shares = np.bincount(ids, minlength=num_clusters) / ids.size
    return shares[ids] > head_threshold


def _check_label_ids(labels: torch.Tensor, vocabulary: int) -> None:
    bad = labels.ne(IGNORE_INDEX) & (labels.lt(0) | labels.ge(vocabulary))
    if bool(bad.any()):
        index = tuple(int(i) for i in bad.nonzero()[0])
        raise ArgumentError(
            "labels",
            f"holds {int(labels[index])} at [{', '.join(map(str, index))}]: a label is a token id "
            f"in [0, {vocabulary - 1}] (the logits' last dimension) or {IGNORE_INDEX} (no target)",
        )


def _aligned(
    logits: torch.Tensor, labels: torch.Tensor, shift_labels: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    if not isinstance(logits, torch.Tensor) or not torch.is_floating_point(logits):
        kind = logits.dtype if isinstance(logits, torch.Tensor) else type(logits).__name__
        raise ArgumentError(
            "logits", f"must be a floating-point torch.Tensor (the model's scores), got {kind}"
        )
    if (
        not isinstance(labels, torch.Tensor)
        or torch.is_floating_point(labels)
        or torch.is_complex(labels)
        or labels.dtype == torch.bool
    ):
        kind = labels.dtype if isinstance(labels, torch.Tensor) else type(labels).__name__
        raise ArgumentError(
            "labels", f"must be an integer torch.Tensor of token ids and -100, got {kind}"
        )
    if logits.dim() != 3 or labels.dim() != 2 or logits.shape[:2] != labels.shape:
        raise ArgumentError(
            "logits",
            "must be (batch, length, vocab) and `labels` (batch, length), got "
            f"{tuple(logits.shape)} and {tuple(labels.shape)}",
        )
    _check_label_ids(labels, logits.shape[-1])
    labels = labels.long()
    if shift_labels:
        # Causal LMs: the logits at position t predict the token at t + 1. Shifting the labels (and
        # ignoring the last position), as transformers' ForCausalLMLoss does, avoids copying the
        # logits.
        return logits, F.pad(labels[:, 1:], (0, 1), value=IGNORE_INDEX)
    return logits, labels


def count_target_tokens(labels: torch.Tensor, shift_labels: bool) -> torch.Tensor:
    """How many labels are prediction targets (not ``-100``; not position 0 for causal LMs)."""
    targets = labels[:, 1:] if shift_labels else labels
    return targets.ne(IGNORE_INDEX).sum()


def token_nll(
    logits: torch.Tensor, labels: torch.Tensor, shift_labels: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token ``-log p(label)`` (float32) and the target mask, both (batch, length[-1])."""
    logits, labels = _aligned(logits, labels, shift_labels)
    mask = labels.ne(IGNORE_INDEX)
    # float32 like transformers' ForCausalLMLoss: half-precision log-softmax loses the tail.
    nll = F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]).float(),
        labels.reshape(-1),
        ignore_index=IGNORE_INDEX,
        reduction="none",
    ).view(labels.shape)
    return nll, mask


def _item_count(num_items_in_batch: object, device: torch.device) -> torch.Tensor:
    """``num_items_in_batch`` as a one-element tensor, or an error naming it."""
    if isinstance(num_items_in_batch, (int, float, np.number)) and not isinstance(
        num_items_in_batch, (bool, np.bool_)
    ):
        # a Python int beyond int64 is still a count: float64 holds it (and any int64)
        return torch.tensor(float(num_items_in_batch), dtype=torch.float64, device=device)
    try:
        if isinstance(num_items_in_batch, (str, bytes)):
            raise TypeError
        count = torch.as_tensor(num_items_in_batch, device=device)
    except (TypeError, ValueError, RuntimeError):
        count = None
    if count is None or count.numel() != 1 or count.is_complex() or count.dtype == torch.bool:
        raise ArgumentError(
            "num_items_in_batch",
            f"must be one number (a target-token count), got {num_items_in_batch!r:.60}",
        )
    return count


def _normalizer(num_items_in_batch: torch.Tensor | int | None, mask: torch.Tensor) -> torch.Tensor:
    targets = mask.sum()
    if num_items_in_batch is None:
        count = targets
    else:
        count = _item_count(num_items_in_batch, mask.device)
        if not bool(torch.isfinite(count)) or bool(count < 0):
            raise ArgumentError(
                "num_items_in_batch", f"must be a finite count >= 0, got {count.item()!r}"
            )
        if bool(count != torch.floor(count)):
            raise ArgumentError(
                "num_items_in_batch",
                f"must be a whole number of target tokens, got {count.item()!r}",
            )
        # It counts the targets of the accumulation window this batch belongs to.
        if bool(count < targets):
            raise ArgumentError(
                "num_items_in_batch",
                f"must be at least this batch's {int(targets)} target tokens (it counts the "
                f"whole accumulation window's), got {count.item():g}",
            )
    if bool(count == 0):
        warn_no_target_tokens()
    # An all-padding batch contributes 0, not NaN (see the module's docstring).
    return count.clamp(min=1).to(torch.float32)


def sequence_nll(
    logits: torch.Tensor, labels: torch.Tensor, shift_labels: bool = False
) -> torch.Tensor:
    """Each row's summed ``-log p(label)`` over its target tokens, (batch,) float32.

    A row with no target gives 0; non-finite logits that reach a row's sum are refused (ValueError
    naming `logits`, see the module's docstring).
    """
    nll, mask = token_nll(logits, labels, shift_labels)
    sums = (nll * mask).sum(dim=1)
    return check_finite_loss(sums, logits=logits)


def weighted_nll_loss(
    logits: torch.Tensor,
    labels: torch.Tensor,
    example_weights: torch.Tensor | None = None,
    num_items_in_batch: torch.Tensor | int | None = None,
    shift_labels: bool = False,
) -> torch.Tensor:
    """``sum_i w_i * sum_t -log p(r_i,t | ...) / N`` (Eq. 4 over a batch, token-normalized).

    Args:
        logits: (batch, length, vocab).
        labels: (batch, length) target ids, ``-100`` where there is no target (context, padding).
        example_weights: (batch,) ``w(r_i)``; None means 1 (plain MLE); -1 is Negative Training.
        num_items_in_batch: N, the target-token count to divide by; None: this batch's own count.
        shift_labels: True for causal LMs (labels are the input ids, predicted one step later).

    Non-finite ``logits`` / ``example_weights`` raise a ValueError naming them; a batch with no
    target token gives 0 and a one-time warning (the module's docstring says why).
    """
    nll, mask = token_nll(logits, labels, shift_labels)
    per_example = (nll * mask).sum(dim=1)
    weights = None
    if example_weights is not None:
        try:
            if isinstance(example_weights, (str, bytes)):
                raise TypeError
            weights = torch.as_tensor(
                example_weights, device=per_example.device, dtype=per_example.dtype
            )
        except (TypeError, ValueError, RuntimeError):
            raise ArgumentError(
                "example_weights",
                f"must be one number per row, got {type(example_weights).__name__}",
            ) from None
        if weights.shape != per_example.shape:
            raise ArgumentError(
                "example_weights",
                f"must have shape ({per_example.shape[0]},), got {tuple(weights.shape)}",
            )
        per_example = per_example * weights
    loss = per_example.sum() / _normalizer(num_items_in_batch, mask)
    return check_finite_loss(loss, example_weights=weights, logits=logits)


def unlikelihood_loss(
    logits: torch.Tensor,
    labels: torch.Tensor,
    num_items_in_batch: torch.Tensor | int | None = None,
    shift_labels: bool = False,
    min_complement: float = 1e-5,
) -> torch.Tensor:
    """``sum_t -log(clamp(1 - p(neg_t), min_complement)) / N`` over the negative response's tokens.

    Li et al. (2020) / Welleck et al. (2020): pushes down the probability of every token of a
    negative response. ``1 - p`` is clamped from below (ParlAI clamps at 1e-5) so that a token the
    model is certain of gives a large but finite loss and gradient.

    Non-finite ``logits`` raise a ValueError naming them; a batch with no target token gives 0
    and a one-time warning (the module's docstring says why).
    """
    if (
        isinstance(min_complement, bool)
        or not isinstance(min_complement, (int, float))
        or not 0 < min_complement < 1
    ):
        raise ArgumentError("min_complement", f"must be in (0, 1), got {min_complement!r}")
    logits, labels = _aligned(logits, labels, shift_labels)
    mask = labels.ne(IGNORE_INDEX)
    log_probs = F.log_softmax(logits.float(), dim=-1)
    token_log_probs = log_probs.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    complement = (1.0 - token_log_probs.exp()).clamp(min=min_complement)
    per_token = -torch.log(complement) * mask
    return check_finite_loss(per_token.sum() / _normalizer(num_items_in_batch, mask), logits=logits)
