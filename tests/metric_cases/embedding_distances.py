"""embedding_distances's cases for the registry-wide suites (tests/metric_cases/__init__.py)."""

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
    from dialeval.metrics.embedding_distances.distances import embedding_distances

    return sets_case(
        options={"model": fixture("tiny_roberta_nli_path"), "device": "cpu"},
        refused=ONE_RESPONSE,
        refused_error=ONE_RESPONSE_ERROR,
        wraps=embedding_distances,
    )


def module_property():
    return ModuleEntry(
        predictions_strategy(corpus_min_size=2),
        options={"device": "cpu"},
        fixtures={"model": "tiny_roberta_nli_path"},
        divisor=5,
        ranges={"remote_clique": (0, 2), "chamfer_distance": (0, 2)},
    )


def lone_surrogate_calls(fixture, bad):
    # the subpackage, not its function of that name
    package = import_module("dialeval.metrics.embedding_distances")

    sets, corpus = [["a b", bad]], ["a b", bad]
    return {
        "embedding_distances": (
            lambda: package.embedding_distances(
                sets, fixture("tiny_roberta_nli_path"), device="cpu"
            ),
            "predictions[0][1]",
        ),
        "remote_clique": (
            lambda: package.remote_clique(corpus, fixture("tiny_roberta_nli_path"), device="cpu"),
            "texts[1]",
        ),
        "chamfer_distance": (
            lambda: package.chamfer_distance(
                corpus, fixture("tiny_roberta_nli_path"), device="cpu"
            ),
            "texts[1]",
        ),
        "remote_clique_from_embeddings": None,
        "chamfer_distance_from_embeddings": None,
    }


LONE_SURROGATE_MODULE = (
    {"predictions": ["a b", BAD_TEXT]},
    {"device": "cpu", "model": "tiny_roberta_nli_path"},
    "predictions[1]",
)
