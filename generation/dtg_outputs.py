"""DTG behind the ``generate()`` contract: the ``custom_generate`` recipe's body.

``model.generate(custom_generate=custom_generate_path(), trust_remote_code=True, tokenizer=tok, ...)`` runs
:func:`dtg_generate`, which answers as ``generate(num_return_sequences=n)`` would:

- the ids of each context's final set, ``num_responses`` rows per context in context order;
  for decoder-only models each row is the prompt exactly as passed (its padding included; a
  right-padded batch is first re-padded on the left, :mod:`dialeval.generation.dtg_padding`) and the
  response's tokens, for seq2seq models the decoder tokens; rows are right-padded with the pad
  token, as generate() pads finished sequences;
- with ``return_dict_in_generate=True`` (or a generation config that sets it) a
  :class:`DTGDecoderOnlyOutput` / :class:`DTGEncoderDecoderOutput`, subclasses of transformers'
  ``GenerateDecoderOnlyOutput`` / ``GenerateEncoderDecoderOutput`` with the same ``sequences``
  and one extra field, ``dtg_results`` (a :class:`~dialeval.generation.dtg.DTGResult` per context);
- with ``output_scores=True`` / ``output_logits=True`` as well, ``scores`` / ``logits`` as
  generate() gives them (one ``(rows, vocab)`` tensor per generated column of ``sequences``), each
  row those of the generate call that drew that response (:mod:`dialeval.generation.dtg_scores`);
  ``output_attentions`` / ``output_hidden_states`` are refused with a ValueError.

``num_return_sequences`` is accepted as ``num_responses`` and read where generate() reads it:
the argument, else the ``generation_config`` passed, else ``model.generation_config``, else 5
(:func:`~dialeval.generation.dtg_inputs.resolved_num_responses`). The caller's tokenizer and
generation configs are not changed: DTG works on copies.
"""  # noqa: E501

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from transformers import GenerationMixin
from transformers.generation import GenerateDecoderOnlyOutput, GenerateEncoderDecoderOutput

from dialeval.generation.dtg import diversity_threshold_generate
from dialeval.generation.dtg_checks import check_optional_flag
from dialeval.generation.dtg_decoding import generate_layout
from dialeval.generation.dtg_inputs import (
    check_generation_config,
    check_model,
    check_token_batch,
    resolved_num_responses,
    vocabulary_size,
)
from dialeval.generation.dtg_padding import left_padded
from dialeval.generation.dtg_scores import steps_layout
from dialeval.validation import ArgumentError, arguments_named

if TYPE_CHECKING:
    import torch
    from transformers import GenerationConfig
    from transformers.generation.utils import GenerateOutput

    from dialeval.generation.generation_settings import GenerativeModel
    from dialeval.type_aliases import Tokenizer

#: generate() arguments that a caller leaves at None and DTG does not need to see.
_GENERATE_ARGUMENTS = (
    "logits_processor",
    "stopping_criteria",
    "prefix_allowed_tokens_fn",
    "synced_gpus",
    "assistant_model",
    "streamer",
    "negative_prompt_ids",
    "negative_prompt_attention_mask",
    "use_model_defaults",
)


@dataclass
class DTGDecoderOnlyOutput(GenerateDecoderOnlyOutput):
    """``GenerateDecoderOnlyOutput`` plus ``dtg_results``: one DTGResult per context."""

    dtg_results: list | None = None


@dataclass
class DTGEncoderDecoderOutput(GenerateEncoderDecoderOutput):
    """``GenerateEncoderDecoderOutput`` plus ``dtg_results``: one DTGResult per context."""

    dtg_results: list | None = None


class _PlainGenerate:
    """The model seen through ``GenerationMixin.generate``: a model whose own ``generate`` was
    replaced by a custom recipe (transformers does that when the model's repository ships one) must
    not recurse."""

    def __init__(self, model: GenerativeModel) -> None:
        self._model = model
        self.config = model.config
        self.generation_config = model.generation_config

    @property
    def device(self) -> torch.device:
        return self._model.device

    def get_input_embeddings(self) -> torch.nn.Module:
        return self._model.get_input_embeddings()

    def generate(self, **kwargs: Any) -> GenerateOutput | torch.LongTensor:
        return GenerationMixin.generate(self._model, **kwargs)


