"""mtld's cases for the registry-wide suites (tests/metric_cases/__init__.py)."""

import math
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
    from dialeval.metrics.mtld import mtld_scores

    return sets_case(refused=EMPTY_RESPONSE, refused_error=EMPTY_RESPONSE_ERROR, wraps=mtld_scores)


def module_property():
    return ModuleEntry(predictions_strategy(), ranges={"mtld": (0, math.inf), "threshold": (0, 1)})


def lone_surrogate_calls(fixture, bad):
    # the subpackage, not its function of that name
    package = import_module("dialeval.metrics.mtld")

    sets, corpus = [["a b", bad]], ["a b", bad]
    return {
        "mtld": (lambda: package.mtld(corpus), "responses[1]"),
        "mtld_scores": (lambda: package.mtld_scores(sets), "predictions[0][1]"),
        "mtld_words": None,  # one text, not a user's list (the functions above check theirs first)
    }


LONE_SURROGATE_MODULE = ({"predictions": ["a b", BAD_TEXT]}, {}, "predictions[1]")

TOKENIZER_CALLS = {
    "mtld": (lambda m, t: m.mtld(TOKENIZER_TEXTS, tokenizer=t), "responses[0]", "responses[2]"),
    "mtld_scores": (
        lambda m, t: m.mtld_scores([TOKENIZER_TEXTS[:2], TOKENIZER_TEXTS[1:]], tokenizer=t),
        "predictions[0][0]",
        "predictions[1][1]",
    ),
}
