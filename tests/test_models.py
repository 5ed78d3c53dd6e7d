import pytest
import torch

from dialeval.models import EMBEDDED_SENTENCE_MODEL, ModelNotAvailableError, resolve_device, resolve_model_path


def test_local_directory_is_used_as_is(tiny_gpt2_path):
    assert resolve_model_path(tiny_gpt2_path) == tiny_gpt2_path


def test_embedded_minilm_resolves_offline():
    path = resolve_model_path(EMBEDDED_SENTENCE_MODEL)
    assert path.endswith("model")


def test_missing_hub_model_says_how_to_get_it():
    with pytest.raises(ModelNotAvailableError, match=r"microsoft/DialoGPT-large.*hf download"):
        resolve_model_path("microsoft/DialoGPT-large")


def test_missing_local_path():
    with pytest.raises(ModelNotAvailableError, match="not a directory"):
        resolve_model_path("./no/such/dir")


def test_bad_model_argument():
    with pytest.raises(ValueError, match="model"):
        resolve_model_path("")


def test_device_default_and_explicit():
    assert resolve_device("cpu") == torch.device("cpu")
    assert isinstance(resolve_device(), torch.device)
