"""An encoder loaded with ``layers`` runs no layer above the hidden state read, on every backend,
and that hidden state is the whole model's."""

import json

import pytest
import torch

from dialeval import graph_runners, runtimes
from dialeval.hub import load_model
from dialeval.validation import ArgumentError

TEXTS = ["hi there", "a man is playing a guitar on the stage"]
TOLERANCE = 1e-5
BACKENDS = ["torch", "onnx", "openvino"]


pytestmark = pytest.mark.usefixtures("module_export_cache")


def _states(loaded):
    batch = loaded.tokenizer(TEXTS, padding=True, return_tensors="pt")
    with torch.inference_mode():
        output = loaded.model(**batch, output_hidden_states=True)
    return output.hidden_states, batch["attention_mask"].bool()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("layers", [0, 1])
def test_cut_encoder_gives_the_whole_models_state_and_runs_no_layer_above(
    backend, layers, tiny_roberta_nli_path
):
    whole, mask = _states(load_model(tiny_roberta_nli_path, "encoder", backend="torch"))
    assert len(whole) == 3  # embeddings and 2 layers
    cut = load_model(tiny_roberta_nli_path, "encoder", backend=backend, layers=layers)
    states, _ = _states(cut)
    # the layers above were not run: their states do not exist (layer 0, the embeddings, is
    # read from the whole model: transformers records no state for a stack cut to nothing)
    assert len(states) == (layers + 1 if layers else 3)
    assert float((states[layers] - whole[layers])[mask].abs().max()) < TOLERANCE
    assert cut.backend == backend


@pytest.mark.parametrize("backend", BACKENDS)
def test_layers_at_or_above_the_depth_run_the_whole_stack(backend, tiny_roberta_nli_path):
    states, _ = _states(load_model(tiny_roberta_nli_path, "encoder", backend=backend, layers=2))
    assert len(states) == 3
    states, _ = _states(load_model(tiny_roberta_nli_path, "encoder", backend=backend, layers=5))
    assert len(states) == 3


def test_torch_cut_is_a_view_sharing_the_cached_models_parameters(tiny_roberta_nli_path):
    whole = load_model(tiny_roberta_nli_path, "encoder", backend="torch").model
    cut = load_model(tiny_roberta_nli_path, "encoder", backend="torch", layers=1).model
    assert cut is not whole
    assert len(whole.encoder.layer) == 2 and len(cut.encoder.layer) == 1  # the cached one is whole
    assert cut.encoder.layer[0] is whole.encoder.layer[0] and cut.embeddings is whole.embeddings
    assert {id(p) for p in cut.parameters()} < {id(p) for p in whole.parameters()}
    # loaded once: the same view again, and the whole model under its own key
    assert load_model(tiny_roberta_nli_path, "encoder", backend="torch", layers=1).model is cut
    assert load_model(tiny_roberta_nli_path, "encoder", backend="torch").model is whole


def test_private_instance_is_cut_in_place(tiny_roberta_nli_path):
    private = load_model(tiny_roberta_nli_path, "encoder", cached=False, layers=1).model
    assert len(private.encoder.layer) == 1
    assert all(parameter.requires_grad for parameter in private.parameters())


def test_cut_export_is_cached_apart_from_the_whole_one(tiny_roberta_nli_path):
    load_model(tiny_roberta_nli_path, "encoder", backend="onnx")
    load_model(tiny_roberta_nli_path, "encoder", backend="onnx", layers=1)
    whole_key, whole = graph_runners.cached_export(tiny_roberta_nli_path, "encoder")
    cut_key, cut = graph_runners.cached_export(tiny_roberta_nli_path, "encoder", 1)
    assert whole is not None and cut is not None and whole_key != cut_key
    record = json.loads((runtimes.export_folder(cut_key) / "export.json").read_text())
    assert record["layers"] == 1
    assert record["outputs"] == ["last_hidden_state", "hidden_states.0", "hidden_states.1"]
    assert "layers" not in json.loads(
        (runtimes.export_folder(whole_key) / "export.json").read_text()
    )
    # the cut graph is smaller: it holds one layer's weights, not two
    assert cut.stat().st_size < whole.stat().st_size


def test_an_architecture_without_a_bert_stack_runs_whole(tiny_gpt2_path):
    whole = load_model(tiny_gpt2_path, "encoder", backend="torch")
    assert load_model(tiny_gpt2_path, "encoder", backend="torch", layers=1).model is whole.model


@pytest.mark.parametrize("layers", [-1, True, 1.0, "1"])
def test_bad_layers_name_the_argument(layers, tiny_roberta_nli_path):
    with pytest.raises(ArgumentError, match="`layers`") as caught:
        load_model(tiny_roberta_nli_path, "encoder", layers=layers)
    assert caught.value.argument == "layers"


def test_layers_only_for_an_encoder(tiny_roberta_nli_path):
    with pytest.raises(ArgumentError, match="`layers`.*sequence_classification") as caught:
        load_model(tiny_roberta_nli_path, "sequence_classification", layers=1)
    assert caught.value.argument == "layers"
