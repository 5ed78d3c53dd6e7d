"""Properties of the model-free text functions: the tokenizers, dialeval.validation, the
set-level and corpus lexical metrics, Self-BLEU and the compression ratio.

Each property feeds arbitrary input (property_support's strategies), lets only ValueError /
TypeError through, checks every score against its card's range (metrics/lexical_diversity/README.md:
distinct-n, LF, Self-BLEU in [0, 1], n-gram cosine diversity in [-1, 0], entropies >= 0) and
checks that the per-set and batched paths agree.
"""

from __future__ import annotations

import importlib
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from property_support import (
    any_flag,
    any_order,
    any_response,
    any_response_set,
    any_response_sets,
    covers,
    finite,
    huge_text,
    junk,
    nonblank_text,
    outcome,
    refused,
    response_sets,
    text,
    within,
)

from dialeval import text as text_module
from dialeval import validation

# The subpackages export functions of their own names (ARCHITECTURE.md): import the packages.
compression = importlib.import_module("dialeval.metrics.compression_ratio")
lexical = importlib.import_module("dialeval.metrics.lexical_diversity")

TOKENIZERS = st.one_of(
    st.sampled_from(["tevet", "casual"]), st.sampled_from(["Tevet", "", "nltk"]), junk
)


# -- dialeval.text --------------------------------------------------------------------------------


@covers("tevet_tokenize", "casual_tokenize")
@given(value=any_response)
def test_tokenizers_return_nonempty_string_tokens(value):
    for tokenize in (text_module.tevet_tokenize, text_module.casual_tokenize):
        tokens = outcome(tokenize, value)
        if refused(tokens):
            assert not isinstance(value, str)
            continue
        assert isinstance(value, str), f"{tokenize.__name__} accepted {type(value).__name__}"
        assert isinstance(tokens, list) and all(
            isinstance(token, str) and token for token in tokens
        )
    if isinstance(value, str):
        assert text_module.tevet_tokenize(value) == [
            w for w in value.replace(".", "").replace("\n", "").split(" ") if w
        ]


@covers("casual_tokenize_many")
@given(
    texts=st.lists(text, max_size=8),
    workers=st.one_of(st.none(), st.just(1), st.integers(-1, 0), st.just(1.5)),
)
def test_casual_tokenize_many_equals_one_by_one(texts, workers):
    tokens = outcome(text_module.casual_tokenize_many, texts, num_workers=workers)
    if refused(tokens):
        assert workers is not None and (not isinstance(workers, int) or workers < 1)
        return
    assert tokens == [tuple(text_module.casual_tokenize(t)) for t in texts]


@covers("get_tokenizer")
@given(name=st.one_of(TOKENIZERS, st.just(str.split)))
def test_get_tokenizer_gives_a_callable_or_refuses(name):
    tokenizer = outcome(text_module.get_tokenizer, name)
    if refused(tokenizer):
        assert name not in ("tevet", "casual") and not callable(name)
    else:
        assert callable(tokenizer)


# -- dialeval.validation --------------------------------------------------------------------------


@covers("check_int")
@given(value=st.one_of(any_order, junk, st.integers()), minimum=st.integers(-2, 3))
def test_check_int(value, minimum):
    checked = outcome(validation.check_int, value, "x", minimum)
    if refused(checked):
        assert "`x`" in str(checked.error)
    else:
        assert (
            type(checked) is int
            and checked == value
            and checked >= minimum
            and not isinstance(value, bool)
        )


@covers("check_real")
@given(
    value=st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(-(10**400), 10**400),
        st.floats(-5, 5).map(np.float32),
        st.integers(-5, 5).map(np.int64),
        junk,
    ),
    bounds=st.tuples(st.floats(-3, 0), st.floats(0, 3)),
    open_bounds=st.tuples(st.booleans(), st.booleans()),
)
def test_check_real(value, bounds, open_bounds):
    minimum, maximum = bounds
    checked = outcome(validation.check_real, value, "x", minimum, maximum, open_bounds)
    if refused(checked):
        assert str(checked.error).startswith("`x` must be")
        return
    assert type(checked) is float and math.isfinite(checked) and not isinstance(value, bool)
    assert (checked > minimum if open_bounds[0] else checked >= minimum) and (
        checked < maximum if open_bounds[1] else checked <= maximum
    )


