"""Diversity Threshold Generation (Stasaski & Hearst 2022, §5; defaults §6.1-6.2; beam variant App. D).

For each context: take n candidate responses. While the set's diversity is not above the
threshold and fewer than S responses have been drawn (the first n count): score every
leave-one-out subset of size n-1, drop the response missing from the best-scoring subset, and
draw one new candidate.

Candidates come from one of two decoders:

- ``decoding="sample"`` (§5, the paper's main setting): nucleus sampling, p = 0.9. Contexts are
  batched: the ones still below the threshold resample together in one ``generate`` call.
- ``decoding="beam"`` (App. D): one beam search per context returns ``num_beams`` (25) beams in
  likelihood order; the set starts with the n most likely and each swap takes the next beam.
  Beam search runs once, so a context stops early ("beams_exhausted") when S > num_beams.
"""
from __future__ import annotations

import copy

from collections import Counter
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from dialeval.generation.objectives import DistinctN, NLIContradictions, SentBertDiversity

OBJECTIVES = {"nli": NLIContradictions, "sent_bert": SentBertDiversity, "distinct_n": DistinctN}
DECODINGS = ("sample", "beam")
#: Nucleus sampling, p = 0.9 (§6.1); top_k=0 so that only the nucleus truncates.
DEFAULT_SAMPLING = {"do_sample": True, "top_p": 0.9, "top_k": 0}
#: App. D: "we generate 25 beams and consider these responses from most to least probable".
DEFAULT_NUM_BEAMS = 25


@dataclass
class DTGResult:
    responses: list[str]
    initial_responses: list[str]
    initial_diversity: float  # the objective's value (NLI: # contradictions) of the first set
    final_diversity: float
    num_sampled: int  # responses drawn for this context, the first n included (at most S)
    reached_threshold: bool
    stop_reason: str  # "threshold", "max_samples" or (beam decoding) "beams_exhausted"
    utterance_overlap: int  # App. C: responses present in both the first and the final set
    num_pair_evaluations: int
    initial_scores: dict = field(default_factory=dict)  # the figures Table 4 reports (NLI: Baseline NLI Diversity too)
    final_scores: dict = field(default_factory=dict)
    history: list[dict] = field(default_factory=list)  # one entry per swap: dropped index, new diversity

    def to_dict(self) -> dict:
        return asdict(self)


def _check(num_responses, max_samples) -> None:
    for name, value in (("num_responses", num_responses), ("max_samples", max_samples)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"`{name}` must be an int, got {value!r}")
    if num_responses < 2:
        raise ValueError(f"`num_responses` must be at least 2 (a set needs pairs), got {num_responses}")
    if max_samples < num_responses:
        raise ValueError(f"`max_samples` ({max_samples}) must be >= `num_responses` ({num_responses}): the first n count")


def make_objective(metric, **options):
    """An objective instance from a name (``"nli"``, ``"sent_bert"``, ``"distinct_n"``) or pass one through."""
    if isinstance(metric, str):
        if metric not in OBJECTIVES:
            raise ValueError(f"`metric` must be one of {sorted(OBJECTIVES)} or an objective object, got {metric!r}")
        return OBJECTIVES[metric](**options)
    for method in ("start", "value", "leave_one_out", "replace"):
        if not hasattr(metric, method):
            raise ValueError(f"`metric` object lacks {method}(); see dialeval.generation.objectives")
    return metric


def encode_contexts(tokenizer, inputs, is_encoder_decoder: bool, max_context_tokens: int | None = None):
    """Context strings as a padded batch (left padding for decoder-only models), or a tokenizer output as is.

    ``max_context_tokens`` keeps each context's last tokens (§6.1: BlenderBot sees the last 128).
    """
    if isinstance(inputs, (list, tuple)) and inputs and all(isinstance(text, str) for text in inputs):
        # A copy: the caller's tokenizer (and the one dialeval.hub shares) keeps its settings.
        tokenizer = copy.deepcopy(tokenizer)
        if not is_encoder_decoder:
            tokenizer.padding_side = "left"  # decoder-only models continue from the last token
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        truncation = {}
        if max_context_tokens is not None:
            if isinstance(max_context_tokens, bool) or not isinstance(max_context_tokens, int) or max_context_tokens < 1:
                raise ValueError(f"`max_context_tokens` must be a positive int or None, got {max_context_tokens!r}")
            tokenizer.truncation_side = "left"
            truncation = {"truncation": True, "max_length": max_context_tokens}
        return tokenizer(list(inputs), return_tensors="pt", padding=True, **truncation)
    if hasattr(inputs, "keys") and "input_ids" in inputs:
        return inputs
    raise ValueError("`inputs` must be a non-empty list of context strings or a tokenizer output with input_ids")


