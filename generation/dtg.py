"""Diversity Threshold Generation (Stasaski & Hearst 2022, §5; defaults §6.1-6.2; beam variant
App. D).

For each context: take n candidate responses. While the set's diversity is not above the
threshold and fewer than S responses have been *resampled*: score every leave-one-out subset
of size n-1, drop the response missing from the best-scoring subset, and draw one new candidate.

**What S counts.** §5 says "we continue resampling until the maximum cutoff of S is reached";
§6.1 sets S = 20 and Table 4 prints "Num. Sampled" with "a maximum value of 20". We read S as the
number of resamples, the n initial draws not included (so at most n + S = 25 responses are
drawn), for three reasons: (1) App. D generates 25 beams = 5 initial + 20 replacements; (2) App. E
counts the samples "required before reaching" the threshold, up to 20; (3) each resample replaces
one response, so App. C's utterance overlap is at least n - (resamples): were the 5 initial draws
part of S = 20, Table 6's overlap would be at least 10 - Num. Sampled, which five of its rows break
(Sent-BERT / DialoGPT / DailyDialog++: 5.2 sampled but overlap 3.11 < 4.8). Each result reports
``num_initial`` (n) and ``num_resampled`` (Table 4's "Num. Sampled", at most S) separately.

**The response to drop.** §5 ranks the leave-one-out subsets by the diversity metric. For NLI, §6.2
names the metric Baseline NLI Diversity (#contradictions - #entailments) and states the threshold
in #contradictions ("more than 10 out of a total of 20"): by default subsets are ranked by Baseline
NLI Diversity and the threshold is tested on #contradictions; ``nli_objective= "contradictions"``
ranks by #contradictions too (see :class:`~dialeval.generation.objectives.NLIContradictions`). The
paper does not say how ties between subsets are broken; :func:`choose_drop` picks one of the tied
subsets uniformly at random (``tie_break="random"``, the default), so that no slot is favoured:
always taking the first (``tie_break="first"``) replaces slot 0 again and again while the other four
stay, which inflates App. C's overlap.

Candidates come from one of two decoders (settings in :mod:`dialeval.generation.dtg_decoding`):

- ``decoding="sample"`` (§5, the paper's main setting): nucleus sampling, p = 0.9, whatever the
  checkpoint's generation_config says. Contexts are batched: the ones still below the threshold
  resample together in one ``generate`` call.
- ``decoding="beam"`` (App. D): one beam search per context returns ``num_beams`` (25) beams in
  likelihood order; the set starts with the n most likely and each swap takes the next beam.
  Beam search runs once, so a context stops early ("beams_exhausted") when n + S > num_beams.
"""

from __future__ import annotations

import copy
import inspect
import os
import warnings
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np
import torch

from dialeval.generation.diversity_objective import DiversityObjective
from dialeval.generation.dtg_checks import (
    check_dtg_settings,
    check_max_samples,
    check_num_beams,
    check_optional_flag,
)
from dialeval.generation.dtg_decoding import (
    decoding_record,
    dtg_generation_config,
    eos_ids,
    generated_ids,
)
from dialeval.generation.dtg_inputs import (
    check_context_rows,
    check_decoded,
    check_generation_config,
    check_model,
    check_token_batch,
    check_tokenizer,
    resolved_num_responses,
    vocabulary_size,
)
from dialeval.generation.dtg_padding import left_padded
from dialeval.generation.dtg_scores import candidate_steps, requested_step_outputs
from dialeval.generation.generation_settings import GenerativeModel
from dialeval.generation.objectives import DistinctN, NLIContradictions, SentBertDiversity
from dialeval.hub import LoadedModel, max_input_length
from dialeval.validation import ArgumentError, check_int, check_texts

if TYPE_CHECKING:
    from collections.abc import Sequence

    from transformers import BatchEncoding, GenerationConfig

    from dialeval.type_aliases import Tokenizer

