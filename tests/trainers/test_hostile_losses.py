"""The pure losses refuse non-finite inputs naming the argument, and a batch with no
target token gives 0 (zero gradient) with one warning, never a silent NaN or a silent 0.

Logits are logs of small integers (softmax = simple fractions), as in test_dress_losses.py.
"""

import logging
import math

import numpy as np
import pytest
import torch

from dialeval.trainers.losses import (
    dress_weights,
    sequence_nll,
    unlikelihood_loss,
    warn_no_target_tokens,
    weighted_nll_loss,
)

LN2 = math.log(2)


def batch():
    # row 0: targets 1 (p = 1/2) then 0 (p = 1/3); row 1: target 2 (p = 1/2) then padding.
    logits = torch.log(
        torch.tensor([[[1, 2, 1], [1, 1, 1]], [[1, 1, 2], [5, 1, 1]]], dtype=torch.float32)
    )
    return logits, torch.tensor([[1, 0], [2, -100]])


@pytest.fixture
def fresh_warning():
    warn_no_target_tokens.cache_clear()
    yield
    warn_no_target_tokens.cache_clear()


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_weight_is_refused_naming_it(bad):
    logits, labels = batch()
    with pytest.raises(
        ValueError, match=r"`example_weights` holds 1 non-finite value\(s\), the first .* at \[1\]"
    ):
        weighted_nll_loss(logits, labels, torch.tensor([1.0, bad]))


@pytest.mark.parametrize("loss", [weighted_nll_loss, unlikelihood_loss, sequence_nll])
def test_a_nan_logit_at_a_target_is_refused_naming_logits(loss):
    logits, labels = batch()
    logits[0, 1, 2] = math.nan  # row 0's second target (label 0) sees a NaN in its softmax
    with pytest.raises(
        ValueError, match=r"`logits` holds 1 non-finite value\(s\), the first nan at \[0, 1, 2\]"
    ):
        loss(logits, labels)


def test_a_minus_inf_mask_on_an_untargeted_token_is_exact_not_refused():
    logits, labels = batch()
    logits[0, 0, 2] = -math.inf  # row 0, step 0: p = [1/3, 2/3, 0]; its target 1 now has p = 2/3
    # (-log(2/3) + ln 3 + ln 2) / 3 target tokens
    expected = (math.log(1.5) + math.log(3) + LN2) / 3
    assert weighted_nll_loss(logits, labels).item() == pytest.approx(expected, rel=1e-6)


def test_a_minus_inf_logit_at_the_target_is_refused():
    logits, labels = batch()
    logits[1, 0, 2] = -math.inf  # row 1's target has p = 0: -log 0 = inf
    with pytest.raises(ValueError, match=r"`logits` .* -inf at \[1, 0, 2\]: the loss would be inf"):
        weighted_nll_loss(logits, labels)


@pytest.mark.parametrize("count", [math.nan, math.inf, -1, [1, 2], True])
def test_a_bad_num_items_in_batch_is_refused(count):
    logits, labels = batch()
    with pytest.raises(ValueError, match="`num_items_in_batch` must be"):
        weighted_nll_loss(logits, labels, num_items_in_batch=count)


def test_a_nan_cluster_share_is_refused_by_dress_weights():
    with pytest.raises(ValueError, match="cluster_distribution"):
        dress_weights([0, 1], [0.5, math.nan], gamma=2)
    assert dress_weights([0, 1], [0.25, 0.75], gamma=2) == pytest.approx(np.array([0.5625, 0.0625]))


@pytest.mark.parametrize("loss", [weighted_nll_loss, unlikelihood_loss])
def test_no_target_token_gives_zero_no_gradient_and_warns_once(loss, fresh_warning, caplog):
    logits, _ = batch()
    logits.requires_grad_(True)
    no_targets = torch.full((2, 2), -100)
    with caplog.at_level(logging.WARNING, logger="dialeval.trainers.losses"):
        value = loss(logits, no_targets)
        value.backward()
        loss(logits.detach(), no_targets)
        loss(logits.detach(), no_targets, num_items_in_batch=0)
    assert value.item() == 0.0 and torch.equal(logits.grad, torch.zeros_like(logits))
    warnings = [r for r in caplog.records if "no target token" in r.getMessage()]
    assert len(warnings) == 1


def test_a_batch_without_targets_inside_a_window_with_targets_is_silent(fresh_warning, caplog):
    logits, _ = batch()
    with caplog.at_level(logging.WARNING, logger="dialeval.trainers.losses"):
        # accumulation: this micro-batch has no target, the window has 4: 0 / 4, nothing odd
        assert (
            weighted_nll_loss(logits, torch.full((2, 2), -100), num_items_in_batch=4).item() == 0.0
        )
    assert not caplog.records


