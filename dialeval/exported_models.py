"""Transformers models exported to ONNX once, run by ONNX Runtime or OpenVINO behind the
transformers interface the engines call (``model(**batch)`` returning a ``ModelOutput`` of torch
tensors).

The export uses torch's TorchScript-based exporter (``dynamo=False``): for the BERT-class
encoders it takes about 2 s where the ``torch.export``-based one took about 13 s, and its graph
ran faster in ONNX Runtime. What is exported, per kind:

* ``encoder``: ``last_hidden_state`` and every hidden state (embeddings and each layer), so that
  an engine reading a middle layer (BERTScore, the token-level embedders) runs one graph;
* ``sequence_classification``: ``logits``;
* ``language_model`` (causal only): ``logits``, from ``input_ids``, a 4D additive attention mask
  and ``position_ids``, so that both the engines' padded batches and their packed batches (one
  context, several candidates, a block mask) run on one graph; a 2D mask is turned into the
  causal padding mask transformers would build.

This module imports torch and transformers at its top: :mod:`dialeval.hub` imports it only when a
non-torch backend is asked for.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from transformers.modeling_outputs import (
    BaseModelOutput,
    CausalLMOutput,
    ModelOutput,
    SequenceClassifierOutput,
)

from dialeval.atomic_files import temporary_name
from dialeval.graph_runners import (
    MODEL_FILE,
    OPSET,
    export_settings,
    graph_runner,
)
from dialeval.runtimes import ExportFailedError, export_folder
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    from transformers import PretrainedConfig, PreTrainedModel

#: Keyword arguments the engines pass that change nothing in an exported forward.
_NEUTRAL_ARGUMENTS = {"return_dict": None, "use_cache": False, "output_attentions": False}


def uses_token_types(config: PretrainedConfig) -> bool:
    """Whether the model adds a token-type embedding (BERT's segment ids); GPT-2 also takes
    ``token_type_ids`` but adds nothing when they are absent, so it is fed none."""
    return int(getattr(config, "type_vocab_size", 0) or 0) > 0


def graph_inputs(kind: str, config: PretrainedConfig) -> list[str]:
    """The exported graph's inputs for ``kind``."""
    if kind == "language_model":
        return ["input_ids", "attention_mask", "position_ids"]
    return ["input_ids", "attention_mask"] + (
        ["token_type_ids"] if uses_token_types(config) else []
    )


class _PositionalForward(torch.nn.Module):
    """The model behind the positional signature the TorchScript exporter traces (keyword
    inputs collide with the model's own defaults in that exporter), returning plain tensors."""

    def __init__(self, model: PreTrainedModel, kind: str, input_names: list[str]) -> None:
        super().__init__()
        self.model = model
        self.kind = kind
        self.input_names = input_names

    def forward(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        inputs = dict(zip(self.input_names, tensors))
        if self.kind == "encoder":
            output = self.model(**inputs, output_hidden_states=True, return_dict=True)
            return (output.last_hidden_state, *output.hidden_states)
        if self.kind == "language_model":
            return (self.model(**inputs, use_cache=False, return_dict=True).logits,)
        return (self.model(**inputs, return_dict=True).logits,)


def _sample_inputs(config: PretrainedConfig, kind: str, names: list[str]) -> list[torch.Tensor]:
    """Two rows of different lengths (the second right-padded) for the exporter to trace."""
    width, short = 8, 5
    vocabulary = int(getattr(config, "vocab_size", 0) or 0)
    ids = (torch.arange(2 * width).reshape(2, width) % max(vocabulary - 5, 1) + 5).long()
    mask = torch.ones(2, width, dtype=torch.long)
    mask[1, short:] = 0
    tensors = {"input_ids": ids, "attention_mask": mask, "token_type_ids": torch.zeros_like(ids)}
    if kind == "language_model":
        tensors["attention_mask"] = torch.from_numpy(causal_mask(mask.numpy()))
        tensors["position_ids"] = torch.arange(width).expand(2, width).clone()
    return [tensors[name] for name in names]


def export_model(model: PreTrainedModel, kind: str, key: str, layers: int | None = None) -> Path:
    """Export ``model`` (float32, on the CPU) as ``kind`` into the cache under ``key``; returns the
    ONNX file. ``layers`` (an encoder): the model, which is changed, is cut after that many
    layers first (:func:`dialeval.layer_stacks.cut_in_place`).

    The graph is written into a temporary folder beside its place and renamed there whole, so a
    reader never sees half a file; when two processes export at once, the first rename wins and
    the other's copy is discarded.
    """
    if layers is not None:
        # layer_stacks: deferred, needed only for a cut export
        from dialeval.layer_stacks import cut_in_place

        cut_in_place(model, layers)
    names = graph_inputs(kind, model.config)
    sample = _sample_inputs(model.config, kind, names)
    wrapper = _PositionalForward(model, kind, names).eval()
    with torch.inference_mode():
        traced_outputs = wrapper(*sample)
    if kind == "encoder":
        outputs = ["last_hidden_state"] + [
            f"hidden_states.{i}" for i in range(len(traced_outputs) - 1)
        ]
    else:
        outputs = ["logits"]
    axes: dict[str, dict[int, str]] = {name: {0: "batch", 1: "sequence"} for name in names}
    if kind == "language_model":
        axes["attention_mask"] = {0: "batch", 2: "sequence", 3: "sequence"}
    for name in outputs:
        axes[name] = (
            {0: "batch"} if kind == "sequence_classification" else {0: "batch", 1: "sequence"}
        )
    folder = export_folder(key)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = temporary_name(folder, "export")
    staging.mkdir()
    try:
        with warnings.catch_warnings():
            # The TorchScript exporter is deprecated in favour of the torch.export one, which is
            # slower here (see the module docstring); its tracer warns about shape arithmetic the
            # dynamic axes make general.
            warnings.simplefilter("ignore")
            torch.onnx.export(
                wrapper,
                tuple(sample),
                str(staging / MODEL_FILE),
                input_names=names,
                output_names=outputs,
                dynamic_axes=axes,
                opset_version=OPSET,
                dynamo=False,
            )
        (staging / "export.json").write_text(
            json.dumps(
                {"kind": kind, "inputs": names, "outputs": outputs, **export_settings(kind, layers)}
            )
        )
        try:
            os.rename(staging, folder)
        except OSError:
            if not (folder / MODEL_FILE).is_file():  # not another process's finished export
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder / MODEL_FILE


@contextlib.contextmanager
def failures_name_backend(backend: str, model_path: str, step: str) -> Iterator[None]:
    """An export or a runtime that fails inside the block is an ArgumentError naming
    ``backend`` (the model cannot run there), never a fall-back to another runtime."""
    try:
        yield
    except ArgumentError:
        raise
    except Exception as error:  # the exporter and both runtimes raise several types
        raise ExportFailedError(
            "backend",
            f"={backend!r} could not {step} {model_path!r} ({type(error).__name__}: "
            f"{str(error)[:300]}); pass backend='torch'",
        ) from error


def causal_mask(attention_mask: np.ndarray) -> np.ndarray:
    """The ``(batch, 1, length, length)`` additive float32 mask a causal model applies for a 2D
    padding mask: a position sees the real positions up to itself (0), nothing else (float32's
    lowest, as transformers fills it)."""
    keys = np.asarray(attention_mask).astype(bool)[:, None, None, :]
    length = keys.shape[-1]
    allowed = keys & np.tril(np.ones((length, length), dtype=bool))[None, None]
    return np.where(allowed, np.float32(0), np.finfo(np.float32).min).astype(np.float32)


class ExportedModel(torch.nn.Module):
    """An exported model run by ONNX Runtime or OpenVINO, called as the transformers model it was
    exported from: ``model(input_ids=..., attention_mask=...)`` returns a ``ModelOutput`` of
    float32 CPU tensors (``BaseModelOutput`` with ``hidden_states`` on request for an encoder,
    ``SequenceClassifierOutput``, ``CausalLMOutput``). It has no parameters: it cannot be trained,
    and its ``config`` is the checkpoint's.
    """

    def __init__(
        self,
        runner: Any,
        config: PretrainedConfig,
        kind: str,
        backend: str,
        precision: str,
        inputs: list[str],
    ) -> None:
        super().__init__()
        self.runner = runner
        self.config = config
        self.kind = kind
        self.backend = backend
        self.precision = precision
        self.inputs = inputs
        self.hidden_state_outputs = [
            name for name in runner.outputs if name.startswith("hidden_states.")
        ]

    @property
    def device(self) -> torch.device:
        return torch.device("cpu")

    @property
    def dtype(self) -> torch.dtype:
        """The dtype of what goes in and comes out (float32 even when OpenVINO computes in a
        reduced precision)."""
        return torch.float32

    def get_output_embeddings(self) -> None:
        """None: the output layer is inside the graph, so callers run the whole forward."""

    def get_decoder(self) -> ExportedModel:
        return self

    def _refuse(self, what: str) -> ArgumentError:
        return ArgumentError(
            "backend",
            f"={self.backend!r} runs the exported {self.kind} graph, which does not take {what}; "
            "pass backend='torch'",
        )

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        output_hidden_states: bool | None = None,
        return_dict: bool | None = None,
        **kwargs: Any,
    ) -> ModelOutput | tuple[torch.Tensor, ...]:
        unsupported = sorted(
            name
            for name, value in kwargs.items()
            if value is not None
            and not (name in _NEUTRAL_ARGUMENTS and _NEUTRAL_ARGUMENTS[name] in (None, value))
        )
        if unsupported:
            raise self._refuse(", ".join(f"`{name}`" for name in unsupported))
        if input_ids is None:
            raise self._refuse("inputs other than `input_ids`")
        ids = _int64(input_ids)
        mask = (
            np.ones_like(ids) if attention_mask is None else attention_mask.detach().cpu().numpy()
        )
        feeds: dict[str, np.ndarray] = {"input_ids": ids}
        if self.kind == "language_model":
            feeds["attention_mask"] = causal_mask(mask) if mask.ndim == 2 else _additive(mask)
            feeds["position_ids"] = (
                np.broadcast_to(np.arange(ids.shape[1]), ids.shape).copy()
                if position_ids is None
                else _int64(position_ids)
            )
        else:
            if position_ids is not None:
                raise self._refuse("`position_ids`")
            feeds["attention_mask"] = mask.astype(np.int64)
            if "token_type_ids" in self.inputs:
                feeds["token_type_ids"] = (
                    np.zeros_like(ids) if token_type_ids is None else _int64(token_type_ids)
                )
            elif token_type_ids is not None and bool(token_type_ids.any()):
                raise self._refuse("`token_type_ids`")
        if output_hidden_states and self.kind != "encoder":
            raise self._refuse("`output_hidden_states`")
        output = self._run(feeds, bool(output_hidden_states))
        return output if return_dict is not False else output.to_tuple()

    def _run(self, feeds: dict[str, np.ndarray], hidden_states: bool) -> ModelOutput:
        if self.kind == "encoder":
            names = ["last_hidden_state"]
            if hidden_states:
                names += self.hidden_state_outputs
            arrays = [torch.from_numpy(array) for array in self.runner(feeds, names)]
            return BaseModelOutput(
                last_hidden_state=arrays[0],
                hidden_states=tuple(arrays[1:]) if hidden_states else None,
            )
        (logits,) = self.runner(feeds, ["logits"])
        if self.kind == "language_model":
            return CausalLMOutput(logits=torch.from_numpy(logits))
        return SequenceClassifierOutput(logits=torch.from_numpy(logits))


def _int64(tensor: torch.Tensor) -> np.ndarray:
    return np.ascontiguousarray(tensor.detach().cpu().numpy(), dtype=np.int64)


def _additive(mask: np.ndarray) -> np.ndarray:
    """A 4D mask as the graph takes it: additive float32 (a boolean one: True sees)."""
    if mask.dtype == bool:
        return np.where(mask, np.float32(0), np.finfo(np.float32).min).astype(np.float32)
    return np.ascontiguousarray(mask, dtype=np.float32)


def run_exported(
    path: Path, config: PretrainedConfig, kind: str, backend: str, precision: str
) -> ExportedModel:
    """The exported graph at ``path`` on ``backend`` (``onnx`` or ``openvino``), computing in
    ``precision`` (OpenVINO's reduced precisions on request; float32 otherwise). The model's
    ``precision`` is the one the runtime settled on: OpenVINO computes in float32 on a CPU
    without bf16 / f16 arithmetic whatever was asked for."""
    runner = graph_runner(path, backend, precision)
    # in inference mode, as the hub leaves every model it loads (a graph has no training mode)
    return ExportedModel(
        runner, config, kind, backend, runner.precision, graph_inputs(kind, config)
    ).eval()
