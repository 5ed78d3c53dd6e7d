import numpy as np
import pytest

from dialeval.metrics import diversity_from_similarity_matrix, similarity_to_diversity


def test_negated_mean_over_unordered_pairs():
    values = {frozenset({0, 1}): 0.9, frozenset({0, 2}): 0.3, frozenset({1, 2}): 0.0}
    assert similarity_to_diversity(
        [0, 1, 2], lambda a, b: values[frozenset({a, b})]
    ) == pytest.approx(-0.4)


def test_matrix_form_reads_lower_triangle_only():
    matrix = np.array([[1.0, 99.0, 99.0], [0.9, 1.0, 99.0], [0.3, 0.0, 1.0]])
    assert diversity_from_similarity_matrix(matrix) == pytest.approx(-0.4)


def test_needs_a_pair():
    with pytest.raises(ValueError, match="items"):
        similarity_to_diversity(["one"], lambda a, b: 1.0)
    with pytest.raises(ValueError, match="similarity_matrix"):
        diversity_from_similarity_matrix(np.ones((1, 1)))
    with pytest.raises(ValueError, match="square"):
        diversity_from_similarity_matrix(np.ones((2, 3)))


def test_a_non_finite_similarity_is_refused_not_averaged_into_nan():
    """Found by tests/property: a NaN similarity gave a NaN diversity, silently."""
    with pytest.raises(ValueError, match="`similarity` gave a non-finite value"):
        similarity_to_diversity([1, 2], lambda a, b: float("nan"))
    with pytest.raises(ValueError, match="`similarity_matrix` holds NaN or infinite"):
        diversity_from_similarity_matrix([[1.0, np.nan], [np.nan, 1.0]])
    # the diagonal is not read: NaN there (as in NLI pair matrices) is fine
    assert diversity_from_similarity_matrix([[np.nan, 0.5], [0.5, np.nan]]) == -0.5


@pytest.mark.parametrize(
    "value, shown",
    [(None, "NoneType"), ("0.5", "str"), (np.array([0.5, 0.2]), "ndarray"), (1j, "complex")],
)
def test_a_similarity_that_is_not_one_real_number_is_refused_naming_it(value, shown):
    with pytest.raises(ValueError, match=f"`similarity` must return one real number.*{shown}"):
        similarity_to_diversity(["a", "b", "c"], lambda a, b: value)


def test_numpy_and_zero_dimensional_similarities_are_taken():
    assert similarity_to_diversity(["a", "b"], lambda a, b: np.float32(0.5)) == -0.5
    assert similarity_to_diversity(["a", "b"], lambda a, b: np.array(0.25)) == -0.25


def test_similarities_near_the_float_limit_give_a_finite_mean_not_infinity():
    assert similarity_to_diversity(["a", "b", "c"], lambda a, b: 1e308) == -1e308
    weighted = similarity_to_diversity(["a", "b"], lambda a, b: 1e308, counts=[3, 4])
    assert weighted == pytest.approx(-1e308)
    matrix = np.full((3, 3), 1e308)
    assert diversity_from_similarity_matrix(matrix) == -1e308


def test_a_complex_similarity_matrix_is_refused_not_cast_to_its_real_part():
    with pytest.raises(ValueError, match="`similarity_matrix` must hold real numbers"):
        diversity_from_similarity_matrix(np.array([[1, 0.5j], [0.5j, 1]]))
    with pytest.raises(ValueError, match="`similarity_matrix`"):
        diversity_from_similarity_matrix([[1, 0.5j], [0.5j, 1]])
