"""Every model-backed evaluate module runs on each runtime backend with torch's figures.

Over ``metrics.registry.METRICS``: a module whose ``_compute`` takes ``device`` runs a model, so it
takes ``backend`` too; called as its conformance case says (tiny models built in code, the
embedded all-MiniLM-L6-v2), ``backend="onnx"`` and ``backend="openvino"`` give torch's figures
within 1e-5 (float32 on every backend) and every other field unchanged. A backend that cannot
run is an error naming ``backend``, never a silent run on another runtime.
"""

from __future__ import annotations

import inspect
import math

import evaluate
import pytest
from metric_cases import cases_of

from dialeval.metrics import registry

MODEL_METRICS = [
    metric
    for metric in registry.METRICS
    if "device" in inspect.signature(evaluate.load(str(metric.module_dir))._compute).parameters
]
#: float32 on every backend: figures agree to float32 noise carried through the metric.
TOLERANCE = 1e-5


def assert_same_figures(actual: object, expected: object, where: str = "result") -> None:
    """Numbers within :data:`TOLERANCE`, everything else equal, at every level of the result."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and set(actual) == set(expected), where
        for key in expected:
            assert_same_figures(actual[key], expected[key], f"{where}[{key!r}]")
    elif isinstance(expected, (list, tuple)):
        assert isinstance(actual, (list, tuple)) and len(actual) == len(expected), where
        for index, (a, e) in enumerate(zip(actual, expected)):
            assert_same_figures(a, e, f"{where}[{index}]")
    elif isinstance(expected, float) and not isinstance(expected, bool):
        assert isinstance(actual, float), where
        if math.isnan(expected):
            assert math.isnan(actual), where
        else:
            assert actual == pytest.approx(expected, abs=TOLERANCE, rel=TOLERANCE), where
    else:
        assert actual == expected, where


def test_some_modules_run_models():
    # the parametrization below must not silently run over nothing
    assert {"nli_diversity", "vendi_score", "similarity_diversity"} <= {
        metric.name for metric in MODEL_METRICS
    }


@pytest.mark.parametrize("metric", MODEL_METRICS, ids=lambda metric: metric.name)
def test_a_model_backed_module_takes_backend(metric):
    parameters = inspect.signature(evaluate.load(str(metric.module_dir))._compute).parameters
    assert "backend" in parameters
    assert parameters["backend"].default is None  # dialeval.runtimes.DEFAULT_BACKEND


@pytest.mark.parametrize("backend", ["onnx", "openvino"])
@pytest.mark.parametrize("metric", MODEL_METRICS, ids=lambda metric: metric.name)
def test_each_backend_gives_the_torch_figures(metric, backend, request):
    case = cases_of(metric.name).conformance(request.getfixturevalue)
    module = evaluate.load(str(metric.module_dir))
    expected = module.compute(**case.inputs, **case.options, backend="torch")
    actual = module.compute(**case.inputs, **case.options, backend=backend)
    assert_same_figures(actual, expected)


@pytest.mark.parametrize("metric", MODEL_METRICS, ids=lambda metric: metric.name)
def test_an_unknown_backend_is_refused_naming_backend(metric, request):
    case = cases_of(metric.name).conformance(request.getfixturevalue)
    module = evaluate.load(str(metric.module_dir))
    with pytest.raises(ValueError, match=r"`backend` must be one of"):
        module.compute(**case.inputs, **case.options, backend="tensorrt")
