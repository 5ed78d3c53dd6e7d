"""evaluate module: evaluating a generation system via response selection (Sato et al. 2020,
§4.1.2).

A thin wrapper of :func:`dialeval.metrics.response_selection.selection.response_selection`; see
README.md (the metric card).
"""

# One import per line: evaluate finds a module's dependencies with a per-line regex.
# ruff: noqa: I001
import datasets
import evaluate
from dialeval.metrics.engines.evaluate_module import DialevalMetric
from dialeval.metrics.engines.lm_scorer import DEFAULT_BATCH_SIZE
from dialeval.metrics.engines.lm_scorer import check_questions
from dialeval.metrics.response_selection.selection import TIE_RTOL
from dialeval.metrics.response_selection.selection import response_selection
from dialeval.validation import ArgumentError
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dialeval.hub import ModelSource
    from dialeval.type_aliases import DeviceLike

_CITATION = """\
@inproceedings{sato-etal-2020-evaluating,
    title = "Evaluating Dialogue Generation Systems via Response Selection",
    author = "Sato, Shiki and Akama, Reina and Ouchi, Hiroki and Suzuki, Jun and Inui, Kentaro",
    booktitle = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics",
    year = "2020", pages = "593--599", url = "https://aclanthology.org/2020.acl-main.55"}
"""  # noqa: E501

_DESCRIPTION = """\
Response selection accuracy of a generation model: the model computes its loss (token negative
log-likelihood) of every candidate response given the context, selects the candidate with the
lowest loss, and is right when that is the ground truth. Sato et al. rank generation systems by
this accuracy on a test set with well-chosen false candidates (CHOSEN) or random ones (RANDOM).
"""

_KWARGS_DESCRIPTION = """
Args:
    contexts: list of contexts, each a list of turns (oldest first) or one string.
    candidates: list of candidate lists (>= 2 non-empty strings each).
    labels: list of ints, the ground truth's index in each candidate list.
    model: causal or seq2seq LM id (in the local HF cache) or directory (required).
    reduction: "sum" (default: the candidate's summed token NLL, -log p(r|c)) or "mean" (per token).
    batch_size: questions per forward pass, all their candidates in one padded batch (default 16).
    device: e.g. "cpu", "cuda:0" (default: Accelerate's device); dtype: None, "float32", "float16", "bfloat16".
    turn_separator: text after each context turn (default: the tokenizer's EOS token, else "\\n").
    candidate_eos: score the EOS token after a causal LM's candidate (default True).
    share_context: encode a question's context once for all its candidates (default True; same losses).
    tie_rtol: losses within tie_rtol * max(1, |min|) of the minimum tie (default 1e-6, float32 rounding).
    backend: the model's runtime: "auto" (default: ONNX Runtime for an encoder or classifier on
        the CPU, else torch), "torch", "onnx" or "openvino"; float32, figures equal to 1e-5.
Returns:
    accuracy, num_correct, num_questions, num_ties (a shared minimum counts as wrong),
    num_truncated_contexts, reduction, model, and per_question: losses, nll_sums, num_tokens,
    selected, label, correct, tie.
Examples:
    >>> import evaluate
    >>> selection = evaluate.load("dialeval/response_selection")
    >>> questions = {"contexts": [["Do you have a car?"], "Where do you live?"],
    ...              "candidates": [["Yes, a red one.", "I play tennis."], ["In Osaka.", "Blue, I think."]],
    ...              "labels": [0, 0]}
    >>> selection.compute(**questions, model="microsoft/DialoGPT-small")["accuracy"]  # doctest: +SKIP
    1.0

    The questions are checked on the gathered inputs, before the model loads:

    >>> selection.compute(contexts=["Do you have a car?"], candidates=[["Yes, a red one.", "I play tennis."]],
    ...                   labels=[2], model="microsoft/DialoGPT-small")
    Traceback (most recent call last):
    dialeval.validation.ArgumentError: `labels[0]` = 2 is not an index of `candidates[0]` (0 to 1)
"""  # noqa: E501


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ResponseSelection(DialevalMetric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "contexts": datasets.Sequence(datasets.Value("string")),
                    "candidates": datasets.Sequence(datasets.Value("string")),
                    "labels": datasets.Value("int64"),
                }
            ),
            reference_urls=[
                "https://aclanthology.org/2020.acl-main.55",
                "https://github.com/cl-tohoku/eval-via-selection",
            ],
        )

    def _check_batch(self, batch: dict[str, list]) -> dict[str, list]:
        # evaluate would stringify nested items silently: check the raw input first, and give a
        # one-string context evaluate's list-of-turns shape.
        turns, _, _ = check_questions(batch["contexts"], batch["candidates"], batch["labels"])
        return {**batch, "contexts": turns}

    def _compute(
        self,
        contexts: list[list[str]],
        candidates: list[list[str]],
        labels: list[int],
        model: "ModelSource | None" = None,
        reduction: str = "sum",
        batch_size: int = DEFAULT_BATCH_SIZE,
        device: "DeviceLike" = None,
        dtype: str | None = None,
        turn_separator: str | None = None,
        candidate_eos: bool = True,
        share_context: bool = True,
        tie_rtol: float = TIE_RTOL,
        backend: str | None = None,
    ) -> dict:
        check_questions(contexts, candidates, labels)
        if model is None:
            raise ArgumentError(
                "model",
                "is required: a causal or seq2seq LM id (in the local HF cache) or directory",
            )
        return response_selection(
            contexts,
            candidates,
            [int(label) for label in labels],
            model=model,
            reduction=reduction,
            batch_size=batch_size,
            device=device,
            dtype=dtype,
            backend=backend,
            turn_separator=turn_separator,
            candidate_eos=candidate_eos,
            share_context=share_context,
            tie_rtol=tie_rtol,
        )


#: The evaluate module (evaluate.load finds it by its base class; named here for `make
#: lint-dead-code`).
__all__ = ["ResponseSelection"]