@covers("check_progress")
@given(value=st.one_of(st.none(), st.just(print), st.just(len), junk))
def test_check_progress(value):
    checked = outcome(validation.check_progress, value, "progress")
    if refused(checked):
        assert "`progress` must be a callable" in str(checked.error) and not callable(value)
    else:
        assert value is None or callable(value)


@covers("check_flag")
@given(value=st.one_of(any_flag, junk))
def test_check_flag(value):
    checked = outcome(validation.check_flag, value, "x")
    if refused(checked):
        assert "`x`" in str(checked.error) and type(value) is not bool
    else:
        assert type(value) is bool and checked is value


@covers("check_float_rows")
@given(
    value=st.one_of(
        st.lists(st.lists(st.floats(allow_nan=True), max_size=3), max_size=3),
        st.lists(st.floats(), max_size=3),
        junk,
        st.integers(),
    )
)
def test_check_float_rows(value):
    checked = outcome(validation.check_float_rows, value, "x")
    if refused(checked):
        assert "`x`" in str(checked.error)
    else:
        assert checked.ndim == 2 and checked.dtype in ("float32", "float64")


@covers(
    "check_response_set",
    "check_corpus",
    "check_response_sets",
    "split_scope",
    "check_module_predictions",
)
@given(value=any_response_sets, allow_empty=st.booleans(), min_size=st.integers(1, 3))
def test_validation_accepts_exactly_lists_of_strings(value, allow_empty, min_size):
    def valid_set(candidate, size):
        return (
            isinstance(candidate, (list, tuple))
            and len(candidate) >= size
            and all(isinstance(r, str) and (allow_empty or r.strip()) for r in candidate)
        )

    one = outcome(
        validation.check_response_set,
        value,
        "responses",
        min_size=min_size,
        allow_empty=allow_empty,
    )
    assert refused(one) != valid_set(value, min_size), one
    if not refused(one):
        assert one == list(value)
    else:
        assert "`responses" in str(one.error)
    corpus = outcome(validation.check_corpus, value, "responses", allow_empty=allow_empty)
    assert refused(corpus) != valid_set(value, 1)
    many = outcome(
        validation.check_response_sets,
        value,
        "predictions",
        min_size=min_size,
        allow_empty=allow_empty,
    )
    is_valid_sets = (
        isinstance(value, (list, tuple))
        and len(value) > 0
        and all(valid_set(s, min_size) for s in value)
    )
    assert refused(many) != is_valid_sets, many
    if refused(many):
        assert "`predictions" in str(many.error)
    scope = outcome(validation.split_scope, value)
    if not refused(scope):
        assert scope in ("sets", "corpus")
        assert scope == ("corpus" if all(isinstance(item, str) for item in value) else "sets")
    module_scope = outcome(validation.check_module_predictions, value)
    if not refused(module_scope):
        assert module_scope == scope


# -- set-level lexical metrics -----------------------------------------------------------------------


@covers("averaged_distinct_n", "ngram_cosine_diversity")
@given(responses=any_response_set, max_n=any_order, tokenizer=TOKENIZERS, allow_empty=any_flag)
def test_set_level_scores_refuse_or_lie_in_their_ranges(responses, max_n, tokenizer, allow_empty):
    distinct = outcome(
        lexical.averaged_distinct_n,
        responses,
        max_n=max_n,
        tokenizer=tokenizer,
        allow_empty=allow_empty,
    )
    if not refused(distinct):
        within(distinct, 0.0, 1.0, "averaged_distinct_n")
    cosine = outcome(
        lexical.ngram_cosine_diversity,
        responses,
        max_n=max_n,
        tokenizer=tokenizer,
        allow_empty=allow_empty,
    )
    if not refused(cosine):
        within(cosine, -1.0, 0.0, "ngram_cosine_diversity")


@covers("ngram_cosine_similarity")
@given(
    a=st.one_of(st.lists(st.sampled_from("abc"), max_size=6), junk, text),
    b=st.lists(st.sampled_from("abc"), max_size=6),
    n=any_order,
)
def test_ngram_cosine_similarity_is_a_cosine(a, b, n):
    similarity = outcome(lexical.ngram_cosine_similarity, a, b, n)
    if refused(similarity):
        return
    assert (
        isinstance(a, (list, tuple)) and isinstance(n, int) and not isinstance(n, bool) and n >= 1
    )
    within(similarity, 0.0, 1.0, "ngram_cosine_similarity")
    assert similarity == pytest.approx(lexical.ngram_cosine_similarity(b, a, n))


