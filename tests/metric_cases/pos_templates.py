"""pos_templates's cases for the registry-wide suites (tests/metric_cases/__init__.py): the tests'
deterministic tagger and sentence splitter stand in for spaCy / NLTK."""

import math
from importlib import import_module

from pos_tagging_fixtures import lexicon_tagger, regex_sentence_splitter

from metric_cases import (
    BAD_TEXT,
    EMPTY_RESPONSE,
    EMPTY_RESPONSE_ERROR,
    ModuleEntry,
    predictions_strategy,
    sets_case,
)

TAGGING = {"tagger": lexicon_tagger, "sentence_splitter": regex_sentence_splitter}


def conformance(fixture):
    from dialeval.metrics.pos_templates import pos_template_scores

    return sets_case(
        options=dict(TAGGING),
        refused=EMPTY_RESPONSE,
        refused_error=EMPTY_RESPONSE_ERROR,
        wraps=pos_template_scores,
    )


def module_property():
    return ModuleEntry(
        predictions_strategy(),
        options=dict(TAGGING),
        ranges={"template_rate": (0, 1), "templates_per_token": (0, math.inf)},
    )


def lone_surrogate_calls(fixture, bad):
    # the subpackage, not its function of that name
    pos = import_module("dialeval.metrics.pos_templates")

    sets, corpus = [["a b", bad]], ["a b", bad]
    return {
        "template_rate": (lambda: pos.template_rate(corpus, **TAGGING), "texts[1]"),
        "templates_per_token": (lambda: pos.templates_per_token(corpus, **TAGGING), "texts[1]"),
        "extract_templates": (lambda: pos.extract_templates(corpus, **TAGGING), "texts[1]"),
        "pos_template_scores": (
            lambda: pos.pos_template_scores(sets, **TAGGING),
            "predictions[0][1]",
        ),
    }


LONE_SURROGATE_MODULE = ({"predictions": ["a b", BAD_TEXT]}, TAGGING, "predictions[1]")
