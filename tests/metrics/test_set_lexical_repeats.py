"""Repeated responses in a set are scored once, with multiplicity weights.

The reference below is the per-set implementation as it was before the change (every pair of
responses scored, ``numpy.mean`` over the released pair order): sets without repeated token
lists must score bit for bit what it scores, sets with repeats equal values up to rounding.
"""

import json
import math
import random
import tracemalloc
from collections import Counter

import numpy as np
import pytest

from dialeval.metrics import (
    averaged_distinct_n,
    batch_set_lexical_diversity,
    ngram_cosine_diversity,
    set_lexical_diversity,
    similarity_to_diversity,
)
from dialeval.metrics.similarity_diversity.similarity import (
    ngram_cosine_unit_similarity,
    similarity_diversity,
)
from dialeval.text import get_tokenizer

WORDS = ["i", "am", "going", "home", "you", "go.", "Lets", "?", "..", "yes\nno", "a.b"]


# --- the implementation that scored every repeat, copied as the reference ---


def _old_ngrams(tokens, n):
    return list(zip(*(tokens[i:] for i in range(n))))


def _old_cosine_of_counts(counts_a, counts_b):
    if len(counts_a) > len(counts_b):
        counts_a, counts_b = counts_b, counts_a
    dot = sum(count * counts_b[gram] for gram, count in counts_a.items() if gram in counts_b)
    if dot == 0:
        return 0.0
    norm_a = sum(count * count for count in counts_a.values())
    norm_b = sum(count * count for count in counts_b.values())
    distance = min(max(1.0 - dot / math.sqrt(norm_a * norm_b), 0.0), 2.0)
    return 1.0 - distance


def _old_similarity_to_diversity(items, similarity):
    scores = [similarity(items[i], items[j]) for i in range(len(items)) for j in range(i)]
    return -float(np.mean(scores))


def old_ngram_cosine_diversity(responses, max_n=5, min_n=1, tokenizer="tevet"):
    tokenize = get_tokenizer(tokenizer)
    token_lists = [tokenize(response) for response in responses]
    per_order = []
    for n in range(min_n, max_n + 1):
        counts = [Counter(_old_ngrams(tokens, n)) for tokens in token_lists]
        per_order.append(_old_similarity_to_diversity(counts, _old_cosine_of_counts))
    return float(np.mean(per_order))


def old_averaged_distinct_n(responses, max_n=5, min_n=1, tokenizer="tevet"):
    tokenize = get_tokenizer(tokenizer)
    token_lists = [tokenize(response) for response in responses]
    ratios = []
    for n in range(min_n, max_n + 1):
        grams = [gram for tokens in token_lists for gram in _old_ngrams(tokens, n)]
        ratios.append(len(set(grams)) / len(grams) if grams else 0.0)
    return float(np.mean(ratios))


# --- helpers ---


def _has_repeats(responses, tokenizer="tevet"):
    tokenize = get_tokenizer(tokenizer)
    token_lists = [tuple(tokenize(response)) for response in responses]
    return len(set(token_lists)) < len(token_lists)


def _random_sets(seed, count, repeats):
    """Random sets over a small vocabulary; with ``repeats``, every set repeats some responses."""
    rng = random.Random(seed)
    sets = []
    while len(sets) < count:
        distinct = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9)))
            for _ in range(rng.randint(1, 12))
        ]
        if rng.random() < 0.1:
            distinct.append("...")  # no token: no n-gram of any order
        if repeats:
            response_set = [rng.choice(distinct) for _ in range(rng.randint(2, 25))]
            if not _has_repeats(response_set):
                response_set.append(response_set[0])
        else:
            response_set = distinct
            if len(response_set) < 2 or _has_repeats(response_set):
                continue
        sets.append(response_set)
    return sets


def _check_against_old(sets, exact, **options):
    batch = batch_set_lexical_diversity(sets, **options)
    for index, responses in enumerate(sets):
        expected_cosine = old_ngram_cosine_diversity(responses, **options)
        expected_distinct = old_averaged_distinct_n(responses, **options)
        per_set_cosine = ngram_cosine_diversity(responses, **options)
        per_set_distinct = averaged_distinct_n(responses, **options)
        # One implementation: the per-set functions and the batch agree exactly, repeats or not.
        assert per_set_cosine == batch["ngram_cosine_diversity"][index], (index, responses)
        assert per_set_distinct == batch["averaged_distinct_n"][index], (index, responses)
        assert per_set_distinct == expected_distinct, (index, responses)  # integer counts: exact
        if exact:
            assert per_set_cosine == expected_cosine, (index, responses)
        else:
            assert per_set_cosine == pytest.approx(expected_cosine, rel=1e-12, abs=1e-15), (
                index,
                responses,
            )


