"""Self-repetition score: hand-computed values, the `diversity` package's own function on
DailyDialog++ responses, per-set and corpus paths, bad input."""

import math

import evaluate
import pytest
from diversity_peer_files import dailydialog_responses, peer_module

from dialeval.metrics import evaluate_module_path
from dialeval.metrics.self_repetition import (
    self_repetition,
    self_repetition_per_set,
    self_repetition_scores,
)


def test_hand_computed_scores():
    # "I do not know that" has the 4-grams "I do not know" and "do not know that", each also in the
    # second copy: 1 + 1 other texts -> log(3) for each copy, 0 for "no idea" (shorter than n).
    assert self_repetition(
        ["I do not know that", "I do not know that", "no idea"]
    ) == pytest.approx(2 * math.log(3) / 3, abs=1e-15)
    # An n-gram repeated inside one text counts once for it: "a b c d a b c d" has 3 distinct 4-grams,
    # "a b c d" is shared with the second text (1 other), "b c d a" and "c d a b" with none.
    texts = ["a b c d a b c d", "x a b c d", "y z"]
    assert self_repetition(texts) == pytest.approx((math.log(2) + math.log(2) + 0) / 3, abs=1e-15)
    # n = 1: tokens; "a" is in all three texts (2 others each), "b" in two.
    assert self_repetition(["a b", "a b", "a"], n=1) == pytest.approx(
        (math.log(1 + 2 + 1) * 2 + math.log(1 + 2)) / 3, abs=1e-15
    )
    # whitespace tokens: tabs and newlines split, punctuation stays on its word
    assert self_repetition(
        ["one two\tthree four", "one  two three\nfour", "one two three four."]
    ) == pytest.approx((math.log(2) * 2 + 0) / 3, abs=1e-15)
    assert self_repetition(["completely different words here", "nothing in common at all"]) == 0.0


def test_per_set_scope_scores_each_set_alone_and_averages():
    sets = [
        ["I do not know that", "I do not know that", "no idea"],
        ["a b c d e", "a b c d f"],
        ["I do not know that", "ok"],
    ]
    per_set = self_repetition_per_set(sets)
    assert per_set == [self_repetition(s) for s in sets]
    assert per_set[2] == 0.0  # "the other texts" are those of its own set
    scores = self_repetition_scores(sets)
    assert scores["scope"] == "response_set" and scores["num_sets"] == 3 and scores["n"] == 4
    assert [row["self_repetition"] for row in scores["per_set"]] == per_set
    assert scores["self_repetition"] == pytest.approx(sum(per_set) / 3)
    flat = [text for s in sets for text in s]
    assert self_repetition_scores(flat) == {
        "scope": "corpus",
        "self_repetition": self_repetition(flat),
        "n": 4,
        "num_responses": len(flat),
    }
    assert self_repetition(flat) > per_set[0]  # pooled, "I do not know that" has a third copy


def test_equals_the_diversity_package_on_dailydialog(shared_data):
    peer = peer_module("self_repetition").self_repetition_score
    responses = dailydialog_responses(shared_data, 600)
    assert len(set(responses)) < len(responses)  # real text with repeated responses
    for n in (1, 2, 4):
        expected = peer(responses, n=n, verbose=False)
        assert expected > 0
        assert self_repetition(responses, n=n) == pytest.approx(expected, rel=1e-12)
    sets = [responses[i : i + 6] for i in range(0, 120, 6)]
    assert self_repetition_per_set(sets, n=2) == pytest.approx(
        [peer(s, n=2, verbose=False) for s in sets], rel=1e-12
    )


def test_a_text_shorter_than_n_and_empty_texts_add_zero_as_in_the_package():
    peer = peer_module("self_repetition").self_repetition_score
    texts = ["a b c", "a b c", "", "   ", "a b c d", "a b c d"]
    assert self_repetition(texts, allow_empty=True) == pytest.approx(
        peer(texts, verbose=False), rel=1e-12
    )
    assert self_repetition(texts, allow_empty=True) == pytest.approx(2 * math.log(2) / 6, abs=1e-15)


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="`n`"):
        self_repetition(["a b"], n=0)
    with pytest.raises(ValueError, match="`n`"):
        self_repetition_scores(["a b"], n=2.0)
    with pytest.raises(ValueError, match="`texts`"):
        self_repetition([])
    with pytest.raises(ValueError, match=r"`texts\[1\]` is an empty string"):
        self_repetition(["a", ""])
    with pytest.raises(ValueError, match=r"`texts\[0\]` must be a string"):
        self_repetition([b"bytes"])
    with pytest.raises(ValueError, match=r"`response_sets\[0\]`"):
        self_repetition_per_set([[]])
    with pytest.raises(ValueError, match="mixes nesting"):
        self_repetition_scores(["a", ["b"]])


def test_evaluate_module_both_scopes():
    module = evaluate.load(evaluate_module_path("self_repetition"))
    corpus = ["I do not know that", "I do not know that", "no idea"]
    assert module.compute(predictions=corpus) == self_repetition_scores(corpus)
    sets = [corpus, ["a b c d e", "a b c d f"]]
    result = module.compute(predictions=sets, n=3)
    assert [row["self_repetition"] for row in result["per_set"]] == self_repetition_per_set(
        sets, n=3
    )
    assert result["n"] == 3
