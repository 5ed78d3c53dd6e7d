"""The command line's metric order comes from the metric folders' specs alone: each
``metrics/<name>/spec.py`` gives its ``order``, its steps and its per-set figures, and the job
runs and reports them in that order. The expected order is read here from the spec files
themselves (their ``order=`` and step names), not from the registry that builds the job."""

import ast
import importlib

from conftest import REPO_ROOT

from dialeval.cli.evaluate_options import step_names
from dialeval.metrics import registry

SPEC_FILES = sorted((REPO_ROOT / "metrics").glob("*/spec.py"))


def _declared_order(path) -> int:
    """The ``order=`` keyword of the ``MetricSpec(...)`` call in a spec file."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "MetricSpec":
            for keyword in node.keywords:
                if keyword.arg == "order":
                    return ast.literal_eval(keyword.value)
    raise AssertionError(f"{path} declares no MetricSpec(..., order=N)")


def _specs_in_declared_order() -> list:
    orders = {path.parent.name: _declared_order(path) for path in SPEC_FILES}
    assert len(set(orders.values())) == len(orders), f"two metrics share an order: {orders}"
    names = sorted(orders, key=orders.__getitem__)
    return [importlib.import_module(f"dialeval.metrics.{name}.spec").SPEC for name in names]


def test_every_metric_folder_declares_a_spec_and_an_order_of_its_own():
    folders = sorted(
        p.name for p in (REPO_ROOT / "metrics").iterdir() if (p / f"{p.name}.py").is_file()
    )
    assert [path.parent.name for path in SPEC_FILES] == folders
    assert [spec.name for spec in registry.SPECS] == [
        spec.name for spec in _specs_in_declared_order()
    ]


def test_the_job_steps_run_in_the_specs_order():
    expected = [step.name for spec in _specs_in_declared_order() for step in spec.steps]
    assert step_names() == expected
    assert len(set(expected)) == len(expected), "two steps share a --metric name"


def test_the_meta_eval_figures_are_the_specs_set_figures_in_order():
    expected = [figure.name for spec in _specs_in_declared_order() for figure in spec.set_figures]
    assert list(registry.SET_SCORERS) == expected
    for spec in registry.SPECS:
        steps = {step.name for step in spec.steps}
        for figure in spec.set_figures:
            assert figure.step in steps, f"{spec.name}: {figure.name} names no step of it"
