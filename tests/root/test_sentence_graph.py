"""The exported sentence encoder that runs without torch (dialeval.sentence_graph): written only
after a check against sentence-transformers, found by the pipeline's files, and giving
sentence-transformers' float32 embeddings."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dialeval import graph_runners, hub, sentence_graph
from dialeval.hub import clear_model_cache, load_model, load_sentence_encoder
from dialeval.metrics.engines.embedders import encode_sentences
from dialeval.validation import ArgumentError

pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

REPO_ROOT = Path(__file__).resolve().parents[2]
TOLERANCE = 1e-5
TEXTS = [
    "Sure, I'd love to. What time should we meet?",
    "  I'm afraid I can't make it this weekend.  ",
    "Ünïcödé café — “quotes” and 日本語",
    "ok",
    " ".join(["long"] * 400),  # past the model's 256 tokens: truncated alike
    "That sounds great! 😀",
]


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    """Each test exports into its own cache and loads every model afresh."""
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path / "cache"))
    clear_model_cache()
    yield
    clear_model_cache()


def _copy(source: str, target: Path) -> Path:
    """The model's small files copied (so a test can edit them), its weights linked."""
    shutil.copytree(
        source,
        target,
        ignore=lambda folder, names: [name for name in names if name.endswith(".safetensors")],
    )
    os.symlink(Path(source) / "model.safetensors", target / "model.safetensors")
    return target


def _torch_vectors(path: str) -> np.ndarray:
    model = load_model(path, "sentence_transformers", backend="torch").model
    return np.asarray(model.encode(TEXTS, convert_to_numpy=True), dtype=np.float32)


def test_checked_once_then_encoded_without_sentence_transformers(minilm_path):
    expected = _torch_vectors(minilm_path)
    first = load_sentence_encoder(minilm_path, backend="onnx")
    # no record yet: sentence-transformers loads it, checks the pipeline and writes the record
    assert type(first).__name__ == "SentenceTransformer"
    clear_model_cache()
    second = load_sentence_encoder(minilm_path, backend="onnx")
    assert isinstance(second, sentence_graph.ExportedSentenceEncoder)
    assert (second.backend, second.precision) == ("onnx", "float32")
    assert hub.loaded_runtime(minilm_path) == ("onnx", "float32")
    got = second.encode(TEXTS, batch_size=4)
    assert got.dtype == np.float32 and got.shape == expected.shape
    assert float(np.abs(got - expected).max()) < TOLERANCE
    # one string gives one row, as SentenceTransformer.encode does
    assert np.array_equal(second.encode(TEXTS[0]), got[0])
    # every step of a process shares the one encoder
    assert load_sentence_encoder(minilm_path, backend="onnx") is second


def test_two_lanes_encode_the_bits_of_one_multithreaded_session(minilm_path, monkeypatch):
    monkeypatch.setattr(graph_runners, "usable_cores", lambda: 2)
    load_sentence_encoder(minilm_path, backend="onnx")  # checks the pipeline, writes the record
    clear_model_cache()
    lanes = load_sentence_encoder(minilm_path, backend="onnx")
    assert isinstance(lanes, sentence_graph.ExportedSentenceEncoder) and lanes.lanes == 2
    # each lane's call runs on its own thread alone; the threaded session waits for a lone call
    runner = lanes.runner
    assert runner.lane_session.get_session_options().intra_op_num_threads == 1
    assert runner._threaded is None
    _, graph = graph_runners.cached_export(minilm_path, "encoder")
    record = sentence_graph.read_record(graph.parent, minilm_path)
    one = sentence_graph.ExportedSentenceEncoder(
        graph_runners.graph_runner(graph, "onnx", "float32"), record, "onnx"
    )
    assert one.lanes == 1 and one.runner.lane_session is None
    assert one.runner.session.get_session_options().intra_op_num_threads == 0  # ORT's default
    texts = [f"{text} ({index})" for index in range(40) for text in TEXTS]  # 60 batches of 4
    expected = one.encode(texts, batch_size=4)
    # encode's own batches in lanes, and encode_sentences' one-batch calls in lanes
    assert np.array_equal(lanes.encode(texts, batch_size=4), expected)
    assert np.array_equal(encode_sentences(lanes, texts, 4), encode_sentences(one, texts, 4))
    assert runner._threaded is None  # every call so far ran in a lane
    # a small input (fewer batches than the lanes' minimum) runs on ONNX Runtime's threads
    assert np.array_equal(lanes.encode(texts[:8], batch_size=4), expected[:8])
    assert runner.session.get_session_options().intra_op_num_threads == 0


