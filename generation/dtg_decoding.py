"""DTG's decoding settings (Stasaski & Hearst 2022, §6.1-6.2, App. D) and generate()'s token layout.

**Whose settings.** §6.2 decodes with nucleus sampling, p = 0.9; App. D with beam search over
25 beams. A checkpoint's ``generation_config`` may choose another algorithm (BlenderBot's sets
``num_beams=10``: with ``do_sample=True`` transformers would run *beam sampling*), so every
setting that selects or reshapes the decoding algorithm is DTG's: :data:`SAMPLING` /
:data:`BEAM_SEARCH` overwrite the checkpoint's, and only keyword arguments of the caller change
them (``top_p=``, ``temperature=``; ``num_beams>1`` or ``do_sample=False`` with sampling are
refused). Settings that only constrain the content (``min_length``, ``no_repeat_ngram_size``,
``forced_eos_token_id``, ``repetition_penalty``, BlenderBot's ``length_penalty`` for beams...) are
kept from the checkpoint, because §6.1 runs "the default Transformers implementation for each
model" and changes only the decoder (§6.2); the caller's keywords override them too.

transformers fills every setting left ``None`` from the model's own ``generation_config``, so
settings that can only be switched off by ``None`` (``dola_layers``, ``min_p``, ``constraints``,
...) cannot be overridden here: a checkpoint that sets one is refused with a message naming it.

:func:`decoding_record` is what each result and ``OUTPUT.run.json`` record: the effective value of
every setting that changes what is generated.
"""

from __future__ import annotations

import copy
import numbers
from typing import TYPE_CHECKING, Any

import torch
from transformers import GenerationConfig
from transformers.generation import GenerationMode

from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    from dialeval.generation.generation_settings import GenerativeModel
    from dialeval.type_aliases import Tokenizer

#: §6.2: nucleus sampling (Holtzman et al. 2020), p = 0.9, at temperature 1 with no top-k cut.
SAMPLING = {
    "do_sample": True,
    "num_beams": 1,
    "num_beam_groups": 1,
    "diversity_penalty": 0.0,
    "top_p": 0.9,
    "top_k": 0,
    "temperature": 1.0,
    "typical_p": 1.0,
    "epsilon_cutoff": 0.0,
    "eta_cutoff": 0.0,
}
#: App. D: plain beam search (``num_beams`` is set per run, 25 by default).
BEAM_SEARCH = {"do_sample": False, "num_beam_groups": 1, "diversity_penalty": 0.0}
#: Keyword arguments that would turn DTG's sampling into another algorithm.
_SAMPLING_FIXED = {"do_sample": True, "num_beams": 1, "num_beam_groups": 1}
_BEAM_FIXED = {"do_sample": False, "num_beam_groups": 1}
#: Algorithm switches that transformers can only turn off by ``None``, which it then refills from
#: the checkpoint: DTG cannot override them.
_UNSETTABLE = (
    "min_p",
    "top_h",
    "dola_layers",
    "constraints",
    "force_words_ids",
    "prompt_lookup_num_tokens",
    "assistant_early_exit",
    "guidance_scale",
    "watermarking_config",
    "use_mtp",
)
#: DTG's generate calls return plain tensors, whatever the checkpoint asks for.
_PLAIN_OUTPUT = {
    "return_dict_in_generate": False,
    "output_scores": False,
    "output_logits": False,
    "output_attentions": False,
    "output_hidden_states": False,
}
#: What a result records: the algorithm and every setting that constrains the content.
_RECORDED = (
    "do_sample",
    "num_beams",
    "num_beam_groups",
    "diversity_penalty",
    "top_p",
    "top_k",
    "temperature",
    "typical_p",
    "epsilon_cutoff",
    "eta_cutoff",
    *_UNSETTABLE,
    "max_new_tokens",
    "max_length",
    "min_new_tokens",
    "min_length",
    "no_repeat_ngram_size",
    "encoder_no_repeat_ngram_size",
    "repetition_penalty",
    "encoder_repetition_penalty",
    "length_penalty",
    "early_stopping",
    "bad_words_ids",
    "sequence_bias",
    "suppress_tokens",
    "begin_suppress_tokens",
    "forced_bos_token_id",
    "forced_eos_token_id",
    "exponential_decay_length_penalty",
    "renormalize_logits",
    "stop_strings",
    "eos_token_id",
    "pad_token_id",
    "decoder_start_token_id",
)
_BEAM_ONLY = ("num_beam_groups", "diversity_penalty", "length_penalty", "early_stopping")
_SAMPLING_ONLY = ("top_p", "top_k", "temperature", "typical_p", "epsilon_cutoff", "eta_cutoff")