OBJECTIVES = {"nli": NLIContradictions, "sent_bert": SentBertDiversity, "distinct_n": DistinctN}
DECODINGS = ("sample", "beam")
TIE_BREAKS = ("random", "first")
#: App. D: "we generate 25 beams and consider these responses from most to least probable" (5 + S).
DEFAULT_NUM_BEAMS = 25
#: The longest context a tokenizer is asked for when the model states no limit (a length the
#: tokenizers library still takes as an int; no model reads more).
MAX_TOKENS = 2**31 - 1
#: Leave-one-out values closer than this are a tie (Sent-BERT's are sums of float cosines).
TIE_TOLERANCE = 1e-9


@dataclass
class DTGResult:
    responses: list[str]
    initial_responses: list[str]
    initial_diversity: float  # the threshold's quantity (NLI: # contradictions) of the first set
    final_diversity: float
    num_initial: int  # n: the responses of the first set
    num_resampled: int  # responses drawn after the first set (at most S): Table 4's "Num. Sampled"
    reached_threshold: bool
    stop_reason: str  # "threshold", "max_samples" or (beam decoding) "beams_exhausted"
    utterance_overlap: int  # App. C: responses present in both the first and the final set
    num_pair_evaluations: int
    # the figures Table 4 reports (NLI: Baseline NLI Diversity too)
    initial_scores: dict = field(default_factory=dict)
    final_scores: dict = field(default_factory=dict)
    # one entry per swap: dropped index, tied subsets, new diversity
    history: list[dict] = field(default_factory=list)
    # the effective generation settings (dtg_decoding)
    decoding_settings: dict = field(default_factory=dict)
    #: Token ids of each final response as generate() produced them (not written by to_dict).
    response_token_ids: list[list[int]] = field(default_factory=list, repr=False)
    #: With output_scores / output_logits: each final response's ``(steps, vocab)`` processed scores
    #: / raw logits from the generate call that drew it (:mod:`dialeval.generation.dtg_scores`);
    #: else None.
    response_scores: list | None = field(default=None, repr=False)
    response_logits: list | None = field(default=None, repr=False)

    @property
    def num_drawn(self) -> int:
        """Every response drawn for this context: the first n and the resamples."""
        return self.num_initial + self.num_resampled

    def to_dict(self) -> dict:
        """The JSON record: every field but the token ids and the per-step tensors."""
        return {
            item.name: copy.deepcopy(getattr(self, item.name))
            for item in fields(self)
            if item.name not in _NOT_RECORDED
        }


_NOT_RECORDED = ("response_token_ids", "response_scores", "response_logits")


class Candidate(NamedTuple):
    """One drawn response: its text, its token ids, and its call's per-step tensors
    (``{"scores": ...}``)."""

    text: str
    ids: list[int]
    steps: dict


def make_objective(metric: str | DiversityObjective, **options: Any) -> DiversityObjective:
    """An objective instance from a name (``"nli"``, ``"sent_bert"``, ``"distinct_n"``) or pass one
    through."""
    if isinstance(metric, str):
        if metric not in OBJECTIVES:
            raise ArgumentError(
                "metric",
                f"must be one of {sorted(OBJECTIVES)} or an objective object, got {metric!r}",
            )
        _check_objective_options(OBJECTIVES[metric], metric, options)
        return OBJECTIVES[metric](**options)
    for method in ("start", "value", "leave_one_out", "replace"):
        if not hasattr(metric, method):
            raise ArgumentError(
                "metric", f"object lacks {method}(); see dialeval.generation.objectives"
            )
    if options:
        raise ArgumentError(
            min(options),
            f"applies to a metric given by name (given: {sorted(options)}); configure the "
            "objective object instead",
            mentions=(),
        )
    return metric


def _option_names(objective_class: type) -> set[str] | None:
    """The keywords ``objective_class`` takes (None: any), following ``options_forwarded_to``."""
    parameters = inspect.signature(objective_class).parameters.values()
    names = {
        parameter.name
        for parameter in parameters
        if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
    }
    if any(parameter.kind is parameter.VAR_KEYWORD for parameter in parameters):
        forwarded = getattr(objective_class, "options_forwarded_to", None)
        if forwarded is None:
            return None
        more = _option_names(forwarded)
        return None if more is None else names | more
    return names


