"""N-best lists for Certainty / Variety analysis (Sato et al. 2022, §4, App. C).

- :func:`beam_search_nbest` -- beam search with beam size B returning all B beams (§4.2; the
  paper's BS, ``beam_length_penalty=0`` in ParlAI = ``length_penalty=0.0`` here, App. C).
- :func:`nucleus_sampling_nbest` -- nucleus sampling performed n times (§4.3 "NS", footnote 6).
- :func:`diverse_beam_search_nbest` / :func:`group_beam_search` -- diverse (group) beam search
  with the Hamming diversity penalty (Vijayakumar et al. 2016/2018; the paper's "DBS"). This is
  our own implementation: transformers 5 moved group beam search out of the library to a Hub
  repository, which we do not load (no remote code).
- :func:`beam_size_sweep` -- Certainty / Variety of beam-search n-best lists for several beam
  sizes (§4.2, Fig. 2); :func:`dialeval.generation.nbest_plots.plot_beam_size_sweep` draws it.

All four decode under the same settings: the paper ran "ParlAI's default settings, except
``beam_length_penalty=0``" (App. C), i.e. the checkpoint's own content constraints (BlenderBot:
minimum length 20, tri-gram blocking, forced EOS; on the Hub in its ``generation_config``) with
the algorithm set by us (beam size, no length penalty, no sampling for BS / DBS; for NS one beam,
the nucleus, no top-k, temperature 1). Beam search and NS pass through ``model.generate``; DBS
builds the same logits processors (:mod:`dialeval.generation.generation_settings`).

Inputs go to the model ``batch_size`` at a time (each with its B beams or n samples, so a call
holds ``batch_size * B`` rows), longest first so that an out-of-memory batch fails at once;
results come back in input order. The caller's tokenizer and generation config are never
modified. Contexts longer than ``max_context_tokens`` keep their last tokens (the end of the
dialogue, where the question is; as ParlAI truncates and as the DTG paper's §6.1 does).

:func:`group_beam_search` lives in :mod:`dialeval.generation.group_beam_search`.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import torch

from dialeval.generation.generation_settings import GenerativeModel, search_settings
from dialeval.generation.group_beam_search import (
    DEFAULT_MAX_NEW_TOKENS,
    Hypothesis,
    group_beam_search,
)
from dialeval.hub import max_input_length
from dialeval.metrics.nbest_contradiction.certainty_variety import nbest_contradiction
from dialeval.metrics.nbest_contradiction.yes_no import load_yes_no_classifier
from dialeval.validation import ArgumentError, check_flag, check_int

if TYPE_CHECKING:
    from dialeval.metrics.nbest_contradiction.yes_no import YesNoClassifier
    from dialeval.type_aliases import Tokenizer

#: Nucleus sampling as in the paper's NS (ParlAI's default topp = 0.9); top_k=0: only the nucleus
#: truncates.
DEFAULT_TOP_P = 0.9
#: Inputs per ``generate`` call: 8 x B = 40 beams is 320 rows, which a 16 GB GPU holds for a 3B
#: model.
DEFAULT_BATCH_SIZE = 8


def _check_inputs(inputs: Sequence[str]) -> list[str]:
    if isinstance(inputs, str) or not isinstance(inputs, (list, tuple)) or not inputs:
        raise ArgumentError("inputs", "must be a non-empty list of context strings")
    for index, text in enumerate(inputs):
        if not isinstance(text, str) or not text:
            raise ArgumentError(f"inputs[{index}]", f"must be a non-empty string, got {text!r:.60}")
    return list(inputs)


def _tokenize(
    tokenizer: Tokenizer, inputs: list[str], max_context_tokens: int | None
) -> list[list[int]]:
    """Token ids per input, unpadded; over-long contexts keep their last ``max_context_tokens``."""
    if max_context_tokens is None:
        return tokenizer(inputs)["input_ids"]
    check_int(max_context_tokens, "max_context_tokens")
    # A shallow copy: the caller's tokenizer keeps its own truncation side.
    left = copy.copy(tokenizer)
    left.truncation_side = "left"
    return left(inputs, truncation=True, max_length=max_context_tokens)["input_ids"]


def _pad_id(tokenizer: Tokenizer, model: GenerativeModel) -> int:
    for candidate in (
        tokenizer.pad_token_id,
        model.generation_config.pad_token_id,
        tokenizer.eos_token_id,
    ):
        if isinstance(candidate, int):
            return candidate
    raise ValueError(
        "the tokenizer has neither a pad nor an EOS token, and the generation config no "
        "pad_token_id"
    )


def _batch(model: GenerativeModel, token_ids: list[list[int]], pad_id: int) -> dict:
    """Padded tensors on the model's device: on the left for decoder-only models (they continue
    after the last token), on the right for encoder-decoder ones."""
    width = max(len(ids) for ids in token_ids)
    left = not model.config.is_encoder_decoder
    rows, masks = [], []
    for ids in token_ids:
        padding = [pad_id] * (width - len(ids))
        ones, zeros = [1] * len(ids), [0] * (width - len(ids))
        rows.append(padding + ids if left else ids + padding)
        masks.append(zeros + ones if left else ones + zeros)
    device = getattr(model, "device", None)
    return {
        "input_ids": torch.tensor(rows, device=device),
        "attention_mask": torch.tensor(masks, device=device),
    }


def _batches(token_ids: list[list[int]], batch_size: int) -> list[list[int]]:
    """Index lists of ``batch_size`` inputs, longest first (the first batch is the largest)."""
    order = sorted(range(len(token_ids)), key=lambda index: (-len(token_ids[index]), index))
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def _decode(tokenizer: Tokenizer, token_ids: list[int]) -> str:
    # one sequence of ids decodes to one string (transformers' annotation adds the batch case)
    return cast(str, tokenizer.decode(token_ids, skip_special_tokens=True)).strip()


def _check_room(
    model: GenerativeModel, max_new_tokens: int, token_ids: list[list[int]], options: dict
) -> None:
    """Errors before any decoding: a ``max_new_tokens`` below the checkpoint's minimum length
    (every hypothesis would be cut before it may end), or prompt plus response beyond the
    model's position table (an index error hours into a GPU run otherwise)."""
    search_options = {
        key: value for key, value in options.items() if key in ("min_length", "min_new_tokens")
    }
    settings = search_settings(model, **search_options)
    encoder_decoder = model.config.is_encoder_decoder
    needed = settings.min_generated_tokens(
        1 if encoder_decoder else min(len(ids) for ids in token_ids)
    )
    if max_new_tokens < needed:
        raise ArgumentError(
            "max_new_tokens",
            f"({max_new_tokens}) is below the {needed} tokens the generation config's "
            f"min_length={settings.config.min_length} / "
            f"min_new_tokens={settings.config.min_new_tokens} require before a response may end: "
            "raise it",
        )
    positions = max_input_length(model.config)
    longest = (
        1 + max_new_tokens
        if encoder_decoder
        else max(len(ids) for ids in token_ids) + max_new_tokens
    )
    if positions is not None and longest > positions:
        where = (
            "the decoder start token"
            if encoder_decoder
            else "the longest prompt (pass max_context_tokens to cut it)"
        )
        raise ArgumentError(
            "max_new_tokens",
            f"({max_new_tokens}) plus {where} is {longest} tokens, beyond the model's "
            f"{positions} positions",
        )