def test_dress_refuses_a_nan_weight_column_naming_it():
    from dialeval.trainers import DRESSTrainer

    inputs = {"dress_weight": torch.tensor([0.5, math.nan])}
    with pytest.raises(
        ValueError, match=r"`dress_weight` holds 1 non-finite value\(s\), the first nan at \[1\]"
    ):
        DRESSTrainer.gold_weights(None, inputs)  # the check reads only the batch
    assert torch.equal(
        DRESSTrainer.gold_weights(None, {"dress_weight": torch.tensor([0.5, 1.0])}),
        torch.tensor([0.5, 1.0]),
    )


# -- arguments of the wrong kind: refused naming them, never a torch or numpy error ---------------


@pytest.mark.parametrize("loss", [weighted_nll_loss, unlikelihood_loss, sequence_nll])
@pytest.mark.parametrize(
    ("bad", "where"),
    [(7, "holds 7 at \\[0, 1\\]"), (3, "holds 3 at \\[0, 1\\]"), (-7, "holds -7 at \\[0, 1\\]")],
)
def test_a_label_outside_the_vocabulary_or_negative_is_refused(loss, bad, where):
    logits, labels = batch()
    labels[0, 1] = bad  # the vocabulary is 3 tokens: ids 0..2, or -100
    with pytest.raises(ValueError, match=rf"`labels` {where}: a label is a token id in \[0, 2\]"):
        loss(logits, labels)


@pytest.mark.parametrize("loss", [weighted_nll_loss, unlikelihood_loss, sequence_nll])
def test_labels_and_logits_of_the_wrong_kind_are_refused(loss):
    logits, labels = batch()
    for bad_labels, kind in ((labels.float(), "torch.float32"), (labels.numpy(), "ndarray")):
        with pytest.raises(ValueError, match=rf"`labels` must be an integer .*got {kind}"):
            loss(logits, bad_labels)
    for bad_logits, kind in ((logits.long(), "torch.int64"), (logits.numpy(), "ndarray")):
        with pytest.raises(ValueError, match=rf"`logits` must be a floating-point .*got {kind}"):
            loss(bad_logits, labels)


def test_int32_labels_are_token_ids():
    logits, labels = batch()
    # (ln 2 + ln 3 + ln 2) / 3 target tokens, as with int64 labels
    expected = (2 * LN2 + math.log(3)) / 3
    assert weighted_nll_loss(logits, labels.int()).item() == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("loss", [weighted_nll_loss, unlikelihood_loss])
@pytest.mark.parametrize(
    ("count", "message"),
    [
        ("7", "must be one number"),
        (2.5, "must be a whole number of target tokens, got 2.5"),
        (0, "must be at least this batch's 3 target tokens .*got 0"),
        (2, "must be at least this batch's 3 target tokens .*got 2"),
        (torch.tensor(2), "must be at least this batch's 3 target tokens"),
    ],
)
def test_a_count_that_cannot_count_the_window_is_refused(loss, count, message):
    logits, labels = batch()  # 3 target tokens
    with pytest.raises(ValueError, match=rf"`num_items_in_batch` {message}"):
        loss(logits, labels, num_items_in_batch=count)


@pytest.mark.parametrize("count", [6, 6.0, np.int64(6), torch.tensor(6), torch.tensor(6.0)])
def test_a_window_count_divides_the_sum_whatever_its_number_type(count):
    logits, labels = batch()
    # (ln 2 + ln 3 + ln 2) / 6
    expected = (2 * LN2 + math.log(3)) / 6
    assert weighted_nll_loss(logits, labels, num_items_in_batch=count).item() == pytest.approx(
        expected, rel=1e-6
    )
    assert weighted_nll_loss(logits, labels, num_items_in_batch=10**30).item() == pytest.approx(
        (2 * LN2 + math.log(3)) / 1e30, rel=1e-6
    )


def test_example_weights_that_are_not_numbers_are_refused():
    logits, labels = batch()
    with pytest.raises(ValueError, match="`example_weights` must be one number per row, got str"):
        weighted_nll_loss(logits, labels, "ab")


@pytest.mark.parametrize(
    ("ids", "distribution", "message"),
    [
        ([], [0.5, 0.5], "`cluster_ids` must be a non-empty 1-D vector"),
        ([0, 1], [0.25, 0.25], "`cluster_distribution` must sum to 1 .*sums to 0.5"),
        ([0, 1], [0.75, 0.75], "`cluster_distribution` must sum to 1 .*sums to 1.5"),
        ([0], "ab", "`cluster_distribution` must be numbers"),
    ],
)
def test_dress_weights_refuses_what_is_not_a_distribution_or_ids(ids, distribution, message):
    with pytest.raises(ValueError, match=message):
        dress_weights(ids, distribution, gamma=2)
    # shares summing to 1 up to float rounding: (1 - 0.1)^2, (1 - 0.2)^2, (1 - 0.7)^2
    assert dress_weights([0, 1, 2], [0.1, 0.2, 0.7], gamma=2) == pytest.approx(
        np.array([0.81, 0.64, 0.09])
    )
