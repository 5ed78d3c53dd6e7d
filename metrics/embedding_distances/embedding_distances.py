"""evaluate module: remote clique and chamfer distance (Cox et al. 2021) of response sets or of a
corpus.

A thin wrapper of :func:`dialeval.metrics.embedding_distances.distances.embedding_distances`; see
README.md (the metric card).
"""

# One import per line: evaluate finds a module's dependencies with a per-line regex (and would
# read a trailing comment on an import line as an install URL), hence the file-level exemption.
# ruff: noqa: I001
import evaluate
from dialeval.metrics.embedding_distances.distances import DEFAULT_SENTENCE_MODEL
from dialeval.metrics.embedding_distances.distances import embedding_distances
from dialeval.metrics.engines.evaluate_module import ResponsesMetric
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dialeval.type_aliases import DeviceLike, SentenceEncoder, StrPath

_CITATION = """\
@inproceedings{cox2021directed,
  title = {Directed Diversity: Leveraging Language Embedding Distances for Collective Creativity in Crowd Ideation},
  author = {Cox, Samuel Rhys and Wang, Yunlong and Abdul, Ashraf and von der Weth, Christian and Lim, Brian Y.},
  booktitle = {Proceedings of the 2021 CHI Conference on Human Factors in Computing Systems}, articleno = {393},
  year = {2021}, doi = {10.1145/3411764.3445782}}
@article{shaib-etal-2024-standardizing,
  title = "Standardizing the Measurement of Text Diversity: A Tool and a Comparative Analysis of Scores",
  author = "Shaib, Chantal and Barrow, Joe and Sun, Jiuding and Siu, Alexa F. and Wallace, Byron C. and Nenkova, Ani",
  journal = "arXiv preprint arXiv:2403.00553", year = "2024"}
"""  # noqa: E501

_DESCRIPTION = """\
Remote clique and chamfer distance of the responses' sentence embeddings (Cox et al. 2021, as the
`diversity` package computes them), with the cosine distance d = 1 - cos: remote clique is the
mean over responses of their mean distance to every response (d_ii = 0 included), chamfer
distance the mean over responses of the distance to the nearest other response. Higher = more
diverse. A list of response sets gets the figures per set and their means; a flat list of
responses (a corpus) gets one of each.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[list[str]] (response sets, at least 2 responses each) or list[str] (a corpus).
    model: sentence-transformers id or local directory (default: the embedded
        "sentence-transformers/all-MiniLM-L6-v2", available offline).
    batch_size: encoder batch size (default 64).
    device: "cpu", "cuda", ... (default: the best available).
    dtype: None, "float32", "float16" or "bfloat16" (encoder weights; default None).
    allow_empty: accept "" responses instead of raising (default False).
    backend: the model's runtime: "auto" (default: ONNX Runtime for an encoder or classifier on
        the CPU, else torch), "torch", "onnx" or "openvino"; float32, figures equal to 1e-5.
Returns:
    remote_clique and chamfer_distance (of the corpus, or means over sets), scope, and
    num_responses (corpus) or num_sets and per_set (response sets).
Examples:
    >>> import evaluate
    >>> distances = evaluate.load("dialeval/embedding_distances")
    >>> result = distances.compute(predictions=["same text", "same text", "same text"])
    >>> round(result["remote_clique"], 6), result["chamfer_distance"]
    (0.0, 0.0)
    >>> sets = [["I went hiking.", "I fixed the sink.", "We ate seafood."], ["Not much.", "Not much, you?"]]
    >>> [round(row["chamfer_distance"], 3) for row in distances.compute(predictions=sets)["per_set"]]
    [0.671, 0.306]
"""  # noqa: E501


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class EmbeddingDistances(ResponsesMetric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=self.prediction_features(),
            reference_urls=[
                "https://doi.org/10.1145/3411764.3445782",
                "https://github.com/cshaib/diversity",
            ],
        )

    def _compute(
        self,
        predictions: list[str] | list[list[str]],
        model: "StrPath | SentenceEncoder" = DEFAULT_SENTENCE_MODEL,
        batch_size: int = 64,
        device: "DeviceLike" = None,
        dtype: str | None = None,
        allow_empty: bool = False,
        backend: str | None = None,
    ) -> dict:
        return embedding_distances(
            predictions,
            model=model,
            batch_size=batch_size,
            device=device,
            dtype=dtype,
            backend=backend,
            allow_empty=allow_empty,
        )


#: The evaluate module (evaluate.load finds it by its base class; named here for `make
#: lint-dead-code`).
__all__ = ["EmbeddingDistances"]
