"""Every summary figure of every registered job step has a resampling statistic (``--ci``), and it
is the figure: all ones give the summary value; an exact statistic's 0/1 counts give the step run
on that subset of units and a count of 2 the step run with that unit repeated in place.

The steps come from the registry, so a new metric whose corpus figure has no ``resampling`` hook
fails here; model-backed steps run on the tiny models of tests/conftest.py.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from metric_cases import CORPUS, SETS

from dialeval.cli.evaluate_options import EvaluationOptions
from dialeval.cli.report_formats import DESCRIPTIVE_KEYS
from dialeval.metrics import registry
from dialeval.metrics.engines.figure_statistics import constant_statistic, figure_statistics
from dialeval.metrics.engines.job_steps import JobData, StepOutcome
from dialeval.metrics.engines.shared_outputs import shared_model_outputs
from dialeval.metrics.response_selection.selection import read_selection_questions

QUESTIONS = [
    {
        "context": ["Do you have a car?"],
        "candidates": ["Yes, a red one.", "I play tennis."],
        "label": 0,
    },
    {"context": ["Where do you live?"], "candidates": ["In Osaka.", "Blue."], "label": 0},
    {"context": ["Hi!"], "candidates": ["Fine, thanks.", "A car."], "label": 1},
]
#: Resamples checked against a rerun: a subset of the units (0/1), and one unit drawn twice (run
#: on the data with that unit repeated in place) beside a unit left out.
SET_COUNTS = [[1, 0, 1, 1, 0], [0, 2, 1, 1, 1]]
CORPUS_COUNTS = [[1, 0, 1, 1, 0, 1], [1, 1, 2, 1, 0, 1]]


@pytest.fixture(scope="module")
def job_options(tmp_path_factory, tiny_roberta_nli_path, tiny_cross_encoder_path, tiny_gpt2_path):
    questions = tmp_path_factory.mktemp("questions") / "questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    encoder = tiny_roberta_nli_path
    return EvaluationOptions(
        sentence_models=[encoder],
        homogenization_models=[encoder],
        nli_models=[encoder],
        bertscore_models=[encoder],
        bertscore_rescale=False,
        cross_encoder_models=[tiny_cross_encoder_path],
        selection_models=[tiny_gpt2_path],
        selection_questions=read_selection_questions(str(questions)),
        reference_corpus=CORPUS * 2,
        sem_ent_embedder=f"mean_pooling={encoder}",
        sem_ent_max_length=64,
        sem_ent_num_clusters=2,
        ead_vocab_size=1000,
        device="cpu",
        progress=False,
    )


@pytest.fixture()
def any_tagger(monkeypatch):
    """The part-of-speech step runs on the tests' lexicon tagger (no spaCy or NLTK data here)."""
    from pos_tagging_fixtures import lexicon_tagger, regex_sentence_splitter

    from dialeval.metrics.pos_templates import templates

    monkeypatch.setattr(templates, "default_tagger", lambda: lexicon_tagger)
    monkeypatch.setattr(templates, "default_sentence_splitter", lambda: regex_sentence_splitter)


def resampled_data(data: JobData, counts: np.ndarray) -> JobData:
    """The input a resample stands for: each unit repeated ``counts[u]`` times where it stands."""
    repeats = [int(count) for count in counts]
    if data.sets is not None:
        sets = [s for s, times in zip(data.sets, repeats, strict=True) for _ in range(times)]
        return JobData("response_set", [r for s in sets for r in s], sets)
    return JobData(
        "corpus",
        [r for r, times in zip(data.responses, repeats, strict=True) for _ in range(times)],
    )


def _figures(summary: dict) -> dict[str, float]:
    """What summary_rows shows as a number."""
    return {
        key: value
        for key, value in summary.items()
        if key not in DESCRIPTIVE_KEYS
        and isinstance(value, (int, float))
        and not isinstance(value, bool)
    }


def _runs(data: JobData, options):
    for step in registry.JOB_STEPS:
        if data.scope not in step.scopes:
            continue
        if step.applies is not None and not step.applies(options):
            continue
        if step.name != "pos_templates" and step.blocked is not None and step.blocked(options):
            continue
        for model in step.models(options) if step.models is not None else [None]:
            yield step, model


#: A model's float32 outputs move with the texts batched beside them (padding): a subset rerun of
#: a model-backed step agrees to about 1e-7 (metrics/engines/shared_outputs.py), not to 1e-9.
MODEL_TOLERANCE = 1e-5


def _close(actual: float, expected: float, tolerance: float = 1e-9) -> bool:
    if math.isnan(actual) or math.isnan(expected):
        return math.isnan(actual) and math.isnan(expected)
    return math.isclose(actual, expected, rel_tol=tolerance, abs_tol=tolerance * 1e-3)