@covers("batch_set_lexical_diversity", "set_lexical_diversity")
@given(
    sets=response_sets(), max_n=st.integers(1, 5), tokenizer=st.sampled_from(["tevet", "casual"])
)
def test_batched_set_scores_equal_one_set_at_a_time(sets, max_n, tokenizer):
    batch = lexical.batch_set_lexical_diversity(sets, max_n=max_n, tokenizer=tokenizer)
    summary = lexical.set_lexical_diversity(sets, max_n=max_n, tokenizer=tokenizer)
    assert summary["num_sets"] == len(sets) == len(summary["per_set"])
    for index, responses in enumerate(sets):
        distinct = lexical.averaged_distinct_n(responses, max_n=max_n, tokenizer=tokenizer)
        cosine = lexical.ngram_cosine_diversity(responses, max_n=max_n, tokenizer=tokenizer)
        assert batch["averaged_distinct_n"][index] == pytest.approx(distinct, abs=1e-9)
        assert batch["ngram_cosine_diversity"][index] == pytest.approx(cosine, abs=1e-9)
        assert summary["per_set"][index]["averaged_distinct_n"] == pytest.approx(distinct, abs=1e-9)
        assert summary["per_set"][index]["ngram_cosine_diversity"] == pytest.approx(
            cosine, abs=1e-9
        )
    assert summary["averaged_distinct_n"] == pytest.approx(
        sum(batch["averaged_distinct_n"]) / len(sets)
    )


@covers("batch_set_lexical_diversity", "set_lexical_diversity", "lexical_diversity")
@given(sets=any_response_sets, max_n=any_order, allow_empty=any_flag)
def test_set_scope_functions_refuse_or_lie_in_their_ranges(sets, max_n, allow_empty):
    batch = outcome(lexical.batch_set_lexical_diversity, sets, max_n=max_n, allow_empty=allow_empty)
    summary = outcome(lexical.set_lexical_diversity, sets, max_n=max_n, allow_empty=allow_empty)
    assert refused(batch) == refused(summary), (batch, summary)
    if not refused(summary):
        within(summary["averaged_distinct_n"], 0, 1, "averaged_distinct_n")
        within(summary["ngram_cosine_diversity"], -1, 0, "ngram_cosine_diversity")
        for row in summary["per_set"]:
            within(row["averaged_distinct_n"], 0, 1)
            within(row["ngram_cosine_diversity"], -1, 0)
    either = outcome(lexical.lexical_diversity, sets, max_n=max_n, allow_empty=allow_empty)
    if not refused(either):
        assert either["scope"] in ("response_set", "corpus")
        for key, value in either.items():
            if key == "self_bleu" and value is None:
                assert either["num_responses"] == 1  # the card: None for a single response
            elif key.startswith(("distinct", "averaged_distinct", "lf", "self_bleu")):
                within(value, 0, 1, key)
            elif key.startswith("entropy"):
                assert finite(value, key) >= 0
            elif key == "ngram_cosine_diversity":
                within(value, -1, 0, key)


@covers("averaged_distinct_n", "ngram_cosine_diversity", "batch_set_lexical_diversity")
@given(huge=huge_text, other=nonblank_text, copies=st.integers(1, 3))
def test_huge_responses_are_scored(huge, other, copies):
    responses = [huge] * copies + [other]
    within(lexical.averaged_distinct_n(responses), 0, 1)
    within(lexical.ngram_cosine_diversity(responses), -1, 0)
    batch = lexical.batch_set_lexical_diversity([responses])
    assert batch["averaged_distinct_n"][0] == pytest.approx(lexical.averaged_distinct_n(responses))


# -- corpus lexical metrics ---------------------------------------------------------------------------


