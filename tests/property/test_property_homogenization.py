"""Properties of the homogenization score (metrics/homogenization/README.md: every score in [0, 1]).

Arbitrary input (property_support's strategies) gives a result or a ValueError / TypeError; the
corpus, per-set and module figures agree; ROUGE-L and BLEU equal the pair-by-pair definition on
rouge_score's tokens; BERTScore runs on the tiny encoder with fewer examples.
"""

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
    fewer,
    junk,
    outcome,
    plain_text,
    refused,
    response_set,
    unicode_text,
    within,
)

homogenization_package = importlib.import_module("dialeval.metrics.homogenization")
MEASURES = st.one_of(st.sampled_from(["rougel", "bleu", "rouge", "BLEU"]), junk)


@covers("homogenization", "homogenization_per_set", "homogenization_score")
@given(sets=any_response_sets, measure=MEASURES, use_stemmer=any_flag, allow_empty=any_flag)
def test_homogenization_refuses_or_is_in_unit_interval_and_scopes_agree(
    sets, measure, use_stemmer, allow_empty
):
    options = {"measure": measure, "use_stemmer": use_stemmer, "allow_empty": allow_empty}
    scores = outcome(homogenization_package.homogenization_score, sets, **options)
    if refused(scores):
        return
    within(scores["homogenization"], 0, 1, "homogenization")
    if scores["scope"] == "corpus":
        assert scores["homogenization"] == homogenization_package.homogenization(sets, **options)
        return
    per_set = homogenization_package.homogenization_per_set(sets, **options)
    assert [row["homogenization"] for row in scores["per_set"]] == per_set
    assert per_set == [homogenization_package.homogenization(s, **options) for s in sets]
    assert scores["homogenization"] == pytest.approx(math.fsum(per_set) / len(per_set))


#: rouge_score's LCS is pure Python: a 5,000-word text takes it a minute, ours milliseconds (the
#: huge texts' bounds are checked with every other property of `text`).
REFERENCE_SIZED_TEXT = st.one_of(plain_text, unicode_text)


@covers("rouge_tokens")
@given(
    texts=response_set(item=REFERENCE_SIZED_TEXT, min_size=2, max_size=5),
    use_stemmer=st.booleans(),
)
def test_rouge_l_is_the_pair_by_pair_mean_on_rouge_scores_tokens(texts, use_stemmer):
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    tokenizers = pytest.importorskip("rouge_score.tokenizers")
    assert all(
        homogenization_package.rouge_tokens(t, use_stemmer)
        == tokenizers.DefaultTokenizer(use_stemmer).tokenize(t)
        for t in texts
    )
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=use_stemmer)
    n = len(texts)
    expected = sum(
        scorer.score(texts[j], texts[i])["rougeL"].fmeasure
        for i in range(n)
        for j in range(n)
        if j != i
    ) / (n * (n - 1))
    ours = homogenization_package.homogenization(texts, use_stemmer=use_stemmer, allow_empty=True)
    assert ours == pytest.approx(expected, rel=1e-12, abs=1e-15)


@fewer(5)
@given(sets=any_response_sets, allow_empty=any_flag)
def test_bertscore_homogenization_refuses_or_is_in_unit_interval(
    sets, allow_empty, tiny_roberta_nli_path
):
    options = {
        "measure": "bertscore",
        "model": tiny_roberta_nli_path,
        "num_layers": 1,
        "device": "cpu",
        "allow_empty": allow_empty,
    }
    scores = outcome(homogenization_package.homogenization_score, sets, **options)
    if refused(scores):
        return
    within(scores["homogenization"], 0, 1, "homogenization")
    for row in scores.get("per_set", ()):
        within(row["homogenization"], 0, 1, "per_set homogenization")
