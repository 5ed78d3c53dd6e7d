"""evaluate module: EAD, expectation-adjusted distinct n-grams, of response sets or of a corpus.

A thin wrapper of
:func:`dialeval.metrics.expectation_adjusted_distinct.expectation_adjusted_distinct_scores`; see
README.md (the metric card).
"""

# One import per line: evaluate finds a module's dependencies with a per-line regex.
# ruff: noqa: I001
import evaluate
from dialeval.metrics.engines.evaluate_module import ResponsesMetric
from dialeval.metrics.expectation_adjusted_distinct import expectation_adjusted_distinct_scores
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dialeval.type_aliases import WordTokenizer

_CITATION = """\
@inproceedings{liu-etal-2022-rethinking,
  title = "Rethinking and Refining the Distinct Metric",
  author = "Liu, Siyang and Sabour, Sahand and Zheng, Yinhe and Ke, Pei and Zhu, Xiaoyan and Huang, Minlie",
  booktitle = "Proceedings of the 60th Annual Meeting of the Association for Computational Linguistics (Volume 2: Short Papers)",
  year = "2022", publisher = "Association for Computational Linguistics", url = "https://aclanthology.org/2022.acl-short.86"}
"""  # noqa: E501

_DESCRIPTION = """\
EAD (expectation-adjusted distinct, Liu et al. 2022): the number of distinct n-grams divided by the
number expected when as many n-grams are drawn uniformly from a vocabulary of V words,
V * (1 - ((V - 1) / V) ** C), instead of by their count C as Distinct-n does. Distinct-n falls as
outputs get longer even for random words; EAD does not. A list of response sets gets one EAD per
set and their mean; a flat list of responses (a corpus) gets one EAD.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[list[str]] (response sets) or list[str] (a corpus).
    n: the n-gram order (default 1, as the reference implementation).
    vocab_size: V, the generating model's vocabulary size (len(tokenizer)); required unless
        vocab_texts is given (no default, as the authors' code).
    vocab_texts: texts whose distinct tokens give V instead (the reference's dataForVocabCal).
    tokenizer: "casual" (default, as dialeval's Dist-n), "tevet" or a callable str -> list[str].
    allow_empty: accept "" responses instead of raising (default False).
Returns:
    ead (the corpus value, or the mean over sets), distinct (Distinct-n of the same tokens), n,
    vocab_size, scope, and num_responses with the counts (corpus) or num_sets and per_set (sets).
Examples:
    >>> import evaluate
    >>> ead = evaluate.load("dialeval/expectation_adjusted_distinct")
    >>> result = ead.compute(predictions=["a b a", "c"], vocab_size=4)
    >>> round(result["ead"], 4), result["distinct"]
    (1.0971, 0.75)
    >>> sets = [["I like it.", "I love it."], ["No way!", "Sure."]]
    >>> result = ead.compute(predictions=sets, vocab_size=30522)
    >>> [round(row["ead"], 4) for row in result["per_set"]]
    [0.6251, 1.0001]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ExpectationAdjustedDistinct(ResponsesMetric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=self.prediction_features(),
            reference_urls=[
                "https://aclanthology.org/2022.acl-short.86",
                "https://github.com/lsy641/Expectation-Adjusted-Distinct",
            ],
        )

    def _compute(
        self,
        predictions: list[str] | list[list[str]],
        n: int = 1,
        vocab_size: int | None = None,
        vocab_texts: list[str] | None = None,
        tokenizer: "str | WordTokenizer" = "casual",
        allow_empty: bool = False,
    ) -> dict:
        return expectation_adjusted_distinct_scores(
            predictions,
            n=n,
            vocab_size=vocab_size,
            vocab_texts=vocab_texts,
            tokenizer=tokenizer,
            allow_empty=allow_empty,
        )


#: The evaluate module (evaluate.load finds it by its base class; named here for `make
#: lint-dead-code`).
__all__ = ["ExpectationAdjustedDistinct"]
