"""The batched set-level metrics equal the per-set ones bit for bit and the released scores."""

import random

import numpy as np
import pytest

from dialeval.metrics import averaged_distinct_n, ngram_cosine_diversity, set_lexical_diversity
from dialeval.metrics.lexical_diversity.set_level_batch import batch_set_lexical_diversity

# Small vocabulary so that n-grams repeat within and across responses; "..", "go." and "a.b" lose
# their dots, "yes\nno" its newline, as in the released tokenization.
WORDS = ["i", "am", "going", "home", "you", "go.", "Lets", "?", "..", "yes\nno", "a.b"]


def _random_sets(seed, count=250, allow_empty=False):
    rng = random.Random(seed)
    sets = []
    for _ in range(count):
        response_set = []
        for _ in range(rng.randint(2, 10)):
            roll = rng.random()
            if roll < 0.05:
                response_set.append("..." if not allow_empty or roll < 0.025 else "")  # no token
            else:
                response_set.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9))))
        sets.append(response_set)
    return sets


def _assert_equal_to_per_set(sets, **options):
    scores = batch_set_lexical_diversity(sets, **options)
    assert set(scores) == {"averaged_distinct_n", "ngram_cosine_diversity"}
    for name in scores:
        assert scores[name].shape == (len(sets),) and scores[name].dtype == np.float64
    for index, response_set in enumerate(sets):
        assert scores["averaged_distinct_n"][index] == averaged_distinct_n(
            response_set, **options
        ), index
        assert scores["ngram_cosine_diversity"][index] == ngram_cosine_diversity(
            response_set, **options
        ), index


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equal_to_per_set_functions_bit_for_bit(seed):
    _assert_equal_to_per_set(_random_sets(seed))


@pytest.mark.parametrize("min_n, max_n", [(1, 1), (2, 3), (3, 5), (1, 9), (4, 12)])
def test_equal_for_other_orders(min_n, max_n):
    _assert_equal_to_per_set(_random_sets(10 + max_n), min_n=min_n, max_n=max_n)


def test_equal_with_empty_strings_allowed():
    sets = _random_sets(7, allow_empty=True) + [["", ""], ["", "a b"], ["...", "", "i am"]]
    _assert_equal_to_per_set(sets, allow_empty=True)


def test_orders_without_any_ngram():
    # No response has 4 tokens: orders 4 and 5 contribute 0 to both metrics, for every set.
    sets = [["a b", "a b c"], ["x", "y", "x"], ["...", "a"], ["a b c", "a b c", "c b a"]]
    _assert_equal_to_per_set(sets)
    _assert_equal_to_per_set(sets, min_n=4, max_n=5)
    scores = batch_set_lexical_diversity(sets, min_n=4, max_n=5)
    assert scores["averaged_distinct_n"].tolist() == [0.0] * 4
    assert scores["ngram_cosine_diversity"].tolist() == [0.0] * 4
    # Nothing to tokenize at all.
    scores = batch_set_lexical_diversity([["...", ".."], ["", ""]], allow_empty=True)
    assert scores["averaged_distinct_n"].tolist() == [0.0, 0.0]
    assert scores["ngram_cosine_diversity"].tolist() == [0.0, 0.0]


def test_large_sets_and_long_responses():
    # Sets beyond numpy's 8-way unrolled and 128-element pairwise-summation blocks (k = 20 -> 190 pairs).
    rng = random.Random(3)
    sets = [
        [
            " ".join(rng.choice(WORDS[:4]) for _ in range(rng.randint(1, 30)))
            for _ in range(rng.randint(2, 20))
        ]
        for _ in range(40)
    ]
    _assert_equal_to_per_set(sets)


def test_casual_and_callable_tokenizers():
    sets = _random_sets(4, count=60)
    _assert_equal_to_per_set(sets, tokenizer="casual")
    _assert_equal_to_per_set(sets, tokenizer=str.split)


def test_hand_computed():
    scores = batch_set_lexical_diversity(
        [["i am going", "i am going", "lets go i i"], ["the cat"] * 3]
    )
    assert scores["averaged_distinct_n"][0] == pytest.approx((0.5 + 5 / 7 + 0.75 + 1.0 + 0.0) / 5)
    # orders 1, 2 identical; 3..5 none
    assert scores["ngram_cosine_diversity"][1] == pytest.approx(-2 / 5)


def test_set_lexical_diversity_uses_the_batch():
    sets = _random_sets(5, count=30)
    calls = []
    result = set_lexical_diversity(sets, progress=calls.append)
    assert calls == [30]
    assert result["num_sets"] == 30
    for response_set, scores in zip(sets, result["per_set"]):
        assert scores == {
            "averaged_distinct_n": averaged_distinct_n(response_set),
            "ngram_cosine_diversity": ngram_cosine_diversity(response_set),
        }
        assert all(type(value) is float for value in scores.values())
    assert result["averaged_distinct_n"] == float(
        np.mean([s["averaged_distinct_n"] for s in result["per_set"]])
    )


@pytest.mark.parametrize(
    "bad, match",
    [
        ("just a string", r"`response_sets` must be a list of response sets"),
        ([], r"`response_sets` is empty"),
        ([["a", "b"], "not a set"], r"`response_sets\[1\]` must be a list of strings"),
        ([["a", "b"], ["only one"]], r"`response_sets\[1\]` must hold at least 2 responses"),
        ([["a", 3]], r"`response_sets\[0\]\[1\]` must be a string"),
        ([["a", ""]], r"`response_sets\[0\]\[1\]` is an empty string.*allow_empty"),
    ],
)
def test_bad_input_names_response_sets(bad, match):
    with pytest.raises(ValueError, match=match):
        batch_set_lexical_diversity(bad)


def test_bad_orders_and_tokenizer():
    with pytest.raises(ValueError, match="min_n"):
        batch_set_lexical_diversity([["a b", "c"]], max_n=2, min_n=3)
    with pytest.raises(ValueError, match="max_n"):
        batch_set_lexical_diversity([["a b", "c"]], max_n=0)
    with pytest.raises(ValueError):
        batch_set_lexical_diversity([["a b", "c"]], tokenizer="no-such-tokenizer")


def test_numpy_orders_are_taken_and_a_progress_that_is_not_callable_is_refused():
    sets = [["the cat sat", "a dog ran", "the cat ran"], ["hello there", "hi there"]]
    assert set_lexical_diversity(sets, max_n=np.int64(2)) == set_lexical_diversity(sets, max_n=2)
    assert averaged_distinct_n(sets[0], max_n=np.int64(3), min_n=np.int32(2)) == (
        averaged_distinct_n(sets[0], max_n=3, min_n=2)
    )
    for progress in (3, "bar"):
        with pytest.raises(ValueError, match="`progress` must be a callable"):
            set_lexical_diversity(sets, progress=progress)
