"""Group (diverse) beam search with the Hamming diversity penalty (Vijayakumar et al. 2016/2018).

Our own implementation: transformers 5 moved group beam search out of the library to a Hub
repository, which we do not load (no remote code). The n-best helpers of
:mod:`dialeval.generation.nbest` (the paper's "DBS", Sato et al. 2022) call it.

Group beam search (Vijayakumar et al., Alg. 1): the B beams are split into G groups of B/G.
At every step the groups are expanded in order; group g's log-probabilities are lowered by
``diversity_penalty`` times the number of times each token was chosen *at this step* by groups
0..g-1 (Hamming diversity), then group g does an ordinary beam-search step on the penalized,
accumulated scores. Each group keeps its own B/G finished hypotheses. Each group looks at its
top max(2, 1 + #EOS ids)·B/G candidates per step; a candidate ending in EOS is finished only if
it ranks among the top B/G; scores are ``sum log p / generated_length ** length_penalty``.
The rest follows what transformers does, which differs between one group and several:

- ``num_beam_groups=1`` is transformers' beam search: at ``max_new_tokens`` the top B/G
  candidates finish; a group is done once none of its B/G hypotheses can be beaten by its best
  running beam. It returns what ``model.generate(num_beams=B, num_return_sequences=B,
  do_sample=False)`` returns (tested against the installed transformers).
- Several groups are transformers 4.51's group beam search (``_group_beam_search`` with
  ``BeamSearchScorer`` and ``HammingDiversityLogitsProcessor``; transformers 5 dropped it):
  at every step, the last included, the first B/G candidates that are not EOS run on and the
  later groups are penalized for their tokens; at ``max_new_tokens`` those running beams join
  the hypotheses of every group not yet done; a group is done once its worst hypothesis scores
  at least its best candidate (EOS ones included); a done group's beams count as choosing the
  pad token (the config's, else the first EOS) for the later groups, as 4.51 feeds them pads; the
  penalty applies after sequence bias and before the other logits processors. Equal to 4.51's
  outputs pinned in ``tests/data/group_beam_search/`` (``test_group_beam_search_reference.py``).

The checkpoint's generation settings apply as in ``generate``: the logits processors
(``no_repeat_ngram_size``, ``min_length`` / ``min_new_tokens``, ``encoder_no_repeat_ngram_size``,
``forced_eos_token_id``, ``repetition_penalty``, ``bad_words_ids``, ...) are the ones transformers
builds for ``generate`` from the model's ``generation_config`` with the call's options over it
(:mod:`dialeval.generation.generation_settings`), so with one group the search still equals
``generate(num_beams=B)`` on a BlenderBot-like config (tested for GPT-2 and BART).

The search runs one input at a time with its B beams as the batch (no padding, so positions
are exact; a decoder-only ``min_length`` therefore counts the unpadded prompt, where
``generate`` on a left-padded batch counts the padding too). The prompt runs once; each step feeds
only the beams' last tokens through a key/value cache whose rows are re-selected to follow the
surviving beams, as transformers' own beam search does.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from dialeval.generation.generation_settings import GenerativeModel, search_settings
from dialeval.validation import ArgumentError, check_int

if TYPE_CHECKING:
    from transformers import Cache, GenerationConfig, LogitsProcessorList

#: Longest response by default, in tokens (EOS included). Room for a checkpoint whose
#: ``min_length`` is 20 (BlenderBot's: its responses may only end from the 20th token) and at
#: least BlenderBot's own ``max_length`` of 60, while 1 + 64 decoder positions stay inside
#: BlenderBot 1.0's 128. (A default of 32 would leave such a model 12 tokens of choice.)
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

    def __init__(
        self,
        model: GenerativeModel,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None,
        decoder_start_token_id: int | None = None,
    ) -> None:
        self.model = model
        self.is_encoder_decoder = bool(model.config.is_encoder_decoder)
        self.attention_mask = (
            attention_mask if attention_mask is not None else torch.ones_like(input_ids)
        )
        if self.is_encoder_decoder:
            self.encoder_hidden = model.get_encoder()(
                input_ids=input_ids, attention_mask=self.attention_mask
            ).last_hidden_state
            if decoder_start_token_id is None:
                raise ValueError(
                    "encoder-decoder model has no decoder_start_token_id (nor bos_token_id) in "
                    "its generation or model config"
                )
            self.prefix = torch.tensor([[int(decoder_start_token_id)]], device=input_ids.device)
        else:
            self.prefix = input_ids
        # transformers >= 5.24 names the cache `cache` (argument and output); earlier 5.x
        # `past_key_values`.
        self.cache_name = (
            "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        )
        output = self._forward(self.prefix, None)
        self.cache = getattr(output, self.cache_name)
        self.first_logits = output.logits[:, -1, :].float()
        self.length = self.prefix.shape[1]

    def _forward(self, tokens: torch.Tensor, cache: Cache | None) -> Any:  # the model's output
        rows = tokens.shape[0]
        if self.is_encoder_decoder:
            # transformers: deferred, so importing this module loads no model stack
            from transformers.modeling_outputs import BaseModelOutput

            encoder_outputs = BaseModelOutput(
                last_hidden_state=self.encoder_hidden.expand(rows, -1, -1)
            )
            return self.model(
                encoder_outputs=encoder_outputs,
                attention_mask=self.attention_mask.expand(rows, -1),
                decoder_input_ids=tokens,
                use_cache=True,
                **{self.cache_name: cache},
            )
        past = 0 if cache is None else self.length
        mask = torch.ones((rows, past + tokens.shape[1]), dtype=torch.long, device=tokens.device)
        return self.model(
            input_ids=tokens, attention_mask=mask, use_cache=True, **{self.cache_name: cache}
        )

    def __call__(self, cache_rows: torch.Tensor, last_tokens: torch.Tensor | None) -> torch.Tensor:
        """Logits for the beams whose prefixes sit in ``cache_rows``, each extended by its
        ``last_tokens``.

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
        self.prefix_length = prefix.shape[1]
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
        del self.finished[self.size :]

    def add_as_beam_hypotheses(self, hypothesis: Hypothesis) -> None:
        """transformers 4.51's ``BeamHypotheses.add``: kept in the order found; over B/G, the
        worst goes (the earliest found among equals), so ties end as in 4.51."""
        finished = self.finished
        if len(finished) < self.size or hypothesis.score > min(item.score for item in finished):
            finished.append(hypothesis)
            if len(finished) > self.size:
                del finished[min(range(len(finished)), key=lambda i: finished[i].score)]

    def generated(self, beam: int, token: int) -> list[int]:
        """The generated tokens (no prompt) of ``beam`` extended by ``token``."""
        return self.sequences[beam, self.prefix_length :].tolist() + [token]