def _check_objective_options(objective_class: type, metric: str, options: dict) -> None:
    """A keyword the objective does not take is refused by name, not as a TypeError inside it."""
    accepted = _option_names(objective_class)
    unknown = sorted(set(options) - accepted) if accepted is not None else []
    if unknown:
        assert accepted is not None  # no unknown option without the list of accepted ones
        raise ArgumentError(
            f"metric_options[{unknown[0]!r}]",
            f"is not an option of metric={metric!r}; it takes {sorted(accepted)}",
            mentions=(),
        )


def choose_drop(
    values: Sequence[float] | np.ndarray,
    tie_break: str = "random",
    rng: np.random.Generator | None = None,
) -> tuple[int, int]:
    """The member to drop: the one missing from the best leave-one-out subset (§5).

    ``values[i]`` is the diversity of the set without member ``i``. Among subsets within
    :data:`TIE_TOLERANCE` of the best, ``tie_break="random"`` picks one uniformly with ``rng``;
    ``"first"`` the lowest index. Returns ``(index, number of tied subsets)``.
    """
    values = np.asarray(values, dtype=np.float64)
    tied = np.flatnonzero(values >= values.max() - TIE_TOLERANCE)
    if len(tied) == 1 or tie_break == "first":
        return int(tied[0]), len(tied)
    if rng is None:
        raise ArgumentError("rng", "is required with tie_break='random'")
    return int(rng.choice(tied)), len(tied)


def context_token_limit(
    model: GenerativeModel, tokenizer: Tokenizer, generation_config: GenerationConfig
) -> int | None:
    """The most context tokens the model takes: :func:`dialeval.hub.max_input_length` (BlenderBot
    1.0: 128, the last 128 tokens of §6.1); a decoder-only model keeps room for ``max_new_tokens``.
    """
    limit = max_input_length(model.config, tokenizer)
    if limit is None or model.config.is_encoder_decoder:
        return limit
    reserve = generation_config.max_new_tokens or 0
    if limit - reserve < 1:
        raise ArgumentError(
            "max_new_tokens",
            f"({reserve}) leaves no room for a context in the model's {limit} positions",
        )
    return limit - reserve


def encode_contexts(
    tokenizer: Tokenizer,
    inputs: Sequence[str] | BatchEncoding | Mapping[str, torch.Tensor],
    is_encoder_decoder: bool,
    max_context_tokens: int | None = None,
) -> BatchEncoding | Mapping[str, torch.Tensor]:
    """Context strings as a padded batch (left padding for decoder-only models), or a tokenizer
    output as is.

    ``max_context_tokens`` keeps each context's last tokens (§6.1: BlenderBot sees the last 128).
    The caller's tokenizer is not changed (a copy is configured).
    """
    if (
        isinstance(inputs, (list, tuple))
        and inputs
        and all(isinstance(text, str) for text in inputs)
    ):
        # a lone surrogate: a tokenizers TypeError naming nothing otherwise
        check_texts(inputs, "inputs")
        tokenizer = copy.deepcopy(tokenizer)
        if not is_encoder_decoder:
            tokenizer.padding_side = "left"  # decoder-only models continue from the last token
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        truncation: dict[str, Any] = {}
        if max_context_tokens is not None:
            check_int(max_context_tokens, "max_context_tokens", 1)
            tokenizer.truncation_side = "left"
            truncation = {"truncation": True, "max_length": max_context_tokens}
        encoded = tokenizer(list(inputs), return_tensors="pt", padding=True, **truncation)
        check_context_rows(encoded, list(inputs))
        return encoded
    if hasattr(inputs, "keys") and "input_ids" in inputs:
        return cast("Mapping[str, torch.Tensor]", inputs)  # a tokenizer output
    raise ArgumentError(
        "inputs", "must be a non-empty list of context strings or a tokenizer output with input_ids"
    )


