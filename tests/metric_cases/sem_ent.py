"""sem_ent's cases for the registry-wide suites (tests/metric_cases/__init__.py)."""

from importlib import import_module

from metric_cases import BAD_TEXT, CORPUS, Case, ModuleEntry


def conformance(fixture):
    from dialeval.metrics.sem_ent.clusters import SemanticClusters

    return Case(
        inputs={"predictions": ["Pizza again?", "More rain today.", "Sushi!", "A storm."]},
        options={"references": CORPUS, "num_clusters": 2},
        bad_batch={"predictions": ["fine", ["nested"]]},
        bad_batch_error=r"`predictions\[1\]` must be a string: `predictions` is a flat list",
        bad_add_error="`prediction` must be a string",
        refused={"predictions": ["fine"]},
        refused_options={"num_clusters": 2},
        refused_error="`references` is required",
        wraps=SemanticClusters.fit,
        # the module's `embedder` names the kind to load; fit's is the loaded embedder
        own_meaning=("embedder",),
    )


def module_property():
    from hypothesis import strategies as st
    from property_support import nonblank_text

    # clusters fitted once on the tiny encoder (tiny_clusters_dir; fitting per compute is the conformance test's)
    return ModuleEntry(
        st.lists(nonblank_text, min_size=1, max_size=5).map(lambda p: {"predictions": p}),
        options={"device": "cpu"},
        fixtures={"clusters": "tiny_clusters_dir"},
        divisor=5,
    )


def _clusters(nli):
    from dialeval.metrics.engines.embedders import load_embedder
    from dialeval.metrics.sem_ent import SemanticClusters

    embedder = load_embedder("mean_pooling", nli, max_length=64, device="cpu")
    return SemanticClusters.fit(["a b", "c d", "e f", "g h"], embedder, num_clusters=2, n_init=1)


def lone_surrogate_calls(fixture, bad):
    # the subpackage, not its function of that name
    package = import_module("dialeval.metrics.sem_ent")

    corpus = ["a b", bad]
    return {
        "sem_ent": (
            lambda: package.sem_ent(corpus, _clusters(fixture("tiny_roberta_nli_path"))),
            "texts[1]",
        ),
        "SemanticClusters": (
            lambda: package.SemanticClusters.fit(
                ["a b", "c d", bad],
                import_module("dialeval.metrics.engines.embedders").load_embedder(
                    "mean_pooling", fixture("tiny_roberta_nli_path"), device="cpu"
                ),
                num_clusters=2,
            ),
            "reference_texts[2]",
        ),
    }


LONE_SURROGATE_MODULE = (
    {"predictions": ["a b", BAD_TEXT]},
    {
        "device": "cpu",
        "embedder": "mean_pooling",
        "embedder_model": "tiny_roberta_nli_path",
        "references": ["a b", "c d", "e f"],
        "num_clusters": 2,
        "n_init": 1,
    },
    "predictions[1]",
)