def test_the_runtime_reported_is_the_one_of_the_encoder_returned(minilm_path):
    # both paths of the shared encoder: sentence-transformers (no record yet), then the export
    for _ in range(2):
        onnx = load_sentence_encoder(minilm_path, backend="onnx")
        assert hub.loaded_runtime(minilm_path) == ("onnx", "float32")
        # the same model on torch in between (a second report of the process, a test)
        load_model(minilm_path, "sentence_transformers", backend="torch")
        assert hub.loaded_runtime(minilm_path) == ("torch", "float32")
        # the shared onnx encoder again: its figures are onnx's, and so is the runtime reported
        assert load_sentence_encoder(minilm_path, backend="onnx") is onnx
        assert hub.loaded_runtime(minilm_path) == ("onnx", "float32")
        clear_model_cache()


def test_openvino_runs_the_same_record(minilm_path):
    pytest.importorskip("openvino", reason="the openvino extra is not installed")
    expected = _torch_vectors(minilm_path)
    load_sentence_encoder(minilm_path, backend="onnx")  # writes the record
    clear_model_cache()
    encoder = load_sentence_encoder(minilm_path, backend="openvino")
    assert isinstance(encoder, sentence_graph.ExportedSentenceEncoder)
    assert encoder.backend == "openvino"
    assert float(np.abs(encoder.encode(TEXTS) - expected).max()) < TOLERANCE


def test_a_job_process_imports_no_model_stack(minilm_path, tmp_path):
    expected = _torch_vectors(minilm_path)
    load_sentence_encoder(minilm_path)  # auto: onnx on this CPU; writes the record
    script = f"""
import json, sys
import numpy as np
from dialeval.metrics.engines.embedders import sentence_vectors
vectors, index = sentence_vectors({TEXTS!r}, model={minilm_path!r})
np.save({str(tmp_path / "vectors.npy")!r}, vectors[index])
heavy = [name for name in ("torch", "transformers", "sentence_transformers") if name in sys.modules]
print(json.dumps(heavy))
"""
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
    )
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
    got = np.load(tmp_path / "vectors.npy")
    # sentence_vectors gives unit rows (numpy's normalization here, torch's in the reference)
    assert float(np.abs(got - expected).max()) < TOLERANCE


@pytest.mark.parametrize(
    ("pooling", "normalize"), [("cls", False), ("max", False), ("mean", False)]
)
def test_each_pooling_is_checked_and_reproduced(minilm_path, tmp_path, pooling, normalize):
    path = _copy(minilm_path, tmp_path / "model")
    (path / "1_Pooling" / "config.json").write_text(
        json.dumps({"word_embedding_dimension": 384, "pooling_mode": pooling})
    )
    modules = json.loads((path / "modules.json").read_text())
    (path / "modules.json").write_text(json.dumps(modules[:2]))  # no Normalize
    expected = _torch_vectors(str(path))
    load_sentence_encoder(str(path), backend="onnx")
    clear_model_cache()
    encoder = load_sentence_encoder(str(path), backend="onnx")
    assert isinstance(encoder, sentence_graph.ExportedSentenceEncoder)
    assert (encoder.pooling, encoder.normalize) == (pooling, normalize)
    assert float(np.abs(encoder.encode(TEXTS) - expected).max()) < TOLERANCE


def test_a_changed_pipeline_file_is_checked_again(minilm_path, tmp_path):
    path = _copy(minilm_path, tmp_path / "model")
    load_sentence_encoder(str(path), backend="onnx")
    clear_model_cache()
    assert isinstance(
        load_sentence_encoder(str(path), backend="onnx"), sentence_graph.ExportedSentenceEncoder
    )
    # a shorter limit: the stored record (256 tokens) is not the pipeline's any more
    config = path / "sentence_bert_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "max_seq_length": 8}))
    clear_model_cache()
    assert type(load_sentence_encoder(str(path), backend="onnx")).__name__ == "SentenceTransformer"
    clear_model_cache()
    encoder = load_sentence_encoder(str(path), backend="onnx")
    assert isinstance(encoder, sentence_graph.ExportedSentenceEncoder)
    assert encoder.max_seq_length == 8
    assert float(np.abs(encoder.encode(TEXTS) - _torch_vectors(str(path))).max()) < TOLERANCE


def test_a_pipeline_with_prompts_stays_on_sentence_transformers(minilm_path, tmp_path):
    path = _copy(minilm_path, tmp_path / "model")
    settings = path / "config_sentence_transformers.json"
    settings.write_text(
        json.dumps(
            {
                **json.loads(settings.read_text()),
                "prompts": {"query": "query: "},
                "default_prompt_name": "query",
            }
        )
    )
    for _ in range(2):
        clear_model_cache()
        encoder = load_sentence_encoder(str(path), backend="onnx")
        assert type(encoder).__name__ == "SentenceTransformer"
    assert not list((tmp_path / "cache").rglob(f"{sentence_graph.RECORD_FOLDER}/*.json"))