def _generate_texts(model, tokenizer, encoded, rows: list[int], per_row: int, generate_kwargs: dict) -> list[list[str]]:
    """``per_row`` generated responses for each context in ``rows`` (one generate call), in output order."""
    device = getattr(model, "device", None)
    batch = {key: value[rows].to(device) if device is not None else value[rows]
             for key, value in encoded.items() if isinstance(value, torch.Tensor)}
    with torch.inference_mode():
        output = model.generate(**batch, num_return_sequences=per_row, **generate_kwargs)
    if not model.config.is_encoder_decoder:
        output = output[:, batch["input_ids"].shape[1]:]
    texts = tokenizer.batch_decode(output, skip_special_tokens=True)
    texts = [text.strip() for text in texts]
    return [texts[i * per_row:(i + 1) * per_row] for i in range(len(rows))]


class _SampledCandidates:
    """§5: every candidate is a fresh sample; the contexts that need one share a generate call."""

    def __init__(self, model, tokenizer, encoded, generate_kwargs):
        self.model, self.tokenizer, self.encoded, self.generate_kwargs = model, tokenizer, encoded, generate_kwargs

    def first(self, rows: list[int], count: int) -> list[list[str]]:
        return _generate_texts(self.model, self.tokenizer, self.encoded, rows, count, self.generate_kwargs)

    def remaining(self, row: int) -> int | None:
        return None  # unlimited

    def next(self, rows: list[int]) -> list[str]:
        return [texts[0] for texts in _generate_texts(self.model, self.tokenizer, self.encoded, rows, 1, self.generate_kwargs)]


class _BeamCandidates:
    """App. D: the ``num_beams`` beams of each context, most likely first, handed out in order."""

    def __init__(self, model, tokenizer, encoded, generate_kwargs, num_beams: int):
        kwargs = {**generate_kwargs, "num_beams": num_beams}
        kwargs.setdefault("do_sample", False)
        rows = list(range(encoded["input_ids"].shape[0]))
        # generate() returns each context's beams sorted by their (length-normalised) beam score.
        self.beams = _generate_texts(model, tokenizer, encoded, rows, num_beams, kwargs)
        self.taken = [0] * len(rows)

    def first(self, rows: list[int], count: int) -> list[list[str]]:
        for row in rows:
            self.taken[row] = count
        return [self.beams[row][:count] for row in rows]

    def remaining(self, row: int) -> int | None:
        return len(self.beams[row]) - self.taken[row]

    def next(self, rows: list[int]) -> list[str]:
        texts = []
        for row in rows:
            texts.append(self.beams[row][self.taken[row]])
            self.taken[row] += 1
        return texts


def _start_all(objective, response_sets: list[list[str]]) -> tuple[list, list[int]]:
    """Every context's first state and its pair evaluations; one model call when the objective batches."""
    if hasattr(objective, "start_many"):
        return objective.start_many(response_sets)
    states, counts = [], []
    for responses in response_sets:
        before = objective.pair_evaluations
        states.append(objective.start(responses))
        counts.append(objective.pair_evaluations - before)
    return states, counts


def _replace_all(objective, states: list, indices: list[int], responses: list[str]) -> list[int]:
    """One swap in each active context (new pairs scored together when the objective batches)."""
    if hasattr(objective, "replace_many"):
        return objective.replace_many(states, indices, responses)
    counts = []
    for state, index, response in zip(states, indices, responses):
        before = objective.pair_evaluations
        objective.replace(state, index, response)
        counts.append(objective.pair_evaluations - before)
    return counts


def _scores(objective, state) -> dict:
    report = getattr(objective, "report", None)
    return report(state) if report is not None else {getattr(objective, "name", "diversity"): objective.value(state)}


def _sampling_settings(tokenizer, decoding: str, generation_config, generate_kwargs: dict) -> dict:
    if "num_return_sequences" in generate_kwargs:
        raise ValueError("`num_return_sequences` is set by DTG (num_responses, or num_beams for beam decoding); leave it out")
    settings = dict(DEFAULT_SAMPLING) if generation_config is None and decoding == "sample" else {}
    settings.update(generate_kwargs)
    if generation_config is not None:
        settings["generation_config"] = generation_config
    settings.setdefault("pad_token_id", tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id)
    return settings


