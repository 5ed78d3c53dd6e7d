"""evaluate module: NLI Diversity of response sets (Stasaski & Hearst 2022, §3).

A thin wrapper of :func:`dialeval.metrics.nli_diversity.nli.nli_diversity`; see README.md (the
metric card).
"""

# One import per line: evaluate finds a module's dependencies with a per-line regex.
# ruff: noqa: I001
import evaluate
from dialeval.metrics.engines.evaluate_module import ResponsesMetric
from dialeval.metrics.nli_diversity.nli import DEFAULT_NLI_MODEL
from dialeval.metrics.nli_diversity.nli import nli_diversity
from dialeval.validation import check_response_sets
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dialeval.hub import ModelSource
    from dialeval.type_aliases import DeviceLike

_CITATION = """\
@inproceedings{stasaski-hearst-2022-semantic,
  title = "Semantic Diversity in Dialogue with Natural Language Inference",
  author = "Stasaski, Katherine and Hearst, Marti",
  booktitle = "Proceedings of NAACL 2022", year = "2022", pages = "85--98"}
"""

_DESCRIPTION = """\
NLI Diversity scores a set of responses to one context with an NLI model applied to all
n(n-1) ordered pairs of responses: Baseline (+1 contradiction / 0 neutral / -1 entailment),
Neutral (+1 / +1 / -1) and Confidence (+p(contradiction) / 0 / -p(entailment)) NLI Diversity,
and the class counts. Scores are sums over the pairs of one set; the module reports their mean
over sets and every set's figures.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[list[str]], one response set (>= 2 responses) per context.
    model: NLI classifier id or local directory (default "FacebookAI/roberta-large-mnli", the
        paper's "MNL"; "ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli" is "Combined").
    batch_size: ordered pairs per forward pass (default 32).
    device: e.g. "cpu", "cuda:0" (default: Accelerate's device for this process).
    dtype: None, "float32", "float16" or "bfloat16" (half precision is meant for GPUs).
    label_map: {"contradiction": i, "neutral": j, "entailment": k} for models whose
        config.id2label does not name the classes.
    max_pairs_per_chunk: ordered pairs scored at a time, across sets (default 16384; bounds memory).
    allow_empty: score "" as a response instead of raising (default False).
    backend: the model's runtime: "auto" (default: ONNX Runtime for an encoder or classifier on
        the CPU, else torch), "torch", "onnx" or "openvino"; float32, figures equal to 1e-5.
Returns:
    nli_diversity, nli_diversity_neutral, nli_diversity_confidence, num_contradiction,
    num_neutral, num_entailment: means over sets; per_set: one dict of those six per set;
    num_sets; num_pairs, num_unique_pairs (pairs scored once), num_truncated (pairs cut to the
    model's maximum length).
Examples:
    >>> import evaluate
    >>> nli = evaluate.load("dialeval/nli_diversity")
    >>> sets = [["I love cats.", "I hate cats.", "Cats are fine."], ["Yes.", "No."]]
    >>> result = nli.compute(predictions=sets)  # doctest: +SKIP
    >>> result["nli_diversity"], result["num_sets"]  # doctest: +SKIP
    (..., 2)

    Every set is checked on the gathered inputs before the model loads:

    >>> nli.compute(predictions=[["I love cats.", "I hate cats."], ["Only one."]])
    Traceback (most recent call last):
    dialeval.validation.ArgumentError: `predictions[1]` must hold at least 2 responses (the metric compares pairs), got 1
"""  # noqa: E501


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class NliDiversity(ResponsesMetric):
    scopes = ("sets",)

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=self.prediction_features(),
            reference_urls=["https://aclanthology.org/2022.naacl-main.6/"],
        )

    def _compute(
        self,
        predictions: list[list[str]],
        model: "ModelSource" = DEFAULT_NLI_MODEL,
        batch_size: int = 32,
        device: "DeviceLike" = None,
        dtype: str | None = None,
        label_map: dict[str, int] | None = None,
        max_pairs_per_chunk: int = 16384,
        allow_empty: bool = False,
        backend: str | None = None,
    ) -> dict:
        check_response_sets(predictions, "predictions", min_size=2, allow_empty=allow_empty)
        return nli_diversity(
            predictions,
            model=model,
            batch_size=batch_size,
            device=device,
            dtype=dtype,
            backend=backend,
            label_map=label_map,
            max_pairs_per_chunk=max_pairs_per_chunk,
            allow_empty=allow_empty,
        )


#: The evaluate module (evaluate.load finds it by its base class; named here for `make
#: lint-dead-code`).
__all__ = ["NliDiversity"]
