"""Part-of-speech template rate and templates per token (Shaib et al. 2024, arXiv:2407.00211; the
``diversity`` package's ``template_rate`` / ``templates_per_token``).

Templates are a corpus's most frequent part-of-speech 5-grams; a text that reuses the words of one
of their spans is "templated". Higher = more templated (less diverse) text. The tagger is pluggable
(:mod:`.taggers`: spaCy ``en_core_web_sm`` or NLTK's perceptron by default, never downloaded here).

The evaluate module is ``pos_templates.py`` beside this file; its card is ``README.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
    from dialeval.metrics.pos_templates.taggers import (
        NLTKTagger,
        SpacyTagger,
        TaggerNotAvailableError,
        tagger_available,
    )
    from dialeval.metrics.pos_templates.templates import (
        SpanMatcher,
        check_templates,
        extract_templates,
        pos_template_scores,
        template_rate,
        templates_per_token,
    )
else:
    # each name is imported from its module on first use
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".taggers": (
                "NLTKTagger",
                "SpacyTagger",
                "TaggerNotAvailableError",
                "tagger_available",
            ),
            ".templates": (
                "SpanMatcher",
                "check_templates",
                "extract_templates",
                "pos_template_scores",
                "template_rate",
                "templates_per_token",
            ),
        },
    )

__all__ = [
    "NLTKTagger",
    "SpacyTagger",
    "SpanMatcher",
    "TaggerNotAvailableError",
    "check_templates",
    "extract_templates",
    "pos_template_scores",
    "tagger_available",
    "template_rate",
    "templates_per_token",
]
