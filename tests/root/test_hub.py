import pytest
import torch

from dialeval.hub import (
    EMBEDDED_SENTENCE_MODEL,
    ModelNotAvailableError,
    resolve_device,
    resolve_model_path,
)


def test_local_directory_is_used_as_is(tiny_gpt2_path):
    assert resolve_model_path(tiny_gpt2_path) == tiny_gpt2_path


def test_embedded_minilm_resolves_offline():
    path = resolve_model_path(EMBEDDED_SENTENCE_MODEL)
    assert path.endswith("model")


def test_missing_hub_model_says_how_to_get_it():
    with pytest.raises(ModelNotAvailableError, match=r"microsoft/DialoGPT-large.*hf download"):
        resolve_model_path("microsoft/DialoGPT-large")


def test_missing_local_path():
    with pytest.raises(ValueError, match="no such folder"):
        resolve_model_path("./no/such/dir")


def test_bad_model_argument():
    with pytest.raises(ValueError, match="model"):
        resolve_model_path("")


def test_device_default_and_explicit():
    assert resolve_device("cpu") == torch.device("cpu")
    assert isinstance(resolve_device(), torch.device)


def test_one_load_per_path_kind_device_dtype(tiny_gpt2_path, tiny_bart_path):
    from dialeval.hub import LoadedModel, load_model

    causal = load_model(tiny_gpt2_path, "language_model", device="cpu")
    assert load_model(tiny_gpt2_path, "language_model", device="cpu") is causal
    assert load_model(causal, "language_model") is causal  # a loaded model passes through
    assert type(causal.model).__name__ == "GPT2LMHeadModel" and not causal.is_encoder_decoder
    encoder = load_model(tiny_gpt2_path, "encoder", device="cpu", backend="torch")
    assert encoder is not causal and type(encoder.model).__name__ == "GPT2Model"
    seq2seq = load_model(tiny_bart_path, "language_model", device="cpu")
    assert seq2seq.is_encoder_decoder and isinstance(seq2seq, LoadedModel)
    assert (
        load_model(tiny_gpt2_path, "language_model", device="cpu", dtype="bfloat16").model.dtype
        == torch.bfloat16
    )


def test_every_engine_shares_the_one_loader(tiny_roberta_nli_path, tiny_gpt2_path):
    from dialeval.hub import load_model
    from dialeval.metrics.engines.embedders import MeanPoolingEmbedder
    from dialeval.metrics.engines.lm_scorer import load_language_model
    from dialeval.metrics.engines.pair_scorer import load_pair_classifier

    assert load_pair_classifier(tiny_roberta_nli_path, device="cpu") is load_model(
        tiny_roberta_nli_path, "sequence_classification", "cpu"
    )
    assert load_language_model(tiny_gpt2_path, device="cpu") is load_model(
        tiny_gpt2_path, "language_model", "cpu"
    )
    assert MeanPoolingEmbedder(tiny_gpt2_path, max_length=16, device="cpu").loaded is load_model(
        tiny_gpt2_path, "encoder", "cpu"
    )


def test_bad_kind_and_dtype_name_the_argument(tiny_gpt2_path):
    from dialeval.hub import load_model

    with pytest.raises(ValueError, match="`kind`"):
        load_model(tiny_gpt2_path, "seq2seq")
    with pytest.raises(ValueError, match="`dtype`"):
        load_model(tiny_gpt2_path, "encoder", dtype="int8")


def test_max_input_length_caps_the_tokenizer_by_the_positions():
    from types import SimpleNamespace

    from dialeval.hub import max_input_length

    roberta = SimpleNamespace(model_type="roberta", max_position_embeddings=514, pad_token_id=1)
    # the sentinel is no limit
    assert max_input_length(roberta, SimpleNamespace(model_max_length=int(1e30))) == 512
    assert max_input_length(roberta, SimpleNamespace(model_max_length=256)) == 256
    gpt2 = SimpleNamespace(model_type="gpt2", n_positions=1024)
    assert max_input_length(gpt2, SimpleNamespace(model_max_length=1024)) == 1024
    assert max_input_length(SimpleNamespace(model_type="t5"), None) is None


@pytest.mark.parametrize("device", [b"\x80", b"cpu", True, 1.5, ["cpu"]])
def test_a_device_of_the_wrong_type_is_a_value_error(device):
    """Found by tests/property: b"\\x80" escaped as torch's UnicodeDecodeError."""
    with pytest.raises(
        ValueError, match="`device` must be a device name, an index or a torch.device"
    ):
        resolve_device(device)
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")


def test_an_uncached_load_is_a_private_instance_that_never_enters_the_cache(tiny_bart_path):
    from dialeval.hub import _load, clear_model_cache, load_model

    clear_model_cache()
    shared = load_model(tiny_bart_path, "language_model", device="cpu")
    private = load_model(tiny_bart_path, "language_model", device="cpu", cached=False)
    assert private.model is not shared.model and _load.cache_info().currsize == 1
    # training the private copy leaves what the next caller is handed untouched
    with torch.no_grad():
        next(private.model.parameters()).add_(1.0)
    again = load_model(tiny_bart_path, "language_model", device="cpu")
    assert again.model is shared.model
    assert not torch.equal(next(again.model.parameters()), next(private.model.parameters()))
    with pytest.raises(ValueError, match="^`cached` must be True or False"):
        load_model(tiny_bart_path, "language_model", device="cpu", cached="no")


def test_the_cached_instance_is_shared_read_only_and_a_private_one_is_trainable(tiny_gpt2_path):
    from dialeval.hub import is_shared_model, load_model

    shared = load_model(tiny_gpt2_path, "language_model", device="cpu")
    private = load_model(tiny_gpt2_path, "language_model", device="cpu", cached=False)
    assert is_shared_model(shared.model) and not is_shared_model(private.model)
    assert not any(parameter.requires_grad for parameter in shared.model.parameters())
    assert all(parameter.requires_grad for parameter in private.model.parameters())
    assert not is_shared_model(object()) and not is_shared_model([])


def test_local_only_never_downloads_even_online(monkeypatch, tiny_gpt2_path):
    """``local_only``: a model that is not here is ModelNotAvailableError without a download attempt
    (a script asking whether the paper's embedder is here must not hang on the network)."""
    import huggingface_hub

    calls = []

    def snapshot_download(repo_id, local_files_only=False, **kwargs):
        calls.append(local_files_only)
        raise FileNotFoundError(repo_id)

    for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    with pytest.raises(
        ModelNotAvailableError, match=r"not in the local Hugging Face cache.*hf download"
    ):
        resolve_model_path("microsoft/DialoGPT-large", local_only=True)
    assert calls == [True]
    with pytest.raises(ModelNotAvailableError, match="downloading it failed"):
        resolve_model_path("microsoft/DialoGPT-large")
    assert calls == [True, True, False]
    assert resolve_model_path(tiny_gpt2_path, local_only=True) == tiny_gpt2_path
