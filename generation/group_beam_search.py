"""Group (diverse) beam search with the Hamming diversity penalty (Vijayakumar et al. 2016/2018).

Our own implementation: transformers 5 moved group beam search out of the library to a Hub
repository, which we do not load (no remote code). The n-best helpers of
:mod:`dialeval.generation.nbest` (the paper's "DBS", Sato et al. 2022) call it.

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

The checkpoint's generation settings apply as in ``generate``: the logits processors
(``no_repeat_ngram_size``, ``min_length`` / ``min_new_tokens``, ``encoder_no_repeat_ngram_size``,
``forced_eos_token_id``, ``repetition_penalty``, ``bad_words_ids``, ...) are the ones transformers
builds for ``generate`` from the model's ``generation_config`` with the call's options over it
(:mod:`dialeval.generation.generation_settings`), so with one group the search still equals
``generate(num_beams=B)`` on a BlenderBot-like config (tested for GPT-2 and BART).

The search runs one input at a time with its B beams as the batch (no padding, so positions
are exact; a decoder-only ``min_length`` therefore counts the unpadded prompt, where
``generate`` on a left-padded batch counts the padding too). The prompt runs once; each step feeds only the beams' last tokens through a
key/value cache whose rows are re-selected to follow the surviving beams, as transformers' own
beam search does.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

import torch

from dialeval.generation.generation_settings import search_settings
from dialeval.validation import check_int
from dialeval.validation import ArgumentError

#: Longest response by default, in tokens (EOS included). Room for a checkpoint whose
#: ``min_length`` is 20 (BlenderBot's: its responses may only end from the 20th token) and at
#: least BlenderBot's own ``max_length`` of 60, while 1 + 64 decoder positions stay inside
#: BlenderBot 1.0's 128. (The old default, 32, left such a model 12 tokens of choice.)
DEFAULT_MAX_NEW_TOKENS = 64


@dataclass
class Hypothesis:
    """A finished beam: generated token ids (no prompt), its score and the group that found it."""

    token_ids: list[int]
    score: float
    sum_log_probs: float
    group: int


class _NextTokenLogits:
    """Next-token logits for the live beams of one input, with a key/value cache reordered per step.

    The prompt (decoder-only) or the decoder start token (encoder-decoder) runs once; after that
    each step feeds only the beams' last tokens, and the cache rows are first re-selected so that
    row i holds the prefix of the i-th live beam (``Cache.reorder_cache``, as transformers' own
    beam search does). Only the first beam of each group is live at the start, and all of them
    share the prompt, so every group starts from cache row 0.
    """

    def __init__(self, model, input_ids: torch.Tensor, attention_mask: torch.Tensor | None, decoder_start_token_id=None):
        self.model = model
        self.is_encoder_decoder = bool(model.config.is_encoder_decoder)
        self.attention_mask = attention_mask if attention_mask is not None else torch.ones_like(input_ids)
        if self.is_encoder_decoder:
            self.encoder_hidden = model.get_encoder()(input_ids=input_ids, attention_mask=self.attention_mask).last_hidden_state
            if decoder_start_token_id is None:
                raise ValueError("encoder-decoder model has no decoder_start_token_id (nor bos_token_id) in its generation or model config")
            self.prefix = torch.tensor([[int(decoder_start_token_id)]], device=input_ids.device)
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
                      diversity_penalty: float = 0.0, max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
                      length_penalty: float = 0.0, early_stopping: bool = False, eos_token_id=None,
                      logits_processor=None, generation_config=None, **generation_options) -> list[list[Hypothesis]]:
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
        logits_processor: optional ``transformers.LogitsProcessorList`` of processors of your
            own, merged into the ones ``generate`` builds (as ``generate(logits_processor=)``
            does); all apply to the log-probabilities before the diversity penalty.
        generation_config: a ``GenerationConfig`` to use instead of the model's (as in
            ``generate``); never modified.
        generation_options: further ``GenerationConfig`` fields over it, e.g.
            ``no_repeat_ngram_size=3``, ``min_length=20`` (``TypeError`` for unknown names and
            for the ones the search sets itself: ``do_sample``, ``num_return_sequences``, ...).

    Returns:
        Per input, its B hypotheses sorted by score (best first), each with its group index.
    """
    check_int(num_beams, "num_beams")
    check_int(num_beam_groups, "num_beam_groups")
    check_int(max_new_tokens, "max_new_tokens")
    if num_beams % num_beam_groups:
        raise ArgumentError("num_beams", f"({num_beams}) must be divisible by `num_beam_groups` ({num_beam_groups})")
    if isinstance(diversity_penalty, bool) or not isinstance(diversity_penalty, (int, float)) or diversity_penalty < 0:
        raise ArgumentError("diversity_penalty", f"must be a float >= 0, got {diversity_penalty!r}")
    if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2:
        raise ArgumentError("input_ids", "must be a 2-D LongTensor (batch, length)")
    if eos_token_id is not None:
        generation_options["eos_token_id"] = eos_token_id
    settings = search_settings(model, generation_config, **generation_options)
    eos = settings.eos_token_ids
    group_size = num_beams // num_beam_groups
    # As transformers: enough candidates that B/G beams survive even if every beam's best token is an EOS.
    candidates_kept = max(2, 1 + len(eos)) * group_size
    device = input_ids.device
    results = []
    with torch.inference_mode():
        for row in range(input_ids.shape[0]):
            keep = attention_mask[row].bool() if attention_mask is not None else torch.ones_like(input_ids[row], dtype=torch.bool)
            prompt = input_ids[row][keep].unsqueeze(0)
            next_logits = _NextTokenLogits(model, prompt, torch.ones_like(prompt), settings.decoder_start_token_id)
            prefix_length = next_logits.prefix.shape[1]
            processors = settings.logits_processor(
                model, prefix_length, max_new_tokens, prompt if next_logits.is_encoder_decoder else None, logits_processor,
            )
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
                    log_probs = processors(group.sequences, log_probs)
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
