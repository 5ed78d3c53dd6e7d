"""The sentence encoder whose BERT forward runs in torch without transformers
(dialeval.torch_bert): recorded only after a check against sentence-transformers on the same
device type, then giving sentence-transformers' float32 embeddings without importing it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dialeval import hub, sentence_graph, torch_bert
from dialeval.hub import clear_model_cache, load_model, load_sentence_encoder

REPO_ROOT = Path(__file__).resolve().parents[2]
TOLERANCE = 1e-5
TEXTS = [
    "Would you like to join us for dinner on Friday?",
    "   No thanks, I've already eaten.   ",
    "Crème brûlée, jalapeño and 北京烤鸭 — “delicious”",
    "hm",
    " ".join(["again"] * 300),  # past the model's 256 tokens: truncated alike
    "See you soon 👋🏾!",
]


def _auto_picks_torch(kind: str, device_type: str, argument: str = "backend") -> str:
    """``resolve_auto`` as on an accelerator, where auto runs every model on torch."""
    del kind, device_type, argument
    return "torch"


@pytest.fixture(autouse=True)
def auto_on_torch(tmp_path, monkeypatch):
    """A cache of each test's own, and auto picking torch on this CPU as it does on a GPU."""
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(hub, "resolve_auto", _auto_picks_torch)
    clear_model_cache()
    yield
    clear_model_cache()


def _reference(path: str, texts: list[str] = TEXTS) -> np.ndarray:
    model = load_model(path, "sentence_transformers", device="cpu", backend="torch").model
    return np.asarray(model.encode(texts, convert_to_numpy=True), dtype=np.float32)


def test_checked_once_then_encoded_on_torch_without_transformers(minilm_path):
    expected = _reference(minilm_path)
    clear_model_cache()
    first = load_sentence_encoder(minilm_path, device="cpu")
    assert type(first).__name__ == "SentenceTransformer"  # no record yet: checked and recorded
    clear_model_cache()
    second = load_sentence_encoder(minilm_path, device="cpu")
    assert isinstance(second, sentence_graph.ExportedSentenceEncoder)
    assert isinstance(second.runner, torch_bert.TorchBertRunner)
    assert (second.backend, second.precision) == ("torch", "float32")
    assert hub.loaded_runtime(minilm_path) == ("torch", "float32")
    got = second.encode(TEXTS, batch_size=4)
    assert got.dtype == np.float32 and got.shape == expected.shape
    assert float(np.abs(got - expected).max()) < TOLERANCE
    # the same instance for every later step of the process
    assert load_sentence_encoder(minilm_path, device="cpu") is second


def test_a_job_process_imports_neither_transformers_nor_sentence_transformers(
    minilm_path, tmp_path
):
    load_sentence_encoder(minilm_path, device="cpu")  # writes the record
    script = f"""
import sys
import numpy as np
from dialeval import hub
hub.resolve_auto = lambda kind, device_type, argument="backend": "torch"
encoder = hub.load_sentence_encoder({minilm_path!r}, device="cpu")
vectors = encoder.encode({TEXTS!r}, batch_size=4)
np.save({str(tmp_path / "vectors.npy")!r}, vectors)
print(type(encoder).__name__, sorted(
    name for name in ("transformers", "sentence_transformers") if name in sys.modules))
"""
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ExportedSentenceEncoder", "[]"]
    got = np.load(tmp_path / "vectors.npy")
    assert float(np.abs(got - _reference(minilm_path)).max()) < TOLERANCE


