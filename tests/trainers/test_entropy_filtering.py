"""EDF (Csáky et al. 2019), target side with IDENTITY clustering: entropies in bits by hand."""

import math

import pytest

from dialeval.trainers.entropy_filtering import (
    filter_by_target_entropy,
    target_entropies,
    threshold_for_fraction,
)

# "yes" answers 4 different contexts: H = log2 4 = 2 bits. "no" answers context "a" twice: H = 0.
# "sure" answers "f" twice and "g" once: H = -(2/3 log2 2/3 + 1/3 log2 1/3) = 0.918296 bits.
PAIRS = [
    ("a", "yes"),
    ("b", "yes"),
    ("c", "yes"),
    ("d", "yes"),
    ("a", "no"),
    ("a", "no"),
    ("f", "sure"),
    ("g", "sure"),
    ("f", "sure"),
    ("e", "ok"),
]
SURE = -(2 / 3 * math.log2(2 / 3) + 1 / 3 * math.log2(1 / 3))


def test_target_entropy_is_the_entropy_of_the_sources_in_bits():
    assert target_entropies(PAIRS) == pytest.approx([2, 2, 2, 2, 0, 0, SURE, SURE, SURE, 0])
    assert SURE == pytest.approx(0.918296, abs=1e-6)


def test_identity_clustering_collapses_whitespace():
    pairs = [(["x", "a"], "yes  "), (["y", "a"], " yes"), ("x  a", "no"), ("x a", "no")]
    # "yes" answers the source utterance "a" twice (0 bits); "no" one source written two ways
    assert target_entropies(pairs) == pytest.approx([0, 0, 0, 0])
    # with whole contexts, "yes" has two different two-turn sources: 1 bit
    assert target_entropies(pairs, source="context") == pytest.approx([1, 1, 0, 0])


# Three pairs whose two-turn contexts share the last utterance "how are you?".
SHARED_LAST = [
    (["hi", "how are you?"], "fine"),
    (["hello", "how  are you?"], "fine"),
    (["good morning", "how are you?"], "fine"),
    (["where to?", "the station"], "ok"),
]


def test_the_source_is_the_last_utterance_as_in_csaky_et_al():
    # one source utterance: p = 1, H = 0 bits (Csáky et al. §3 pair single utterances)
    assert target_entropies(SHARED_LAST) == [0.0, 0.0, 0.0, 0.0]
    assert filter_by_target_entropy(SHARED_LAST, threshold=1.0).removed == []
    assert filter_by_target_entropy(SHARED_LAST, threshold=1.0).source == "utterance"


def test_the_whole_context_stays_available_as_an_option():
    # three different two-turn contexts, p = 1/3 each: H = log2 3 = 1.585 bits
    entropies = target_entropies(SHARED_LAST, source="context")
    assert entropies == pytest.approx([math.log2(3)] * 3 + [0.0])
    assert entropies[0] == pytest.approx(1.585, abs=5e-4)
    result = filter_by_target_entropy(SHARED_LAST, threshold=1.0, source="context")
    assert result.removed == [0, 1, 2] and result.source == "context"
    assert threshold_for_fraction(SHARED_LAST, 0.5, source="context") == pytest.approx(math.log2(3))
    assert threshold_for_fraction(SHARED_LAST, 0.5) == 0.0


def test_pairs_above_the_threshold_are_removed():
    result = filter_by_target_entropy(PAIRS, threshold=1.0)
    assert result.removed == [0, 1, 2, 3]  # the "yes" pairs; "sure" (0.918 bits) stays
    assert result.kept == [4, 5, 6, 7, 8, 9]
    assert result.removed_share == pytest.approx(0.4)
    assert filter_by_target_entropy(PAIRS, threshold=0.9).removed == [0, 1, 2, 3, 6, 7, 8]
    assert filter_by_target_entropy(PAIRS, threshold=2.0).removed == []  # strictly above


def test_long_targets_are_exempt_as_in_the_released_code():
    long = (
        "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
    )
    pairs = [("a", long), ("b", long), ("a", "yes"), ("b", "yes")]
    assert filter_by_target_entropy(pairs, threshold=0.5).removed == [2, 3]
    assert filter_by_target_entropy(pairs, threshold=0.5, max_words=None).removed == [0, 1, 2, 3]


def test_threshold_for_fraction_removes_at_most_the_fraction():
    # removes the 4 "yes" pairs = 0.4
    assert threshold_for_fraction(PAIRS, 0.4) == pytest.approx(SURE)
    assert threshold_for_fraction(PAIRS, 0.7) == 0.0  # removes yes + sure = 7 pairs
    # nothing can go without exceeding 0.3
    assert threshold_for_fraction(PAIRS, 0.3) == pytest.approx(2.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"pairs": []}, "pairs"),
        ({"pairs": [("a", 3)]}, "pairs` item 0"),
        ({"pairs": [([], "x")]}, "context"),
        ({"pairs": PAIRS, "threshold": -1}, "threshold"),
        ({"pairs": PAIRS, "threshold": float("nan")}, "threshold"),
        ({"pairs": PAIRS, "max_words": 0}, "max_words"),
        ({"pairs": PAIRS, "source": "turns"}, "`source`"),
        ({"pairs": PAIRS, "source": None}, "`source`"),
    ],
)
def test_bad_input_names_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        filter_by_target_entropy(**kwargs)


def test_a_bad_source_is_refused_everywhere():
    from dialeval.validation import ArgumentError

    for call in (
        lambda: target_entropies(PAIRS, source="last"),
        lambda: threshold_for_fraction(PAIRS, 0.1, source="last"),
    ):
        with pytest.raises(ArgumentError, match="`source` must be one of") as caught:
            call()
        assert caught.value.argument == "source"
