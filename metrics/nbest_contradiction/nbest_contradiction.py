"""evaluate module: Certainty and Variety of n-best lists (Sato et al. 2022, §2; App. C).

A thin wrapper of
:func:`dialeval.metrics.nbest_contradiction.certainty_variety.nbest_contradiction`; see README.md
(the metric card).
"""

# One import per line: evaluate finds a module's dependencies with a per-line regex.
# ruff: noqa: I001
import datasets
import evaluate
from dialeval.metrics.engines.evaluate_module import DialevalMetric
from dialeval.metrics.nbest_contradiction.certainty_variety import nbest_contradiction
from dialeval.validation import check_module_predictions
from dialeval.validation import ArgumentError, check_texts
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dialeval.metrics.nbest_contradiction.yes_no import YesNoClassifier
    from dialeval.type_aliases import DeviceLike

_CITATION = """\
@inproceedings{sato-etal-2022-n,
  title = "N-best Response-based Analysis of Contradiction-awareness in Neural Response Generation Models",
  author = "Sato, Shiki and Akama, Reina and Ouchi, Hiroki and Tokuhisa, Ryoko and Suzuki, Jun and Inui, Kentaro",
  booktitle = "Proceedings of SIGDIAL 2022", year = "2022", pages = "637--644"}
"""  # noqa: E501

_DESCRIPTION = """\
Contradiction-awareness of n-best lists generated for polar echo questions (ENTQ / CNTQ).
Each response is classified yes / no / ambiguous; a response is noncontradictory when its
answer is the input's expected one. Certainty = share of lists with at least one
noncontradictory response; Variety = mean share of noncontradictory responses over those
lists. Lists holding an ambiguous response are excluded (App. C).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[list[str]], one n-best list per input.
    references: list[str], the expected non-contradictory answer per input: "yes" (ENTQ) or "no" (CNTQ).
    classifier: "prefix" (yes/no-prefix rule, the weaker baseline), the id or local directory of a
        yes/no classifier (e.g. trained with examples/train_yes_no_classifier.py), or an object
        with classify(responses, questions). Required.
    questions: list[str], the input messages; needed by classifiers trained on (question, answer) pairs.
    input_types: list[str], e.g. "ENTQ" / "CNTQ" per input: adds per_type.
        questions and input_types are compute() options, one per gathered input: with add_batch,
        give them to compute() for all the inputs queued (in evaluate's distributed mode, to
        process 0's compute(), for every process's inputs in process order).
    batch_size: responses per forward pass (default 32).
    device: e.g. "cpu", "cuda:0" (default: Accelerate's device for this process).
    dtype: None, "float32", "float16" or "bfloat16".
    label_map: {label name: "yes" | "no" | "ambiguous"} for models whose labels are not yes/no/ambiguous or Circa's.
    backend: the model's runtime: "auto" (default: ONNX Runtime for an encoder or classifier on
        the CPU, else torch), "torch", "onnx" or "openvino"; float32, figures equal to 1e-5.
Returns:
    certainty, variety (NaN when undefined), num_inputs, num_analyzed, num_excluded (lists with an
    ambiguous response), num_with_noncontradictory, per_input (excluded, num_noncontradictory,
    list_size, answers), per_type (when input_types is given), classifier, num_truncated.
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("dialeval/nbest_contradiction")
    >>> result = metric.compute(predictions=[["Yes, I am.", "No."], ["No, never.", "No!"], ["Yes.", "Yeah."]],
    ...                         references=["yes", "no", "no"], classifier="prefix")
    >>> round(result["certainty"], 4), result["variety"], result["per_input"][2]["answers"]
    (0.6667, 0.75, ['yes', 'yes'])
"""  # noqa: E501


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class NbestContradiction(DialevalMetric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Sequence(datasets.Value("string")),
                    "references": datasets.Value("string"),
                }
            ),
            reference_urls=[
                "https://aclanthology.org/2022.sigdial-1.60/",
                "https://github.com/shiki-sato/nbest-contradiction-analysis",
            ],
        )

    def _check_batch(self, batch: dict[str, list]) -> dict[str, list]:
        check_module_predictions(batch["predictions"], scopes=("sets",))
        for index, reference in enumerate(batch["references"]):
            if not isinstance(reference, str):
                raise ArgumentError(
                    "references",
                    "must be a list of strings: the expected answer ('yes' or 'no') per input; "
                    f"`references[{index}]` is {type(reference).__name__}: {reference!r}",
                )
        check_texts(batch["references"], "references")
        return batch

    def _compute(
        self,
        predictions: list[list[str]],
        references: list[str],
        classifier: "str | YesNoClassifier | None" = None,
        questions: list[str] | None = None,
        input_types: list[str] | None = None,
        device: "DeviceLike" = None,
        dtype: str | None = None,
        batch_size: int = 32,
        label_map: dict | None = None,
        backend: str | None = None,
    ) -> dict:
        return nbest_contradiction(
            predictions,
            references,
            classifier,
            questions=questions,
            input_types=input_types,
            device=device,
            dtype=dtype,
            backend=backend,
            batch_size=batch_size,
            label_map=label_map,
        )


#: The evaluate module (evaluate.load finds it by its base class; named here for `make
#: lint-dead-code`).
__all__ = ["NbestContradiction"]
