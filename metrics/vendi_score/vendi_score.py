"""evaluate module: Vendi Score (Friedman & Dieng 2023) of response sets or of a corpus.

A thin wrapper of :func:`dialeval.metrics.vendi_score.vendi.vendi_score`; see README.md (the metric
card).
"""

# One import per line: evaluate finds a module's dependencies with a per-line regex (and would
# read a trailing comment on an import line as an install URL), hence the file-level exemption.
# ruff: noqa: I001
import evaluate
from dialeval.metrics.vendi_score.vendi import DEFAULT_SENTENCE_MODEL
from dialeval.metrics.engines.evaluate_module import ResponsesMetric
from dialeval.metrics.vendi_score.vendi import vendi_score
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from dialeval.type_aliases import DeviceLike, SentenceEncoder, StrPath

_CITATION = """\
@article{friedman2023vendi,
  title = {The Vendi Score: A Diversity Evaluation Metric for Machine Learning},
  author = {Friedman, Dan and Dieng, Adji Bousso},
  journal = {Transactions on Machine Learning Research}, issn = {2835-8856}, year = {2023},
  url = {https://openreview.net/forum?id=g97OHbQyk1}}
@inproceedings{pasarkar2024cousins,
  title = {Cousins Of The Vendi Score: A Family Of Similarity-Based Diversity Metrics
           For Science And Machine Learning},
  author = {Pasarkar, Amey P. and Dieng, Adji Bousso},
  booktitle = {Proceedings of AISTATS 2024}, year = {2024}}
"""

_DESCRIPTION = """\
The Vendi Score is the exponential of the (Rényi) entropy of the eigenvalues of K / n, where K is
the n x n cosine-similarity kernel of the responses' sentence embeddings: the effective number of
distinct responses, from 1 (all the same) to n (all orthogonal). Other orders q use the Rényi
entropy of order q (Pasarkar & Dieng 2024). A list of response sets (one list
of responses per context) is scored per set and averaged over sets; a flat list of responses (a
whole generated corpus) gets one score. Each occurrence counts, so duplicates lower the score.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[list[str]] (response sets) or list[str] (a corpus).
    model: sentence-transformers id or local directory (default: the embedded
        "sentence-transformers/all-MiniLM-L6-v2", available offline).
    orders: orders q of the score, numbers >= 0 or "inf" (default (1,)).
    batch_size: encoder batch size (default 64).
    device: "cpu", "cuda", ... (default: the best available).
    dtype: None, "float32", "float16" or "bfloat16" (encoder weights; default None).
    scope: None (from the nesting), "response_set" or "corpus" ("corpus" pools all the sets).
    allow_empty: accept "" responses (embedded as the model embeds them) instead of raising (default False).
    backend: the model's runtime: "auto" (default: ONNX Runtime for an encoder or classifier on
        the CPU, else torch), "torch", "onnx" or "openvino"; float32, figures equal to 1e-5.
Returns:
    vendi_score (q = 1) and vendi_score_q{q} for the other orders (e.g. vendi_score_qinf,
    vendi_score_q0.5), scope, and num_sets and per_set (set scope; the scores are means over
    sets) or num_responses (corpus scope).
Examples:
    >>> import evaluate
    >>> vendi = evaluate.load("dialeval/vendi_score")
    >>> sets = [["same text", "same text", "same text"], ["I went hiking.", "I fixed the sink.", "We ate seafood."]]
    >>> [round(row["vendi_score"], 2) for row in vendi.compute(predictions=sets)["per_set"]]
    [1.0, 2.77]
"""  # noqa: E501


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class VendiScore(ResponsesMetric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=self.prediction_features(),
            reference_urls=[
                "https://openreview.net/forum?id=g97OHbQyk1",
                "https://github.com/vertaix/Vendi-Score",
            ],
        )

    def _compute(
        self,
        predictions: list[str] | list[list[str]],
        model: "StrPath | SentenceEncoder" = DEFAULT_SENTENCE_MODEL,
        orders: "float | str | Sequence[float | str]" = (1,),
        batch_size: int = 64,
        device: "DeviceLike" = None,
        dtype: str | None = None,
        scope: str | None = None,
        allow_empty: bool = False,
        backend: str | None = None,
    ) -> dict:
        return vendi_score(
            predictions,
            model=model,
            orders=orders,
            batch_size=batch_size,
            device=device,
            dtype=dtype,
            backend=backend,
            scope=scope,
            allow_empty=allow_empty,
        )


#: The evaluate module (evaluate.load finds it by its base class; named here for `make
#: lint-dead-code`).
__all__ = ["VendiScore"]