#: The figures resampled approximately (``exact=False``), by scope: each one's ``method`` says how.
APPROXIMATE = {
    "response_set": {
        "self_bleu": {"self_bleu"},
        "nli": {"num_unique_pairs", "num_truncated"},
    },
    "corpus": {
        "self_bleu": {"self_bleu"},
        "compression_ratio": {"compression_ratio"},
        "mtld": {"mtld"},
        "pos_templates": {
            "template_rate",
            "templates_per_token",
            "num_templates",
            "num_template_spans",
        },
        "chamfer_distance": {"chamfer_distance"},
        "homogenization_rougel": {"homogenization_rougel"},
        "homogenization_bleu": {"homogenization_bleu"},
    },
}


def _model_free(step) -> bool:
    """No model and no embedder behind the step's figures (Sem-Ent embeds with its own)."""
    return step.models is None and step.sentence_texts is None


def _check_statistic(statistic, value, data, resamples, reruns, figure, tolerance, where):
    assert statistic.num_units == data.num_units and statistic.method, where
    ones = statistic.evaluate(np.ones((1, data.num_units)))
    assert ones.shape == (1,) and _close(float(ones[0]), float(value)), (where, ones, value)
    if not statistic.exact:
        return
    values = statistic.evaluate(np.array(resamples, dtype=float))
    for counts, got, rerun in zip(resamples, values, reruns, strict=True):
        assert _close(float(got), float(rerun[figure]), tolerance), (where, counts, got, rerun)


@pytest.mark.parametrize(
    "data, resamples",
    [
        (JobData("response_set", [r for s in SETS for r in s], SETS), SET_COUNTS),
        (JobData("corpus", CORPUS), CORPUS_COUNTS),
    ],
    ids=["response_sets", "corpus"],
)
def test_every_figure_has_its_statistic(data, resamples, job_options, any_tagger):
    approximate: dict[str, set[str]] = {}
    with shared_model_outputs():
        for step, model in _runs(data, job_options):
            label = step.label(model)
            outcome = step.run(data, model, job_options, lambda n: None)
            statistics = figure_statistics(step, data, outcome, job_options, model)
            figures = _figures(outcome.summary)
            missing = sorted(set(figures) - set(statistics))
            assert not missing, f"{label} on {data.scope}: no resampling statistic of {missing}"
            tolerance = 1e-9 if _model_free(step) else MODEL_TOLERANCE
            reruns = [
                _figures(
                    step.run(
                        resampled_data(data, np.array(counts, dtype=float)),
                        model,
                        job_options,
                        lambda n: None,
                    ).summary
                )
                for counts in resamples
            ]
            for figure, value in figures.items():
                where = f"{label}.{figure} on {data.scope}"
                statistic = statistics[figure]
                _check_statistic(
                    statistic, value, data, resamples, reruns, figure, tolerance, where
                )
                if not statistic.exact:
                    approximate.setdefault(step.name, set()).add(figure)
            # taken from a --resume checkpoint: nothing kept; a model-free step still has every
            # statistic, a model-backed one those it can give without its model
            resumed = figure_statistics(
                step, data, dataclasses.replace(outcome, kept=None), job_options, model
            )
            if _model_free(step):
                assert set(figures) <= set(resumed), (label, sorted(set(figures) - set(resumed)))
            for figure in set(figures) & set(resumed):
                where = f"{label}.{figure} on {data.scope}, resumed"
                _check_statistic(
                    resumed[figure],
                    figures[figure],
                    data,
                    resamples,
                    reruns,
                    figure,
                    tolerance,
                    where,
                )
    assert approximate == APPROXIMATE[data.scope]


class _Step:
    """A stand-in for a JobStep (figure_statistics reads only its hook)."""

    def __init__(self, resampling=None):
        self.resampling = resampling


def test_a_summary_that_is_not_the_per_set_mean_gets_no_mean_statistic():
    data = JobData("response_set", ["a", "b", "c", "d"], [["a", "b"], ["c", "d"]])
    outcome = StepOutcome(
        {"mean": 2.0, "largest": 3.0, "flag": True, "name": "x"},
        [{"mean": 1.0, "largest": 1.0}, {"mean": 3.0, "largest": 3.0}],
    )
    statistics = figure_statistics(_Step(), data, outcome, None, None)
    assert set(statistics) == {"mean"}
    assert statistics["mean"].evaluate(np.array([[2.0, 0.0], [1.0, 1.0]])).tolist() == [1.0, 2.0]


def test_the_hook_wins_for_its_figures():
    data = JobData("corpus", ["a", "b"])
    fixed = constant_statistic(7.0, 2, "seven")
    step = _Step(lambda data, outcome, options, model: {"figure": fixed})
    statistics = figure_statistics(step, data, StepOutcome({"figure": 1.0}), None, None)
    assert statistics == {"figure": fixed}


def test_a_corpus_step_without_a_hook_has_no_statistic():
    data = JobData("corpus", ["a", "b"])
    assert figure_statistics(_Step(), data, StepOutcome({"figure": 1.0}), None, None) == {}
