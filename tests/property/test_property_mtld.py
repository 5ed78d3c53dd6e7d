"""Properties of MTLD (metrics/mtld/README.md: MTLD >= 0, the token count when every token is distinct)."""

from __future__ import annotations

import importlib
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from property_support import (
    any_flag,
    any_response_sets,
    covers,
    junk,
    outcome,
    refused,
    text,
    within,
)

mtld_package = importlib.import_module("dialeval.metrics.mtld")
THRESHOLDS = st.one_of(st.floats(0.05, 0.95), st.sampled_from([0, 1, -0.5, 1.5, math.nan]), junk)


@covers("mtld", "mtld_scores")
@given(predictions=any_response_sets, threshold=THRESHOLDS, allow_empty=any_flag)
def test_mtld_refuses_or_is_non_negative_and_scopes_agree(predictions, threshold, allow_empty):
    scores = outcome(
        mtld_package.mtld_scores, predictions, threshold=threshold, allow_empty=allow_empty
    )
    if refused(scores):
        return
    within(scores["mtld"], 0, math.inf, "mtld")
    if scores["scope"] == "corpus":
        assert scores["mtld"] == mtld_package.mtld(
            predictions, threshold=threshold, allow_empty=allow_empty
        )
        return
    per_set = [
        mtld_package.mtld(s, threshold=threshold, allow_empty=allow_empty) for s in predictions
    ]
    assert [row["mtld"] for row in scores["per_set"]] == per_set
    assert scores["mtld"] == pytest.approx(math.fsum(per_set) / len(per_set))


@covers("mtld_words")
@given(value=st.one_of(text, st.lists(text, min_size=1, max_size=4)))
def test_words_are_lower_case_without_digits_or_punctuation_and_all_distinct_scores_the_count(
    value,
):
    texts = value if isinstance(value, list) else [value]
    words = [word for item in texts for word in mtld_package.mtld_words(item)]
    assert all(
        word and word == word.lower() and not any(c.isdigit() and c.isascii() for c in word)
        for word in words
    )
    score = outcome(mtld_package.mtld, texts)
    if words and len(set(words)) == len(words) and not refused(score):
        assert score == len(words)