@covers("distinct_n", "entropy_n", "token_counts", "corpus_ngram_diversity")
@given(responses=any_response_set, n=any_order, tokenizer=TOKENIZERS, allow_empty=any_flag)
def test_corpus_scores_refuse_or_lie_in_their_ranges(responses, n, tokenizer, allow_empty):
    distinct = outcome(
        lexical.distinct_n, responses, n=n, tokenizer=tokenizer, allow_empty=allow_empty
    )
    if not refused(distinct):
        within(distinct, 0, 1, "distinct_n")
    entropy = outcome(
        lexical.entropy_n, responses, n=n, tokenizer=tokenizer, allow_empty=allow_empty
    )
    if not refused(entropy):
        assert finite(entropy, "entropy_n") >= 0
    assert refused(distinct) == refused(entropy)
    counts = outcome(lexical.token_counts, responses, tokenizer=tokenizer)
    if not refused(counts):
        assert isinstance(counts, Counter) and all(
            isinstance(c, int) and c > 0 for c in counts.values()
        )
        tokenize = text_module.get_tokenizer(tokenizer)
        assert sum(counts.values()) == sum(len(tokenize(r)) for r in responses)
    pooled = outcome(
        lexical.corpus_ngram_diversity,
        responses,
        max_n=n,
        tokenizer=tokenizer,
        allow_empty=allow_empty,
    )
    if not refused(pooled):
        assert not refused(distinct)
        for order in range(1, n + 1):
            within(pooled[f"distinct_{order}"], 0, 1)
            assert finite(pooled[f"entropy_{order}"]) >= 0
        assert pooled["distinct_1"] == pytest.approx(
            lexical.distinct_n(responses, 1, tokenizer, allow_empty)
        )
        assert pooled[f"entropy_{n}"] == pytest.approx(entropy)


@covers("lf")
@given(
    responses=any_response_set,
    reference=st.one_of(
        st.none(),
        any_response_set,
        st.dictionaries(
            st.one_of(st.sampled_from("abcde"), st.integers(0, 2)),
            st.one_of(st.integers(-1, 200), st.floats(), junk),
            max_size=4,
        ),
    ),
    threshold=st.one_of(any_order, st.integers(0, 200)),
    allow_empty=any_flag,
)
def test_lf_refuses_or_is_a_fraction(responses, reference, threshold, allow_empty):
    value = outcome(
        lexical.lf, responses, reference=reference, threshold=threshold, allow_empty=allow_empty
    )
    if not refused(value):
        within(value, 0, 1, "lf")
        # a {token: count} mapping: string tokens, finite counts >= 0
        if isinstance(reference, dict):
            assert all(isinstance(token, str) for token in reference), reference
            assert all(
                not isinstance(c, bool)
                and isinstance(c, (int, float))
                and math.isfinite(c)
                and c >= 0
                for c in reference.values()
            ), reference


@covers("self_bleu")
@given(responses=any_response_set, max_n=any_order, allow_empty=any_flag)
def test_self_bleu_refuses_or_is_a_fraction_and_its_mean_per_response(
    responses, max_n, allow_empty
):
    value = outcome(
        lexical.self_bleu, responses, max_n=max_n, allow_empty=allow_empty, return_per_response=True
    )
    if refused(value):
        return
    score, per_response = value
    within(score, 0, 1, "self_bleu")
    assert len(per_response) == len(responses)
    for each in per_response:
        within(each, 0, 1)
    assert score == pytest.approx(sum(per_response) / len(per_response))
    assert lexical.self_bleu(responses, max_n=max_n, allow_empty=allow_empty) == pytest.approx(
        score
    )


@covers("corpus_lexical_diversity")
@given(
    responses=any_response_set,
    max_n=any_order,
    threshold=any_order,
    reference=st.one_of(st.none(), any_response_set),
    allow_empty=any_flag,
)
def test_corpus_lexical_diversity_refuses_or_lies_in_its_ranges(
    responses, max_n, threshold, reference, allow_empty
):
    result = outcome(
        lexical.corpus_lexical_diversity,
        responses,
        max_n=max_n,
        lf_threshold=threshold,
        reference_corpus=reference,
        allow_empty=allow_empty,
    )
    if refused(result):
        return
    for key, value in result.items():
        if key == "self_bleu" and value is None:
            assert result["num_responses"] == 1  # the card: None for a single response
        elif key.startswith(("distinct", "lf", "self_bleu")):
            within(value, 0, 1, key)
        elif key.startswith("entropy"):
            assert finite(value, key) >= 0


# -- compression ratio ---------------------------------------------------------------------------------