def _generate_nbest(
    model: GenerativeModel,
    tokenizer: Tokenizer,
    inputs: Sequence[str],
    per_input: int,
    max_context_tokens: int | None,
    batch_size: int,
    generate_kwargs: dict,
    seed: int | None = None,
) -> list[list[str]]:
    inputs = _check_inputs(inputs)
    check_int(batch_size, "batch_size")
    check_int(generate_kwargs["max_new_tokens"], "max_new_tokens")
    token_ids = _tokenize(tokenizer, inputs, max_context_tokens)
    _check_room(model, generate_kwargs["max_new_tokens"], token_ids, generate_kwargs)
    pad_id = _pad_id(tokenizer, model)
    results: list[list[str] | None] = [None] * len(inputs)
    for batch_index, indices in enumerate(_batches(token_ids, batch_size)):
        encoded = _batch(model, [token_ids[i] for i in indices], pad_id)
        # A seeded batch forks the random state, so the caller's stays where it was.
        seeded = (
            torch.random.fork_rng(devices=_rng_devices(model))
            if seed is not None
            else contextlib.nullcontext()
        )
        with seeded, torch.inference_mode():
            if seed is not None:
                torch.manual_seed(seed + batch_index)
            # return_dict_in_generate=True whatever the checkpoint says, so the output has one
            # shape.
            output = model.generate(
                **encoded,
                num_return_sequences=per_input,
                pad_token_id=pad_id,
                return_dict_in_generate=True,
                **generate_kwargs,
            ).sequences
        if not model.config.is_encoder_decoder:
            output = output[:, encoded["input_ids"].shape[1] :]
        texts = [_decode(tokenizer, row) for row in output.cpu()]
        for position, index in enumerate(indices):
            results[index] = texts[position * per_input : (position + 1) * per_input]
    return cast("list[list[str]]", results)  # every input's slot is filled above


