"""evaluate module: meta-evaluation of a diversity metric (Tevet & Berant 2021, §6.3-6.4).

A thin wrapper of :func:`dialeval.metrics.diversity_meta_eval.statistics.diversity_meta_evaluation`; see README.md.
"""
# One import per line: evaluate finds a module's dependencies with a per-line regex.
# ruff: noqa: I001
import datasets
import evaluate
from dialeval.metrics.diversity_meta_eval.statistics import check_numbers
from dialeval.metrics.diversity_meta_eval.statistics import diversity_meta_evaluation

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
    references are all 0 or 1; spearman_ci ([low, high]) with bootstrap=True.
Examples:
    >>> import evaluate
    >>> meta = evaluate.load("metrics/diversity_meta_eval")
    >>> meta.compute(predictions=[0.1, 0.4, 0.35, 0.8], references=[0, 0, 1, 1])["oca"]
    0.75
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class DiversityMetaEval(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("float64"), "references": datasets.Value("float64")}),
            reference_urls=["https://github.com/GuyTevet/diversity-eval"],
        )

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Meta-evaluate the scores ``predictions`` against the parameters ``references``; see below."""
        check_numbers(predictions, "predictions")
        check_numbers(references, "references")
        if len(predictions) != len(references):
            raise ValueError(f"`predictions` and `references` must have equal length, got {len(predictions)} and {len(references)}")
        return super().compute(predictions=predictions, references=references, **kwargs)

    def _compute(self, predictions, references, **options):
        return diversity_meta_evaluation(predictions, references, **options)
