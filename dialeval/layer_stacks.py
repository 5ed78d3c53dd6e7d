"""An encoder run only up to the hidden state a caller reads.

BERTScore reads one middle layer (layer 17 of roberta-large's 24): computing the layers above it
and discarding them costs a third of the forward pass. ``bert_score.utils.get_model`` drops them
by cutting the model's layer stack, and so does :func:`dialeval.hub.load_model` when given
``layers``: on torch it runs a view of the shared model with the cut stack, and the exported
backends export the cut model (ONNX Runtime computes a whole graph whatever outputs are asked
for, so an uncut graph cannot skip them).

A cut model's ``hidden_states[layers]`` (its last) is the whole model's: the layers of a
BERT-family stack (``encoder.layer``: BERT, RoBERTa, XLM-R, ELECTRA, DeBERTa, MPNet, MiniLM) see
only the layers below them and no norm follows the stack. Other architectures run whole, so that
``hidden_states[layers]`` is read from every model alike.

This module imports torch at its top: :mod:`dialeval.hub` and the exporter import it when a
``layers`` is asked for.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any, cast

import torch


def layer_stack(model: torch.nn.Module) -> torch.nn.ModuleList | None:
    """The BERT-family layer stack (``model.encoder.layer``) that bert_score cuts, or None for
    other architectures."""
    encoder = getattr(model, "encoder", None)
    layers = getattr(encoder, "layer", None)
    return layers if isinstance(layers, torch.nn.ModuleList) else None


def cut_in_place(model: torch.nn.Module, layers: int) -> torch.nn.Module:
    """``model`` with only its first ``layers`` layers (a private model, about to be exported);
    unchanged when it has no BERT-family stack, no more layers than that, or ``layers`` is 0
    (transformers records no hidden state for a stack cut to nothing)."""
    stack = layer_stack(model)
    if stack is not None and len(stack) > layers >= 1:
        encoder = cast("Any", model.encoder)
        encoder.layer = torch.nn.ModuleList(list(stack)[:layers])
    return model


def cut_view(model: torch.nn.Module, layers: int) -> torch.nn.Module:
    """A view of ``model`` running only its first ``layers`` layers, sharing every parameter;
    ``model`` itself when :func:`cut_in_place` would leave it unchanged.

    Only the model and its encoder are copied, to hold the cut stack; every other module,
    parameter and buffer is the model's own (the deep copy's memo maps each to itself), so the
    model stays whole and a hook on one of its layers sees the view's passes too.
    """
    stack = layer_stack(model)
    if stack is None or not len(stack) > layers >= 1:
        return model
    copied = {id(model), id(model.encoder)}
    parts = itertools.chain(model.modules(), model.parameters(), model.buffers())
    view = copy.deepcopy(model, {id(part): part for part in parts if id(part) not in copied})
    return cut_in_place(view, layers)
