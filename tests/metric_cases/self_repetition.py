"""self_repetition's cases for the registry-wide suites (tests/metric_cases/__init__.py)."""

import math
from importlib import import_module

from metric_cases import (
    BAD_TEXT,
    EMPTY_RESPONSE,
    EMPTY_RESPONSE_ERROR,
    ModuleEntry,
    predictions_strategy,
    sets_case,
)


def conformance(fixture):
    from dialeval.metrics.self_repetition import self_repetition_scores

    return sets_case(
        refused=EMPTY_RESPONSE, refused_error=EMPTY_RESPONSE_ERROR, wraps=self_repetition_scores
    )


def module_property():
    return ModuleEntry(predictions_strategy(), ranges={"self_repetition": (0, math.inf)})


def lone_surrogate_calls(fixture, bad):
    # the subpackage, not its function of that name
    package = import_module("dialeval.metrics.self_repetition")

    sets, corpus = [["a b", bad]], ["a b", bad]
    return {
        "self_repetition": (lambda: package.self_repetition(corpus), "texts[1]"),
        "self_repetition_per_set": (
            lambda: package.self_repetition_per_set(sets),
            "response_sets[0][1]",
        ),
        "self_repetition_scores": (
            lambda: package.self_repetition_scores(sets),
            "predictions[0][1]",
        ),
    }


LONE_SURROGATE_MODULE = ({"predictions": ["a b", BAD_TEXT]}, {}, "predictions[1]")