class _Generator:
    """DTG's generate calls: one effective config, responses as :class:`Candidate`."""

    def __init__(
        self,
        model: GenerativeModel,
        tokenizer: Tokenizer,
        encoded: Mapping[str, torch.Tensor],
        config: GenerationConfig,
        model_kwargs: dict[str, Any],
        step_outputs: tuple[str, ...] = (),
    ) -> None:
        self.model, self.tokenizer, self.encoded = model, tokenizer, encoded
        self.config, self.model_kwargs = config, model_kwargs
        self.step_outputs = step_outputs
        self.eos = eos_ids(config)
        self.is_encoder_decoder = bool(model.config.is_encoder_decoder)

    def __call__(self, rows: list[int], per_row: int) -> list[list[Candidate]]:
        """``per_row`` responses for each context in ``rows`` (one generate call),
        in output order."""
        device = getattr(self.model, "device", None)
        batch = {
            key: value[rows].to(device) if device is not None else value[rows]
            for key, value in self.encoded.items()
            if isinstance(value, torch.Tensor)
        }
        config = copy.deepcopy(self.config)
        config.num_return_sequences = per_row
        if self.step_outputs:
            config.return_dict_in_generate = True
            config.output_scores = "scores" in self.step_outputs
            config.output_logits = "logits" in self.step_outputs
        with torch.inference_mode():
            output = self.model.generate(**batch, generation_config=config, **self.model_kwargs)
        sequences = output if isinstance(output, torch.Tensor) else output.sequences
        steps = (
            candidate_steps(output, self.step_outputs)
            if self.step_outputs
            else [{}] * sequences.shape[0]
        )
        start = 0 if self.is_encoder_decoder else batch["input_ids"].shape[1]
        ids = generated_ids(
            sequences, start, self.eos, config.pad_token_id, skip_first=self.is_encoder_decoder
        )
        decoded = check_decoded(
            self.tokenizer.batch_decode(ids, skip_special_tokens=True), len(ids)
        )
        texts = [text.strip() for text in decoded]
        drawn = [Candidate(*parts) for parts in zip(texts, ids, steps)]
        return [drawn[i * per_row : (i + 1) * per_row] for i in range(len(rows))]


class _SampledCandidates:
    """§5: every candidate is a fresh sample; the contexts that need one share a generate call."""

    def __init__(self, generator: _Generator) -> None:
        self.generator = generator

    def first(self, rows: list[int], count: int) -> list[list[Candidate]]:
        return self.generator(rows, count)

    def remaining(self, row: int) -> int | None:
        return None  # unlimited

    def next(self, rows: list[int]) -> list[Candidate]:
        return [candidates[0] for candidates in self.generator(rows, 1)]


class _BeamCandidates:
    """App. D: the ``num_beams`` beams of each context, most likely first, handed out in order."""

    def __init__(self, generator: _Generator, num_contexts: int, num_beams: int) -> None:
        # generate() returns each context's beams sorted by their (length-normalised) beam score.
        self.beams = generator(list(range(num_contexts)), num_beams)
        self.taken = [0] * num_contexts

    def first(self, rows: list[int], count: int) -> list[list[Candidate]]:
        for row in rows:
            self.taken[row] = count
        return [self.beams[row][:count] for row in rows]

    def remaining(self, row: int) -> int | None:
        return len(self.beams[row]) - self.taken[row]

    def next(self, rows: list[int]) -> list[Candidate]:
        out = []
        for row in rows:
            out.append(self.beams[row][self.taken[row]])
            self.taken[row] += 1
        return out


def _start_all(
    objective: DiversityObjective, response_sets: list[list[str]]
) -> tuple[list, list[int]]:
    """Every context's first state and its pair evaluations; one model call when the objective
    batches."""
    if hasattr(objective, "start_many"):
        return objective.start_many(response_sets)
    states, counts = [], []
    for responses in response_sets:
        before = objective.pair_evaluations
        states.append(objective.start(responses))
        counts.append(objective.pair_evaluations - before)
    return states, counts


def _replace_all(
    objective: DiversityObjective, states: list, indices: list[int], responses: list[str]
) -> list[int]:
    """One swap in each active context (new pairs scored together when the objective batches)."""
    if hasattr(objective, "replace_many"):
        return objective.replace_many(states, indices, responses)
    counts = []
    for state, index, response in zip(states, indices, responses):
        before = objective.pair_evaluations
        objective.replace(state, index, response)
        counts.append(objective.pair_evaluations - before)
    return counts


def _scores(objective: DiversityObjective, state: Any) -> dict:
    report = getattr(objective, "report", None)
    return (
        report(state)
        if report is not None
        else {getattr(objective, "name", "diversity"): objective.value(state)}
    )


