"""A custom ``tokenizer=`` (a callable ``str -> list[str]``) whose output is not a list of
non-empty strings is refused, naming ``tokenizer`` and the text it was given as the user's
argument and index: a string would be counted as n-grams of characters, ints and
empty tokens as words, all silently."""
from __future__ import annotations

import inspect
import re
from importlib import import_module

import pytest

from dialeval.metrics import registry
from dialeval.text import CheckedTokenizer, get_tokenizer

TEXTS = ["a b c", "d e f", "g h"]


def returns_a_string(text):
    return text


def returns_ints(text):
    return [len(word) for word in text.split()]


def returns_empty_tokens(text):
    return text.split(" ") + [""]


def returns_none_for_the_last(text):
    return None if text == "g h" else text.split()


#: junk tokenizer -> (error type, what the message says)
JUNK = {
    returns_a_string: (TypeError, "returned str: 'a b c'"),
    returns_ints: (TypeError, "token 0 is int: 1"),
    returns_empty_tokens: (ValueError, "returned an empty token (position 3)"),
    returns_none_for_the_last: (TypeError, "returned NoneType"),
}


def _sets():
    return [TEXTS[:2], TEXTS[1:]]


#: Every public function that takes ``tokenizer=`` (found in the registry by its signature):
#: how to call it with the tokenizer, and the argument (with its index) a bad output of the
#: tokenizer on "a b c" (resp. "g h") must name.
CALLS = {
    "set_lexical_diversity": (lambda m, t: m.set_lexical_diversity(_sets(), tokenizer=t), "response_sets[0][0]", "response_sets[1][1]"),
    "lexical_diversity": (lambda m, t: m.lexical_diversity(_sets(), tokenizer=t), "predictions[0][0]", "predictions[1][1]"),
    "averaged_distinct_n": (lambda m, t: m.averaged_distinct_n(TEXTS, tokenizer=t), "responses[0]", "responses[2]"),
    "ngram_cosine_diversity": (lambda m, t: m.ngram_cosine_diversity(TEXTS, tokenizer=t), "responses[0]", "responses[2]"),
    "distinct_n": (lambda m, t: m.distinct_n(TEXTS, tokenizer=t), "responses[0]", "responses[2]"),
    "entropy_n": (lambda m, t: m.entropy_n(TEXTS, tokenizer=t), "responses[0]", "responses[2]"),
    "lf": (lambda m, t: m.lf(TEXTS, reference=["x y"], tokenizer=t), "responses[0]", "responses[2]"),
    "self_bleu": (lambda m, t: m.self_bleu(TEXTS, tokenizer=t), "responses[0]", "responses[2]"),
    "similarity_diversity": (lambda m, t: m.similarity_diversity(_sets(), "ngram_cosine", tokenizer=t), "responses[0]",
                             "responses[1]"),
    "similarity_matrices": (lambda m, t: m.similarity_matrices(_sets(), "ngram_cosine", tokenizer=t), "responses[0]",
                            "responses[1]"),
    "expectation_adjusted_distinct": (lambda m, t: m.expectation_adjusted_distinct(TEXTS, tokenizer=t), "responses[0]",
                                      "responses[2]"),
    "expectation_adjusted_distinct_scores": (lambda m, t: m.expectation_adjusted_distinct_scores(TEXTS, tokenizer=t),
                                             "responses[0]", "responses[2]"),
}


def _functions_taking_a_tokenizer():
    for metric in registry.METRICS:
        package = import_module(f"dialeval.metrics.{metric.name}")
        for name in metric.functions:
            try:
                parameters = inspect.signature(getattr(package, name)).parameters
            except (TypeError, ValueError):
                continue
            if "tokenizer" in parameters:
                yield metric.name, name


def test_every_registered_function_taking_a_tokenizer_has_a_case():
    found = {name for _, name in _functions_taking_a_tokenizer()}
    assert found <= set(CALLS), f"add {sorted(found - set(CALLS))} to CALLS"
    assert len(found) >= 9


@pytest.mark.parametrize("function", sorted(CALLS))
@pytest.mark.parametrize("junk", list(JUNK), ids=lambda junk: junk.__name__)
def test_a_tokenizer_giving_junk_is_refused_naming_tokenizer_and_the_text(function, junk):
    metric = next(metric for metric in registry.METRICS if function in metric.functions)
    package = import_module(f"dialeval.metrics.{metric.name}")
    call, first, last = CALLS[function]
    error_type, what = JUNK[junk]
    argument = last if junk is returns_none_for_the_last else first
    with pytest.raises(error_type, match=r"^`tokenizer` .*" + re.escape(f"`{argument}`") + ".*" if junk is not returns_a_string
                       else r"^`tokenizer` .*" + re.escape(f"`{argument}`")) as caught:
        call(package, junk)
    assert what in str(caught.value)


def test_a_well_behaved_tokenizer_gives_the_builtin_result_and_the_check_wraps_once():
    from dialeval.metrics.lexical_diversity import distinct_n

    assert distinct_n(TEXTS, tokenizer=str.split) == distinct_n(TEXTS, tokenizer=lambda text: tuple(text.split()))
    wrapped = get_tokenizer(str.split)
    assert isinstance(wrapped, CheckedTokenizer) and get_tokenizer(wrapped).tokenize is str.split
    assert wrapped("a b") == ["a", "b"]
    with pytest.raises(TypeError, match=r"for the text 'x' it returned str"):
        get_tokenizer(lambda text: text)("x")


def test_lf_names_the_reference_text_a_tokenizer_gives_junk_for():
    from dialeval.metrics.lexical_diversity import lf

    with pytest.raises(TypeError, match=re.escape("`tokenizer` must return a list of strings, but for `reference[2]` it returned NoneType")):
        lf(["x y"], reference=TEXTS, tokenizer=returns_none_for_the_last)
