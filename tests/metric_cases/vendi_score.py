"""vendi_score's cases for the registry-wide suites (tests/metric_cases/__init__.py)."""

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
    from dialeval.metrics.vendi_score.vendi import vendi_score

    return sets_case(refused=EMPTY_RESPONSE, refused_error=EMPTY_RESPONSE_ERROR, wraps=vendi_score)


def module_property():
    return ModuleEntry(
        predictions_strategy(),
        options={"device": "cpu"},
        fixtures={"model": "tiny_roberta_nli_path"},
        divisor=5,
    )


def lone_surrogate_calls(fixture, bad):
    # the subpackage, not its function of that name
    package = import_module("dialeval.metrics.vendi_score")

    corpus = ["a b", bad]
    return {
        "vendi_score": (
            lambda: package.vendi_score(corpus, fixture("tiny_roberta_nli_path"), device="cpu"),
            "predictions[1]",
        ),
        "vendi_score_from_embeddings": None,
        "vendi_score_from_kernel": None,
    }


LONE_SURROGATE_MODULE = (
    {"predictions": ["a b", BAD_TEXT]},
    {"device": "cpu", "model": "tiny_roberta_nli_path"},
    "predictions[1]",
)
