"""An encoder whose weights pass ONNX's 2 GiB protobuf limit: the exporter writes them as external
data files beside the graph, the cache keeps them with it, and both exported backends read them
and give torch's float32 figures. Slow (a 2.3 GB model is built, exported and loaded: about a
minute and 5 GiB of memory on the 2-core machine)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dialeval import exported_models, graph_runners
from dialeval.hub import clear_model_cache, load_model

pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
pytest.importorskip("openvino", reason="the openvino extra is not installed")

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("module_export_cache")]

TWO_GIB = 2 * 2**30
#: the layer compared besides the last: a middle one, as BERTScore reads
MIDDLE = 5


@pytest.fixture(scope="module")
def large_encoder(tmp_path_factory) -> str:
    """A seeded random BERT of 570 M parameters (2.3 GB in float32) with a small WordPiece
    tokenizer, saved as a transformers checkpoint."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = tmp_path_factory.mktemp("large-encoder")
    torch.manual_seed(0)
    config = BertConfig(
        hidden_size=2048,
        num_hidden_layers=11,
        num_attention_heads=16,
        intermediate_size=8192,
        vocab_size=8000,
    )
    BertModel(config).eval().save_pretrained(folder)
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(500)]
    tokenizer = Tokenizer(models.WordPiece({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer()
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    BertTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    ).save_pretrained(folder)
    weights = sum(path.stat().st_size for path in folder.glob("*.safetensors"))
    assert weights > TWO_GIB
    return str(folder)


def _states(model, batch) -> tuple[np.ndarray, np.ndarray]:
    with torch.inference_mode():
        out = model(**batch, output_hidden_states=True)
    return out.last_hidden_state.numpy(), out.hidden_states[MIDDLE].numpy()


@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_an_encoder_over_two_gib_exports_with_external_data_and_equals_torch(
    large_encoder, backend, monkeypatch
):
    batch = {
        "input_ids": torch.tensor([[2, 10, 20, 30, 3, 0], [2, 5, 6, 7, 8, 3]]),
        "attention_mask": torch.tensor([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1]]),
    }
    reference = load_model(large_encoder, "encoder", backend="torch")
    want_last, want_middle = _states(reference.model, batch)
    del reference
    clear_model_cache()

    loaded = load_model(large_encoder, "encoder", backend=backend)
    assert (loaded.backend, loaded.precision) == (backend, "float32")
    got_last, got_middle = _states(loaded.model, batch)
    kept = batch["attention_mask"].numpy()[:, :, None].astype(bool)
    assert np.abs(np.where(kept, got_last - want_last, 0)).max() <= 1e-4
    assert np.abs(np.where(kept, got_middle - want_middle, 0)).max() <= 1e-4

    _, graph_file = graph_runners.cached_export(large_encoder, "encoder")
    assert graph_file is not None
    files = [path for path in graph_file.parent.iterdir() if path.is_file()]
    assert graph_file.stat().st_size < TWO_GIB
    assert sum(path.stat().st_size for path in files) > TWO_GIB
    del loaded
    clear_model_cache()

    # a later load reads the cached graph and its data files: no second export
    def no_export(*args, **kwargs):
        raise AssertionError("exported again")

    monkeypatch.setattr(exported_models, "export_model", no_export)
    again = load_model(large_encoder, "encoder", backend=backend)
    assert np.array_equal(_states(again.model, batch)[0], got_last)
    del again
    clear_model_cache()
