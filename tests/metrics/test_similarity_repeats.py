"""Similarity diversity of sets with repeated responses: each distinct pair is scored once and the
§5 mean is weighted by multiplicity (no n x n matrix), equal to the full-matrix reduction."""

import math
import tracemalloc

import numpy as np
import pytest

from dialeval.metrics import diversity_from_similarity_matrix, sent_bert_diversity
from dialeval.metrics.engines.pair_scorer import PairScoringStats
from dialeval.metrics.engines.reduction import UnitSimilarity, units_of
from dialeval.metrics.similarity_diversity.cross_encoder import (
    cross_encoder_similarity_matrices,
    cross_encoder_unit_similarities,
)
from dialeval.metrics.similarity_diversity.similarity import (
    similarity_diversity,
    similarity_matrices,
)

SETS = [
    [
        "I fixed the sink.",
        "We ate seafood.",
        "I fixed the sink.",
        "I fixed the sink.",
        "Hello there.",
    ],
    ["same", "same"],
    ["one", "two", "three"],
]
MANY = ["I don't know."] * 10_000 + ["Let's go hiking."]


def test_units_are_numbered_in_order_of_first_occurrence():
    units, unit_of_item = units_of(["b", "a", "b", "c", "a"])
    assert units == ["b", "a", "c"] and unit_of_item.tolist() == [0, 1, 0, 2, 1]
    units, unit_of_item = units_of(["A", "a "], key=lambda text: text.strip().lower())
    assert units == ["A"] and unit_of_item.tolist() == [0, 0]


def test_weighted_reduction_equals_the_full_matrix_and_is_bit_identical_without_repeats():
    rng = np.random.default_rng(0)
    for _ in range(20):
        units = int(rng.integers(1, 6))
        unit_matrix = rng.uniform(-1, 1, (units, units))
        unit_matrix = (unit_matrix + unit_matrix.T) / 2
        unit_of_item = rng.integers(0, units, int(rng.integers(2, 12)))
        unit_of_item = units_of(unit_of_item.tolist())[1]  # first-occurrence order, every unit used
        used = int(unit_of_item.max()) + 1
        similarity = UnitSimilarity(unit_matrix[:used, :used], unit_of_item)
        expected = diversity_from_similarity_matrix(similarity.full_matrix())
        assert similarity.diversity() == pytest.approx(expected, rel=1e-12, abs=1e-15)
    distinct = UnitSimilarity(unit_matrix, np.arange(len(unit_matrix)))
    if len(unit_matrix) >= 2:
        assert distinct.diversity() == diversity_from_similarity_matrix(unit_matrix)
    # Hand-computed: units a, b with sim(a, b) = 0.5, sim(a, a) = 0.9; the set (a, a, a, b).
    hand = UnitSimilarity(np.array([[0.9, 0.5], [0.5, 1.0]]), np.array([0, 0, 0, 1]))
    assert hand.diversity() == pytest.approx(-(3 * 0.9 + 3 * 0.5) / 6)
    with pytest.raises(ValueError, match="at least 2"):
        UnitSimilarity(np.array([[1.0]]), np.array([0])).diversity()


@pytest.mark.parametrize("similarity", ["sent_bert", "ngram_cosine"])
def test_diversity_with_repeats_equals_the_full_matrix_reduction(similarity):
    result = similarity_diversity(SETS, similarity)
    for row, matrix, responses in zip(
        result["per_set"], similarity_matrices(SETS, similarity), SETS
    ):
        assert matrix.shape == (len(responses), len(responses))
        assert row["similarity_diversity"] == pytest.approx(
            diversity_from_similarity_matrix(matrix), rel=1e-9, abs=1e-12
        )


def test_sent_bert_ten_thousand_copies_never_build_the_n_by_n_matrix():
    pair = similarity_matrices([["I don't know.", "Let's go hiking."]], "sent_bert")[0]
    tracemalloc.start()
    try:
        (score,) = sent_bert_diversity([MANY])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    copies, size = 10_000, len(MANY)
    expected = -(math.comb(copies, 2) * pair[0, 0] + copies * pair[0, 1]) / math.comb(size, 2)
    assert score == pytest.approx(expected, rel=1e-5)
    assert peak < 64 * 2**20  # the (n, n) float32 matrix alone would be 400 MB


def test_cross_encoder_scores_each_distinct_pair_once(tiny_cross_encoder_path):
    stats = PairScoringStats()
    (units,) = cross_encoder_unit_similarities([MANY], model=tiny_cross_encoder_path, stats=stats)
    assert stats.num_pairs == 4  # (a, b) and (a, a) in each order: one pair for the 10,000 copies
    assert units.unit_matrix.shape == (2, 2)
    small = ["I don't know.", "I don't know.", "Let's go hiking."]
    (full,) = cross_encoder_similarity_matrices([small], model=tiny_cross_encoder_path)
    assert full[0, 1] == pytest.approx(units.unit_matrix[0, 0]) and full[0, 2] == pytest.approx(
        units.unit_matrix[0, 1]
    )
    expected = -(math.comb(10_000, 2) * full[0, 1] + 10_000 * full[0, 2]) / math.comb(len(MANY), 2)
    assert units.diversity() == pytest.approx(expected, rel=1e-9)
    # Without repeats the pairs and the value are those of the full matrix, bit for bit.
    distinct = ["one", "two", "three"]
    (unit_form,) = cross_encoder_unit_similarities([distinct], model=tiny_cross_encoder_path)
    (matrix,) = cross_encoder_similarity_matrices([distinct], model=tiny_cross_encoder_path)
    assert unit_form.diversity() == diversity_from_similarity_matrix(matrix)
