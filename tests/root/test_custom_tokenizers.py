"""A custom ``tokenizer=`` (a callable ``str -> list[str]``) whose output is not a list of
non-empty strings is refused, naming ``tokenizer`` and the text it was given as the user's
argument and index: a string would be counted as n-grams of characters, ints and
empty tokens as words, all silently."""

from __future__ import annotations

import inspect
import re
from importlib import import_module

import pytest
from metric_cases import TOKENIZER_TEXTS as TEXTS
from metric_cases import cases_of

from dialeval.metrics import registry
from dialeval.text import CheckedTokenizer, get_tokenizer


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


#: Every public function that takes ``tokenizer=`` (found in the registry by its signature): how
#: to call it with the tokenizer, and the argument (with its index) a bad output of the tokenizer
#: on "a b c" (resp. "g h") must name, from its metric's tests/metric_cases/<name>.py (``TOKENIZER_CALLS``).
CALLS = {
    function: call
    for metric in registry.METRICS
    for function, call in getattr(cases_of(metric.name), "TOKENIZER_CALLS", {}).items()
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
    with pytest.raises(
        error_type,
        match=r"^`tokenizer` .*" + re.escape(f"`{argument}`") + ".*"
        if junk is not returns_a_string
        else r"^`tokenizer` .*" + re.escape(f"`{argument}`"),
    ) as caught:
        call(package, junk)
    assert what in str(caught.value)


def test_a_well_behaved_tokenizer_gives_the_builtin_result_and_the_check_wraps_once():
    from dialeval.metrics.lexical_diversity import distinct_n

    assert distinct_n(TEXTS, tokenizer=str.split) == distinct_n(
        TEXTS, tokenizer=lambda text: tuple(text.split())
    )
    wrapped = get_tokenizer(str.split)
    assert isinstance(wrapped, CheckedTokenizer) and get_tokenizer(wrapped).tokenize is str.split
    assert wrapped("a b") == ["a", "b"]
    with pytest.raises(TypeError, match=r"for the text 'x' it returned str"):
        get_tokenizer(lambda text: text)("x")


def test_lf_names_the_reference_text_a_tokenizer_gives_junk_for():
    from dialeval.metrics.lexical_diversity import lf

    with pytest.raises(
        TypeError,
        match=re.escape(
            "`tokenizer` must return a list of strings, but for `reference[2]` it returned NoneType"
        ),
    ):
        lf(["x y"], reference=TEXTS, tokenizer=returns_none_for_the_last)
