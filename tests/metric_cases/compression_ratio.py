"""compression_ratio's cases for the registry-wide suites (tests/metric_cases/__init__.py)."""

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
    from dialeval.metrics.compression_ratio import compression_ratio_scores

    return sets_case(
        refused=EMPTY_RESPONSE, refused_error=EMPTY_RESPONSE_ERROR, wraps=compression_ratio_scores
    )


def module_property():
    return ModuleEntry(predictions_strategy())


def lone_surrogate_calls(fixture, bad):
    # the subpackage, not its function of that name
    package = import_module("dialeval.metrics.compression_ratio")

    sets, corpus = [["a b", bad]], ["a b", bad]
    return {
        "compression_ratio": (lambda: package.compression_ratio(corpus), "texts[1]"),
        "compression_ratio_per_set": (
            lambda: package.compression_ratio_per_set(sets),
            "response_sets[0][1]",
        ),
    }


LONE_SURROGATE_MODULE = ({"predictions": ["a b", BAD_TEXT]}, {}, "predictions[1]")
