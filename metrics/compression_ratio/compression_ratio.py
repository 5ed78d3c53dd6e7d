"""evaluate module: compression ratio of response sets or of a corpus (higher = more repetitive).

A thin wrapper of :func:`dialeval.metrics.compression_ratio.compression_ratio_scores`; see
README.md (the metric card).
"""

# One import per line: evaluate finds a module's dependencies with a per-line regex.

import evaluate

from dialeval.metrics.compression_ratio import compression_ratio_scores
from dialeval.metrics.engines.evaluate_module import ResponsesMetric

_CITATION = """\
@article{shaib-etal-2024-standardizing,
  title = "Standardizing the Measurement of Text Diversity: A Tool and a Comparative Analysis of Scores",
  author = "Shaib, Chantal and Barrow, Joe and Sun, Jiuding and Siu, Alexa F. and Wallace, Byron C. and Nenkova, Ani",
  journal = "arXiv preprint arXiv:2403.00553", year = "2024"}
"""  # noqa: E501

_DESCRIPTION = """\
Compression ratio: the UTF-8 size of the responses joined by spaces divided by their gzip (or xz)
compressed size. Repeated words and templates compress well, so a homogeneous set or corpus scores
high and a diverse one low. A list of response sets gets one ratio per set and their mean; a flat
list of responses (a corpus) gets one ratio.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[list[str]] (response sets) or list[str] (a corpus).
    algorithm: "gzip" (default) or "xz".
    allow_empty: accept "" responses instead of raising (default False).
Returns:
    compression_ratio (the corpus ratio, or the mean over sets), scope, algorithm, and
    num_responses (corpus) or num_sets and per_set (response sets).
Examples:
    >>> import evaluate
    >>> ratio = evaluate.load("dialeval/compression_ratio")
    >>> round(ratio.compute(predictions=["I don't know."] * 50)["compression_ratio"], 2)
    17.05
    >>> round(ratio.compute(predictions=[["I went hiking.", "We ate seafood on the coast."]])["compression_ratio"], 3)
    0.683
"""  # noqa: E501


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class CompressionRatio(ResponsesMetric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=self.prediction_features(),
            reference_urls=[
                "https://github.com/cshaib/diversity",
                "https://arxiv.org/abs/2403.00553",
            ],
        )

    def _compute(
        self,
        predictions: list[str] | list[list[str]],
        algorithm: str = "gzip",
        allow_empty: bool = False,
    ) -> dict:
        return compression_ratio_scores(predictions, algorithm=algorithm, allow_empty=allow_empty)


#: The evaluate module (evaluate.load finds it by its base class; named here for `make
#: lint-dead-code`).
__all__ = ["CompressionRatio"]
