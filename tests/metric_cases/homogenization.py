"""homogenization's cases for the registry-wide suites (tests/metric_cases/__init__.py)."""

from importlib import import_module

from metric_cases import (
    BAD_TEXT,
    ONE_RESPONSE,
    ONE_RESPONSE_ERROR,
    ModuleEntry,
    predictions_strategy,
    sets_case,
)


def conformance(fixture):
    from dialeval.metrics.homogenization import homogenization_score

    return sets_case(
        refused=ONE_RESPONSE, refused_error=ONE_RESPONSE_ERROR, wraps=homogenization_score
    )


def module_property():
    return ModuleEntry(predictions_strategy(), ranges={"homogenization": (0, 1)})


def lone_surrogate_calls(fixture, bad):
    # the subpackage, not its function of that name
    hom = import_module("dialeval.metrics.homogenization")

    sets, corpus = [["a b", bad]], ["a b", bad]
    return {
        "homogenization": (lambda: hom.homogenization(corpus), "texts[1]"),
        "homogenization_per_set": (lambda: hom.homogenization_per_set(sets), "response_sets[0][1]"),
        "homogenization_score": (
            lambda: hom.homogenization_score(
                sets, measure="bertscore", model=fixture("tiny_roberta_nli_path"), device="cpu"
            ),
            "predictions[0][1]",
        ),
    }


LONE_SURROGATE_MODULE = ({"predictions": [["a b", BAD_TEXT]]}, {}, "predictions[0][1]")
