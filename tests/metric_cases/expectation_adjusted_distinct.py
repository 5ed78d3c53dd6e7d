"""expectation_adjusted_distinct's cases for the registry-wide suites (tests/metric_cases/__init__.py)."""

from importlib import import_module

from metric_cases import (
    BAD_TEXT,
    EMPTY_RESPONSE,
    EMPTY_RESPONSE_ERROR,
    TOKENIZER_TEXTS,
    ModuleEntry,
    predictions_strategy,
    sets_case,
)


def conformance(fixture):
    from dialeval.metrics.expectation_adjusted_distinct import expectation_adjusted_distinct_scores

    return sets_case(
        options={"vocab_size": 50257},
        refused=EMPTY_RESPONSE,
        refused_error=EMPTY_RESPONSE_ERROR,
        wraps=expectation_adjusted_distinct_scores,
    )


def module_property():
    return ModuleEntry(predictions_strategy(), options={"vocab_size": 50257})


def lone_surrogate_calls(fixture, bad):
    # the subpackage, not its function of that name
    ead = import_module("dialeval.metrics.expectation_adjusted_distinct")

    sets, corpus = [["a b", bad]], ["a b", bad]
    return {
        "expectation_adjusted_distinct": (
            lambda: ead.expectation_adjusted_distinct(["a b"], vocab_size=None, vocab_texts=corpus),
            "vocab_texts[1]",
        ),
        "expectation_adjusted_distinct_scores": (
            lambda: ead.expectation_adjusted_distinct_scores(sets, vocab_size=9),
            "predictions[0][1]",
        ),
        "expected_distinct": None,
    }


LONE_SURROGATE_MODULE = ({"predictions": ["a b", BAD_TEXT]}, {"vocab_size": 9}, "predictions[1]")

TOKENIZER_CALLS = {
    "expectation_adjusted_distinct": (
        lambda m, t: m.expectation_adjusted_distinct(TOKENIZER_TEXTS, vocab_size=9, tokenizer=t),
        "responses[0]",
        "responses[2]",
    ),
    "expectation_adjusted_distinct_scores": (
        lambda m, t: m.expectation_adjusted_distinct_scores(
            TOKENIZER_TEXTS, vocab_size=9, tokenizer=t
        ),
        "responses[0]",
        "responses[2]",
    ),
}