def build_objective(
    metric: str | DiversityObjective,
    metric_options: Mapping | None = None,
    nli_objective: str | None = None,
    nli_model: str | os.PathLike | LoadedModel | None = None,
) -> DiversityObjective:
    """:func:`make_objective` with DTG's ``metric_options``, ``nli_objective`` and ``nli_model``
    arguments (``nli_model`` is ``metric_options["model"]`` of the NLI objective)."""
    if metric_options is not None and (
        not isinstance(metric_options, Mapping)
        or not all(isinstance(key, str) for key in metric_options)
    ):
        raise ArgumentError(
            "metric_options",
            "must be a dict of keyword arguments for the metric's objective (e.g. "
            f"{{'model': 'path/to/nli-model'}}), got {type(metric_options).__name__}: "
            f"{metric_options!r:.60}",
        )
    options = dict(metric_options or {})
    if nli_model is not None:
        if metric != "nli":
            raise ArgumentError(
                "nli_model",
                "applies to metric='nli' (an NLIContradictions object takes it as `model`)",
            )
        named = isinstance(nli_model, (str, os.PathLike)) and str(os.fspath(nli_model)).strip()
        if not named and not isinstance(nli_model, LoadedModel):
            raise ArgumentError(
                "nli_model",
                "must be an NLI classifier's Hub id or local directory (or a "
                f"dialeval.hub.LoadedModel), got {type(nli_model).__name__}: {nli_model!r:.60}",
            )
        if "model" in options:
            raise ArgumentError(
                "nli_model",
                "and `metric_options['model']` both name the NLI model; give one",
            )
        options["model"] = nli_model if isinstance(nli_model, LoadedModel) else os.fspath(nli_model)
    if nli_objective is not None:
        if metric != "nli":
            raise ArgumentError(
                "nli_objective",
                "applies to metric='nli' (an NLIContradictions object takes it as an argument)",
            )
        options["nli_objective"] = nli_objective
    return make_objective(metric, **options)