def diversity_threshold_generate(
    model, tokenizer, inputs, metric="nli", threshold: float | None = None, num_responses: int = 5,
    max_samples: int = 20, generation_config=None, metric_options: dict | None = None, decoding: str = "sample",
    num_beams: int = DEFAULT_NUM_BEAMS, max_context_tokens: int | None = None, **generate_kwargs,
) -> list[DTGResult]:
    """Run DTG for every context of ``inputs`` (§5); one :class:`DTGResult` per context, in order.

    Args:
        model, tokenizer: any causal or seq2seq ``GenerationMixin`` model and its tokenizer.
        inputs: context strings, or a tokenizer output (``input_ids``, ``attention_mask``).
        metric: ``"nli"`` (contradicting ordered pairs; threshold 10, i.e. more than 10 of 20),
            ``"sent_bert"`` (threshold -0.179) or ``"distinct_n"`` (0.98), or an objective object.
        threshold: stop once the set's diversity is **above** it; default the metric's (§6.2).
        num_responses: n (default 5); max_samples: S (default 20), counting the first n.
        decoding: ``"sample"`` (§5; nucleus p = 0.9 unless told otherwise) or ``"beam"`` (App. D:
            the top ``num_beams`` beams, most likely first, replace dropped responses in order).
        max_context_tokens: keep only each context's last tokens (string inputs).
        generation_config, generate_kwargs: decoding settings passed to ``generate``.
    """
    _check(num_responses, max_samples)
    if decoding not in DECODINGS:
        raise ValueError(f"`decoding` must be one of {DECODINGS}, got {decoding!r}")
    if decoding == "beam" and (isinstance(num_beams, bool) or not isinstance(num_beams, int) or num_beams < num_responses):
        raise ValueError(f"`num_beams` must be an int >= `num_responses` ({num_responses}), got {num_beams!r}")
    objective = make_objective(metric, **(metric_options or {}))
    threshold = float(objective.default_threshold if threshold is None else threshold)
    encoded = encode_contexts(tokenizer, inputs, model.config.is_encoder_decoder, max_context_tokens)
    settings = _sampling_settings(tokenizer, decoding, generation_config, generate_kwargs)
    candidates = (_SampledCandidates(model, tokenizer, encoded, settings) if decoding == "sample"
                  else _BeamCandidates(model, tokenizer, encoded, settings, num_beams))

    num_contexts = encoded["input_ids"].shape[0]
    first_sets = candidates.first(list(range(num_contexts)), num_responses)
    states, evaluations = _start_all(objective, first_sets)
    results = []
    for responses, state, count in zip(first_sets, states, evaluations):
        diversity = objective.value(state)
        results.append(DTGResult(
            responses=list(responses), initial_responses=list(responses), initial_diversity=diversity,
            final_diversity=diversity, num_sampled=num_responses, reached_threshold=diversity > threshold,
            stop_reason="threshold" if diversity > threshold else "", utterance_overlap=num_responses,
            num_pair_evaluations=count, initial_scores=_scores(objective, state),
        ))

    while True:
        active = []
        for i, result in enumerate(results):
            if result.reached_threshold or result.num_sampled >= max_samples:
                continue
            if candidates.remaining(i) == 0:
                result.stop_reason = "beams_exhausted"
                continue
            active.append(i)
        if not active:
            break
        drops = {}
        for i in active:
            before = objective.pair_evaluations
            subsets = np.asarray(objective.leave_one_out(states[i]), dtype=np.float64)
            drops[i] = int(subsets.argmax())  # the member missing from the best subset; first on ties
            results[i].num_pair_evaluations += objective.pair_evaluations - before
        counts = _replace_all(objective, [states[i] for i in active], [drops[i] for i in active], candidates.next(active))
        for i, count in zip(active, counts):
            result, state = results[i], states[i]
            result.num_sampled += 1
            result.final_diversity = objective.value(state)
            result.num_pair_evaluations += count
            result.history.append({"dropped": drops[i], "diversity": result.final_diversity})
            if result.final_diversity > threshold:
                result.reached_threshold, result.stop_reason = True, "threshold"
    for result, state in zip(results, states):
        result.responses = list(state.responses)
        result.final_scores = _scores(objective, state)
        if not result.stop_reason:
            result.stop_reason = "max_samples"
        result.utterance_overlap = sum((Counter(result.initial_responses) & Counter(result.responses)).values())
    return results