def custom_generate_path() -> str:
    """The folder to pass as ``model.generate(custom_generate=...)``: it holds
    ``custom_generate/generate.py``.

    transformers loads a local recipe from a directory that *contains*
    ``custom_generate/generate.py`` (not from ``custom_generate/`` itself); this is
    ``dialeval.generation``'s own folder, in a checkout (``generation/``) and in an installed wheel
    alike.
    """
    return str(Path(__file__).resolve().parent)


def dtg_generate(
    model: GenerativeModel,
    inputs: torch.Tensor | None = None,
    generation_config: GenerationConfig | None = None,
    tokenizer: Tokenizer | None = None,
    num_responses: int | None = None,
    num_return_sequences: int | None = None,
    return_dict_in_generate: bool | None = None,
    **kwargs: Any,
) -> torch.Tensor | DTGDecoderOnlyOutput | DTGEncoderDecoderOutput:
    """:func:`~dialeval.generation.diversity_threshold_generate` with ``generate()``'s arguments and
    return value.

    Takes ``inputs`` / ``input_ids`` (and ``attention_mask``) as ``generate`` does, ``tokenizer``
    (required: DTG decodes and scores text) and every DTG option (``metric``, ``threshold``,
    ``max_samples``, ``decoding``, ``nli_objective``, ...); other keywords are generation settings.
    """
    check_model(model)
    if tokenizer is None:
        raise ArgumentError(
            "tokenizer",
            "is required: DTG decodes and scores text; pass tokenizer=... to generate()",
        )
    check_generation_config(generation_config)
    if (
        num_responses is not None
        and num_return_sequences is not None
        and num_responses != num_return_sequences
    ):
        raise ArgumentError(
            "num_responses",
            f"({num_responses}) and `num_return_sequences` ({num_return_sequences}) "
            "name the same thing; give one",
        )
    num_responses = resolved_num_responses(
        num_responses if num_responses is not None else num_return_sequences,
        generation_config,
        model,
        "num_responses" if num_responses is not None else "num_return_sequences",
    )
    return_dict = next(
        (
            bool(value)
            for value in (
                check_optional_flag(return_dict_in_generate, "return_dict_in_generate"),
                getattr(generation_config, "return_dict_in_generate", None),
                model.generation_config.return_dict_in_generate,
            )
            if value is not None
        ),
        False,
    )
    for name in _GENERATE_ARGUMENTS:
        if kwargs.get(name) is None:
            kwargs.pop(name, None)
    encoded = {
        key: kwargs.pop(key)
        for key in ("input_ids", "attention_mask")
        if kwargs.get(key) is not None
    }
    if inputs is not None:
        encoded["input_ids"] = inputs
    if "input_ids" not in encoded:
        raise ArgumentError(
            "inputs", "is required: pass the tokenized contexts as `inputs` or `input_ids`"
        )
    with arguments_named({"input_ids": "inputs"} if inputs is not None else {}):
        check_token_batch(encoded, vocabulary_size(model))
    # sequences then start with the prompt as a left-padded call has it
    if not model.config.is_encoder_decoder:
        encoded = left_padded(encoded)
    results = diversity_threshold_generate(
        _PlainGenerate(model),
        tokenizer,
        encoded,
        num_responses=num_responses,
        generation_config=generation_config,
        **kwargs,
    )
    pad_token_id = results[0].decoding_settings["pad_token_id"]
    is_encoder_decoder = bool(model.config.is_encoder_decoder)
    sequences = generate_layout(
        None if is_encoder_decoder else encoded["input_ids"],
        [result.response_token_ids for result in results],
        pad_token_id,
    )
    if not return_dict:
        return sequences
    output_class = DTGEncoderDecoderOutput if is_encoder_decoder else DTGDecoderOnlyOutput
    # generate() scores every generated column but a seq2seq row's first (the decoder start token).
    width = sequences.shape[1] - (1 if is_encoder_decoder else encoded["input_ids"].shape[1])
    names = tuple(
        name for name in ("scores", "logits") if getattr(results[0], f"response_{name}") is not None
    )
    kept = [
        {name: getattr(result, f"response_{name}")[index] for name in names}
        for result in results
        for index in range(len(result.response_token_ids))
    ]
    # transformers annotates sequences torch.LongTensor and each step field with its own tuple
    # type; a tensor and steps_layout's tuples are what generate() itself puts there
    return output_class(
        sequences=sequences,  # type: ignore[arg-type]
        dtg_results=results,
        **steps_layout(kept, names, width, pad_token_id),  # type: ignore[arg-type]
    )
