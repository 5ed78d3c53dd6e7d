"""evaluate module: self-repetition score of response sets or of a corpus (higher = more
repetitive).

A thin wrapper of :func:`dialeval.metrics.self_repetition.self_repetition_scores`; see README.md
(the metric card).
"""

# One import per line: evaluate finds a module's dependencies with a per-line regex.
# ruff: noqa: I001
import evaluate
from dialeval.metrics.self_repetition import self_repetition_scores
from dialeval.metrics.engines.evaluate_module import ResponsesMetric

_CITATION = """\
@inproceedings{salkar-etal-2022-self,
  title = "Self-Repetition in Abstractive Neural Summarizers",
  author = "Salkar, Nikita and Trikalinos, Thomas and Wallace, Byron and Nenkova, Ani",
  booktitle = "Proceedings of the 2nd Conference of the Asia-Pacific Chapter of the Association for Computational
               Linguistics and the 12th International Joint Conference on Natural Language Processing (Volume 2: Short Papers)",
  year = "2022", pages = "341--350", url = "https://aclanthology.org/2022.aacl-short.42"}
@article{shaib-etal-2024-standardizing,
  title = "Standardizing the Measurement of Text Diversity: A Tool and a Comparative Analysis of Scores",
  author = "Shaib, Chantal and Barrow, Joe and Sun, Jiuding and Siu, Alexa F. and Wallace, Byron C. and Nenkova, Ani",
  journal = "arXiv preprint arXiv:2403.00553", year = "2024"}
"""  # noqa: E501

_DESCRIPTION = """\
Self-repetition score (Salkar et al. 2022, as the `diversity` package computes it): for each
response, the number of other responses that contain each of its distinct whitespace-token
n-grams (n = 4), summed; the score is the mean of log(1 + that sum). Responses that reuse each
other's phrases score high. A list of response sets gets one score per set (the other responses
are those of the same set) and their mean; a flat list of responses (a corpus) gets one score.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[list[str]] (response sets) or list[str] (a corpus).
    n: the n-gram order (default 4).
    allow_empty: accept "" responses instead of raising (default False); they add 0.
Returns:
    self_repetition (the corpus score, or the mean over sets), scope, n, and num_responses
    (corpus) or num_sets and per_set (response sets).
Examples:
    >>> import evaluate
    >>> repetition = evaluate.load("dialeval/self_repetition")
    >>> round(repetition.compute(predictions=["I do not know that", "I do not know that", "no idea"])["self_repetition"], 4)
    0.7324
    >>> repetition.compute(predictions=[["I went hiking today.", "We ate seafood on the coast."]])["per_set"]
    [{'self_repetition': 0.0}]
"""  # noqa: E501


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SelfRepetition(ResponsesMetric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=self.prediction_features(),
            reference_urls=[
                "https://aclanthology.org/2022.aacl-short.42",
                "https://github.com/cshaib/diversity",
            ],
        )

    def _compute(
        self,
        predictions: list[str] | list[list[str]],
        n: int = 4,
        allow_empty: bool = False,
    ) -> dict:
        return self_repetition_scores(predictions, n=n, allow_empty=allow_empty)


#: The evaluate module (evaluate.load finds it by its base class; named here for `make
#: lint-dead-code`).
__all__ = ["SelfRepetition"]