def _rng_devices(model: GenerativeModel) -> list:
    device = getattr(model, "device", None)
    return [device] if device is not None and device.type == "cuda" else []


def beam_search_nbest(
    model: GenerativeModel,
    tokenizer: Tokenizer,
    inputs: Sequence[str],
    beam_size: int = 10,
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    length_penalty: float = 0.0,
    max_context_tokens: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    **generate_kwargs: Any,
) -> list[list[str]]:
    """The B beams of beam search with beam size B, best first, per input (§4.2, Table 2 / Fig. 2).

    ``length_penalty=0.0`` ranks by the raw sum of log-probabilities, as the paper's ParlAI
    setting ``beam_length_penalty=0`` (App. C); ``early_stopping=False``. The checkpoint's
    content constraints (``min_length``, ``no_repeat_ngram_size``, ...) apply; other
    ``generate`` options pass through. ``batch_size``: inputs per ``generate`` call (each with
    its B beams); the result does not depend on it.
    """
    check_int(beam_size, "beam_size")
    kwargs = {
        "num_beams": beam_size,
        "do_sample": False,
        "max_new_tokens": max_new_tokens,
        "length_penalty": length_penalty,
        "early_stopping": False,
        **generate_kwargs,
    }
    return _generate_nbest(
        model, tokenizer, inputs, beam_size, max_context_tokens, batch_size, kwargs
    )


def nucleus_sampling_nbest(
    model: GenerativeModel,
    tokenizer: Tokenizer,
    inputs: Sequence[str],
    n: int = 10,
    top_p: float = DEFAULT_TOP_P,
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    seed: int | None = None,
    max_context_tokens: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    **generate_kwargs: Any,
) -> list[list[str]]:
    """n responses per input, each an independent nucleus sample (§4.3 "NS", footnote 6: sampled ten
    times).

    Pure nucleus sampling whatever the checkpoint's defaults (BlenderBot's ``num_beams=10``
    would otherwise make it beam-sample): one beam, top-p, no top-k, temperature 1, no typical-p.
    ``seed`` makes the samples reproducible without touching the caller's random state: batch k
    (of ``batch_size`` inputs, longest first) is sampled under ``seed + k``, so the samples
    depend on ``batch_size`` too.
    """
    check_int(n, "n")
    if isinstance(top_p, bool) or not isinstance(top_p, (int, float)) or not 0 < top_p <= 1:
        raise ArgumentError("top_p", f"must be in (0, 1], got {top_p!r}")
    kwargs = {
        "do_sample": True,
        "top_p": top_p,
        "top_k": 0,
        "temperature": 1.0,
        "typical_p": 1.0,
        "num_beams": 1,
        "max_new_tokens": max_new_tokens,
        **generate_kwargs,
    }
    return _generate_nbest(
        model, tokenizer, inputs, n, max_context_tokens, batch_size, kwargs, seed=seed
    )


def diverse_beam_search_nbest(
    model: GenerativeModel,
    tokenizer: Tokenizer,
    inputs: Sequence[str],
    beam_size: int = 10,
    num_beam_groups: int = 5,
    diversity_penalty: float = 0.5,
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    length_penalty: float = 0.0,
    max_context_tokens: int | None = None,
    return_hypotheses: bool = False,
    batch_size: int = DEFAULT_BATCH_SIZE,
    **search_kwargs: Any,
) -> list[list[str]] | list[list[Hypothesis]]:
    """The B hypotheses of diverse (group) beam search per input, best first (§4.3 "DBS").

    Defaults: B=10 as the paper (footnote 6); G=5 groups and λ=0.5 are our choice -- the paper
    does not state its DBS settings (ParlAI's defaults otherwise). The checkpoint's content
    constraints apply as in :func:`beam_search_nbest`; ``search_kwargs`` go to
    :func:`~dialeval.generation.group_beam_search.group_beam_search` (e.g.
    ``no_repeat_ngram_size=3``). ``return_hypotheses``: return :class:`Hypothesis` objects
    (scores, group) instead of texts. ``batch_size``: inputs tokenized and kept at a time (the
    search itself runs one input, B beams, at a time).
    """
    inputs = _check_inputs(inputs)
    check_int(batch_size, "batch_size")
    check_flag(return_hypotheses, "return_hypotheses")
    check_int(max_new_tokens, "max_new_tokens")
    token_ids = _tokenize(tokenizer, inputs, max_context_tokens)
    _check_room(model, max_new_tokens, token_ids, search_kwargs)
    results: list[Any] = [None] * len(inputs)  # each input's texts or hypotheses, filled below
    for indices in _batches(token_ids, batch_size):
        for index in indices:
            prompt = torch.tensor([token_ids[index]], device=getattr(model, "device", None))
            hypotheses = group_beam_search(
                model,
                prompt,
                None,
                num_beams=beam_size,
                num_beam_groups=num_beam_groups,
                diversity_penalty=diversity_penalty,
                max_new_tokens=max_new_tokens,
                length_penalty=length_penalty,
                **search_kwargs,
            )[0]
            results[index] = (
                hypotheses
                if return_hypotheses
                else [_decode(tokenizer, h.token_ids) for h in hypotheses]
            )
    return results