@dataclass(frozen=True)
class _StepRules:
    """What a step's finishing rules need to know about the step."""

    step: int
    max_new_tokens: int
    length_penalty: float
    early_stopping: bool
    eos: frozenset[int]

    @property
    def last_step(self) -> bool:
        return self.step + 1 == self.max_new_tokens

    def normalized(self, score: float) -> float:
        """A hypothesis' score: ``sum log p / generated_length ** length_penalty`` (EOS counted)."""
        return score / ((self.step + 1) ** self.length_penalty)


def _beam_search_step(
    group: _Group,
    rules: _StepRules,
    scores: Sequence[float],
    beams: Sequence[int],
    tokens: Sequence[int],
) -> list[tuple[int, int, float]]:
    """One group's step under transformers' beam search (``_beam_search``, the one-group case).

    ``scores, beams, tokens``: the candidates, best first. An EOS candidate among the top B/G
    finishes; at ``max_new_tokens`` every top-B/G candidate finishes and the group is done.
    Returns the running beams as (beam, token, score), best first.
    """
    running: list[tuple[int, int, float]] = []
    for rank, (score, beam, token) in enumerate(zip(scores, beams, tokens)):
        if token in rules.eos or rules.last_step:
            if rank < group.size:
                normalized = rules.normalized(score)
                if len(group.finished) < group.size or normalized > group.finished[-1].score:
                    group.add_finished(
                        Hypothesis(group.generated(beam, token), normalized, score, group.index)
                    )
            continue
        if len(running) < group.size:
            running.append((beam, token, score))
    if rules.last_step:
        group.done = True
        return []
    if len(group.finished) == group.size:
        group.done = (
            rules.early_stopping or rules.normalized(running[0][2]) <= group.finished[-1].score
        )
    return running


