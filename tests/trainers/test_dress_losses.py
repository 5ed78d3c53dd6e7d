"""The trainers' pure loss functions against hand-computed values (dialeval.trainers.losses).

Logits are chosen as logs of small integers, so the softmax probabilities are simple fractions:
``log([1, 2, 1])`` gives ``[1/4, 1/2, 1/4]``, zeros give ``1/3`` each.
"""

import math

import numpy as np
import pytest
import torch

from dialeval.trainers.losses import (
    count_target_tokens,
    dress_weights,
    head_cluster_mask,
    unlikelihood_loss,
    weighted_nll_loss,
)

LN2, LN3 = math.log(2), math.log(3)


def probs_logits(*rows):
    """Logits whose softmax is each row normalized."""
    return torch.log(torch.tensor(rows, dtype=torch.float32))


def seq2seq_batch():
    # row 0: targets 1 (p = 1/2) then 0 (p = 1/3); row 1: target 2 (p = 1/2) then padding.
    logits = torch.stack([probs_logits([1, 2, 1], [1, 1, 1]), probs_logits([1, 1, 2], [5, 1, 1])])
    labels = torch.tensor([[1, 0], [2, -100]])
    return logits, labels


def test_dress_weights_eq5_by_hand():
    weights = dress_weights([0, 1, 2, 0], [0.5, 0.3, 0.2], gamma=2)
    np.testing.assert_allclose(weights, [0.25, 0.49, 0.64, 0.25])
    # gamma 0 is plain NLL; the paper's gamma 30 leaves a 10%-cluster response 0.9^30 of the weight
    np.testing.assert_allclose(dress_weights([1], [0.5, 0.5], gamma=0), [1.0])
    np.testing.assert_allclose(dress_weights([0], [0.1, 0.9], gamma=30.0), [0.9**30])


def test_dress_weights_order_constraint_of_section_4_2():
    # "if p(i) <= p(j) then w(r_i) >= w(r_j)": rarer clusters never weigh less
    distribution = np.array([0.4, 0.25, 0.2, 0.1, 0.05])
    weights = dress_weights(np.arange(5), distribution, gamma=30.0)
    assert np.all(np.diff(weights) > 0)


@pytest.mark.parametrize(
    "ids, distribution, gamma, match",
    [
        ([0, 3], [0.5, 0.5], 1.0, "cluster_ids"),
        ([0], [1.5, -0.5], 1.0, "cluster_distribution"),
        ([0.5], [1.0], 1.0, "cluster_ids"),
        ([0], [1.0], -1.0, "gamma"),
        ([0], [1.0], float("nan"), "gamma"),
    ],
)
def test_dress_weights_rejects_bad_input(ids, distribution, gamma, match):
    with pytest.raises(ValueError, match=match):
        dress_weights(ids, distribution, gamma)


def test_head_cluster_mask_strictly_above_threshold():
    # shares: cluster 0 = 0.3, 1 = 0.1 (not > 0.1), 2 = 0.5, 3 = 0.1, 4 = 0
    ids = [0, 0, 0, 1, 2, 2, 2, 2, 2, 3]
    mask = head_cluster_mask(ids, num_clusters=5, head_threshold=0.1)
    assert mask.tolist() == [True, True, True, False, True, True, True, True, True, False]
    assert head_cluster_mask(ids, 5, 0.4).tolist() == [False] * 4 + [True] * 5 + [False]


@pytest.mark.parametrize(
    "ids, k, threshold, match",
    [
        ([], 3, 0.1, "cluster_ids"),
        ([3], 3, 0.1, "cluster_ids"),
        ([0], 0, 0.1, "num_clusters"),
        ([0], 3, 1.0, "head_threshold"),
    ],
)
def test_head_cluster_mask_rejects_bad_input(ids, k, threshold, match):
    with pytest.raises(ValueError, match=match):
        head_cluster_mask(ids, k, threshold)


def test_weighted_nll_by_hand():
    logits, labels = seq2seq_batch()
    # unweighted: (ln2 + ln3 + ln2) / 3 target tokens
    assert weighted_nll_loss(logits, labels).item() == pytest.approx((2 * LN2 + LN3) / 3, rel=1e-6)
    # weights 2 and -1 (a negative example): (2 (ln2 + ln3) - ln2) / 3
    weighted = weighted_nll_loss(logits, labels, torch.tensor([2.0, -1.0]))
    assert weighted.item() == pytest.approx((LN2 + 2 * LN3) / 3, rel=1e-6)
    # normalized by a window's token count instead of the batch's own
    windowed = weighted_nll_loss(
        logits, labels, torch.tensor([2.0, -1.0]), num_items_in_batch=torch.tensor(6)
    )
    assert windowed.item() == pytest.approx((LN2 + 2 * LN3) / 6, rel=1e-6)


def test_weighted_nll_shifts_for_causal_lms():
    # position t's logits predict label t + 1; label 0 and the last logits are never used
    # row 1 normalizes to 1/4.5
    logits = probs_logits([1, 1, 1], [1, 3, 0.5], [7, 7, 7]).unsqueeze(0)
    labels = torch.tensor([[0, 2, 1]])
    expected = (LN3 + math.log(4.5 / 3)) / 2
    assert weighted_nll_loss(logits, labels, shift_labels=True).item() == pytest.approx(
        expected, rel=1e-6
    )
    assert count_target_tokens(labels, shift_labels=True).item() == 2
    assert count_target_tokens(labels, shift_labels=False).item() == 3


def test_weighted_nll_all_padding_is_zero_not_nan():
    logits, _ = seq2seq_batch()
    loss = weighted_nll_loss(logits, torch.full((2, 2), -100))
    assert loss.item() == 0.0


def test_weighted_nll_rejects_bad_shapes():
    logits, labels = seq2seq_batch()
    with pytest.raises(ValueError, match="example_weights"):
        weighted_nll_loss(logits, labels, torch.ones(3))
    with pytest.raises(ValueError, match="logits"):
        weighted_nll_loss(logits[0], labels)


def test_unlikelihood_by_hand():
    logits, labels = seq2seq_batch()
    # -log(1 - 1/2), -log(1 - 1/3), -log(1 - 1/2) over 3 tokens
    expected = (2 * LN2 + math.log(1.5)) / 3
    assert unlikelihood_loss(logits, labels).item() == pytest.approx(expected, rel=1e-6)
    assert unlikelihood_loss(logits, labels, num_items_in_batch=6).item() == pytest.approx(
        expected / 2, rel=1e-6
    )


def test_unlikelihood_clamps_certain_tokens():
    logits = torch.tensor([[[60.0, 0.0, 0.0]]])  # p(token 0) = 1 in float32
    loss = unlikelihood_loss(logits, torch.tensor([[0]]), min_complement=1e-5)
    assert loss.item() == pytest.approx(5 * math.log(10), rel=1e-5)
    assert torch.isfinite(loss)
    logits.requires_grad_(True)
    unlikelihood_loss(logits, torch.tensor([[0]])).backward()
    assert torch.isfinite(logits.grad).all()
    with pytest.raises(ValueError, match="min_complement"):
        unlikelihood_loss(logits, torch.tensor([[0]]), min_complement=0.0)


def test_gradient_of_negative_weight_is_opposite_of_mle():
    logits, labels = seq2seq_batch()
    positive = logits.clone().requires_grad_(True)
    negative = logits.clone().requires_grad_(True)
    weighted_nll_loss(positive, labels).backward()
    weighted_nll_loss(negative, labels, torch.tensor([-1.0, -1.0])).backward()
    torch.testing.assert_close(negative.grad, -positive.grad)
