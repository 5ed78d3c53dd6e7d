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
