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

Group beam search (Vijayakumar et al., Alg. 1): the B beams are split into G groups of B/G.
At every step the groups are expanded in order; group g's log-probabilities are lowered by
``diversity_penalty`` times the number of times each token was chosen *at this step* by groups
0..g-1 (Hamming diversity), then group g does an ordinary beam-search step on the penalized,
accumulated scores. Each group keeps its own B/G finished hypotheses. Finishing follows
transformers' beam search exactly (top max(2, 1 + #EOS ids)·B/G candidates per step; a candidate ending in EOS is
finished only if it ranks among the top B/G; a group is done once it has B/G finished
hypotheses none of which its best running beam can still beat; scores are
``sum log p / generated_length ** length_penalty``), so with ``num_beam_groups=1`` it returns what
``model.generate(num_beams=B, num_return_sequences=B, do_sample=False)`` returns (tested).

The search runs one input at a time with its B beams as the batch (no padding, so positions
are exact). The prompt runs once; each step feeds only the beams' last tokens through a
key/value cache whose rows are re-selected to follow the surviving beams, as transformers' own
beam search does.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

import torch

from dialeval.metrics.validation import check_int

#: Nucleus sampling as in the paper's NS (ParlAI's default topp = 0.9); top_k=0: only the nucleus truncates.
DEFAULT_TOP_P = 0.9


@dataclass
class Hypothesis:
    """A finished beam: generated token ids (no prompt), its score and the group that found it."""

    token_ids: list[int]
    score: float
    sum_log_probs: float
    group: int


def _eos_ids(model, eos_token_id) -> set[int]:
    if eos_token_id is None:
        eos_token_id = model.generation_config.eos_token_id
    if eos_token_id is None:
        return set()
    return {int(token) for token in (eos_token_id if isinstance(eos_token_id, (list, tuple)) else [eos_token_id])}


class _NextTokenLogits:
    """Next-token logits for the live beams of one input, with a key/value cache reordered per step.

    The prompt (decoder-only) or the decoder start token (encoder-decoder) runs once; after that
    each step feeds only the beams' last tokens, and the cache rows are first re-selected so that
    row i holds the prefix of the i-th live beam (``Cache.reorder_cache``, as transformers' own
    beam search does). Only the first beam of each group is live at the start, and all of them
    share the prompt, so every group starts from cache row 0.
    """

    def __init__(self, model, input_ids: torch.Tensor, attention_mask: torch.Tensor | None):
        self.model = model
        self.is_encoder_decoder = bool(model.config.is_encoder_decoder)
        self.attention_mask = attention_mask if attention_mask is not None else torch.ones_like(input_ids)
        if self.is_encoder_decoder:
            self.encoder_hidden = model.get_encoder()(input_ids=input_ids, attention_mask=self.attention_mask).last_hidden_state
            start = model.generation_config.decoder_start_token_id
            if start is None:
                start = model.config.decoder_start_token_id
            if start is None:
                raise ValueError("encoder-decoder model has no decoder_start_token_id in its generation or model config")
            self.prefix = torch.tensor([[int(start)]], device=input_ids.device)
        else:
            self.prefix = input_ids
        # transformers >= 5.24 names the cache `cache` (argument and output); earlier 5.x `past_key_values`.
        self.cache_name = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        output = self._forward(self.prefix, None)
        self.cache = getattr(output, self.cache_name)
        self.first_logits = output.logits[:, -1, :].float()
        self.length = self.prefix.shape[1]

    def _forward(self, tokens: torch.Tensor, cache):
        rows = tokens.shape[0]
        if self.is_encoder_decoder:
            from transformers.modeling_outputs import BaseModelOutput

            encoder_outputs = BaseModelOutput(last_hidden_state=self.encoder_hidden.expand(rows, -1, -1))
            return self.model(encoder_outputs=encoder_outputs, attention_mask=self.attention_mask.expand(rows, -1),
                              decoder_input_ids=tokens, use_cache=True, **{self.cache_name: cache})
        past = 0 if cache is None else self.length
        mask = torch.ones((rows, past + tokens.shape[1]), dtype=torch.long, device=tokens.device)
        return self.model(input_ids=tokens, attention_mask=mask, use_cache=True, **{self.cache_name: cache})

    def __call__(self, cache_rows: torch.Tensor, last_tokens: torch.Tensor | None) -> torch.Tensor:
        """Logits for the beams whose prefixes sit in ``cache_rows``, each extended by its ``last_tokens``.

        ``last_tokens=None`` (the first step) asks for the logits after the prompt itself.
        """
        if last_tokens is None:
            return self.first_logits.expand(cache_rows.shape[0], -1)
        self.cache.reorder_cache(cache_rows)
        output = self._forward(last_tokens[:, None], self.cache)
        self.cache = getattr(output, self.cache_name)
        self.length += 1
        return output.logits[:, -1, :].float()


