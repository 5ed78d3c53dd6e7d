"""nli_diversity's cases for the registry-wide suites (tests/metric_cases/__init__.py)."""

from importlib import import_module

from metric_cases import (
    BAD_TEXT,
    ONE_RESPONSE,
    ONE_RESPONSE_ERROR,
    ModuleEntry,
    sets_case,
    sets_strategy,
)


def conformance(fixture):
    from dialeval.metrics.nli_diversity.nli import nli_diversity

    return sets_case(
        options={"model": fixture("tiny_roberta_nli_path"), "device": "cpu"},
        refused=ONE_RESPONSE,
        refused_error=ONE_RESPONSE_ERROR,
        wraps=nli_diversity,
    )


def module_property():
    return ModuleEntry(
        sets_strategy(),
        options={"device": "cpu"},
        fixtures={"model": "tiny_roberta_nli_path"},
        divisor=5,
    )


def lone_surrogate_calls(fixture, bad):
    # the subpackage, not its function of that name
    nli = import_module("dialeval.metrics.nli_diversity")

    sets = [["a b", bad]]
    return {
        "nli_diversity": (
            lambda: nli.nli_diversity(sets, fixture("tiny_roberta_nli_path"), device="cpu"),
            "response_sets[0][1]",
        ),
        "nli_pair_matrices": (
            lambda: nli.nli_pair_matrices(
                sets, model=fixture("tiny_roberta_nli_path"), device="cpu"
            ),
            "response_sets[0][1]",
        ),
        "iter_nli_pair_matrices": (
            lambda: list(
                nli.iter_nli_pair_matrices(
                    sets, nli.NLIScorer(fixture("tiny_roberta_nli_path"), device="cpu")
                )
            ),
            "response_sets[0][1]",
        ),
    }


LONE_SURROGATE_MODULE = (
    {"predictions": [["a b", BAD_TEXT]]},
    {"device": "cpu", "model": "tiny_roberta_nli_path"},
    "predictions[0][1]",
)
