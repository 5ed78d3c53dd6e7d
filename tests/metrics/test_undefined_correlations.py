"""Never "NaN out": a constant side makes a correlation 0/0. The pure statistics refuse it
with a ValueError naming the constant argument; the aggregate reports (diversity_meta_evaluation,
its evaluate module, system ranking, the meta-eval job's table) keep going with None and an
``undefined_reason``. Never a NaN."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

from dialeval.cli.meta_eval_job import (
    MetaEvalOptions,
    MetaEvalReport,
    MetricRow,
    format_report,
    report_as_dict,
)
from dialeval.cli.meta_eval_job import _meta_evaluate as meta_evaluate
from dialeval.metrics.diversity_meta_eval import (
    diversity_meta_evaluation,
    pearson,
    spearman,
    subsampled_spearman,
)
from dialeval.metrics.diversity_meta_eval.statistics import (
    UndefinedStatisticError,
    bootstrap_spearman_ci,
)
from dialeval.metrics.response_selection import (
    random_protocol_correlation,
    system_ranking_correlation,
)


@pytest.mark.parametrize("function", [spearman, pearson, subsampled_spearman])
def test_a_constant_metric_score_is_refused_naming_scores(function):
    with pytest.raises(ValueError, match=r"`scores` is constant \(all 1\.0\): .* is undefined"):
        function([1, 1, 1, 1], [1, 2, 3, 4])


@pytest.mark.parametrize("function", [spearman, pearson, subsampled_spearman])
def test_a_constant_parameter_is_refused_naming_parameters(function):
    with pytest.raises(UndefinedStatisticError, match=r"`parameters` is constant \(all 0\.5\)"):
        function([1, 2, 3, 4], [0.5, 0.5, 0.5, 0.5])


def test_no_scipy_warning_escapes_a_refusal():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="constant"):
            spearman([2, 2, 2], [1, 2, 3])


def test_constant_subsets_are_left_out_of_the_subsampled_mean():
    scores, parameters = [1, 1, 1, 2], [1, 2, 3, 4]
    # Every 2-subset holding the 2 has rho 1; the subsets of three 1s are constant and left out.
    mean, spread = subsampled_spearman(scores, parameters, sample_size=2, repeats=30)
    assert (mean, spread) == (pytest.approx(1.0), 0.0)
    with pytest.raises(
        UndefinedStatisticError, match="every one of the 3 subsets of 2 sets was constant"
    ):
        subsampled_spearman(
            [1, 1, 1, 1, 1, 1, 1, 2], list(range(8)), sample_size=2, repeats=3, seed=2
        )


def test_diversity_meta_evaluation_reports_none_with_the_reason():
    result = diversity_meta_evaluation(
        [0.0, 0.0, 0.0, 0.0], [0, 0, 1, 1], bootstrap=True, num_resamples=20
    )
    assert result["spearman"] is None and result["pearson"] is None
    assert (
        result["spearman_pvalue"] is None
        and result["pearson_pvalue"] is None
        and result["spearman_ci"] is None
    )
    assert (
        result["undefined_reason"]
        == "`scores` is constant (all 0.0): Spearman's rho and Pearson's r are undefined"
    )
    assert result["oca"] == 0.5  # every set predicted the same class: half right
    assert "NaN" not in json.dumps(result)
    defined = diversity_meta_evaluation([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
    assert defined["undefined_reason"] is None and defined["spearman"] == pytest.approx(
        0.4472, abs=1e-4
    )


def test_a_bootstrap_with_only_constant_resamples_gives_none_and_its_reason():
    # Two sets: a resample of 2 drawn with replacement is often one set twice (constant); half
    # of two sets would be one set per resample, which is refused.
    with pytest.raises(UndefinedStatisticError):
        bootstrap_spearman_ci([0.0, 1.0], [0, 1], num_resamples=2, sample_fraction=1.0, seed=4)
    result = diversity_meta_evaluation(
        [0.0, 1.0], [0, 1], bootstrap=True, num_resamples=2, sample_fraction=1.0, seed=4
    )
    assert result["spearman"] == pytest.approx(1.0) and result["spearman_ci"] is None
    assert result["undefined_reason"].startswith(
        "spearman_ci: every bootstrap resample was constant"
    )


def test_the_evaluate_module_gives_none_and_the_reason():
    import evaluate
    from conftest import REPO_ROOT

    module = evaluate.load(str(REPO_ROOT / "metrics" / "diversity_meta_eval"))
    result = module.compute(predictions=[1.0, 1.0, 1.0, 1.0], references=[1, 2, 3, 4])
    assert result["spearman"] is None and result["pearson"] is None
    assert (
        result["undefined_reason"]
        == "`predictions` is constant (all 1.0): Spearman's rho and Pearson's r are undefined"
    )
    flat_references = module.compute(predictions=[0.1, 0.4, 0.35, 0.8], references=[1, 1, 1, 1])
    assert flat_references["undefined_reason"].startswith("`references` is constant (all 1.0)")


def test_system_ranking_gives_none_and_names_the_constant_side():
    result = system_ranking_correlation([1, 2, 3, 4], [5, 5, 5, 5])
    assert result == {
        "spearman": None,
        "p_value": None,
        "num_systems": 4,
        "undefined_reason": "`metric_scores` is constant (all 5.0): Spearman's rho of the system ranking is undefined",
    }
    assert system_ranking_correlation({"a": 1, "b": 1, "c": 1}, {"a": 1, "b": 2, "c": 3})[
        "undefined_reason"
    ].startswith("`human_scores` is constant (all 1.0)")
    assert system_ranking_correlation([1, 2, 3], [1, 3, 2])["undefined_reason"] is None


def test_random_protocol_marks_undefined_trials_with_none():
    result = random_protocol_correlation([1, 2, 3], [[1, 2, 3], [4, 4, 4]])
    assert (
        result["spearman_per_trial"] == [pytest.approx(1.0), None]
        and result["num_undefined_trials"] == 1
    )
    assert result["undefined_reason"] is None and result["spearman_mean"] == pytest.approx(1.0)
    none_defined = random_protocol_correlation([1, 2, 3], [[4, 4, 4]])
    assert none_defined["spearman_mean"] is None and none_defined["spearman_max"] is None
    assert none_defined["undefined_reason"].startswith(
        "`metric_scores_per_trial[0]` is constant (all 4.0)"
    )


@pytest.mark.parametrize("binary", [True, False])
def test_the_meta_eval_table_prints_undefined_and_the_reason_never_nan(binary):
    parameters = np.array([0, 0, 1, 1.0]) if binary else np.array([0.2, 0.5, 0.8, 1.1])
    constant, varying = np.zeros(4), np.array([0.1, 0.4, 0.35, 0.8])
    options = MetaEvalOptions(bootstrap=True, num_resamples=20)
    report = MetaEvalReport("contest" if binary else "dectest", "story", binary, "cfg")
    for label, scores in (("flat", constant), ("good", varying)):
        report.rows.append(
            MetricRow(label, scores, parameters, meta_evaluate(scores, parameters, binary, options))
        )
    table = format_report(report)
    assert "nan" not in table.lower()
    flat = next(line for line in table.splitlines() if line.startswith("flat"))
    assert flat.split()[1] == "undefined"
    assert "undefined for flat: `scores` is constant (all 0.0)" in table
    assert "undefined for good" not in table
    rows = report_as_dict(report)["rows"]
    assert rows["flat"]["spearman"] is None and (
        binary or rows["flat"]["spearman_subsets_mean"] is None
    )
    assert not any(isinstance(v, float) and math.isnan(v) for v in rows["flat"].values())


def test_the_evaluate_module_names_its_inputs_when_every_bootstrap_resample_is_constant():
    import evaluate
    from conftest import REPO_ROOT

    module = evaluate.load(str(REPO_ROOT / "metrics" / "diversity_meta_eval"))
    result = module.compute(
        predictions=[0.0, 1.0],
        references=[0, 1],
        bootstrap=True,
        num_resamples=2,
        sample_fraction=1.0,
        seed=4,
    )
    assert result["spearman"] == pytest.approx(1.0) and result["spearman_ci"] is None
    assert result["undefined_reason"] == (
        "spearman_ci: every bootstrap resample was constant; `predictions` or "
        "`references` has too little variation"
    )
    assert (
        "`scores`"
        in diversity_meta_evaluation(
            [0.0, 1.0], [0, 1], bootstrap=True, num_resamples=2, sample_fraction=1.0, seed=4
        )["undefined_reason"]
    )  # the function names its own arguments
