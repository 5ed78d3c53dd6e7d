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
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from dialeval.validation import ArgumentError

IGNORE_INDEX = -100


def dress_weights(cluster_ids, cluster_distribution, gamma: float) -> np.ndarray:
    """``w(r) = (1 - p(phi(e(r))))^gamma`` for each response (§4.2, Eq. 5).

    Args:
        cluster_ids: the cluster id of each training response (ints in ``0..k-1``).
        cluster_distribution: ``p``, the share of the training responses in each cluster (Eq. 1).
        gamma: the re-weighting strength (paper: 30; Table 5 sweeps 1 to 100); 0 gives weight 1.
    """
    ids = np.asarray(cluster_ids)
    distribution = np.asarray(cluster_distribution, dtype=np.float64)
    if distribution.ndim != 1 or distribution.size == 0 or (distribution < 0).any() or (distribution > 1).any():
        raise ArgumentError("cluster_distribution", "must be a 1-D vector of shares in [0, 1]")
    if ids.ndim != 1 or (ids.size and (not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0 or ids.max() >= distribution.size)):
        raise ArgumentError("cluster_ids", f"must be a 1-D vector of ints in [0, {distribution.size - 1}]")
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or gamma < 0 or not np.isfinite(gamma):
        raise ArgumentError("gamma", f"must be a finite number >= 0, got {gamma!r}")
    return (1.0 - distribution[ids]) ** float(gamma)


def head_cluster_mask(cluster_ids, num_clusters: int, head_threshold: float) -> np.ndarray:
    """True for each generation whose cluster holds more than ``head_threshold`` of the generations.

    §4.2: "If generated responses are included in head clusters (here, the assigned probability of
    clusters is bigger than 0.1), then those generated responses are assumed as negative examples".
    The probability is that of the *generations* of the current cycle (their Eq. 1 histogram).
    """
    ids = np.asarray(cluster_ids)
    if isinstance(num_clusters, bool) or not isinstance(num_clusters, (int, np.integer)) or num_clusters < 1:
        raise ArgumentError("num_clusters", f"must be an int >= 1, got {num_clusters!r}")
    if ids.ndim != 1 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0 or ids.max() >= num_clusters:
        raise ArgumentError("cluster_ids", f"must be a non-empty 1-D vector of ints in [0, {num_clusters - 1}]")
    if isinstance(head_threshold, bool) or not isinstance(head_threshold, (int, float)) or not 0 <= head_threshold < 1:
        raise ArgumentError("head_threshold", f"must be in [0, 1), got {head_threshold!r}")
    shares = np.bincount(ids, minlength=num_clusters) / ids.size
    return shares[ids] > head_threshold


def _aligned(logits: torch.Tensor, labels: torch.Tensor, shift_labels: bool) -> tuple[torch.Tensor, torch.Tensor]:
    if logits.dim() != 3 or labels.dim() != 2 or logits.shape[:2] != labels.shape:
        raise ArgumentError(
            "logits", f"must be (batch, length, vocab) and `labels` (batch, length), got {tuple(logits.shape)} and {tuple(labels.shape)}"
        )
    if shift_labels:
        # Causal LMs: the logits at position t predict the token at t + 1. Shifting the labels (and
        # ignoring the last position), as transformers' ForCausalLMLoss does, avoids copying the logits.
        return logits, F.pad(labels[:, 1:], (0, 1), value=IGNORE_INDEX)
    return logits, labels


def count_target_tokens(labels: torch.Tensor, shift_labels: bool) -> torch.Tensor:
    """How many labels are prediction targets (not ``-100``; not position 0 for causal LMs)."""
    targets = labels[:, 1:] if shift_labels else labels
    return targets.ne(IGNORE_INDEX).sum()


def token_nll(logits: torch.Tensor, labels: torch.Tensor, shift_labels: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token ``-log p(label)`` (float32) and the target mask, both (batch, length[-1])."""
    logits, labels = _aligned(logits, labels, shift_labels)
    mask = labels.ne(IGNORE_INDEX)
    # float32 like transformers' ForCausalLMLoss: half-precision log-softmax loses the tail.
    nll = F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]).float(), labels.reshape(-1), ignore_index=IGNORE_INDEX, reduction="none"
    ).view(labels.shape)
    return nll, mask


def _normalizer(num_items_in_batch, mask: torch.Tensor) -> torch.Tensor:
    if num_items_in_batch is None:
        count = mask.sum()
    else:
        count = torch.as_tensor(num_items_in_batch, device=mask.device)
    # An all-padding batch contributes 0, not NaN.
    return count.clamp(min=1).to(torch.float32)


def sequence_nll(logits: torch.Tensor, labels: torch.Tensor, shift_labels: bool = False) -> torch.Tensor:
    """Each row's summed ``-log p(label)`` over its target tokens, (batch,) float32."""
    nll, mask = token_nll(logits, labels, shift_labels)
    return (nll * mask).sum(dim=1)


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
    """
    nll, mask = token_nll(logits, labels, shift_labels)
    per_example = (nll * mask).sum(dim=1)
    if example_weights is not None:
        weights = torch.as_tensor(example_weights, device=per_example.device, dtype=per_example.dtype)
        if weights.shape != per_example.shape:
            raise ArgumentError("example_weights", f"must have shape ({per_example.shape[0]},), got {tuple(weights.shape)}")
        per_example = per_example * weights
    return per_example.sum() / _normalizer(num_items_in_batch, mask)


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
    """
    if not 0 < min_complement < 1:
        raise ArgumentError("min_complement", f"must be in (0, 1), got {min_complement!r}")
    logits, labels = _aligned(logits, labels, shift_labels)
    mask = labels.ne(IGNORE_INDEX)
    log_probs = F.log_softmax(logits.float(), dim=-1)
    token_log_probs = log_probs.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    complement = (1.0 - token_log_probs.exp()).clamp(min=min_complement)
    per_token = -torch.log(complement) * mask
    return per_token.sum() / _normalizer(num_items_in_batch, mask)
