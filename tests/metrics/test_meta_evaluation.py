"""Spearman and OCA of Tevet & Berant's meta-evaluation (§6.3-6.4), on hand-made cases."""

import numpy as np
import pytest
from scipy.stats import spearmanr

from dialeval.metrics.diversity_meta_eval.statistics import (
    bootstrap_spearman_ci,
    diversity_meta_evaluation,
    optimal_classification_accuracy,
    spearman,
    subsampled_spearman,
)


def test_perfectly_separated_classes_give_oca_1_either_direction():
    assert optimal_classification_accuracy([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1])[0] == 1.0
    # inverted metric
    assert optimal_classification_accuracy([0.9, 0.8, 0.2, 0.1], [0, 0, 1, 1])[0] == 1.0


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
    assert subsampled_spearman(scores, parameters, repeats=20, seed=1) == subsampled_spearman(
        scores, parameters, repeats=20, seed=1
    )


def test_bad_input():
    with pytest.raises(ValueError, match="equal length"):
        spearman([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="labels"):
        optimal_classification_accuracy([1, 2, 3], [0, 1, 2])
    with pytest.raises(ValueError, match="finite"):
        spearman([1, float("nan")], [1, 2])
    with pytest.raises(ValueError, match="sample_size"):
        subsampled_spearman([1, 2, 3], [1, 2, 3], sample_size=10)


def test_bootstrap_ci_is_seeded_and_contains_rho():
    rng = np.random.default_rng(0)
    labels = np.repeat([0.0, 1.0], 110)
    scores = labels + rng.normal(0, 0.8, 220)
    low, high = bootstrap_spearman_ci(scores, labels, num_resamples=300, seed=3)
    assert low < spearman(scores, labels)[0] < high
    assert (low, high) == bootstrap_spearman_ci(scores, labels, num_resamples=300, seed=3)
    with pytest.raises(ValueError, match="sample_fraction"):
        bootstrap_spearman_ci(scores, labels, sample_fraction=0)


def test_oca_is_reported_only_for_a_binary_parameter():
    binary = diversity_meta_evaluation([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1])
    assert binary["oca"] == 1.0 and binary["spearman"] == pytest.approx(np.sqrt(0.8))
    assert "oca" not in diversity_meta_evaluation([0.1, 0.2, 0.8, 0.9], [0.2, 0.5, 0.7, 1.2])


def test_released_sent_bert_column_reproduces_the_papers_rows(shared_data):
    """Tevet & Berant Table 4 (sent-BERT, conTest) from the released per-set scores."""
    from dialeval.io import read_tevet_csv

    expected = {"story_gen": (0.77, 0.90), "resp_gen": (0.59, 0.79), "prompt_gen": (0.68, 0.81)}
    for task, (rho, oca) in expected.items():
        sets = read_tevet_csv(
            shared_data
            / "tevet-diversity-eval"
            / "with_metrics"
            / "conTest"
            / f"con_test_200_with_hds_{task}.csv"
        )
        scores = [float(s.metadata["metric_SentBert"]) for s in sets]
        labels = [float(s.metadata["label_value"]) for s in sets]
        result = diversity_meta_evaluation(scores, labels)
        assert (round(result["spearman"], 2), round(result["oca"], 2)) == (rho, oca)


def test_evaluate_module_offline():
    import evaluate
    from conftest import REPO_ROOT

    module = evaluate.load(str(REPO_ROOT / "metrics" / "diversity_meta_eval"))
    result = module.compute(predictions=[0.1, 0.4, 0.35, 0.8], references=[0, 0, 1, 1])
    assert result["oca"] == 0.75 and set(result) >= {
        "spearman",
        "spearman_pvalue",
        "pearson",
        "num_sets",
    }
    assert "spearman_ci" in module.compute(
        predictions=[0.1, 0.4, 0.35, 0.8, 0.5],
        references=[0, 0, 1, 1, 1],
        bootstrap=True,
        num_resamples=50,
    )
    with pytest.raises(ValueError, match=r"predictions\[0\]"):
        module.compute(predictions=["a", 0.3], references=[0, 1])
    with pytest.raises(ValueError, match="equal length"):
        module.compute(predictions=[0.1, 0.3], references=[0, 1, 1])


def test_two_values_give_a_p_value_of_1_not_a_silent_nan():
    """Found by tests/property: scipy's spearmanr gives a NaN p-value for two points, silently."""
    rho, p_value = spearman([0.0, 1.0], [0.0, 1.0])
    assert rho == pytest.approx(1.0) and p_value == 1.0
    assert diversity_meta_evaluation([0.3, 0.1], [1, 0])["spearman_pvalue"] == 1.0


@pytest.mark.parametrize(
    "options, match",
    [
        ({"repeats": 0}, "`repeats` must be a positive int"),
        ({"repeats": -1}, "`repeats` must be a positive int"),
        ({"repeats": True}, "`repeats` must be a positive int"),
        ({"sample_size": 2.0}, "`sample_size` must be an int >= 2"),
        ({"seed": 1.5}, "`seed` must be an int >= 0"),
    ],
)
def test_subsampling_options_are_checked_instead_of_a_silent_nan(options, match):
    """Found by tests/property: repeats=0 gave (nan, nan) with numpy's 'Mean of empty slice'."""
    with pytest.raises(ValueError, match=match):
        subsampled_spearman(
            [1, 2, 3, 4], [1, 2, 4, 3], **{"sample_size": 3, "repeats": 2, **options}
        )
    assert subsampled_spearman([1, 2, 3, 4], [1, 2, 4, 3], sample_size=4, repeats=1) == (
        pytest.approx(0.8),
        0.0,
    )


def test_bootstrap_seed_is_checked():
    with pytest.raises(ValueError, match="`seed` must be an int >= 0"):
        bootstrap_spearman_ci([1, 2, 3, 4], [1, 2, 4, 3], num_resamples=10, seed=-1)


@pytest.mark.parametrize("tolerance", [-1, float("nan"), float("inf"), "0.1", True])
def test_oca_tolerance_must_be_a_finite_non_negative_number(tolerance):
    """Found by tests/property: a negative or NaN tolerance was accepted."""
    with pytest.raises(ValueError, match="`tolerance` must be a finite number >= 0"):
        optimal_classification_accuracy([0.1, 0.2, 0.3], [0, 1, 1], tolerance=tolerance)


_EIGHT_SCORES = [0.1, 0.5, 0.3, 0.9, 0.7, 0.2, 0.8, 0.4]
_EIGHT_CLASSES = [0, 1, 0, 1, 1, 0, 1, 0]


@pytest.mark.parametrize(
    "option, value",
    [
        ("num_resamples", -1),
        ("num_resamples", 10**30),
        ("sample_fraction", float("nan")),
        ("sample_fraction", 1.5),
        ("seed", "x"),
    ],
)
def test_bootstrap_options_are_checked_without_bootstrap_too(option, value):
    with pytest.raises(ValueError, match=f"`{option}`"):
        diversity_meta_evaluation(_EIGHT_SCORES, _EIGHT_CLASSES, **{option: value})


@pytest.mark.parametrize("fraction", [0.01, 0.1])
def test_a_fraction_leaving_fewer_than_two_sets_per_resample_is_refused(fraction):
    """Padded to two sets, every resample's rho is +-1 and the interval (1.0, 1.0) means nothing."""
    with pytest.raises(ValueError, match=r"`sample_fraction`=.* leaves [01] of the 8 sets"):
        diversity_meta_evaluation(
            _EIGHT_SCORES, _EIGHT_CLASSES, bootstrap=True, sample_fraction=fraction
        )
    with pytest.raises(ValueError, match="`sample_fraction`"):
        bootstrap_spearman_ci(_EIGHT_SCORES, _EIGHT_CLASSES, sample_fraction=fraction)


def test_numpy_numbers_are_taken_as_bootstrap_options():
    plain = bootstrap_spearman_ci(_EIGHT_SCORES, _EIGHT_CLASSES, 50, 0.5, 0.9, seed=1)
    assert (
        bootstrap_spearman_ci(
            _EIGHT_SCORES,
            _EIGHT_CLASSES,
            np.int64(50),
            np.float64(0.5),
            np.float64(0.9),
            seed=np.int64(1),
        )
        == plain
    )
