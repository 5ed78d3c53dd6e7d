"""A BERT encoder's forward pass in torch alone, for a sentence encoder that runs on torch without
transformers or sentence-transformers.

On a GPU the job runs its sentence encoder on torch, and before it encodes a text a process
imports torch, transformers and sentence-transformers: on the 2-core machine ``import torch``
takes about 3 s and ``import sentence_transformers`` about 15 s (``python -c``, wall time); on
the lent H200 machine torch took 3.9 s and transformers with ``AutoModel`` 7.8 s more, about
half of a 10,000-response job there (``benchmarks/RESULTS.md``, bench_gpu). A BERT forward is
short and fixed (embeddings, then per layer self-attention and a feed-forward block, each with a
residual and LayerNorm), so this module computes it from the checkpoint's safetensors with
torch's own functions, and :mod:`dialeval.sentence_graph` tokenizes and pools around it.

It is used only for a pipeline checked against sentence-transformers on the same device, in the
same way as an exported graph (:func:`store_checked_pipeline`): the probe texts' tokens must be
equal and their embeddings within :data:`dialeval.sentence_graph.AGREEMENT`; the record is kept
under a key of the weights, torch's and transformers' versions and the device type, so a change of
any of them is checked again. Eligible checkpoints: ``model_type`` ``"bert"`` with absolute
positions, the exact GELU and no decoder, its weights in safetensors (never pickle).
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dialeval.runtimes import export_folder, export_key

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer

    from dialeval.sentence_graph import ExportedSentenceEncoder

#: The ``kind`` of this runner's entries in the export cache (it exports nothing: the folder
#: holds the checked records only).
KIND = "torch_bert"
WEIGHTS_FILE = "model.safetensors"
#: The checkpoints' ``hidden_act`` values this forward computes, and the function it uses.
ACTIVATIONS = ("gelu",)


def bert_config(folder: str) -> dict[str, Any] | None:
    """The transformer's ``config.json`` when this module computes its forward pass (see the
    module docstring), else None."""
    try:
        config = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(config, dict) or not (Path(folder) / WEIGHTS_FILE).is_file():
        return None
    eligible = (
        config.get("model_type") == "bert"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and config.get("hidden_act") in ACTIVATIONS
        and not config.get("is_decoder", False)
        and not config.get("add_cross_attention", False)
        and isinstance(config.get("hidden_size"), int)
        and isinstance(config.get("num_attention_heads"), int)
        and isinstance(config.get("num_hidden_layers"), int)
        and config["num_attention_heads"] > 0
        and config["hidden_size"] % config["num_attention_heads"] == 0
    )
    return config if eligible else None


def record_folder(folder: str, device_type: str, dtype: str | None) -> Path:
    """Where the checked records of ``folder``'s weights run by this module on a
    ``device_type`` device for ``dtype`` are kept (a key of the weights and of what the check
    depended on, found without importing torch or transformers)."""
    settings: dict[str, object] = {
        "kind": KIND,
        "torch": importlib.metadata.version("torch"),
        "transformers": importlib.metadata.version("transformers"),
        "device_type": device_type,
        "dtype": dtype or "checkpoint",
    }
    return export_folder(export_key(folder, settings))


class TorchBertRunner:
    """``runner(feeds, ["last_hidden_state"])``: the BERT encoder of ``folder`` on ``device`` in
    float32, on numpy batches as :class:`dialeval.sentence_graph.ExportedSentenceEncoder` gives
    them (the runner interface of :mod:`dialeval.graph_runners`)."""

    precision = "float32"
    lanes = 1

    def __init__(self, folder: str, config: dict[str, Any], device: str) -> None:
        # torch, safetensors: deferred, so that importing this module loads neither
        import torch
        from safetensors.torch import load_file

        self.functional = torch.nn.functional
        self.device = torch.device(device)
        weights = load_file(str(Path(folder) / WEIGHTS_FILE), device=str(self.device))
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""
        self.weights = {
            name[len(prefix) :]: tensor.float()
            for name, tensor in weights.items()
            if name.startswith(prefix)
        }
        self.heads: int = config["num_attention_heads"]
        self.layers: int = config["num_hidden_layers"]
        self.eps: float = float(config.get("layer_norm_eps", 1e-12))
        missing = [
            name
            for name in ("embeddings.word_embeddings.weight", "embeddings.LayerNorm.weight")
            if name not in self.weights
        ]
        if missing:
            raise ValueError(f"{folder!r} holds no BERT embeddings ({', '.join(missing)})")

    def _linear(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return self.functional.linear(
            x, self.weights[f"{name}.weight"], self.weights[f"{name}.bias"]
        )

    def _norm(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return self.functional.layer_norm(
            x, x.shape[-1:], self.weights[f"{name}.weight"], self.weights[f"{name}.bias"], self.eps
        )

    def forward(
        self, ids: torch.Tensor, mask: torch.Tensor, types: torch.Tensor | None
    ) -> torch.Tensor:
        """``last_hidden_state`` of transformers' ``BertModel`` in eval mode (dropout off)."""
        import torch

        F = self.functional
        w = self.weights
        batch, length = ids.shape
        positions = torch.arange(length, device=ids.device)
        types = torch.zeros_like(ids) if types is None else types
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        x = x + w["embeddings.position_embeddings.weight"][positions][None]
        x = self._norm(x, "embeddings.LayerNorm")
        width = x.shape[-1]
        head = width // self.heads
        # the keys a query may attend to: True where the token is not padding
        keep = mask.bool()[:, None, None, :]
        for index in range(self.layers):
            layer = f"encoder.layer.{index}"

            def split(t: torch.Tensor) -> torch.Tensor:
                return t.view(batch, length, self.heads, head).transpose(1, 2)

            query = split(self._linear(x, f"{layer}.attention.self.query"))
            key = split(self._linear(x, f"{layer}.attention.self.key"))
            value = split(self._linear(x, f"{layer}.attention.self.value"))
            attended = F.scaled_dot_product_attention(query, key, value, attn_mask=keep)
            attended = attended.transpose(1, 2).reshape(batch, length, width)
            x = self._norm(
                self._linear(attended, f"{layer}.attention.output.dense") + x,
                f"{layer}.attention.output.LayerNorm",
            )
            inner = F.gelu(self._linear(x, f"{layer}.intermediate.dense"))
            x = self._norm(
                self._linear(inner, f"{layer}.output.dense") + x, f"{layer}.output.LayerNorm"
            )
        return x

    def __call__(self, feeds: dict[str, np.ndarray], outputs: list[str]) -> list[np.ndarray]:
        import torch

        if outputs != ["last_hidden_state"]:
            raise ValueError(f"a BERT runner gives last_hidden_state only, not {outputs}")

        def tensor(name: str) -> torch.Tensor | None:
            array = feeds.get(name)
            return None if array is None else torch.from_numpy(array).to(self.device)

        with torch.inference_mode():
            ids, mask = tensor("input_ids"), tensor("attention_mask")
            assert ids is not None and mask is not None  # the encoder always feeds both
            hidden = self.forward(ids, mask, tensor("token_type_ids"))
            return [hidden.cpu().numpy()]


