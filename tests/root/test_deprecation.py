"""Renamed names keep working for one release, with a DeprecationWarning naming the new one."""

from __future__ import annotations

import importlib
import sys
import types

import pytest

from dialeval.deprecation import REMOVED_IN, renamed_attributes


@pytest.mark.parametrize(
    ("old", "new", "name"),
    [
        (
            "dialeval.trainers._base",
            "dialeval.trainers.response_loss_trainer",
            "ResponseLossTrainer",
        ),
        (
            "dialeval.trainers.negatives",
            "dialeval.trainers.dress_negative_schedule",
            "group_normalizers",
        ),
    ],
)
def test_a_renamed_module_warns_and_serves_the_new_modules_objects(old, new, name):
    sys.modules.pop(old, None)
    with pytest.warns(
        DeprecationWarning, match=f"`{old}` is renamed `{new}`; .* removed in dialeval {REMOVED_IN}"
    ):
        module = importlib.import_module(old)
    assert getattr(module, name) is getattr(importlib.import_module(new), name)


def test_renamed_attributes_serves_an_old_name_with_a_warning_and_refuses_an_unknown_one():
    module = types.ModuleType("dialeval_fake_module")
    module.new_name = object()
    module.__getattr__ = renamed_attributes(module.__name__, {"old_name": "new_name"})
    sys.modules[module.__name__] = module
    try:
        with pytest.warns(
            DeprecationWarning,
            match="`dialeval_fake_module.old_name` is renamed `dialeval_fake_module.new_name`",
        ):
            assert module.old_name is module.new_name
        with pytest.raises(AttributeError, match="has no attribute 'other'"):
            module.other  # noqa: B018
    finally:
        del sys.modules[module.__name__]


def test_the_dtg_settings_class_keeps_its_old_name_for_one_release():
    from dialeval.cli import dtg_job

    with pytest.warns(
        DeprecationWarning,
        match="`dialeval.cli.dtg_job.DTGRunSettings` is renamed `dialeval.cli.dtg_job.DTGOptions`",
    ):
        assert dtg_job.DTGRunSettings is dtg_job.DTGOptions


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("distinct_n", "averaged_distinct_n"),
        ("cos_sim", "ngram_cosine"),
        ("released:distinct_n", "released:averaged_distinct_n"),
        ("released:cos_sim", "released:ngram_cosine"),
        ("released:bert_score", "released:bertscore"),
    ],
)
def test_an_old_meta_eval_metric_name_is_read_as_the_new_one_with_a_warning_the_user_sees(old, new):
    from dialeval.cli.meta_eval_job import parse_metric

    with pytest.warns(FutureWarning, match=f"`--metric {old}` is renamed `--metric {new}`"):
        assert parse_metric(old).name == new


@pytest.mark.parametrize(
    ("old", "new"), [("MetricSkipped", "StepSkipped"), ("MetricOutcome", "StepOutcome")]
)
def test_the_evaluate_jobs_old_step_names_warn_and_serve_the_step_classes(old, new):
    from dialeval.cli import evaluate_job
    from dialeval.metrics.engines import job_steps

    with pytest.warns(
        DeprecationWarning,
        match=f"`dialeval.cli.evaluate_job.{old}` is renamed `dialeval.cli.evaluate_job.{new}`",
    ):
        assert getattr(evaluate_job, old) is getattr(job_steps, new)