def dialogue_prompt(
    turns: Sequence[str], tokenizer: Tokenizer, model: GenerativeModel, separator: str | None = None
) -> str:
    """One context string from dialogue turns (history, message).

    Decoder-only models (DialoGPT) read each turn followed by the EOS token; encoder-decoder
    models (BlenderBot) read the turns joined by ``separator`` (default a newline, ParlAI's).
    """
    if (
        isinstance(turns, str)
        or not turns
        or not all(isinstance(turn, str) and turn for turn in turns)
    ):
        raise ArgumentError("turns", "must be a non-empty list of non-empty strings")
    if model.config.is_encoder_decoder:
        return (separator if separator is not None else "\n").join(turns)
    if tokenizer.eos_token is None:
        raise ValueError(
            "decoder-only prompts end each turn with the EOS token; this tokenizer has none"
        )
    return "".join(turn + tokenizer.eos_token for turn in turns)


def beam_size_sweep(
    model: GenerativeModel,
    tokenizer: Tokenizer,
    inputs: Sequence[str],
    references: Sequence[str],
    classifier: str | YesNoClassifier,
    beam_sizes: Sequence[int] = (5, 10, 20, 40),
    input_types: Sequence[str] | None = None,
    questions: Sequence[str] | None = None,
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    length_penalty: float = 0.0,
    max_context_tokens: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    classifier_batch_size: int = 32,
    generate_kwargs: dict | None = None,
    **metric_options: Any,
) -> list[dict]:
    """Certainty / Variety of beam-search n-best lists per beam size (§4.2, Fig. 2).

    ``inputs``: context strings (see :func:`dialogue_prompt`); ``references``: expected answers;
    ``classifier``, ``input_types``, ``questions`` and ``metric_options`` (``device``,
    ``dtype``, ``label_map``): as
    :func:`dialeval.metrics.nbest_contradiction.certainty_variety.nbest_contradiction`.
    ``batch_size``: inputs per ``generate`` call (:func:`beam_search_nbest`);
    ``classifier_batch_size``: responses per classifier forward. Returns one dict per beam
    size: ``beam_size`` and the metric's figures (``per_input`` left out).
    """
    if isinstance(beam_sizes, (str, int)) or not beam_sizes:
        raise ArgumentError(
            "beam_sizes", f"must be a non-empty list of positive ints, got {beam_sizes!r}"
        )
    for size in beam_sizes:
        check_int(size, "beam_sizes[i]")
    # Load the classifier once for every beam size.
    loaded = load_yes_no_classifier(
        classifier,
        batch_size=classifier_batch_size,
        **{
            k: metric_options.pop(k)
            for k in ("device", "dtype", "label_map")
            if k in metric_options
        },
    )
    sweep = []
    for size in beam_sizes:
        nbest = beam_search_nbest(
            model,
            tokenizer,
            inputs,
            beam_size=size,
            max_new_tokens=max_new_tokens,
            length_penalty=length_penalty,
            max_context_tokens=max_context_tokens,
            batch_size=batch_size,
            **(generate_kwargs or {}),
        )
        figures = nbest_contradiction(
            nbest,
            references,
            loaded,
            questions=questions,
            input_types=input_types,
            **metric_options,
        )
        figures.pop("per_input")
        sweep.append({"beam_size": size, **figures})
    return sweep