def store_checked_pipeline(
    sentence_model: SentenceTransformer,
    model_path: str,
    folder: str,
    device: str,
    dtype: str | None,
) -> bool:
    """Record ``sentence_model``'s pipeline for this runner when its transformer is one this
    module computes and the pipeline agrees with sentence-transformers' on ``device``
    (:func:`dialeval.sentence_graph.store_checked_pipeline`); whether it is recorded."""
    # sentence_graph: deferred, it imports the tokenizers library on use
    from dialeval import sentence_graph

    config = bert_config(folder)
    if config is None:
        return False
    try:
        runner = TorchBertRunner(folder, config, device)
        target = record_folder(folder, runner.device.type, dtype)
    except Exception:  # noqa: BLE001 - a checkpoint this runner cannot read stays unrecorded
        return False
    return sentence_graph.store_checked_pipeline(
        sentence_model, model_path, target, runner, "torch"
    )


def load_checked_encoder(
    model_path: str, folder: str, device: str, dtype: str | None
) -> ExportedSentenceEncoder | None:
    """The encoder of ``model_path`` on this runner from its checked record; None when there is
    no record (of this format, for these weights, versions, device type and ``dtype``)."""
    from dialeval import sentence_graph

    config = bert_config(folder)
    if config is None:
        return None
    device_type = device.partition(":")[0]
    try:
        record = sentence_graph.read_record(record_folder(folder, device_type, dtype), model_path)
    except ValueError:  # no weight files to key a record on
        return None
    if record is None:
        return None
    return sentence_graph.ExportedSentenceEncoder(
        TorchBertRunner(folder, config, device), record, "torch"
    )


__all__ = [
    "TorchBertRunner",
    "bert_config",
    "load_checked_encoder",
    "record_folder",
    "store_checked_pipeline",
]
