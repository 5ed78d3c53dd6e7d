"""similarity_diversity's cases for the registry-wide suites (tests/metric_cases/__init__.py)."""

from importlib import import_module

from metric_cases import (
    BAD_TEXT,
    ONE_RESPONSE,
    ONE_RESPONSE_ERROR,
    TOKENIZER_TEXTS,
    ModuleEntry,
    sets_case,
    sets_strategy,
)


def conformance(fixture):
    from dialeval.metrics.similarity_diversity.similarity import similarity_diversity

    return sets_case(
        refused=ONE_RESPONSE, refused_error=ONE_RESPONSE_ERROR, wraps=similarity_diversity
    )


def module_property():
    return ModuleEntry(
        sets_strategy(),
        options={"device": "cpu"},
        fixtures={"model": "tiny_roberta_nli_path"},
        divisor=5,
        ranges={"similarity_diversity": (-1, 1)},
    )


def lone_surrogate_calls(fixture, bad):
    # the subpackage, not its function of that name
    sim = import_module("dialeval.metrics.similarity_diversity")

    sets = [["a b", bad]]
    return {
        "similarity_diversity": (
            lambda: sim.similarity_diversity(
                sets, "sent_bert", fixture("tiny_roberta_nli_path"), device="cpu"
            ),
            "response_sets[0][1]",
        ),
        "sent_bert_diversity": (
            lambda: sim.sent_bert_diversity(sets, fixture("tiny_roberta_nli_path"), device="cpu"),
            "response_sets[0][1]",
        ),
        "bertscore_diversity": (
            lambda: sim.bertscore_diversity(
                sets, fixture("tiny_roberta_nli_path"), rescale_with_baseline=False, device="cpu"
            ),
            "response_sets[0][1]",
        ),
        "similarity_matrices": (
            lambda: sim.similarity_matrices(
                sets, "cross_encoder", fixture("tiny_cross_encoder_path"), device="cpu"
            ),
            "response_sets[0][1]",
        ),
    }


LONE_SURROGATE_MODULE = (
    {"predictions": [["a b", BAD_TEXT]]},
    {"device": "cpu", "model": "tiny_roberta_nli_path"},
    "predictions[0][1]",
)


def _sets():
    return [TOKENIZER_TEXTS[:2], TOKENIZER_TEXTS[1:]]


TOKENIZER_CALLS = {
    "similarity_diversity": (
        lambda m, t: m.similarity_diversity(_sets(), "ngram_cosine", tokenizer=t),
        "responses[0]",
        "responses[1]",
    ),
    "similarity_matrices": (
        lambda m, t: m.similarity_matrices(_sets(), "ngram_cosine", tokenizer=t),
        "responses[0]",
        "responses[1]",
    ),
}
