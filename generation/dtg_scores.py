"""DTG's per-step ``scores`` / ``logits``: those of the generate call that produced each kept
response.

``generate(output_scores=True)`` returns one tensor per generated step, ``(rows, vocab)``: the
processed scores (after the logits processors) of every row; ``output_logits=True`` the raw
logits. DTG draws candidates in several calls and keeps some, so each candidate keeps its own rows
of its call (:func:`candidate_steps`): every step of a sampling call (a row that finished early
goes on receiving scores, as generate() gives them), a beam's rows traced through
``beam_indices`` up to its end. :func:`steps_layout` lays the kept responses out as generate()
returns them: ``width`` steps (the generated columns of ``sequences``), ``(responses, vocab)``
each. A kept response whose own call ran fewer steps than ``width`` (another response of the set
came from a longer call) is padded with rows that give the pad token, which ``sequences`` holds
there, all the mass: 0 at ``pad_token_id``, ``-inf`` elsewhere, so that
``model.compute_transition_scores`` gives those positions a log-probability of 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from dialeval.generation.dtg_checks import check_optional_flag
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    from transformers import GenerationConfig

    from dialeval.generation.generation_settings import GenerativeModel

#: The per-step outputs DTG can return, by generate() flag.
STEP_OUTPUTS = {"scores": "output_scores", "logits": "output_logits"}
#: generate() outputs DTG cannot return: they describe forward passes over candidates that were
#: dropped.
UNSUPPORTED_OUTPUTS = ("output_attentions", "output_hidden_states")


def _resolved(
    flag: str,
    value: object,
    generation_config: GenerationConfig | None,
    model: GenerativeModel,
) -> bool:
    """A flag as generate() resolves it: the argument, else the given config's, else the model's."""
    for candidate in (
        value,
        getattr(generation_config, flag, None),
        getattr(getattr(model, "generation_config", None), flag, None),
    ):
        if candidate is not None:
            return bool(candidate)
    return False


def requested_step_outputs(
    model: GenerativeModel,
    generation_config: GenerationConfig | None,
    output_scores: bool | None = None,
    output_logits: bool | None = None,
    output_attentions: bool | None = None,
    output_hidden_states: bool | None = None,
) -> tuple[str, ...]:
    """The per-step outputs asked for (``"scores"``, ``"logits"``); ValueError for attentions /
    hidden states."""
    for flag, value in zip(UNSUPPORTED_OUTPUTS, (output_attentions, output_hidden_states)):
        check_optional_flag(value, flag)
        if _resolved(flag, value, generation_config, model):
            raise ArgumentError(
                flag,
                "=True cannot be honoured by DTG: its responses come from several generate calls "
                "whose other candidates were dropped; run generate() on the returned sequences "
                f"to get them (set `{flag}=False`, or unset it in the generation config)",
            )
    values = {"output_scores": output_scores, "output_logits": output_logits}
    return tuple(
        name
        for name, flag in STEP_OUTPUTS.items()
        if _resolved(flag, values[flag], generation_config, model)
    )


# output: generate()'s dict output, whose class depends on the decoding
def candidate_steps(output: Any, names: tuple[str, ...]) -> list[dict[str, torch.Tensor]]:
    """Each returned row's ``(steps, vocab)`` tensors of ``output`` (a generate() dict output), one
    dict per row.

    Sampling: row ``r`` of every step. Beam search: the row ``beam_indices`` names at each step, up
    to the beam's end (``-1`` after it). Each tensor is a copy, so dropped candidates free their
    call's.
    """
    if not names:
        return [{} for _ in range(output.sequences.shape[0])]
    beam_indices = getattr(output, "beam_indices", None)
    per_name = {}
    for name in names:
        steps = getattr(output, name)
        if steps is None:
            raise ValueError(
                f"generate() returned no `{name}`; DTG cannot return them for this model"
            )
        rows = []
        for row in range(output.sequences.shape[0]):
            if beam_indices is None:
                rows.append(torch.stack([step[row] for step in steps]))
            else:
                sources = [
                    int(index) for index in beam_indices[row, : len(steps)].tolist() if index >= 0
                ]
                rows.append(torch.stack([steps[t][source] for t, source in enumerate(sources)]))
        per_name[name] = rows
    return [
        {name: per_name[name][row] for name in names} for row in range(output.sequences.shape[0])
    ]


def steps_layout(
    responses: list[dict[str, torch.Tensor]], names: tuple[str, ...], width: int, pad_token_id: int
) -> dict[str, tuple[torch.Tensor, ...]]:
    """``{name: tuple of width tensors (len(responses), vocab)}``, each response's rows padded as
    the module says."""
    out = {}
    for name in names:
        tensors = [response[name] for response in responses]
        vocab, dtype, device = tensors[0].shape[-1], tensors[0].dtype, tensors[0].device
        pad_row = torch.full((vocab,), float("-inf"), dtype=dtype, device=device)
        pad_row[pad_token_id] = 0.0
        padded = torch.stack(
            [
                torch.cat([rows[:width], pad_row.expand(max(width - len(rows), 0), vocab)])
                for rows in tensors
            ]
        )
        # step-major, one contiguous tensor per step
        out[name] = tuple(padded.transpose(0, 1).contiguous())
    return out
