"""evaluate module: homogenization score of response sets or of a corpus (higher = more
homogeneous).

A thin wrapper of :func:`dialeval.metrics.homogenization.homogenization_score`; see README.md
(the metric card).
"""

# One import per line: evaluate finds a module's dependencies with a per-line regex.
# ruff: noqa: I001
import evaluate
from dialeval.metrics.homogenization import homogenization_score
from dialeval.metrics.engines.evaluate_module import ResponsesMetric
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dialeval.type_aliases import DeviceLike

_CITATION = """\
@article{shaib-etal-2024-standardizing,
  title = "Standardizing the Measurement of Text Diversity: A Tool and a Comparative Analysis of Scores",
  author = "Shaib, Chantal and Barrow, Joe and Sun, Jiuding and Siu, Alexa F. and Wallace, Byron C. and Nenkova, Ani",
  journal = "arXiv preprint arXiv:2403.00553", year = "2024"}
@article{padmakumar-he-2023-homogenization,
  title = "Does Writing with Language Models Reduce Content Diversity?",
  author = "Padmakumar, Vishakh and He, He",
  journal = "arXiv preprint arXiv:2309.05196", year = "2023"}
"""  # noqa: E501

_DESCRIPTION = """\
Homogenization score: the mean, over every text, of the mean similarity of each other text to it
(ROUGE-L F-measure, BLEU-4 or BERTScore F1), as the `diversity` package computes it, in [0, 1];
higher means more homogeneous (less diverse). A list of response sets gets one score per set and
their mean; a flat list of responses (a corpus) gets one score.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[list[str]] (response sets of at least 2) or list[str] (a corpus of at least 2).
    measure: "rougel" (default), "bleu" or "bertscore".
    use_stemmer: Porter-stem ROUGE-L's tokens (default False, as the package).
    model: BERTScore's encoder (default "microsoft/deberta-base-mnli", the package's).
    num_layers: BERTScore's layer (default: bert_score's choice, 9 for deberta-base-mnli).
    batch_size, device, dtype: BERTScore's encoder settings (64, Accelerate's device, float32).
    workers: threads of the ROUGE-L scorer (default 1; -1: one per CPU).
    allow_empty: accept "" responses instead of raising (default False).
    backend: the model's runtime: "auto" (default: ONNX Runtime for an encoder or classifier on
        the CPU, else torch), "torch", "onnx" or "openvino"; float32, figures equal to 1e-5.
Returns:
    homogenization (the corpus score, or the mean over sets), scope, measure, model (BERTScore),
    and num_responses (corpus) or num_sets and per_set (response sets).
Examples:
    >>> import evaluate
    >>> homogenization = evaluate.load("dialeval/homogenization")
    >>> round(homogenization.compute(predictions=["the cat sat", "the cat ran", "a dog ran"])["homogenization"], 3)
    0.333
    >>> result = homogenization.compute(predictions=[["I like tea.", "I like tea a lot."], ["Yes.", "No."]])
    >>> [round(row["homogenization"], 3) for row in result["per_set"]]
    [0.75, 0.0]
    >>> round(homogenization.compute(predictions=["the cat sat on the mat", "the cat sat on a mat"], measure="bleu")["homogenization"], 4)
    0.5373
"""  # noqa: E501


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Homogenization(ResponsesMetric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=self.prediction_features(),
            reference_urls=[
                "https://github.com/cshaib/diversity",
                "https://arxiv.org/abs/2309.05196",
            ],
        )

    def _compute(
        self,
        predictions: list[str] | list[list[str]],
        measure: str = "rougel",
        use_stemmer: bool = False,
        model: str | None = None,
        num_layers: int | None = None,
        batch_size: int = 64,
        device: "DeviceLike" = None,
        dtype: str | None = None,
        workers: int = 1,
        allow_empty: bool = False,
        backend: str | None = None,
    ) -> dict:
        return homogenization_score(
            predictions,
            measure=measure,
            use_stemmer=use_stemmer,
            model=model,
            num_layers=num_layers,
            batch_size=batch_size,
            device=device,
            dtype=dtype,
            backend=backend,
            workers=workers,
            allow_empty=allow_empty,
        )


#: The evaluate module (evaluate.load finds it by its base class; named here for `make
#: lint-dead-code`).
__all__ = ["Homogenization"]