# --- sets without repeats: bit for bit ---


@pytest.mark.parametrize("seed", [0, 1])
def test_sets_without_repeats_score_bit_for_bit_as_before(seed):
    _check_against_old(_random_sets(seed, 200, repeats=False), exact=True)


@pytest.mark.parametrize(
    "min_n, max_n, tokenizer", [(1, 1, "tevet"), (2, 4, "casual"), (4, 9, str.split)]
)
def test_sets_without_repeats_other_orders_and_tokenizers(min_n, max_n, tokenizer):
    sets = [
        s for s in _random_sets(20 + max_n, 80, repeats=False) if not _has_repeats(s, tokenizer)
    ]
    _check_against_old(sets, exact=True, min_n=min_n, max_n=max_n, tokenizer=tokenizer)


def test_large_sets_without_repeats_bit_for_bit():
    # 40 responses -> 780 pairs: beyond numpy's 128-element pairwise-summation blocks.
    rng = random.Random(9)
    sets = []
    while len(sets) < 5:
        responses = list(
            dict.fromkeys(
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) for _ in range(40)
            )
        )
        if not _has_repeats(responses):
            sets.append(responses)
    _check_against_old(sets, exact=True)


def test_dailydialog_plusplus_sets_as_before(shared_data):
    path = shared_data / "dailydialog-plusplus" / "dev.json"
    if not path.exists():
        pytest.skip(f"DailyDialog++ dev set not present at {path}")
    records = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    sets = [
        record[key]
        for record in records[:400]
        for key in (
            "positive_responses",
            "adversarial_negative_responses",
            "random_negative_responses",
        )
        if all(response.strip() for response in record[key])
    ]
    without = [s for s in sets if not _has_repeats(s)]
    with_repeats = [s for s in sets if _has_repeats(s)]
    assert len(without) > 1000 and with_repeats  # the dev set has sets with repeated responses too
    _check_against_old(without, exact=True)
    _check_against_old(with_repeats, exact=False)


# --- sets with repeats: equal values, each distinct pair scored once ---


@pytest.mark.parametrize("seed", [0, 1])
def test_sets_with_repeats_equal_the_old_values(seed):
    _check_against_old(_random_sets(seed, 150, repeats=True), exact=False)


def test_repeats_of_responses_without_ngrams_of_an_order():
    # "a b" has no 3-gram; "..." has no token at all: a pair of them has similarity 0.
    sets = [
        ["a b", "a b", "a b c"],
        ["...", "...", "a"],
        ["...", "...", "...", "..."],
        ["a b"] * 3 + ["a b c d e"] * 2,
    ]
    _check_against_old(sets, exact=False)
    _check_against_old(sets, exact=False, min_n=3, max_n=5)
    assert ngram_cosine_diversity(["...", "..."]) == 0.0
    # orders 1, 2 identical; 3..5 none
    assert ngram_cosine_diversity(["a b", "a b"]) == pytest.approx(-2 / 5)


def test_ten_thousand_identical_responses_scored_once():
    responses = ["I don't know."] * 10_000
    tracemalloc.start()
    try:
        value = ngram_cosine_diversity(responses)
        batch = batch_set_lexical_diversity([responses, responses[:3]])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Tokens i / don't / know: orders 1-3 identical (cosine 1), orders 4-5 without n-grams (0).
    assert value == pytest.approx(-3 / 5, abs=1e-15)
    assert value == pytest.approx(old_ngram_cosine_diversity(responses[:50]), abs=1e-15)
    assert batch["ngram_cosine_diversity"].tolist() == pytest.approx([-0.6, -0.6], abs=1e-15)
    assert averaged_distinct_n(responses) == old_averaged_distinct_n(responses)
    # Every pair materialized would be C(10^4, 2) = 5*10^7 similarities (400 MB per float64 array).
    assert peak < 32 * 2**20, peak
    result = set_lexical_diversity([responses])
    assert result["ngram_cosine_diversity"] == value