def _tiny_bert(source: str, target: Path, **config: object) -> Path:
    """A randomly initialized 2-layer BERT with the MiniLM's tokenizer, mean pooling and
    Normalize, saved as a sentence-transformers folder (weights under BertModel's names)."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    settings = {
        "vocab_size": 30522,
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "intermediate_size": 64,
        "max_position_embeddings": 512,
        "type_vocab_size": 2,
        **config,
    }
    bert_folder = target / "bert"
    BertModel(BertConfig(**settings)).save_pretrained(bert_folder)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(Path(source) / name, bert_folder / name)
    transformer = models.Transformer(str(bert_folder), max_seq_length=64)
    pooling = models.Pooling(settings["hidden_size"], "mean")
    folder = target / "tiny"
    SentenceTransformer(modules=[transformer, pooling, models.Normalize()]).save(str(folder))
    return folder


def test_a_tiny_bert_of_other_shapes_is_reproduced(minilm_path, tmp_path):
    folder = str(_tiny_bert(minilm_path, tmp_path, layer_norm_eps=1e-5))
    expected = _reference(folder)
    clear_model_cache()
    load_sentence_encoder(folder, device="cpu")
    clear_model_cache()
    encoder = load_sentence_encoder(folder, device="cpu")
    assert isinstance(encoder, sentence_graph.ExportedSentenceEncoder)
    assert float(np.abs(encoder.encode(TEXTS) - expected).max()) < TOLERANCE


@pytest.mark.parametrize(
    "change",
    [{"hidden_act": "relu"}, {"position_embedding_type": "relative_key"}, {"is_decoder": True}],
    ids=["another activation", "relative positions", "a decoder"],
)
def test_a_bert_this_forward_does_not_compute_stays_on_sentence_transformers(
    minilm_path, tmp_path, change
):
    folder = str(_tiny_bert(minilm_path, tmp_path, **change))
    assert torch_bert.bert_config(str(Path(folder))) is None
    for _ in range(2):
        clear_model_cache()
        assert type(load_sentence_encoder(folder, device="cpu")).__name__ == "SentenceTransformer"
    assert not list((tmp_path / "cache").rglob("sentence_encoders/*.json"))


def test_a_forward_that_disagrees_is_not_recorded(minilm_path, monkeypatch):
    forward = torch_bert.TorchBertRunner.forward

    def shifted(self, ids, mask, types):
        return forward(self, ids, mask, types) + 1e-3

    monkeypatch.setattr(torch_bert.TorchBertRunner, "forward", shifted)
    for _ in range(2):
        clear_model_cache()
        assert type(load_sentence_encoder(minilm_path, device="cpu")).__name__ == (
            "SentenceTransformer"
        )


def test_records_are_kept_per_device_type_dtype_and_versions(minilm_path, monkeypatch):
    folder = minilm_path
    cpu = torch_bert.record_folder(folder, "cpu", None)
    assert cpu == torch_bert.record_folder(folder, "cpu", None)
    assert len({cpu, torch_bert.record_folder(folder, "cuda", None)}) == 2
    assert len({cpu, torch_bert.record_folder(folder, "cpu", "float32")}) == 2
    load_sentence_encoder(minilm_path, device="cpu")
    assert list(cpu.rglob("sentence_encoders/*.json"))
    # another transformers release: the record is not found, so the pipeline is checked again
    versions = {"torch": "2.13.0+cpu", "transformers": "99.0.0"}
    monkeypatch.setattr(torch_bert.importlib.metadata, "version", versions.__getitem__)
    assert torch_bert.record_folder(folder, "cpu", None) != cpu
    assert torch_bert.load_checked_encoder(minilm_path, folder, "cpu", None) is None


def test_named_backends_and_reduced_precision_keep_their_own_paths(minilm_path):
    load_sentence_encoder(minilm_path, device="cpu")  # the record exists from here on
    clear_model_cache()
    # torch named: sentence-transformers itself, the reference every backend is compared with
    assert type(load_sentence_encoder(minilm_path, device="cpu", backend="torch")).__name__ == (
        "SentenceTransformer"
    )
    clear_model_cache()
    assert type(load_sentence_encoder(minilm_path, device="cpu", dtype="bfloat16")).__name__ == (
        "SentenceTransformer"
    )
