"""Fixtures of the root layer's tests."""

import pytest

from dialeval.hub import clear_model_cache


@pytest.fixture(scope="module")
def module_export_cache(tmp_path_factory):
    """Every export of the module goes to one fresh cache folder, and no model outlives it."""
    folder = tmp_path_factory.mktemp("dialeval-cache")
    patch = pytest.MonkeyPatch()
    patch.setenv("DIALEVAL_CACHE", str(folder))
    clear_model_cache()
    yield folder
    clear_model_cache()
    patch.undo()