def test_a_pipeline_that_disagrees_is_not_recorded(minilm_path, monkeypatch):
    original = sentence_graph.ExportedSentenceEncoder._pool

    def shifted(self, hidden, mask):
        return original(self, hidden, mask) + np.float32(1e-3)

    monkeypatch.setattr(sentence_graph.ExportedSentenceEncoder, "_pool", shifted)
    load_sentence_encoder(minilm_path, backend="onnx")
    clear_model_cache()
    assert type(load_sentence_encoder(minilm_path, backend="onnx")).__name__ == (
        "SentenceTransformer"
    )
    assert not list(Path(os.environ["DIALEVAL_CACHE"]).rglob("sentence_encoders/*.json"))


def test_a_corrupt_record_falls_back_and_is_not_trusted(minilm_path):
    load_sentence_encoder(minilm_path, backend="onnx")
    (record,) = Path(os.environ["DIALEVAL_CACHE"]).rglob("sentence_encoders/*.json")
    record.write_text("{not json")
    clear_model_cache()
    assert type(load_sentence_encoder(minilm_path, backend="onnx")).__name__ == (
        "SentenceTransformer"
    )
    record.write_text(json.dumps({"format": sentence_graph.RECORD_FORMAT + 1}))
    clear_model_cache()
    assert type(load_sentence_encoder(minilm_path, backend="onnx")).__name__ == (
        "SentenceTransformer"
    )


def test_torch_and_other_devices_and_dtypes_keep_sentence_transformers(minilm_path):
    load_sentence_encoder(minilm_path, backend="onnx")  # the record exists from here on
    clear_model_cache()
    assert type(load_sentence_encoder(minilm_path, backend="torch")).__name__ == (
        "SentenceTransformer"
    )
    assert type(load_sentence_encoder(minilm_path, dtype="bfloat16")).__name__ == (
        "SentenceTransformer"
    )
    # a named backend that cannot run there is still load_model's error
    with pytest.raises(ArgumentError, match="`backend`.*CPU only"):
        load_sentence_encoder(minilm_path, device="cuda", backend="onnx")
    with pytest.raises(ArgumentError, match="`backend`"):
        load_sentence_encoder(minilm_path, backend="tensorflow")


def test_the_cpu_is_known_without_torch_only_when_it_is_certain(monkeypatch):
    assert hub._surely_cpu("cpu") and not hub._surely_cpu("cuda") and not hub._surely_cpu(0)
    # a named exported backend runs on the CPU for device=None, whatever torch could reach
    assert hub._exported_cpu_backend(None, None, "openvino") == "openvino"
    assert hub._exported_cpu_backend("cuda:0", None, "onnx") is None  # load_model's error
    assert hub._exported_cpu_backend("cpu", "bfloat16", "auto") is None  # torch's dtype
    assert hub._exported_cpu_backend("cpu", None, "torch") is None
    assert hub._exported_cpu_backend("cpu", "float32", "auto") == "onnx"
    monkeypatch.setenv("WORLD_SIZE", "2")  # a launcher's process: Accelerate decides
    assert not hub._surely_cpu(None)
    assert hub._exported_cpu_backend(None, None, "auto") is None


@pytest.mark.parametrize(
    ("version", "platform", "nodes", "possible"),
    [
        ("2.13.0+cpu", "linux", ["/dev/nvidia0"], False),  # a CPU-only build
        ("2.13.0", "linux", [], False),  # PyPI's CUDA build, no NVIDIA device here
        ("2.13.0", "linux", ["/dev/nvidia0"], True),
        ("2.13.0+cu130", "linux", ["/dev/nvidia1"], True),
        ("2.13.0+rocm6.4", "linux", [], True),  # ROCm opens other device nodes
        ("2.13.0", "darwin", [], True),  # MPS
    ],
)
def test_an_accelerator_is_ruled_out_only_where_torch_cannot_reach_one(
    monkeypatch, version, platform, nodes, possible
):
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "version", lambda name: version)
    monkeypatch.setattr(hub.sys, "platform", platform)
    monkeypatch.setattr(hub.glob, "glob", lambda pattern: nodes)
    monkeypatch.setattr(hub.os.path, "exists", lambda path: False)
    assert hub._accelerator_possible() is possible


def test_encode_checks_its_arguments(minilm_path):
    load_sentence_encoder(minilm_path, backend="onnx")
    clear_model_cache()
    encoder = load_sentence_encoder(minilm_path, backend="onnx")
    with pytest.raises(ArgumentError, match="`batch_size`"):
        encoder.encode(TEXTS, batch_size=0)
    with pytest.raises(ArgumentError, match="`inputs`.*item 1"):
        encoder.encode(["fine", 3])  # type: ignore[list-item]
    with pytest.raises(ArgumentError, match="`convert_to_numpy`"):
        encoder.encode(TEXTS, convert_to_numpy=False)
    # the token lengths the job sorts by are the model's (truncated at its limit)
    lengths = encoder.token_lengths(TEXTS)
    assert lengths[4] == 256 and lengths[3] == 3
