"""evaluate module: meta-evaluation of a diversity metric (Tevet & Berant 2021, §6.3-6.4).

A thin wrapper of :func:`dialeval.metrics.diversity_meta_eval.statistics.diversity_meta_evaluation`;
see README.md.
"""

# One import per line: evaluate finds a module's dependencies with a per-line regex.
# ruff: noqa: I001
import math
import datasets
import evaluate
from dialeval.metrics.diversity_meta_eval.statistics import check_numbers
from dialeval.metrics.diversity_meta_eval.statistics import (
    constant_input_reason,
    constant_resamples_reason,
)
from dialeval.metrics.diversity_meta_eval.statistics import diversity_meta_evaluation
from dialeval.metrics.engines.evaluate_module import DialevalMetric
from dialeval.validation import ArgumentError

_CITATION = """\
@inproceedings{tevet-berant-2021-evaluating,
  title = "Evaluating the Evaluation of Diversity in Natural Language Generation",
  author = "Tevet, Guy and Berant, Jonathan",
  booktitle = "Proceedings of EACL 2021", year = "2021", pages = "326--346"}
@inproceedings{stasaski-hearst-2022-semantic,
  title = "Semantic Diversity in Dialogue with Natural Language Inference",
  author = "Stasaski, Katherine and Hearst, Marti",
  booktitle = "Proceedings of NAACL 2022", year = "2022", pages = "85--98"}
"""

_DESCRIPTION = """\
How well a diversity metric tracks the diversity parameter that produced each response set:
Spearman's rho (and p-value) and Pearson's r against the parameter (decTest: the decoding
temperature; conTest: the binary content-diversity class), the optimal single-threshold
classifier accuracy (OCA) when the parameter is binary, and optionally a bootstrap 95% interval
of rho (Stasaski & Hearst 2022, App. A: 1,000 resamples of 50% of the sets with replacement).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[float], the metric's score of each response set.
    references: list[float], the diversity parameter of each set (0/1 for conTest).
    bootstrap: also return spearman_ci (default False).
    num_resamples: bootstrap resamples (default 1000).
    sample_fraction: size of each resample as a fraction of the sets (default 0.5).
    seed: bootstrap seed (default 0).
Returns:
    spearman, spearman_pvalue, pearson, pearson_pvalue, num_sets; oca and oca_threshold when the
    references are all 0 or 1; spearman_ci ([low, high]) with bootstrap=True; undefined_reason:
    None, or why the correlations are None (constant predictions or references: never NaN).
Examples:
    >>> import evaluate
    >>> meta = evaluate.load("dialeval/diversity_meta_eval")
    >>> result = meta.compute(predictions=[0.1, 0.4, 0.35, 0.8], references=[0, 0, 1, 1])
    >>> result["oca"], round(result["spearman"], 4), result["num_sets"]
    (0.75, 0.4472, 4)
    >>> flat = meta.compute(predictions=[0.5, 0.5, 0.5, 0.5], references=[0, 0, 1, 1])
    >>> flat["spearman"], flat["undefined_reason"]
    (None, "`predictions` is constant (all 0.5): Spearman's rho and Pearson's r are undefined")
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class DiversityMetaEval(DialevalMetric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"predictions": datasets.Value("float64"), "references": datasets.Value("float64")}
            ),
            reference_urls=["https://github.com/GuyTevet/diversity-eval"],
        )

    def _check_batch(self, batch: dict[str, list]) -> dict[str, list]:
        # evaluate would cast "0.5" or True to a float silently: check the raw values first.
        check_numbers(batch["predictions"], "predictions")
        check_numbers(batch["references"], "references")
        return batch

    def _compute(
        self,
        predictions: list[float],
        references: list[float],
        bootstrap: bool = False,
        num_resamples: int = 1000,
        sample_fraction: float = 0.5,
        seed: int = 0,
    ) -> dict:
        if len(predictions) < 2:
            raise ArgumentError(
                "predictions",
                f"must hold at least 2 scores (one per response set), got {len(predictions)}",
            )
        for argument, values in (("predictions", predictions), ("references", references)):
            for index, value in enumerate(values):
                if not math.isfinite(value):
                    raise ArgumentError(
                        f"{argument}[{index}]", f"must be a finite number, got {value!r}"
                    )
        result = diversity_meta_evaluation(
            predictions,
            references,
            bootstrap=bootstrap,
            num_resamples=num_resamples,
            sample_fraction=sample_fraction,
            seed=seed,
        )
        # the reasons name this module's inputs, not the function's
        if result["spearman"] is None:
            result["undefined_reason"] = constant_input_reason(
                predictions,
                references,
                "Spearman's rho and Pearson's r are undefined",
                arguments=("predictions", "references"),
            )
        elif bootstrap and result["spearman_ci"] is None:
            result["undefined_reason"] = (
                f"spearman_ci: {constant_resamples_reason(('predictions', 'references'))}"
            )
        return result


#: The evaluate module (evaluate.load finds it by its base class; named here for `make
#: lint-dead-code`).
__all__ = ["DiversityMetaEval"]
