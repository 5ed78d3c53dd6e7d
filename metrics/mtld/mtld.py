"""evaluate module: MTLD, the measure of textual lexical diversity, of response sets or of a corpus.

A thin wrapper of :func:`dialeval.metrics.mtld.mtld_scores`; see README.md (the metric card).
"""

# One import per line: evaluate finds a module's dependencies with a per-line regex.
# ruff: noqa: I001
import evaluate
from dialeval.metrics.engines.evaluate_module import ResponsesMetric
from dialeval.metrics.mtld import DEFAULT_THRESHOLD
from dialeval.metrics.mtld import mtld_scores
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dialeval.type_aliases import WordTokenizer

_CITATION = """\
@article{mccarthy-jarvis-2010-mtld,
  title = "{MTLD}, vocd-{D}, and {HD-D}: A validation study of sophisticated approaches to lexical diversity assessment",
  author = "McCarthy, Philip M. and Jarvis, Scott",
  journal = "Behavior Research Methods", volume = "42", number = "2", pages = "381--392", year = "2010",
  doi = "10.3758/BRM.42.2.381"}
"""  # noqa: E501

_DESCRIPTION = """\
MTLD (McCarthy & Jarvis 2010): the mean length, in tokens, of a stretch of text that keeps its
type-token ratio above 0.72, averaged over a forward and a backward reading. It does not fall as a
text grows, as the TTR and Distinct-n do. A list of response sets gets one MTLD per set (its
responses read one after the other) and their mean; a flat list of responses (a corpus) gets one.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[list[str]] (response sets) or list[str] (a corpus).
    threshold: the factor TTR (default 0.72), strictly between 0 and 1.
    tokenizer: None (default: lexicalrichness's words: lower-cased, no digits, dashes or punctuation),
        "casual", "tevet" or a callable str -> list[str].
    allow_empty: accept "" responses instead of raising (default False).
Returns:
    mtld (the corpus value, or the mean over sets), threshold, scope, and num_tokens with
    num_responses (corpus) or num_sets and per_set (sets).
Examples:
    >>> import evaluate
    >>> mtld = evaluate.load("dialeval/mtld")
    >>> round(mtld.compute(predictions=["a b c a"])["mtld"], 4)
    4.48
    >>> result = mtld.compute(predictions=[["I like it.", "I like it a lot."], ["No way!", "Sure."]])
    >>> [round(row["mtld"], 4) for row in result["per_set"]]
    [8.0, 3.0]
"""  # noqa: E501


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Mtld(ResponsesMetric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=self.prediction_features(),
            reference_urls=[
                "https://doi.org/10.3758/BRM.42.2.381",
                "https://github.com/LSYS/LexicalRichness",
            ],
        )

    def _compute(
        self,
        predictions: list[str] | list[list[str]],
        threshold: float = DEFAULT_THRESHOLD,
        tokenizer: "str | WordTokenizer | None" = None,
        allow_empty: bool = False,
    ) -> dict:
        return mtld_scores(
            predictions, threshold=threshold, tokenizer=tokenizer, allow_empty=allow_empty
        )


#: The evaluate module (evaluate.load finds it by its base class; named here for `make
#: lint-dead-code`).
__all__ = ["Mtld"]
