"""Diversity Threshold Generation (Stasaski & Hearst 2022, §5; defaults §6.1-6.2).

For each context: sample n responses. While the set's diversity is not above the threshold
and fewer than S responses have been sampled (the first n count): score every leave-one-out
subset of size n-1, drop the response missing from the best-scoring subset, and sample one new
response. Contexts are batched: the ones still below the threshold resample together in one
``generate`` call; the others stop.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import torch

from .set_objectives import DistinctN, NLIContradictions, SentBertDiversity

OBJECTIVES = {"nli": NLIContradictions, "sent_bert": SentBertDiversity, "distinct_n": DistinctN}
#: Nucleus sampling, p = 0.9 (§6.1); top_k=0 so that only the nucleus truncates.
DEFAULT_SAMPLING = {"do_sample": True, "top_p": 0.9, "top_k": 0}


@dataclass
class DTGResult:
    responses: list[str]
    initial_responses: list[str]
    initial_diversity: float
    final_diversity: float
    num_sampled: int
    reached_threshold: bool
    stop_reason: str  # "threshold" or "max_samples"
    utterance_overlap: int  # App. C: responses present in both the first and the final set
    num_pair_evaluations: int
    history: list[dict] = field(default_factory=list)  # one entry per swap: dropped index, new diversity


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
            raise ValueError(f"`metric` object lacks {method}(); see dialeval.generation.set_objectives")
    return metric


def _encode_contexts(tokenizer, inputs, is_encoder_decoder: bool):
    if isinstance(inputs, (list, tuple)) and all(isinstance(text, str) for text in inputs):
        if not is_encoder_decoder:
            tokenizer.padding_side = "left"  # decoder-only models continue from the last token
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        return tokenizer(list(inputs), return_tensors="pt", padding=True)
    if hasattr(inputs, "keys") and "input_ids" in inputs:
        return inputs
    raise ValueError("`inputs` must be a list of context strings or a tokenizer output with input_ids")


def _sample(model, tokenizer, encoded, rows: list[int], per_row: int, generate_kwargs: dict) -> list[list[str]]:
    """``per_row`` sampled responses for each context in ``rows`` (one generate call)."""
    batch = {key: value[rows] for key, value in encoded.items() if isinstance(value, torch.Tensor)}
    with torch.inference_mode():
        output = model.generate(**batch, num_return_sequences=per_row, **generate_kwargs)
    if not model.config.is_encoder_decoder:
        output = output[:, batch["input_ids"].shape[1]:]
    texts = tokenizer.batch_decode(output, skip_special_tokens=True)
    texts = [text.strip() for text in texts]
    return [texts[i * per_row:(i + 1) * per_row] for i in range(len(rows))]


def diversity_threshold_generate(
    model, tokenizer, inputs, metric="nli", threshold: float | None = None, num_responses: int = 5,
    max_samples: int = 20, generation_config=None, metric_options: dict | None = None, **generate_kwargs,
) -> list[DTGResult]:
    """Run DTG for every context of ``inputs`` (§5); one :class:`DTGResult` per context, in order.

    Args:
        model, tokenizer: any causal or seq2seq ``GenerationMixin`` model and its tokenizer.
        inputs: context strings, or a tokenizer output (``input_ids``, ``attention_mask``).
        metric: ``"nli"`` (contradicting ordered pairs; threshold 10, i.e. more than 10 of 20),
            ``"sent_bert"`` (threshold -0.179) or ``"distinct_n"`` (0.98), or an objective object.
        threshold: stop once the set's diversity is **above** it; default the metric's (§6.2).
        num_responses: n (default 5); max_samples: S (default 20), counting the first n.
        generation_config, generate_kwargs: sampling settings; default nucleus p = 0.9.
    """
    _check(num_responses, max_samples)
    objective = make_objective(metric, **(metric_options or {}))
    threshold = float(objective.default_threshold if threshold is None else threshold)
    encoded = _encode_contexts(tokenizer, inputs, model.config.is_encoder_decoder)
    sampling = {} if generation_config is not None else dict(DEFAULT_SAMPLING)
    sampling.update(generate_kwargs)
    if generation_config is not None:
        sampling["generation_config"] = generation_config
    sampling.setdefault("pad_token_id", tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id)

    num_contexts = encoded["input_ids"].shape[0]
    first_sets = _sample(model, tokenizer, encoded, list(range(num_contexts)), num_responses, sampling)
    states, results = [], []
    for responses in first_sets:
        before = objective.pair_evaluations
        state = objective.start(responses)
        diversity = objective.value(state)
        states.append(state)
        results.append(DTGResult(
            responses=list(responses), initial_responses=list(responses), initial_diversity=diversity,
            final_diversity=diversity, num_sampled=num_responses, reached_threshold=diversity > threshold,
            stop_reason="threshold" if diversity > threshold else "", utterance_overlap=num_responses,
            num_pair_evaluations=objective.pair_evaluations - before,
        ))

    while True:
        active = [i for i, r in enumerate(results) if not r.reached_threshold and r.num_sampled < max_samples]
        if not active:
            break
        drops = {}
        for i in active:
            before = objective.pair_evaluations
            subsets = np.asarray(objective.leave_one_out(states[i]), dtype=np.float64)
            drops[i] = int(subsets.argmax())  # the member missing from the best subset; first on ties
            results[i].num_pair_evaluations += objective.pair_evaluations - before
        new_responses = _sample(model, tokenizer, encoded, active, 1, sampling)
        for i, (response,) in zip(active, new_responses):
            result, state = results[i], states[i]
            before = objective.pair_evaluations
            objective.replace(state, drops[i], response)
            result.num_sampled += 1
            result.final_diversity = objective.value(state)
            result.num_pair_evaluations += objective.pair_evaluations - before
            result.history.append({"dropped": drops[i], "diversity": result.final_diversity})
            if result.final_diversity > threshold:
                result.reached_threshold, result.stop_reason = True, "threshold"
    for result, state in zip(results, states):
        result.responses = list(state.responses)
        if not result.reached_threshold:
            result.stop_reason = "max_samples"
        result.utterance_overlap = sum((Counter(result.initial_responses) & Counter(result.responses)).values())
    return results