@covers("compression_ratio", "compression_ratio_per_set", "compression_ratio_scores")
@given(
    sets=any_response_sets,
    algorithm=st.one_of(st.sampled_from(["gzip", "xz", "lzma", "zip"]), junk),
    allow_empty=any_flag,
)
def test_compression_ratio_refuses_or_is_positive_and_per_set_agrees(sets, algorithm, allow_empty):
    scores = outcome(
        compression.compression_ratio_scores, sets, algorithm=algorithm, allow_empty=allow_empty
    )
    if refused(scores):
        return
    assert finite(scores["compression_ratio"]) > 0
    if scores["scope"] == "corpus":
        assert scores["compression_ratio"] == compression.compression_ratio(
            sets, algorithm, allow_empty
        )
        return
    per_set = compression.compression_ratio_per_set(sets, algorithm, allow_empty)
    assert [row["compression_ratio"] for row in scores["per_set"]] == per_set
    assert per_set == [compression.compression_ratio(s, algorithm, allow_empty) for s in sets]
    assert scores["compression_ratio"] == pytest.approx(math.fsum(per_set) / len(per_set))


# -- EAD -----------------------------------------------------------------------------------------

ead = importlib.import_module("dialeval.metrics.expectation_adjusted_distinct")


@covers(
    "expectation_adjusted_distinct", "expectation_adjusted_distinct_scores", "expected_distinct"
)
@given(
    sets=any_response_sets,
    n=st.one_of(st.integers(1, 4), junk),
    vocab_size=st.one_of(st.integers(1, 10**6), junk),
    allow_empty=any_flag,
)
def test_ead_refuses_or_is_at_least_distinct_and_per_set_agrees(sets, n, vocab_size, allow_empty):
    scores = outcome(
        ead.expectation_adjusted_distinct_scores,
        sets,
        n=n,
        vocab_size=vocab_size,
        allow_empty=allow_empty,
    )
    if refused(scores):
        return
    rows = [scores] if scores["scope"] == "corpus" else scores["per_set"]
    for row in rows:
        within(row["distinct"], 0, 1, "distinct")
        # E(C) <= C, so EAD >= Distinct-n; both 0 without n-grams
        assert finite(row["ead"]) >= row["distinct"] * (1 - 1e-12)
        assert row["ead"] == 0.0 or row["num_ngrams"] > 0
        assert ead.expected_distinct(row["num_ngrams"], vocab_size, n) <= row["num_ngrams"] + 1e-9
    if scores["scope"] == "corpus":
        assert scores["ead"] == ead.expectation_adjusted_distinct(
            sets, n, vocab_size, allow_empty=allow_empty
        )
    else:
        assert [row["ead"] for row in rows] == [
            ead.expectation_adjusted_distinct(s, n, vocab_size, allow_empty=allow_empty)
            for s in sets
        ]
        assert scores["ead"] == pytest.approx(math.fsum(row["ead"] for row in rows) / len(rows))


# -- self-repetition ---------------------------------------------------------------------------------

self_repetition_package = importlib.import_module("dialeval.metrics.self_repetition")


@covers("self_repetition", "self_repetition_per_set", "self_repetition_scores")
@given(sets=any_response_sets, n=st.one_of(st.integers(1, 5), any_order), allow_empty=any_flag)
def test_self_repetition_refuses_or_lies_in_its_bound_and_per_set_agrees(sets, n, allow_empty):
    scores = outcome(
        self_repetition_package.self_repetition_scores, sets, n=n, allow_empty=allow_empty
    )
    if refused(scores):
        return
    texts = sets if scores["scope"] == "corpus" else [t for s in sets for t in s]
    # each distinct n-gram of a text is in at most len - 1 other texts (the card's bound)
    most = max(len(t.split()) for t in texts) * (len(texts) - 1)
    within(scores["self_repetition"], 0, math.log1p(most), "self_repetition")
    if scores["scope"] == "corpus":
        assert scores["self_repetition"] == self_repetition_package.self_repetition(
            sets, n, allow_empty
        )
        return
    per_set = self_repetition_package.self_repetition_per_set(sets, n, allow_empty)
    assert [row["self_repetition"] for row in scores["per_set"]] == per_set
    assert per_set == [self_repetition_package.self_repetition(s, n, allow_empty) for s in sets]
    assert scores["self_repetition"] == pytest.approx(math.fsum(per_set) / len(per_set))