def test_mixed_big_set_value():
    # Two distinct responses, 5,000 copies each: (2 C(5000, 2) * 1 + 5000^2 * cos(a, b)) / C(10^4, 2) per order.
    responses = ["a b c"] * 5_000 + ["a b d"] * 5_000
    same = 2 * (5_000 * 4_999 // 2)
    cross = 5_000 * 5_000
    pairs = 10_000 * 9_999 // 2
    per_order = [
        (same + cross * 2 / 3) / pairs,
        (same + cross * 1 / 2) / pairs,
        same / pairs,
        0.0,
        0.0,
    ]
    assert ngram_cosine_diversity(responses) == pytest.approx(-sum(per_order) / 5, rel=1e-12)


# --- similarity_to_diversity with counts ---


def test_similarity_to_diversity_counts_equal_the_expanded_multiset():
    rng = random.Random(4)
    values = {}

    def similarity(a, b):
        return values.setdefault(frozenset((a, b)), rng.random())

    items, counts = ["p", "q", "r", "s"], [3, 1, 4, 2]
    expanded = [item for item, count in zip(items, counts) for _ in range(count)]
    calls = []

    def counted(a, b):
        calls.append((a, b))
        return similarity(a, b)

    weighted = similarity_to_diversity(items, counted, counts=counts)
    assert weighted == pytest.approx(similarity_to_diversity(expanded, similarity), rel=1e-12)
    assert len(calls) == 6 + 3  # the distinct pairs, then the self pairs of the repeated items
    # All counts 1: exactly the plain mean, bit for bit.
    assert similarity_to_diversity(
        items, similarity, counts=[1, 1, 1, 1]
    ) == _old_similarity_to_diversity(items, similarity)
    assert similarity_to_diversity(items, similarity) == _old_similarity_to_diversity(
        items, similarity
    )
    # One item repeated: its self pair only.
    assert similarity_to_diversity(["p"], similarity, counts=[5]) == -similarity("p", "p")


@pytest.mark.parametrize(
    "counts, match",
    [
        ([1, 1], "one count per item"),
        ([1, 0, 1], r"counts\[1\]"),
        ([1, 2.0, 1], r"counts\[1\]"),
        ([True, 1, 1], r"counts\[0\]"),
    ],
)
def test_similarity_to_diversity_bad_counts(counts, match):
    with pytest.raises(ValueError, match=match):
        similarity_to_diversity(["a", "b", "c"], lambda a, b: 1.0, counts=counts)
    with pytest.raises(ValueError, match="at least 2"):
        similarity_to_diversity(["a"], lambda a, b: 1.0, counts=[1])


# --- the n-gram cosine similarity matrix scores each distinct token list once ---


def _old_similarity_matrix(responses, max_n=5, min_n=1):
    tokenize = get_tokenizer("tevet")
    token_lists = [tokenize(response) for response in responses]
    n = len(responses)
    matrix = np.zeros((n, n))
    for order in range(min_n, max_n + 1):
        counts = [Counter(_old_ngrams(tokens, order)) for tokens in token_lists]
        for i in range(n):
            for j in range(i):
                matrix[i, j] += _old_cosine_of_counts(counts[i], counts[j])
    matrix /= max_n - min_n + 1
    matrix += matrix.T
    np.fill_diagonal(matrix, 1.0)
    return matrix


@pytest.mark.parametrize("seed", [0, 1])
def test_similarity_matrix_equal_to_before_with_and_without_repeats(seed):
    for repeats in (False, True):
        for responses in _random_sets(seed, 40, repeats=repeats):
            np.testing.assert_array_equal(
                ngram_cosine_unit_similarity(responses).full_matrix(diagonal=1.0),
                _old_similarity_matrix(responses),
            )
    responses = ["a b", "a b.", "a b c", "..", "...", "a b"]  # "a b." and "a b" tokenize alike
    np.testing.assert_array_equal(
        ngram_cosine_unit_similarity(responses, 3, 2).full_matrix(diagonal=1.0),
        _old_similarity_matrix(responses, 3, 2),
    )


def test_similarity_diversity_ngram_cosine_on_many_repeats():
    result = similarity_diversity([["I don't know."] * 2_000], similarity="ngram_cosine")
    assert result["similarity_diversity"] == pytest.approx(-0.6, abs=1e-12)