def diversity_threshold_generate(
    model: GenerativeModel,
    tokenizer: Tokenizer,
    inputs: Sequence[str] | BatchEncoding | Mapping[str, torch.Tensor],
    metric: str | DiversityObjective = "nli",
    threshold: float | None = None,
    num_responses: int | None = None,
    max_samples: int = 20,
    generation_config: GenerationConfig | None = None,
    metric_options: dict | None = None,
    decoding: str = "sample",
    num_beams: int = DEFAULT_NUM_BEAMS,
    max_context_tokens: int | None = None,
    nli_objective: str | None = None,
    tie_break: str = "random",
    output_scores: bool | None = None,
    output_logits: bool | None = None,
    nli_model: str | os.PathLike | LoadedModel | None = None,
    **generate_kwargs: Any,
) -> list[DTGResult]:
    """Run DTG for every context of ``inputs`` (§5); one :class:`DTGResult` per context, in order.

    Args:
        model, tokenizer: any causal or seq2seq ``GenerationMixin`` model and its tokenizer (neither
            the tokenizer nor any generation config is changed).
        inputs: context strings, or a tokenizer output (``input_ids``, ``attention_mask``) used as
            is, except that a decoder-only model's right-padded batch is re-padded on the left from
            its ``attention_mask`` (:mod:`dialeval.generation.dtg_padding`; the caller's tensors are
            not changed).
        metric: ``"nli"`` (threshold 10: more than 10 contradicting ordered pairs of 20),
            ``"sent_bert"`` (the threshold calibrated for its embedder: -0.179 for the paper's BERT,
            -0.1597 for the default MiniLM; see :mod:`dialeval.generation.dtg_thresholds`) or
            ``"distinct_n"`` (0.98), or an objective object.
        threshold: stop once the set's diversity is **above** it; default the metric's (§6.2). A
            Sent-BERT embedder with no calibrated threshold gets the paper's -0.179 and a
            UserWarning.
        num_responses: n; None: ``generation_config.num_return_sequences``, else
            ``model.generation_config.num_return_sequences``, else 5 (§6.1), as ``generate()``
            reads ``num_return_sequences``; at most
            :data:`~dialeval.generation.dtg_checks.MAX_NUM_RESPONSES`.
        max_samples: S (default 20), the most *resamples* after the first n (see the module
            docstring); at most :data:`~dialeval.generation.dtg_checks.MAX_SAMPLES`.
        decoding: ``"sample"`` (§6.2: nucleus sampling, p = 0.9) or ``"beam"`` (App. D: the top
            ``num_beams`` beams, most likely first, replace dropped responses in order).
        max_context_tokens: keep only each context's last tokens (string inputs); None: the model's
            own maximum input length (:func:`context_token_limit`).
        nli_objective: for ``metric="nli"``, how leave-one-out subsets are ranked:
            ``"nli_diversity"`` (default, §6.2) or ``"contradictions"``.
        nli_model: for ``metric="nli"``, the NLI classifier: a Hub id or a local directory
            (default ``FacebookAI/roberta-large-mnli``); the same as ``metric_options={"model":
            ...}``, which also takes ``device``, ``dtype``, ``batch_size`` and ``label_map``.
        tie_break: ``"random"`` (default) or ``"first"``; see :func:`choose_drop`. Random ties draw
            their generator from torch's, so ``torch.manual_seed`` makes a run repeatable.
        output_scores, output_logits: keep each final response's processed scores / raw logits of
            the generate call that drew it (``response_scores`` / ``response_logits``); None: the
            generation config's setting, as generate() reads it
            (:mod:`dialeval.generation.dtg_scores`).
        generation_config, generate_kwargs: ``generate`` settings; DTG's decoding algorithm wins
            over the checkpoint's, keywords win over both
            (:func:`~dialeval.generation.dtg_decoding.dtg_generation_config`).
    """
    check_model(model)
    check_generation_config(generation_config)
    is_text = isinstance(inputs, (list, tuple))
    check_tokenizer(tokenizer, encodes_text=is_text)
    num_responses = resolved_num_responses(num_responses, generation_config, model)
    check_max_samples(max_samples)
    output_scores = check_optional_flag(output_scores, "output_scores")
    output_logits = check_optional_flag(output_logits, "output_logits")
    if decoding not in DECODINGS:
        raise ArgumentError("decoding", f"must be one of {DECODINGS}, got {decoding!r}")
    if tie_break not in TIE_BREAKS:
        raise ArgumentError("tie_break", f"must be one of {TIE_BREAKS}, got {tie_break!r}")
    if decoding == "sample" and num_beams != DEFAULT_NUM_BEAMS:
        raise ArgumentError(
            "num_beams",
            f"={num_beams!r} applies to decoding='beam' (App. D); §6.2's nucleus sampling runs "
            "one beam",
        )
    if decoding == "beam":
        num_beams = check_num_beams(num_beams, num_responses)
    step_outputs = requested_step_outputs(
        model,
        generation_config,
        output_scores,
        output_logits,
        generate_kwargs.pop("output_attentions", None),
        generate_kwargs.pop("output_hidden_states", None),
    )
    threshold = check_dtg_settings(threshold)
    config, model_kwargs = dtg_generation_config(
        model, tokenizer, decoding, num_beams, generation_config, generate_kwargs
    )
    # the effective settings: a keyword, the caller's generation_config or the checkpoint's may set
    # them
    sampling = decoding == "sample"
    check_dtg_settings(
        top_p=config.top_p if sampling else None,
        min_new_tokens=config.min_new_tokens,
        max_new_tokens=config.max_new_tokens,
        temperature=config.temperature if sampling else None,
        repetition_penalty=config.repetition_penalty,
    )
    objective = build_objective(metric, metric_options, nli_objective, nli_model)
    threshold_warning = getattr(objective, "threshold_warning", None)
    if threshold is None and threshold_warning:
        warnings.warn(threshold_warning, UserWarning, stacklevel=2)
    threshold = float(objective.default_threshold if threshold is None else threshold)
    settings = decoding_record(config, decoding)
    if not is_text and max_context_tokens is not None:
        raise ArgumentError(
            "max_context_tokens",
            "applies to context strings; cut tokenized inputs before passing them",
        )
    if is_text:
        limit = context_token_limit(model, tokenizer, config)
        if max_context_tokens is None:
            max_context_tokens = limit
        elif check_int(max_context_tokens, "max_context_tokens", 1) > (limit or MAX_TOKENS):
            raise ArgumentError(
                "max_context_tokens",
                f"({max_context_tokens}) exceeds the {limit or MAX_TOKENS} tokens the model "
                "takes as a context",
            )
        settings["max_context_tokens"] = max_context_tokens
    encoded = encode_contexts(
        tokenizer, inputs, model.config.is_encoder_decoder, max_context_tokens if is_text else None
    )
    if not is_text:
        check_token_batch(encoded, vocabulary_size(model))
    # a right-padded batch would put pads between prompt and response
    if not model.config.is_encoder_decoder:
        encoded = left_padded(encoded)
    generator = _Generator(model, tokenizer, encoded, config, model_kwargs, step_outputs)
    num_contexts = encoded["input_ids"].shape[0]
    candidates = (
        _SampledCandidates(generator)
        if decoding == "sample"
        else _BeamCandidates(generator, num_contexts, num_beams)
    )

    first_sets = candidates.first(list(range(num_contexts)), num_responses)
    states, evaluations = _start_all(
        objective, [[drawn.text for drawn in drawn_set] for drawn_set in first_sets]
    )
    kept = [list(drawn_set) for drawn_set in first_sets]  # each context's current set, as drawn
    results = []
    for drawn_set, state, count in zip(first_sets, states, evaluations):
        diversity = objective.value(state)
        responses = [drawn.text for drawn in drawn_set]
        results.append(
            DTGResult(
                responses=list(responses),
                initial_responses=list(responses),
                initial_diversity=diversity,
                final_diversity=diversity,
                num_initial=num_responses,
                num_resampled=0,
                reached_threshold=diversity > threshold,
                stop_reason="threshold" if diversity > threshold else "",
                utterance_overlap=num_responses,
                num_pair_evaluations=count,
                initial_scores=_scores(objective, state),
                decoding_settings=dict(settings),
            )
        )

    rng = None
    while True:
        active = []
        for i, result in enumerate(results):
            if result.reached_threshold or result.num_resampled >= max_samples:
                continue
            if candidates.remaining(i) == 0:
                result.stop_reason = "beams_exhausted"
                continue
            active.append(i)
        if not active:
            break
        drops, ties = {}, {}
        for i in active:
            before = objective.pair_evaluations
            values = objective.leave_one_out(states[i])
            results[i].num_pair_evaluations += objective.pair_evaluations - before
            if rng is None and tie_break == "random" and choose_drop(values, "first")[1] > 1:
                # Drawn at the first tie only, so a run without ties samples exactly as plain
                # generate().
                rng = np.random.default_rng(int(torch.randint(0, 2**62, (1,)).item()))
            drops[i], ties[i] = choose_drop(values, tie_break, rng)
        new = candidates.next(active)
        counts = _replace_all(
            objective,
            [states[i] for i in active],
            [drops[i] for i in active],
            [drawn.text for drawn in new],
        )
        for i, count, drawn in zip(active, counts, new):
            result, state = results[i], states[i]
            kept[i][drops[i]] = drawn
            result.num_resampled += 1
            result.final_diversity = objective.value(state)
            result.num_pair_evaluations += count
            result.history.append(
                {"dropped": drops[i], "tied": ties[i], "diversity": result.final_diversity}
            )
            if result.final_diversity > threshold:
                result.reached_threshold, result.stop_reason = True, "threshold"
    for result, state, drawn_set in zip(results, states, kept):
        result.responses = list(state.responses)
        result.response_token_ids = [list(drawn.ids) for drawn in drawn_set]
        if "scores" in step_outputs:
            result.response_scores = [drawn.steps["scores"] for drawn in drawn_set]
        if "logits" in step_outputs:
            result.response_logits = [drawn.steps["logits"] for drawn in drawn_set]
        result.final_scores = _scores(objective, state)
        if not result.stop_reason:
            result.stop_reason = "max_samples"
        result.utterance_overlap = sum(
            (Counter(result.initial_responses) & Counter(result.responses)).values()
        )
    return results
