"""evaluate module: part-of-speech template rate and templates per token (higher = more templated).

A thin wrapper of :func:`dialeval.metrics.pos_templates.pos_template_scores`; see README.md (the
metric card).
"""

# One import per line: evaluate finds a module's dependencies with a per-line regex.
# ruff: noqa: I001
import evaluate
from dialeval.metrics.pos_templates import pos_template_scores
from dialeval.metrics.engines.evaluate_module import ResponsesMetric
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from dialeval.metrics.pos_templates.taggers import SentenceSplitter, Tagger

_CITATION = """\
@article{shaib-etal-2024-templates,
  title = "Detection and Measurement of Syntactic Templates in Generated Text",
  author = "Shaib, Chantal and Elazar, Yanai and Li, Junyi Jessy and Wallace, Byron C.",
  journal = "arXiv preprint arXiv:2407.00211", year = "2024"}
"""

_DESCRIPTION = """\
Part-of-speech templates (Shaib et al. 2024, the `diversity` package's template_rate and
templates_per_token): the 100 most frequent part-of-speech 5-grams of the texts are templates; the
template rate is the fraction of texts containing the words of any span tagged with one, templates
per token the positions where such a span starts over the text's words, averaged. A list of
response sets gets each set's own templates and figures and their means; a flat list (a corpus)
gets one extraction. Needs a tagger: spaCy's en_core_web_sm or NLTK's data (see the card).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[list[str]] (response sets) or list[str] (a corpus).
    n: the n-gram length of a template (default 5).
    top_n: how many of the most frequent tag n-grams are templates (default 100).
    templates: {pattern: spans} to score against instead of extracting them (extract_templates' output).
    tagger: callable, sentences -> lists of (token, tag); default spaCy en_core_web_sm, else NLTK.
    sentence_splitter: callable, text -> sentences; default NLTK's punkt.
    allow_empty: accept "" responses instead of raising (default False).
Returns:
    template_rate and templates_per_token (of the corpus, or means over sets), scope, and
    num_templates, num_template_spans, num_responses, templates_per_token_scores (corpus) or
    num_sets and per_set (response sets).
Examples:
    >>> import evaluate
    >>> templates = evaluate.load("dialeval/pos_templates")
    >>> result = templates.compute(predictions=["I think it is a good idea.", "I think it is a bad plan."])  # doctest: +SKIP
    >>> spans = {"PRP VBP PRP VBZ DT": ["I think it is a"]}
    >>> result = templates.compute(predictions=["I think it is a good idea.", "No."], templates=spans)
    >>> result["template_rate"], round(result["templates_per_token"], 4)
    (0.5, 0.0714)
"""  # noqa: E501


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class PosTemplates(ResponsesMetric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=self.prediction_features(),
            reference_urls=[
                "https://github.com/cshaib/diversity",
                "https://arxiv.org/abs/2407.00211",
            ],
        )

    def _compute(
        self,
        predictions: list[str] | list[list[str]],
        n: int = 5,
        top_n: int = 100,
        templates: "Mapping | None" = None,
        tagger: "Tagger | None" = None,
        sentence_splitter: "SentenceSplitter | None" = None,
        allow_empty: bool = False,
    ) -> dict:
        return pos_template_scores(
            predictions,
            templates=templates,
            n=n,
            top_n=top_n,
            tagger=tagger,
            sentence_splitter=sentence_splitter,
            allow_empty=allow_empty,
        )


#: The evaluate module (evaluate.load finds it by its base class; named here for `make
#: lint-dead-code`).
__all__ = ["PosTemplates"]
