"""evaluate's own doctest harness, run over every registered module.

The logic of ``LocalModuleTest.test_load`` in huggingface/evaluate's ``tests/test_metric_common.py``
(Copyright 2020 HuggingFace Inc., Apache License 2.0, http://www.apache.org/licenses/LICENSE-2.0),
re-expressed for pytest over :data:`dialeval.metrics.registry.METRICS`:

- the module script is imported the way ``evaluate.load`` imports it
  (``evaluation_module_factory`` then ``import_main_class``);
- ``_compute`` takes no ``**kwargs``;
- ``doctest.testmod`` runs the module's docstrings with evaluate's settings: no option flags (no
  ELLIPSIS, no NORMALIZE_WHITESPACE), ``doctest.ELLIPSIS_MARKER = "[...]"``, ``raise_on_error``,
  at least two examples attempted;
- ``evaluate.load`` is patched to map a module name to its local folder, as evaluate's harness maps
  ``"accuracy"`` to ``metrics/accuracy``: here the name a Hub user types, ``"dialeval/<name>"``
  (what ``dialeval push-metrics --namespace dialeval`` publishes), maps to ``metrics/<name>``.
  Any other name fails the example: the docstrings load only the published names.
"""

from __future__ import annotations

import doctest
import importlib
import inspect

import evaluate
import pytest
from evaluate_hub_names import load_by_hub_name, published_names_load_locally

from dialeval.metrics import registry


def import_module_script(metric):
    """The module script as ``evaluate.load`` imports it, and its main class."""
    factory = evaluate.loading.evaluation_module_factory(
        str(metric.module_dir), module_type="metric"
    )
    module = importlib.import_module(factory.module_path)
    return module, evaluate.loading.import_main_class(module.__name__)


@pytest.mark.parametrize("metric", registry.METRICS, ids=lambda metric: metric.name)
def test_evaluate_doctest_harness(metric, monkeypatch):
    monkeypatch.setattr(doctest, "ELLIPSIS_MARKER", "[...]")
    module, main_class = import_module_script(metric)
    parameters = inspect.signature(main_class._compute).parameters
    assert all(parameter.kind != parameter.VAR_KEYWORD for parameter in parameters.values())
    with published_names_load_locally():
        try:
            results = doctest.testmod(module, verbose=False, raise_on_error=True)
        except doctest.UnexpectedException as error:
            # the exception the example raised, as evaluate's harness re-raises it
            raise error.exc_info[1]
        except doctest.DocTestFailure as failure:
            pytest.fail(
                f"{metric.name}: the example\n{failure.example.source}expected\n{failure.example.want}"
                f"got\n{failure.got}"
            )
    assert results.failed == 0
    assert results.attempted > 1


def test_the_harness_refuses_a_checkout_path():
    """The mapping fails an example that loads a checkout path (what the docstrings did before)."""
    with pytest.raises(AssertionError, match="dialeval/lexical_diversity"):
        load_by_hub_name("metrics/lexical_diversity")


def test_hub_names_are_what_push_metrics_publishes(tmp_path, monkeypatch):
    """``push-metrics --namespace dialeval`` creates the Spaces the examples load."""
    created = []

    class RecordingApi:
        def __init__(self, token=None):
            pass

        def create_repo(self, repo_id, **kwargs):
            created.append(repo_id)

        def upload_folder(self, **kwargs):
            pass

    monkeypatch.setattr("huggingface_hub.HfApi", RecordingApi)
    from dialeval.cli.push_metrics import push_metrics

    assert push_metrics(registry.HUB_NAMESPACE, to=tmp_path) == created
    assert created == [metric.hub_name for metric in registry.METRICS]
