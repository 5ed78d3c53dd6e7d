"""``evaluate.load`` for the docstring examples: the published name ``dialeval/<name>`` is the local folder.

evaluate's own doctest harness (tests/test_metric_common.py) patches ``evaluate.load`` so that the
name its examples type (``"accuracy"``) loads the module folder of the checkout; this does the same
for the names ``dialeval push-metrics --namespace dialeval`` publishes (registry.HUB_NAMESPACE).
"""

from __future__ import annotations

from contextlib import contextmanager
from unittest.mock import patch

import evaluate

from dialeval.metrics import registry

_REAL_LOAD = evaluate.load


def load_by_hub_name(path, *args, **kwargs):
    """``dialeval/<name>`` loads ``metrics/<name>``; any other name (a checkout path) fails the example."""
    namespace, _, name = str(path).partition("/")
    if namespace != registry.HUB_NAMESPACE or name not in registry.BY_NAME:
        raise AssertionError(
            f"the example loads {path!r}; the examples load the published names "
            f"{[metric.hub_name for metric in registry.METRICS]}"
        )
    return _REAL_LOAD(str(registry.get(name).module_dir), *args, **kwargs)


@contextmanager
def published_names_load_locally():
    """While open, ``evaluate.load("dialeval/<name>")`` loads the local module folder."""
    with patch("evaluate.load", side_effect=load_by_hub_name):
        yield