class _Group:
    """One group's running beams and finished hypotheses."""

    def __init__(self, index: int, size: int, prefix: torch.Tensor):
        self.index, self.size = index, size
        self.sequences = prefix.expand(size, -1).clone()
        # Only the first beam is live at the start, so the beams do not all pick the same token.
        self.scores = torch.full((size,), -1.0e9, device=prefix.device)
        self.scores[0] = 0.0
        self.finished: list[Hypothesis] = []
        self.done = False
        # Row of the key/value cache that holds each beam's prefix (see _NextTokenLogits).
        self.cache_rows = torch.zeros(size, dtype=torch.long, device=prefix.device)

    def add_finished(self, hypothesis: Hypothesis) -> None:
        self.finished.append(hypothesis)
        self.finished.sort(key=lambda item: item.score, reverse=True)
        del self.finished[self.size:]


def group_beam_search(model, input_ids, attention_mask=None, num_beams: int = 10, num_beam_groups: int = 1,
                      diversity_penalty: float = 0.0, max_new_tokens: int = 32, length_penalty: float = 0.0,
                      early_stopping: bool = False, eos_token_id=None, logits_processor=None) -> list[list[Hypothesis]]:
    """Diverse (group) beam search (Vijayakumar et al.; see the module docstring).

    Args:
        input_ids, attention_mask: a tokenized batch, ``(batch, length)``; left padding is
            removed per input (each input is searched on its own).
        num_beams: B, the beams (and hypotheses returned) per input.
        num_beam_groups: G; B must be divisible by G. G=1 is plain beam search.
        diversity_penalty: λ of the Hamming diversity term (0 = independent groups).
        max_new_tokens: longest response, in tokens (EOS included).
        length_penalty: exponent of the length normalisation (0.0: raw sum of log-probabilities,
            the paper's ``beam_length_penalty=0``, App. C).
        early_stopping: True stops a group as soon as it has B/G finished hypotheses.
        eos_token_id: int or list; default the model's generation config.
        logits_processor: optional ``transformers.LogitsProcessorList`` applied to the
            log-probabilities (as ``generate`` does) before the diversity penalty.

    Returns:
        Per input, its B hypotheses sorted by score (best first), each with its group index.
    """
    check_int(num_beams, "num_beams")
    check_int(num_beam_groups, "num_beam_groups")
    check_int(max_new_tokens, "max_new_tokens")
    if num_beams % num_beam_groups:
        raise ValueError(f"`num_beams` ({num_beams}) must be divisible by `num_beam_groups` ({num_beam_groups})")
    if isinstance(diversity_penalty, bool) or not isinstance(diversity_penalty, (int, float)) or diversity_penalty < 0:
        raise ValueError(f"`diversity_penalty` must be a float >= 0, got {diversity_penalty!r}")
    if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2:
        raise ValueError("`input_ids` must be a 2-D LongTensor (batch, length)")
    eos = _eos_ids(model, eos_token_id)
    group_size = num_beams // num_beam_groups
    # As transformers: enough candidates that B/G beams survive even if every beam's best token is an EOS.
    candidates_kept = max(2, 1 + len(eos)) * group_size
    device = input_ids.device
    results = []
    with torch.inference_mode():
        for row in range(input_ids.shape[0]):
            keep = attention_mask[row].bool() if attention_mask is not None else torch.ones_like(input_ids[row], dtype=torch.bool)
            prompt = input_ids[row][keep].unsqueeze(0)
            next_logits = _NextTokenLogits(model, prompt, torch.ones_like(prompt))
            prefix_length = next_logits.prefix.shape[1]
            groups = [_Group(g, group_size, next_logits.prefix) for g in range(num_beam_groups)]
            for step in range(max_new_tokens):
                live = [group for group in groups if not group.done]
                if not live:
                    break
                logits = next_logits(torch.cat([group.cache_rows for group in live]),
                                     None if step == 0 else torch.cat([group.sequences[:, -1] for group in live]))
                chosen_this_step = torch.zeros(logits.shape[-1], device=device)
                generated_length = step + 1
                last_step = step + 1 == max_new_tokens
                for position, group in enumerate(live):
                    rows = slice(position * group_size, (position + 1) * group_size)
                    log_probs = torch.log_softmax(logits[rows], dim=-1)
                    if logits_processor is not None:
                        log_probs = logits_processor(group.sequences, log_probs)
                    # Hamming diversity: tokens earlier groups picked at this very step cost λ each.
                    log_probs = log_probs - diversity_penalty * chosen_this_step
                    candidates = (log_probs + group.scores[:, None]).reshape(-1)
                    top_scores, top_indices = torch.topk(candidates, k=candidates_kept)
                    vocab = log_probs.shape[-1]
                    beam_of, token_of = top_indices // vocab, top_indices % vocab
                    next_sequences, next_scores, next_parents = [], [], []
                    for rank in range(candidates_kept):
                        beam, token, score = int(beam_of[rank]), int(token_of[rank]), float(top_scores[rank])
                        finishes = token in eos or last_step
                        if finishes:
                            # Only the top B/G candidates may finish (transformers' rule), and not once
                            # the group is done.
                            if rank < group_size:
                                tokens = group.sequences[beam, prefix_length:].tolist() + [token]
                                normalized = score / (generated_length ** length_penalty)
                                if len(group.finished) < group.size or normalized > group.finished[-1].score:
                                    group.add_finished(Hypothesis(tokens, normalized, score, group.index))
                            continue
                        if len(next_sequences) < group_size:
                            next_sequences.append(torch.cat([group.sequences[beam], top_indices.new_tensor([token])]))
                            next_scores.append(score)
                            # After a step's forward the cache holds the live beams in order; the
                            # first step ran no forward, so every beam still reads the prompt's row.
                            next_parents.append(int(group.cache_rows[beam]) if step == 0 else position * group_size + beam)
                    for sequence in next_sequences:
                        chosen_this_step[int(sequence[-1])] += 1
                    if last_step:
                        group.done = True
                        continue
                    group.sequences = torch.stack(next_sequences)
                    group.scores = torch.tensor(next_scores, device=device)
                    group.cache_rows = torch.tensor(next_parents, dtype=torch.long, device=device)
                    if len(group.finished) == group.size:
                        best_possible = float(group.scores[0]) / (generated_length ** length_penalty)
                        group.done = early_stopping or best_possible <= group.finished[-1].score
            hypotheses = [hypothesis for group in groups for hypothesis in group.finished]
            hypotheses.sort(key=lambda item: item.score, reverse=True)
            results.append(hypotheses)
    return results


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
    :func:`dialeval.metrics.certainty_variety.nbest_contradiction`. Returns one dict per beam size:
    ``beam_size`` and the metric's figures (``per_input`` left out).
    """
    from dialeval.metrics.certainty_variety import nbest_contradiction
    from dialeval.metrics.yes_no import load_yes_no_classifier

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