def _group_beam_search_step(
    group: _Group,
    rules: _StepRules,
    scores: Sequence[float],
    beams: Sequence[int],
    tokens: Sequence[int],
) -> list[tuple[int, int, float]]:
    """One group's step under transformers 4.51's group beam search (``BeamSearchScorer.process``).

    An EOS candidate among the top B/G finishes; the first B/G other candidates run on, at
    ``max_new_tokens`` too (so the later groups' Hamming penalty counts their tokens; the
    search then adds them to the hypotheses, :func:`_finalize_as_beam_search_scorer`). The
    group is done once it has B/G hypotheses and its worst is at least the best candidate's
    normalized score (or at once with ``early_stopping``).
    """
    running = []
    for rank, (score, beam, token) in enumerate(zip(scores, beams, tokens)):
        if token in rules.eos:
            if rank < group.size:
                group.add_as_beam_hypotheses(
                    Hypothesis(
                        group.generated(beam, token), rules.normalized(score), score, group.index
                    )
                )
            continue
        running.append((beam, token, score))
        if len(running) == group.size:
            break
    if len(group.finished) == group.size:
        worst = min(item.score for item in group.finished)
        group.done = rules.early_stopping or worst >= rules.normalized(scores[0])
    return running


def _finalize_as_beam_search_scorer(
    groups: list[_Group], length_penalty: float
) -> list[Hypothesis]:
    """transformers 4.51's ``BeamSearchScorer.finalize``: the running beams of every group not
    done join its hypotheses; all groups' hypotheses, best first (of equal scores, the one
    found later first)."""
    for group in groups:
        if group.done:
            continue
        generated_length = group.sequences.shape[1] - group.prefix_length
        for beam, score in enumerate(group.scores.tolist()):
            group.add_as_beam_hypotheses(
                Hypothesis(
                    group.sequences[beam, group.prefix_length :].tolist(),
                    score / (generated_length**length_penalty),
                    score,
                    group.index,
                )
            )
    hypotheses = [hypothesis for group in groups for hypothesis in group.finished]
    return sorted(hypotheses, key=lambda item: item.score)[::-1]


def _advance(
    group: _Group, running: list[tuple[int, int, float]], position: int, step: int
) -> None:
    """Make ``running`` (beam, token, score) the group's beams; ``position``: the group's place
    among this step's live groups."""
    beams = torch.tensor(
        [beam for beam, _, _ in running], dtype=torch.long, device=group.sequences.device
    )
    tokens = beams.new_tensor([token for _, token, _ in running])
    group.sequences = torch.cat([group.sequences[beams], tokens[:, None]], dim=1)
    group.scores = torch.tensor([score for _, _, score in running], device=group.sequences.device)
    # After a step's forward the cache holds the live beams in order; the first step ran no
    # forward, so every beam still reads the prompt's row.
    group.cache_rows = group.cache_rows[beams] if step == 0 else position * group.size + beams


class _HammingPenalty:
    """The logits processors with the Hamming diversity term where transformers 4.51 put its
    ``HammingDiversityLogitsProcessor``: after sequence bias and guidance, before the others
    (it matters for the multiplicative repetition penalties and for forced tokens)."""

    def __init__(self, processors: LogitsProcessorList, diversity_penalty: float) -> None:
        # transformers: deferred, so importing this module loads no model stack
        from transformers import (
            LogitsProcessorList,
            SequenceBiasLogitsProcessor,
            UnbatchedClassifierFreeGuidanceLogitsProcessor,
        )

        leading = 0
        while leading < len(processors) and isinstance(
            processors[leading],
            (SequenceBiasLogitsProcessor, UnbatchedClassifierFreeGuidanceLogitsProcessor),
        ):
            leading += 1
        self.before = LogitsProcessorList(processors[:leading])
        self.after = LogitsProcessorList(processors[leading:])
        self.diversity_penalty = float(diversity_penalty)

    def __call__(
        self, sequences: torch.Tensor, log_probs: torch.Tensor, chosen_this_step: torch.Tensor
    ) -> torch.Tensor:
        """``chosen_this_step``: per token, how many beams of the earlier groups chose it at this
        step."""
        # transformers annotates the ids torch.LongTensor, a class no tensor has to a type checker
        log_probs = self.before(sequences, log_probs)  # type: ignore[arg-type]
        if self.diversity_penalty:
            log_probs = log_probs - self.diversity_penalty * chosen_this_step
        return self.after(sequences, log_probs)  # type: ignore[arg-type]


def _pad_token_id(config: GenerationConfig) -> int | None:
    """The pad token ``generate`` uses: the config's, else the first EOS id."""
    if config.pad_token_id is not None:
        return int(config.pad_token_id)
    eos = config.eos_token_id
    if isinstance(eos, (list, tuple)):
        eos = eos[0] if eos else None
    return None if eos is None else int(eos)


