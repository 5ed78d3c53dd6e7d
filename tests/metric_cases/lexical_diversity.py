"""lexical_diversity's cases for the registry-wide suites (tests/metric_cases/__init__.py)."""

from importlib import import_module

from metric_cases import (
    BAD_TEXT,
    ONE_RESPONSE,
    ONE_RESPONSE_ERROR,
    TOKENIZER_TEXTS,
    ModuleEntry,
    predictions_strategy,
    sets_case,
)


def conformance(fixture):
    from dialeval.metrics.lexical_diversity.by_scope import set_lexical_diversity

    return sets_case(
        refused=ONE_RESPONSE, refused_error=ONE_RESPONSE_ERROR, wraps=set_lexical_diversity
    )


def module_property():
    return ModuleEntry(
        predictions_strategy(),
        ranges={
            "averaged_distinct_n": (0, 1),
            "ngram_cosine_diversity": (-1, 0),
            "lf": (0, 1),
            "self_bleu": (0, 1),
        },
    )


def lone_surrogate_calls(fixture, bad):
    # the subpackage, not its function of that name
    lex = import_module("dialeval.metrics.lexical_diversity")

    sets, corpus = [["a b", bad]], ["a b", bad]
    return {
        "lexical_diversity": (lambda: lex.lexical_diversity(sets), "predictions[0][1]"),
        "set_lexical_diversity": (lambda: lex.set_lexical_diversity(sets), "response_sets[0][1]"),
        "corpus_lexical_diversity": (lambda: lex.corpus_lexical_diversity(corpus), "responses[1]"),
        "averaged_distinct_n": (lambda: lex.averaged_distinct_n(corpus), "responses[1]"),
        "ngram_cosine_diversity": (lambda: lex.ngram_cosine_diversity(corpus), "responses[1]"),
        "distinct_n": (lambda: lex.distinct_n(corpus), "responses[1]"),
        "entropy_n": (lambda: lex.entropy_n(corpus), "responses[1]"),
        "lf": (lambda: lex.lf(["a b"], reference=corpus), "reference[1]"),
        "self_bleu": (lambda: lex.self_bleu(corpus), "responses[1]"),
    }


LONE_SURROGATE_MODULE = ({"predictions": [["a b", BAD_TEXT]]}, {}, "predictions[0][1]")


def _sets():
    return [TOKENIZER_TEXTS[:2], TOKENIZER_TEXTS[1:]]


TOKENIZER_CALLS = {
    "set_lexical_diversity": (
        lambda m, t: m.set_lexical_diversity(_sets(), tokenizer=t),
        "response_sets[0][0]",
        "response_sets[1][1]",
    ),
    "lexical_diversity": (
        lambda m, t: m.lexical_diversity(_sets(), tokenizer=t),
        "predictions[0][0]",
        "predictions[1][1]",
    ),
    "averaged_distinct_n": (
        lambda m, t: m.averaged_distinct_n(TOKENIZER_TEXTS, tokenizer=t),
        "responses[0]",
        "responses[2]",
    ),
    "ngram_cosine_diversity": (
        lambda m, t: m.ngram_cosine_diversity(TOKENIZER_TEXTS, tokenizer=t),
        "responses[0]",
        "responses[2]",
    ),
    "distinct_n": (
        lambda m, t: m.distinct_n(TOKENIZER_TEXTS, tokenizer=t),
        "responses[0]",
        "responses[2]",
    ),
    "entropy_n": (
        lambda m, t: m.entropy_n(TOKENIZER_TEXTS, tokenizer=t),
        "responses[0]",
        "responses[2]",
    ),
    "lf": (
        lambda m, t: m.lf(TOKENIZER_TEXTS, reference=["x y"], tokenizer=t),
        "responses[0]",
        "responses[2]",
    ),
    "self_bleu": (
        lambda m, t: m.self_bleu(TOKENIZER_TEXTS, tokenizer=t),
        "responses[0]",
        "responses[2]",
    ),
}
