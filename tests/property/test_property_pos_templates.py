"""Properties of the part-of-speech template metrics (with the tests' deterministic tagger and splitter)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pos_tagging_fixtures import lexicon_tagger, regex_sentence_splitter
from property_support import (
    covers,
    junk,
    nonblank_text,
    outcome,
    refused,
    response_sets,
    text,
    within,
)

from dialeval.metrics import pos_templates

TAGGING = {"tagger": lexicon_tagger, "sentence_splitter": regex_sentence_splitter}
any_predictions = st.one_of(
    st.lists(text, max_size=6), response_sets(text, max_size=4, max_sets=3), junk
)
sizes = st.one_of(st.integers(-1, 6), junk)


@covers(
    "extract_templates",
    "template_rate",
    "templates_per_token",
    "pos_template_scores",
    "SpanMatcher",
)
@given(predictions=any_predictions, n=sizes, top_n=sizes, allow_empty=st.booleans())
def test_refuses_or_scores_in_range_and_scopes_agree(predictions, n, top_n, allow_empty):
    scores = outcome(
        pos_templates.pos_template_scores,
        predictions,
        n=n,
        top_n=top_n,
        allow_empty=allow_empty,
        **TAGGING,
    )
    if refused(scores):
        return
    within(scores["template_rate"], 0, 1, "template_rate")
    assert within(scores["templates_per_token"], 0, math.inf, "templates_per_token") >= 0
    options = {"n": n, "top_n": top_n, "allow_empty": allow_empty, **TAGGING}
    sets = [predictions] if scores["scope"] == "corpus" else predictions
    rows = [scores] if scores["scope"] == "corpus" else scores["per_set"]
    for texts, row in zip(sets, rows):
        templates = pos_templates.extract_templates(texts, **options)
        assert len(templates) == row["num_templates"] <= top_n
        assert (
            row["template_rate"]
            == pos_templates.template_rate(texts, **options)
            == pos_templates.template_rate(texts, templates, allow_empty=allow_empty)
        )
        per_token = pos_templates.templates_per_token(texts, **options)
        assert row["templates_per_token"] == pytest.approx(math.fsum(per_token) / len(per_token))
        matcher = pos_templates.SpanMatcher(pos_templates.check_templates(templates))
        assert [matcher.contains_any(t) for t in texts] == [
            any(span in t for span in matcher.spans) for t in texts
        ]


@covers("check_templates")
@given(
    templates=st.one_of(
        junk,
        st.dictionaries(
            st.text(max_size=5),
            st.one_of(st.lists(st.one_of(nonblank_text, junk), max_size=3), junk, nonblank_text),
            max_size=3,
        ),
    )
)
def test_check_templates_refuses_or_lists_distinct_nonempty_spans(templates):
    spans = outcome(pos_templates.check_templates, templates)
    if refused(spans):
        return
    assert len(set(spans)) == len(spans) and all(isinstance(span, str) and span for span in spans)
