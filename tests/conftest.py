"""Test harness: offline by construction, tiny models built in code once per session.

The offline variables must be set before transformers / datasets / evaluate are imported
anywhere (evaluate reads only its own HF_EVALUATE_OFFLINE), hence at the very top.
"""
import os

for _variable in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_variable] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (the papers' released data); skips with the reason when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"the papers' released data is not at {SHARED_DATA} (a checkout without ../shared)")
    return SHARED_DATA
