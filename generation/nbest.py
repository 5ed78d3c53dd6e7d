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

:func:`group_beam_search` lives in :mod:`dialeval.generation.group_beam_search`.
"""
from __future__ import annotations

import torch

from dialeval.generation.group_beam_search import group_beam_search
from dialeval.validation import check_int

#: Nucleus sampling as in the paper's NS (ParlAI's default topp = 0.9); top_k=0: only the nucleus truncates.
DEFAULT_TOP_P = 0.9


def _encode(tokenizer, model, inputs, max_context_tokens=None):
    if isinstance(inputs, str) or not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("`inputs` must be a non-empty list of context strings")
    for index, text in enumerate(inputs):
        if not isinstance(text, str) or not text:
            raise ValueError(f"`inputs[{index}]` must be a non-empty string, got {text!r:.60}")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    options = {"padding": True, "return_tensors": "pt"}
    if max_context_tokens is not None:
        check_int(max_context_tokens, "max_context_tokens")
        options.update(truncation=True, max_length=max_context_tokens)
    # Decoder-only models continue after the last token: pad (and truncate) on the left.
    side = "right" if model.config.is_encoder_decoder else "left"
    previous = tokenizer.padding_side, tokenizer.truncation_side
    tokenizer.padding_side = tokenizer.truncation_side = side
    try:
        encoded = tokenizer(list(inputs), **options)
    finally:
        tokenizer.padding_side, tokenizer.truncation_side = previous
    device = getattr(model, "device", None)
    return {key: value.to(device) if device is not None else value for key, value in encoded.items()}


def _decode(tokenizer, token_ids) -> str:
    return tokenizer.decode(token_ids, skip_special_tokens=True).strip()


def _generate_nbest(model, tokenizer, inputs, per_input: int, max_context_tokens, generate_kwargs) -> list[list[str]]:
    encoded = _encode(tokenizer, model, inputs, max_context_tokens)
    with torch.inference_mode():
        output = model.generate(**encoded, num_return_sequences=per_input, **generate_kwargs)
    if not model.config.is_encoder_decoder:
        output = output[:, encoded["input_ids"].shape[1]:]
    texts = [_decode(tokenizer, row) for row in output]
    return [texts[i * per_input:(i + 1) * per_input] for i in range(len(inputs))]


def beam_search_nbest(model, tokenizer, inputs, beam_size: int = 10, max_new_tokens: int = 32,
                      length_penalty: float = 0.0, max_context_tokens: int | None = None, **generate_kwargs) -> list[list[str]]:
    """The B beams of beam search with beam size B, best first, per input (§4.2, Table 2 / Fig. 2).

    ``length_penalty=0.0`` ranks by the raw sum of log-probabilities, as the paper's ParlAI
    setting ``beam_length_penalty=0`` (App. C). Other ``generate`` options pass through.
    """
    check_int(beam_size, "beam_size")
    kwargs = {"num_beams": beam_size, "do_sample": False, "max_new_tokens": max_new_tokens,
              "length_penalty": length_penalty, "early_stopping": False, **generate_kwargs}
    return _generate_nbest(model, tokenizer, inputs, beam_size, max_context_tokens, kwargs)


def nucleus_sampling_nbest(model, tokenizer, inputs, n: int = 10, top_p: float = DEFAULT_TOP_P, max_new_tokens: int = 32,
                           seed: int | None = None, max_context_tokens: int | None = None, **generate_kwargs) -> list[list[str]]:
    """n responses per input, each an independent nucleus sample (§4.3 "NS", footnote 6: sampled ten times).

    ``seed`` makes the samples reproducible without touching the caller's random state.
    """
    check_int(n, "n")
    if not isinstance(top_p, (int, float)) or not 0 < top_p <= 1:
        raise ValueError(f"`top_p` must be in (0, 1], got {top_p!r}")
    kwargs = {"do_sample": True, "top_p": top_p, "top_k": 0, "num_beams": 1, "max_new_tokens": max_new_tokens, **generate_kwargs}
    if seed is None:
        return _generate_nbest(model, tokenizer, inputs, n, max_context_tokens, kwargs)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return _generate_nbest(model, tokenizer, inputs, n, max_context_tokens, kwargs)


def diverse_beam_search_nbest(model, tokenizer, inputs, beam_size: int = 10, num_beam_groups: int = 5,
                              diversity_penalty: float = 0.5, max_new_tokens: int = 32, length_penalty: float = 0.0,
                              max_context_tokens: int | None = None, return_hypotheses: bool = False, **search_kwargs):
    """The B hypotheses of diverse (group) beam search per input, best first (§4.3 "DBS").

    Defaults: B=10 as the paper (footnote 6); G=5 groups and λ=0.5 are our choice -- the paper
    does not state its DBS settings (ParlAI's defaults otherwise). ``return_hypotheses``: return
    :class:`Hypothesis` objects (scores, group) instead of texts.
    """
    encoded = _encode(tokenizer, model, inputs, max_context_tokens)
    results = group_beam_search(
        model, encoded["input_ids"], encoded.get("attention_mask"), num_beams=beam_size,
        num_beam_groups=num_beam_groups, diversity_penalty=diversity_penalty, max_new_tokens=max_new_tokens,
        length_penalty=length_penalty, **search_kwargs,
    )
    if return_hypotheses:
        return results
    return [[_decode(tokenizer, hypothesis.token_ids) for hypothesis in hypotheses] for hypotheses in results]


def dialogue_prompt(turns, tokenizer, model, separator: str | None = None) -> str:
    """One context string from dialogue turns (history, message).

    Decoder-only models (DialoGPT) read each turn followed by the EOS token; encoder-decoder
    models (BlenderBot) read the turns joined by ``separator`` (default a newline, ParlAI's).
    """
    if isinstance(turns, str) or not turns or not all(isinstance(turn, str) and turn for turn in turns):
        raise ValueError("`turns` must be a non-empty list of non-empty strings")
    if model.config.is_encoder_decoder:
        return (separator if separator is not None else "\n").join(turns)
    if tokenizer.eos_token is None:
        raise ValueError("decoder-only prompts end each turn with the EOS token; this tokenizer has none")
    return "".join(turn + tokenizer.eos_token for turn in turns)


def beam_size_sweep(model, tokenizer, inputs, references, classifier, beam_sizes=(5, 10, 20, 40), input_types=None,
                    questions=None, max_new_tokens: int = 32, length_penalty: float = 0.0, **metric_options) -> list[dict]:
    """Certainty / Variety of beam-search n-best lists per beam size (§4.2, Fig. 2).

    ``inputs``: context strings (see :func:`dialogue_prompt`); ``references``: expected answers;
    ``classifier``, ``input_types``, ``questions`` and ``metric_options``: as
    :func:`dialeval.metrics.nbest_contradiction.certainty_variety.nbest_contradiction`. Returns one dict per beam size:
    ``beam_size`` and the metric's figures (``per_input`` left out).
    """
    from dialeval.metrics.nbest_contradiction.certainty_variety import nbest_contradiction
    from dialeval.metrics.nbest_contradiction.yes_no import load_yes_no_classifier

    if isinstance(beam_sizes, (str, int)) or not beam_sizes:
        raise ValueError(f"`beam_sizes` must be a non-empty list of positive ints, got {beam_sizes!r}")
    for size in beam_sizes:
        check_int(size, "beam_sizes[i]")
    # Load the classifier once for every beam size.
    loaded = load_yes_no_classifier(classifier, **{k: metric_options.pop(k) for k in ("device", "dtype", "batch_size", "label_map") if k in metric_options})
    sweep = []
    for size in beam_sizes:
        nbest = beam_search_nbest(model, tokenizer, inputs, beam_size=size, max_new_tokens=max_new_tokens, length_penalty=length_penalty)
        figures = nbest_contradiction(nbest, references, loaded, questions=questions, input_types=input_types, **metric_options)
        figures.pop("per_input")
        sweep.append({"beam_size": size, **figures})
    return sweep