def dtg_generation_config(
    model: GenerativeModel,
    tokenizer: Tokenizer,
    decoding: str,
    num_beams: int,
    generation_config: GenerationConfig | None = None,
    overrides: dict | None = None,
) -> tuple[GenerationConfig, dict]:
    """The effective ``GenerationConfig`` of DTG's generate calls, and the remaining model kwargs.

    Starts from a copy of ``generation_config`` (or an empty one), fills what it leaves unset from
    the model's ``generation_config`` (content constraints), sets DTG's algorithm (:data:`SAMPLING`
    for ``decoding="sample"``, :data:`BEAM_SEARCH` and ``num_beams`` for ``"beam"``) and applies
    ``overrides`` (``generate`` keyword arguments) last. Neither argument's object is changed.

    Raises:
        ValueError: an override that changes the algorithm, ``num_return_sequences`` (DTG sets it),
            or a checkpoint setting DTG cannot switch off (see the module docstring).
    """
    overrides = dict(overrides or {})
    if "num_return_sequences" in overrides:
        raise ArgumentError(
            "num_return_sequences",
            "is set by DTG (num_responses, or num_beams for beam decoding); leave it out",
        )
    fixed = _SAMPLING_FIXED if decoding == "sample" else _BEAM_FIXED
    for key, required in fixed.items():
        if key in overrides and overrides[key] != required:
            raise ArgumentError(
                key,
                f"={overrides[key]!r} would change DTG's decoding algorithm; decoding={decoding!r} "
                f"needs {key}={required!r}"
                + (" (use decoding='beam' for App. D's beams)" if decoding == "sample" else ""),
            )
    if decoding == "beam" and "num_beams" in overrides:
        raise ArgumentError(
            "num_beams",
            "is DTG's own argument with decoding='beam': pass DTG's `num_beams=`, not a generate "
            "keyword",
        )
    config = (
        copy.deepcopy(generation_config) if generation_config is not None else GenerationConfig()
    )
    # n is read from either config before this (dtg_inputs.resolved_num_responses) and each call
    # sets its own count; left in, a count > 1 fails validation while do_sample is still unset.
    config.num_return_sequences = None
    checkpoint = getattr(model, "generation_config", None)
    if checkpoint is not None:
        inherited = checkpoint.to_dict()
        inherited.pop("num_return_sequences", None)
        config.update(**inherited, defaults_only=True)
    for key, value in (
        SAMPLING if decoding == "sample" else {**BEAM_SEARCH, "num_beams": num_beams}
    ).items():
        setattr(config, key, value)
    for key, value in _PLAIN_OUTPUT.items():
        setattr(config, key, value)
    model_kwargs: dict[str, Any] = {}
    for key, value in overrides.items():
        if hasattr(config, key) and not key.startswith("_"):
            setattr(config, key, value)
        else:
            model_kwargs[key] = value
    for key in (
        "temperature",
        "repetition_penalty",
    ):  # transformers' warpers refuse an int (temperature=2)
        setting = getattr(config, key, None)
        if isinstance(setting, numbers.Integral) and not isinstance(setting, bool):
            setattr(config, key, float(setting))
    if config.pad_token_id is None:
        config.pad_token_id = (
            tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        )
    for key in _UNSETTABLE:
        if _switched_on(key, getattr(config, key, None)) and key not in overrides:
            raise ValueError(
                f"the model's generation_config sets `{key}={getattr(config, key)!r}`, which "
                "changes the decoding algorithm and cannot be unset per call (generate() refills "
                f"None from it): set model.generation_config.{key} = None before running DTG"
            )
    expected = GenerationMode.SAMPLE if decoding == "sample" else GenerationMode.BEAM_SEARCH
    mode = config.get_generation_mode()
    if mode != expected:
        raise ValueError(
            f"DTG's {decoding!r} decoding must run as {expected.value}, but these settings give "
            f"{mode.value}"
        )
    return config, model_kwargs


