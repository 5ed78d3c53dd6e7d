"""Spearman and OCA of Tevet & Berant's meta-evaluation (§6.3-6.4), on hand-made cases."""
import numpy as np
import pytest
from scipy.stats import spearmanr

from dialeval.metrics.meta_evaluation import optimal_classification_accuracy, spearman, subsampled_spearman


def test_perfectly_separated_classes_give_oca_1_either_direction():
    assert optimal_classification_accuracy([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1])[0] == 1.0
    assert optimal_classification_accuracy([0.9, 0.8, 0.2, 0.1], [0, 0, 1, 1])[0] == 1.0  # inverted metric


def test_oca_hand_computed_with_overlap():
    scores = [0.1, 0.3, 0.4, 0.35, 0.6, 0.7]
    labels = [0, 0, 1, 0, 1, 1]
    # Threshold 0.35: predicted high = {0.4, 0.6, 0.7}, exactly the high class.
    assert optimal_classification_accuracy(scores, labels) == (1.0, 0.35)
    # Sorted: 0.1 (low), 0.2 (high), 0.5 (low), 0.6 (high): the best cut gets 3 of 4 right.
    accuracy, _ = optimal_classification_accuracy([0.1, 0.5, 0.2, 0.6], [0, 0, 1, 1])
    assert accuracy == pytest.approx(0.75)


def test_oca_tolerance_treats_near_ties_as_equal():
    # Under a 1e-5 tolerance 0.5 and 0.500001 are one value, so no threshold can split them.
    scores, labels = [0.5, 0.500001], [0, 1]
    assert optimal_classification_accuracy(scores, labels)[0] == 0.5
    assert optimal_classification_accuracy(scores, labels, tolerance=0.0)[0] == 1.0


def test_spearman_equals_scipy_and_subsampling_protocol():
    rng = np.random.default_rng(0)
    parameters = rng.uniform(0.2, 1.2, 500)
    scores = parameters + rng.normal(0, 0.3, 500)
    rho, p = spearman(scores, parameters)
    assert rho == pytest.approx(spearmanr(scores, parameters).statistic)
    assert 0 < p < 1e-10
    mean, std = subsampled_spearman(scores, parameters, sample_size=200, repeats=20, seed=1)
    assert abs(mean - rho) < 0.05 and 0 < std < 0.1
    assert subsampled_spearman(scores, parameters, repeats=20, seed=1) == subsampled_spearman(scores, parameters, repeats=20, seed=1)


def test_bad_input():
    with pytest.raises(ValueError, match="equal length"):
        spearman([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="labels"):
        optimal_classification_accuracy([1, 2, 3], [0, 1, 2])
    with pytest.raises(ValueError, match="finite"):
        spearman([1, float("nan")], [1, 2])
    with pytest.raises(ValueError, match="sample_size"):
        subsampled_spearman([1, 2, 3], [1, 2, 3], sample_size=10)