def group_beam_search(
    model: GenerativeModel,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    num_beams: int = 10,
    num_beam_groups: int = 1,
    diversity_penalty: float = 0.0,
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    length_penalty: float = 0.0,
    early_stopping: bool = False,
    eos_token_id: int | list[int] | None = None,
    logits_processor: LogitsProcessorList | None = None,
    generation_config: GenerationConfig | None = None,
    **generation_options: Any,
) -> list[list[Hypothesis]]:
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
            does); they apply to the log-probabilities in ``generate``'s order, with the diversity
            penalty where transformers 4.51 put it (after sequence bias, before the rest).
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
        raise ArgumentError(
            "num_beams", f"({num_beams}) must be divisible by `num_beam_groups` ({num_beam_groups})"
        )
    if (
        isinstance(diversity_penalty, bool)
        or not isinstance(diversity_penalty, (int, float))
        or diversity_penalty < 0
    ):
        raise ArgumentError("diversity_penalty", f"must be a float >= 0, got {diversity_penalty!r}")
    if not isinstance(early_stopping, bool):
        # transformers' "never" would otherwise read as True (it is truthy).
        raise ArgumentError("early_stopping", f"must be True or False, got {early_stopping!r}")
    if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2:
        raise ArgumentError("input_ids", "must be a 2-D LongTensor (batch, length)")
    if eos_token_id is not None:
        generation_options["eos_token_id"] = eos_token_id
    settings = search_settings(model, generation_config, **generation_options)
    eos = settings.eos_token_ids
    pad_token_id = _pad_token_id(settings.config)
    group_size = num_beams // num_beam_groups
    # As transformers: enough candidates that B/G beams survive even if every beam's best token is
    # an EOS.
    candidates_kept = max(2, 1 + len(eos)) * group_size
    device = input_ids.device
    results = []
    with torch.inference_mode():
        for row in range(input_ids.shape[0]):
            keep = (
                attention_mask[row].bool()
                if attention_mask is not None
                else torch.ones_like(input_ids[row], dtype=torch.bool)
            )
            prompt = input_ids[row][keep].unsqueeze(0)
            next_logits = _NextTokenLogits(
                model, prompt, torch.ones_like(prompt), settings.decoder_start_token_id
            )
            prefix_length = next_logits.prefix.shape[1]
            processors = settings.logits_processor(
                model,
                prefix_length,
                max_new_tokens,
                prompt if next_logits.is_encoder_decoder else None,
                logits_processor,
            )
            groups = [_Group(g, group_size, next_logits.prefix) for g in range(num_beam_groups)]
            # One group is transformers' beam search; several, its group beam search
            # (BeamSearchScorer).
            step_rules = _beam_search_step if num_beam_groups == 1 else _group_beam_search_step
            penalized = _HammingPenalty(processors, diversity_penalty)
            for step in range(max_new_tokens):
                live = [group for group in groups if not group.done]
                if not live:
                    break
                logits = next_logits(
                    torch.cat([group.cache_rows for group in live]),
                    None if step == 0 else torch.cat([group.sequences[:, -1] for group in live]),
                )
                chosen_this_step = torch.zeros(logits.shape[-1], device=device)
                rules = _StepRules(step, max_new_tokens, length_penalty, early_stopping, eos)
                position = 0
                for group in groups:
                    if group.done:
                        # transformers 4.51 feeds a done group's beams the pad token, and the later
                        # groups' Hamming penalty counts it as chosen (only with several groups).
                        if num_beam_groups > 1 and pad_token_id is not None:
                            chosen_this_step[pad_token_id] += group_size
                        continue
                    rows = slice(position * group_size, (position + 1) * group_size)
                    log_probs = penalized(
                        group.sequences, torch.log_softmax(logits[rows], dim=-1), chosen_this_step
                    )
                    candidates = (log_probs + group.scores[:, None]).reshape(-1)
                    top_scores, top_indices = torch.topk(candidates, k=candidates_kept)
                    vocab = log_probs.shape[-1]
                    running = step_rules(
                        group,
                        rules,
                        top_scores.tolist(),
                        (top_indices // vocab).tolist(),
                        (top_indices % vocab).tolist(),
                    )
                    for _, token, _ in running:
                        chosen_this_step[token] += 1
                    if running:
                        _advance(group, running, position, step)
                    position += 1
            if num_beam_groups == 1:
                hypotheses = sorted(groups[0].finished, key=lambda item: item.score, reverse=True)
            else:
                hypotheses = _finalize_as_beam_search_scorer(groups, length_penalty)
            results.append(hypotheses)
    return results