def _switched_on(key: str, value: object) -> bool:
    if key == "guidance_scale":
        return value is not None and value != 1  # 1 is classifier-free guidance switched off
    return value is not None and value is not False and value != 0


def _jsonable(value: object) -> Any:  # JSON: a dict, list, str, number, bool or None
    if isinstance(value, dict):
        if all(isinstance(key, str) for key in value):
            return {key: _jsonable(item) for key, item in value.items()}
        return [[_jsonable(key), _jsonable(item)] for key, item in value.items()]
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if hasattr(value, "to_dict"):
        return _jsonable(value.to_dict())
    return repr(value)


def decoding_record(config: GenerationConfig, decoding: str) -> dict:
    """The effective settings of DTG's decoding as JSON: every algorithm and content setting that is
    set.

    Beam-only settings are left out of a sampling record, sampling-only ones out of a beam record.
    """
    skip = _BEAM_ONLY if decoding == "sample" else _SAMPLING_ONLY
    record = {"decoding": decoding}
    for key in _RECORDED:
        value = getattr(config, key, None)
        if value is not None and key not in skip:
            record[key] = _jsonable(value)
    return record


def eos_ids(config: GenerationConfig) -> set[int]:
    eos = config.eos_token_id
    if eos is None:
        return set()
    if isinstance(eos, torch.Tensor):
        eos = eos.tolist()
    return set(eos) if isinstance(eos, (list, tuple, set)) else {int(eos)}


def generated_ids(
    rows: torch.Tensor, start: int, eos: set[int], pad_token_id: int | None, skip_first: bool
) -> list[list[int]]:
    """Each row's generated tokens as generate() produced them, without the padding after them.

    ``rows[:, start:]`` are the generated positions (``start`` = the prompt width for decoder-only
    models, 0 for seq2seq). generate() pads a finished row with ``pad_token_id`` after its first
    EOS; a row is cut just after that EOS (``skip_first``: seq2seq rows begin with the decoder
    start token, often EOS itself). A row without EOS loses only trailing pads.
    """
    out = []
    for row in rows[:, start:].tolist():
        end = None
        for position in range(1 if skip_first else 0, len(row)):
            if row[position] in eos:
                end = position + 1
                break
        if end is None:
            end = len(row)
            if pad_token_id is not None and pad_token_id not in eos:
                while end > (1 if skip_first else 0) and row[end - 1] == pad_token_id:
                    end -= 1
        out.append(row[:end])
    return out


def generate_layout(
    prompt_ids: torch.Tensor | None, responses: list[list[list[int]]], pad_token_id: int
) -> torch.Tensor:
    """``sequences`` as generate(num_return_sequences=n) lays them out, for each context's final
    set.

    Decoder-only models (``prompt_ids`` given): each row is its context's prompt exactly as passed
    (its padding included) followed by the response's tokens; seq2seq (``prompt_ids=None``): the
    decoder tokens. Rows are right-padded with ``pad_token_id`` to the longest, in context order.
    """
    rows: list[list[int]] = []
    for context, tokens in enumerate(responses):
        prompt = prompt_ids[context].tolist() if prompt_ids is not None else []
        rows.extend(prompt + list(response) for response in tokens)
    width = max(len(row) for row in rows)
    device = prompt_ids.device if prompt_ids is not None else None
    return torch.tensor(
        [row + [pad_token_id] * (width - len(row)) for row in rows], dtype=torch.long, device=device
    )
