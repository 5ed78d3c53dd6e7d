"""The language-model scoring engine: the loss of candidate responses given a context.

Sato et al. (2020, §4.1.2) rank a question's candidates r by the system's loss ℓ_r given the
context c. :class:`CandidateScorer` computes it under a causal or seq2seq ``transformers`` LM:
all candidates of a batch of questions go through **one** padded forward pass; questions are
length-sorted first so that a batch pads little; the model is loaded once per (model, device,
dtype) by :func:`dialeval.hub.load_model`. :mod:`dialeval.metrics.response_selection` builds the
metric (argmin selection, accuracy, ranking correlation) on it. Inside
:func:`dialeval.distributed.split_work` the processes of a launch score every N-th batch each
(the batch one process would run) and gather the losses in question order.

Identical candidates of a question are scored once and share that score, so they tie exactly
whatever the path's float rounding (the packed path scores each candidate at another offset of
the row, which moves its float32 sum in the 7th digit).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from dialeval.distributed import gather_shares, work_share
from dialeval.host_adapters import attention_implementation
from dialeval.hub import LoadedModel, ModelSource, load_model
from dialeval.type_aliases import DeviceLike, Progress, ResponseSets
from dialeval.validation import ArgumentError, check_flag, check_int, check_unicode_text

if TYPE_CHECKING:
    import torch
    from transformers import PretrainedConfig, PreTrainedModel

logger = logging.getLogger(__name__)
#: Response-selection contexts: per question, its turns (oldest first) or one string.
Contexts = Sequence[str | Sequence[str]]

REDUCTIONS = ("sum", "mean")
#: Questions per forward pass (x their candidates: 64 sequences for the test set's 4 candidates).
DEFAULT_BATCH_SIZE = 16


# --------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------


def describe(value: object) -> str:
    """A value's repr, cut to 60 characters for error messages."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@overload
def check_questions(
    contexts: Contexts, candidates: ResponseSets, labels: Sequence[int]
) -> tuple[list[list[str]], list[list[str]], list[int]]: ...


@overload
def check_questions(
    contexts: Contexts, candidates: ResponseSets, labels: None = None
) -> tuple[list[list[str]], list[list[str]], None]: ...


def check_questions(
    contexts: Contexts, candidates: ResponseSets, labels: Sequence[int] | None = None
) -> tuple[list[list[str]], list[list[str]], list[int] | None]:
    """Validate response-selection questions; contexts come back as lists of turns.

    ``contexts[i]``: a non-empty list of turns (oldest first) or one string; ``candidates[i]``:
    at least two non-empty strings; ``labels[i]``: the index of the ground truth in
    ``candidates[i]``. Raises ``ValueError`` naming the offending argument and item.
    """
    for name, value in (("contexts", contexts), ("candidates", candidates)):
        if isinstance(value, str) or not isinstance(value, Sequence):
            raise ArgumentError(
                name,
                f"must be a list (one item per question), got {type(value).__name__}: "
                f"{describe(value)}",
            )
    if len(contexts) == 0:
        raise ArgumentError("contexts", "is empty: give at least one question")
    if len(candidates) != len(contexts):
        raise ArgumentError(
            "candidates",
            f"must have one list per question: {len(candidates)} lists for {len(contexts)} "
            "contexts",
        )
    turns_per_question = []
    for i, context in enumerate(contexts):
        turns = [context] if isinstance(context, str) else context
        if not isinstance(turns, Sequence) or len(turns) == 0:
            raise ArgumentError(
                f"contexts[{i}]",
                f"must be a string or a non-empty list of turns, got {describe(context)}",
            )
        for j, turn in enumerate(turns):
            if not isinstance(turn, str) or not turn.strip():
                raise ArgumentError(
                    f"contexts[{i}][{j}]", f"must be a non-empty string, got {describe(turn)}"
                )
            check_unicode_text(
                turn, f"contexts[{i}]" if isinstance(context, str) else f"contexts[{i}][{j}]"
            )
        turns_per_question.append(list(turns))
    checked_candidates = []
    for i, options in enumerate(candidates):
        if isinstance(options, str) or not isinstance(options, Sequence) or len(options) < 2:
            raise ArgumentError(
                f"candidates[{i}]",
                f"must be a list of at least 2 candidate responses, got {describe(options)}",
            )
        for j, option in enumerate(options):
            if not isinstance(option, str) or not option.strip():
                raise ArgumentError(
                    f"candidates[{i}][{j}]", f"must be a non-empty string, got {describe(option)}"
                )
            check_unicode_text(option, f"candidates[{i}][{j}]")
        checked_candidates.append(list(options))
    if labels is None:
        return turns_per_question, checked_candidates, None
    if isinstance(labels, str) or not isinstance(labels, Sequence) or len(labels) != len(contexts):
        raise ArgumentError(
            "labels",
            f"must be a list of one int per question ({len(contexts)}), got {describe(labels)}",
        )
    checked_labels = []
    for i, label in enumerate(labels):
        if isinstance(label, (bool, np.bool_)) or not isinstance(label, (int, np.integer)):
            raise ArgumentError(
                f"labels[{i}]",
                f"must be an int (the ground truth's index in `candidates[{i}]`), got "
                f"{describe(label)}",
            )
        if not 0 <= label < len(checked_candidates[i]):
            raise ArgumentError(
                f"labels[{i}]",
                f"= {label} is not an index of `candidates[{i}]` (0 to "
                f"{len(checked_candidates[i]) - 1})",
            )
        checked_labels.append(int(label))
    return turns_per_question, checked_candidates, checked_labels


def check_reduction(reduction: str) -> None:
    if reduction not in REDUCTIONS:
        raise ArgumentError("reduction", f"must be one of {REDUCTIONS}, got {reduction!r}")


# --------------------------------------------------------------------------------------------
# Model loading
# --------------------------------------------------------------------------------------------


def load_language_model(
    model: ModelSource,
    device: DeviceLike = None,
    dtype: str | None = None,
    backend: str | None = None,
) -> LoadedModel[PreTrainedModel]:
    """A causal or seq2seq LM (by ``config.is_encoder_decoder``) through
    :func:`dialeval.hub.load_model`, on the runtime ``backend``."""
    return load_model(model, "language_model", device=device, dtype=dtype, backend=backend)


# --------------------------------------------------------------------------------------------
# What differs between model families
# --------------------------------------------------------------------------------------------


def _config_value(model: PreTrainedModel, name: str) -> Any:
    """``name`` from the model's config, else from its generation config (transformers 5 keeps
    e.g. T5's ``decoder_start_token_id`` in either)."""
    value = getattr(model.config, name, None)
    if value is None and getattr(model, "generation_config", None) is not None:
        value = getattr(model.generation_config, name, None)
    # several ids allowed (e.g. eos): the first starts a sequence
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    return value


def shift_right(
    labels: torch.Tensor, decoder_start_token_id: int, pad_token_id: int
) -> torch.Tensor:
    """Decoder inputs for teacher forcing: ``labels`` shifted one step right after
    ``decoder_start_token_id``, label padding (-100) replaced by ``pad_token_id``.

    This is what every seq2seq family of transformers does inside ``forward(labels=...)``
    (``shift_tokens_right`` of BART, BlenderBot, BlenderBot-small, Pegasus, Marian, mBART-50;
    T5's ``_shift_right``); only the start token differs (BART ``</s>``, BlenderBot ``<s>``, T5
    the pad token), and it is read from the model's config.
    """
    shifted = labels.new_full(labels.shape, pad_token_id)
    shifted[:, 1:] = labels[:, :-1]
    shifted[:, 0] = decoder_start_token_id
    return shifted.masked_fill(shifted == -100, pad_token_id)


def decoder_start_ids(model: PreTrainedModel) -> tuple[int, int]:
    """(decoder_start_token_id, pad_token_id) of a seq2seq model; ``ValueError`` when unset."""
    start, pad = (
        _config_value(model, "decoder_start_token_id"),
        _config_value(model, "pad_token_id"),
    )
    name = getattr(model.config, "name_or_path", "") or type(model).__name__
    if start is None:
        raise ValueError(
            f"model {name!r}: its config sets no decoder_start_token_id, so its decoder inputs "
            "are unknown"
        )
    return int(start), int(pad if pad is not None else start)


#: Attention-window settings of transformers configs: sliding windows (Mistral, Qwen2 with
#: ``use_sliding_window``, Gemma 2/3, Phi-3, Starcoder2, Cohere 2) and GPT-Neo's local layers.
def attention_window(config: PretrainedConfig) -> int | None:
    """The narrowest number of tokens any layer attends over, or None for full attention.

    Chunked attention (Llama 4's ``attention_chunk_size``) is reported as its chunk size.
    """
    windows = []
    sliding = getattr(config, "sliding_window", None)
    layer_types = getattr(config, "layer_types", None) or ()
    if (
        sliding
        and getattr(config, "use_sliding_window", True) is not False
        and (not layer_types or any("sliding" in str(kind) for kind in layer_types))
    ):
        windows.append(int(sliding))
    chunk = getattr(config, "attention_chunk_size", None)
    if chunk:
        windows.append(int(chunk))
    if "local" in (getattr(config, "attention_layers", None) or ()):
        windows.append(int(getattr(config, "window_size", 0) or 0) or 1)
    return min(windows) if windows else None


# --------------------------------------------------------------------------------------------
# Candidate losses
# --------------------------------------------------------------------------------------------


@dataclass
class CandidateLosses:
    """Per question: the summed token NLL of each candidate and its token count."""

    nll_sums: list[np.ndarray]
    num_tokens: list[np.ndarray]
    num_truncated_contexts: int

    def losses(self, reduction: str = "sum") -> list[np.ndarray]:
        check_reduction(reduction)
        if reduction == "sum":
            return self.nll_sums
        return [sums / counts for sums, counts in zip(self.nll_sums, self.num_tokens)]


@dataclass
class _EncodedQuestion:
    index: int
    source: list[int]  # causal: the context prefix; seq2seq: the encoder input
    targets: list[list[int]]  # the distinct candidates' tokens, each scored in full
    candidate_targets: list[int]  # per candidate: its index in ``targets``

    @property
    def longest(self) -> int:
        return len(self.source) + max(len(target) for target in self.targets)


class CandidateScorer:
    """The loss of every candidate response given its context, under one LM (§4.1.2).

    Args:
        model: a Hub id (in the local cache), a local directory, or a
            :class:`~dialeval.hub.LoadedModel`.
        device: torch device; default Accelerate's device for this process.
        dtype: None (the checkpoint's), "float32", "float16" or "bfloat16".
        backend: the runtime, "torch", "onnx" or "openvino" (:mod:`dialeval.runtimes`).
        batch_size: questions per forward pass; all their candidates go in that one pass.
        turn_separator: text between context turns and after the last one; default the
            tokenizer's EOS token (DialoGPT's format: ``turn<eos>turn<eos>``), else a newline.
        candidate_eos: append the EOS token to every candidate, so that the loss also charges
            the model for not ending the response there (default True; seq2seq models get
            their tokenizer's own target template instead).
        share_context: causal LMs only. True (default): each question is packed as one row,
            ``context cand₁ cand₂ ...``, with a 4D attention mask that lets every candidate see
            the context and its own earlier tokens only, and position ids that restart after the
            context; so the context is computed once per question, candidates are not padded to
            each other's length, and the output layer runs on the scored positions only. False
            (and automatically for attention implementations other than eager/sdpa, which may
            ignore a 4D mask): one left-padded row per ``context + candidate``, with logits kept
            for the candidates' positions only (``logits_to_keep``). The packed mask is full
            causal attention, so for a model with a sliding or chunked attention window
            (:func:`attention_window`: Mistral, Gemma 2/3, Qwen2 with ``use_sliding_window``,
            GPT-Neo, ...) a batch is packed only when every ``context + candidate`` fits in the
            window (where the window cannot bite); other batches take the left-padded path, on
            which the model builds its own windowed mask. Chunked attention always takes it.

    Seq2seq LMs decode every candidate from the model's ``decoder_start_token_id``
    (:func:`shift_right`, as each family does in ``forward(labels=...)``), so models without
    ``prepare_decoder_input_ids_from_labels`` (BlenderBot, BlenderBot-small) are scored too.
    Their candidates are tokenized with the tokenizer's target template; with ``candidate_eos``
    an EOS token is appended when the template does not end with one (BlenderBot-small's
    tokenizer adds no special tokens, but its model ends a response with EOS).

    Causal LMs read ``context turns + separators + candidate`` (after the tokenizer's own leading
    special tokens, e.g. a BOS, if it adds any) and only the candidate's tokens are scored, with
    explicit position ids so that padding does not shift positions. Seq2seq
    LMs encode each context once and decode all of its candidates against the same encoder
    states. A context longer than the model allows loses its oldest tokens (counted in
    ``num_truncated_contexts``).
    """

    def __init__(
        self,
        model: ModelSource,
        device: DeviceLike = None,
        dtype: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        turn_separator: str | None = None,
        candidate_eos: bool = True,
        share_context: bool = True,
        backend: str | None = None,
    ) -> None:
        check_int(batch_size, "batch_size")
        candidate_eos, share_context = (
            check_flag(candidate_eos, "candidate_eos"),
            check_flag(share_context, "share_context"),
        )
        if turn_separator is not None and not isinstance(turn_separator, str):
            raise ArgumentError(
                "turn_separator", f"must be a string or None, got {turn_separator!r}"
            )
        self.lm = load_language_model(model, device=device, dtype=dtype, backend=backend)
        self.batch_size = batch_size
        tokenizer = self.lm.tokenizer
        if turn_separator is None:
            turn_separator = tokenizer.eos_token if tokenizer.eos_token is not None else "\n"
        self.turn_separator = turn_separator
        self.candidate_eos = candidate_eos and tokenizer.eos_token_id is not None
        self.pad_id = next(
            i for i in (tokenizer.pad_token_id, tokenizer.eos_token_id, 0) if i is not None
        )
        attention = attention_implementation(self.lm.model.config) or "eager"
        self.share_context = share_context and attention in {"eager", "sdpa"}
        self.attention_window = attention_window(self.lm.model.config)
        if self.share_context and getattr(self.lm.model.config, "attention_chunk_size", None):
            logger.info(
                "%s: chunked attention; candidates are scored on the left-padded path", self.lm.name
            )
            self.share_context = False
        if self.lm.is_encoder_decoder:
            self._decoder_start = decoder_start_ids(self.lm.model)
        # What the tokenizer puts before any text (Llama's BOS; nothing for GPT-2) starts a causal
        # context.
        self._context_prefix = (
            [] if self.lm.is_encoder_decoder else tokenizer("", verbose=False)["input_ids"]
        )
        parameters = inspect.signature(self.lm.model.forward).parameters
        # transformers 5 causal LMs take logits_to_keep; for one that does not, all logits are
        # sliced.
        self._keeps_logits = "logits_to_keep" in parameters
        # Packed scoring applies the output layer itself, which is only right when the model's
        # logits are exactly output_embeddings(last hidden state): not for Gemma-2's soft-capping,
        # Cohere's logit_scale or Granite's logits_scaling, which go through the full forward.
        config, network = self.lm.model.config, self.lm.model
        self._head_on_hidden = (
            not self.lm.is_encoder_decoder
            and network.get_output_embeddings() is not None
            and network.get_decoder() is not network
            and not any(
                getattr(config, name, None)
                for name in ("final_logit_softcapping", "logit_scale", "logits_scaling")
            )
        )

    # -- encoding ------------------------------------------------------------------------------

    def _ids(self, texts: list[str]) -> list[list[int]]:
        return self.lm.tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"]

    def _encode(
        self, index: int, turns: list[str], candidates: list[str]
    ) -> tuple[_EncodedQuestion, bool]:
        tokenizer, limit = self.lm.tokenizer, self.lm.max_length
        context_text = self.turn_separator.join(turns)
        if self.lm.is_encoder_decoder:
            source = tokenizer(context_text, verbose=False)["input_ids"]
            targets = tokenizer(text_target=candidates, verbose=False)["input_ids"]
            if self.candidate_eos:
                targets = [
                    ids
                    if ids and ids[-1] == tokenizer.eos_token_id
                    else ids + [tokenizer.eos_token_id]
                    for ids in targets
                ]
            truncated = len(source) > limit
            if truncated:  # keep the most recent turns and the template's first token (e.g. <s>)
                source = source[:1] + source[len(source) - limit + 1 :]
        else:
            source = self._context_prefix + self._ids([context_text + self.turn_separator])[0]
            targets = [
                ids + [tokenizer.eos_token_id] if self.candidate_eos else ids
                for ids in self._ids(candidates)
            ]
        for j, target in enumerate(targets):
            if len(target) >= limit:
                raise ArgumentError(
                    f"candidates[{index}][{j}]",
                    f"has {len(target)} tokens; the model takes at most {limit} "
                    "tokens per sequence, and the context needs at least one",
                )
        if not self.lm.is_encoder_decoder:
            budget = limit - max(len(t) for t in targets)
            truncated = len(source) > budget
            if truncated:  # keep the leading special tokens and the most recent turns
                keep = max(budget - len(self._context_prefix), 1)
                source = (self._context_prefix + source[len(source) - keep :])[-budget:]
        distinct: dict[tuple[int, ...], int] = {}
        candidate_targets = [
            distinct.setdefault(tuple(target), len(distinct)) for target in targets
        ]
        return _EncodedQuestion(
            index, source, [list(target) for target in distinct], candidate_targets
        ), truncated

    # -- forward passes ------------------------------------------------------------------------

    def _causal_batch(
        self, questions: list[_EncodedQuestion]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        # torch: deferred, so importing this module loads no model stack
        import torch
        import torch.nn.functional as F

        rows = [(q.source + target, len(target)) for q in questions for target in q.targets]
        width = max(len(ids) for ids, _ in rows)
        keep = max(length for _, length in rows)  # candidate positions to score
        input_ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
        target_mask = torch.zeros((len(rows), keep), dtype=torch.bool)
        for r, (ids, length) in enumerate(rows):
            # Left padding puts every candidate at the end, so one slice of logits covers them all.
            input_ids[r, width - len(ids) :] = torch.tensor(ids)
            attention_mask[r, width - len(ids) :] = 1
            target_mask[r, keep - length :] = True
        position_ids = (attention_mask.cumsum(1) - 1).clamp(min=0)
        device = self.lm.device
        inputs: dict[str, Any] = {
            "input_ids": input_ids.to(device),
            "attention_mask": attention_mask.to(device),
            "position_ids": position_ids.to(device),
        }
        if self._keeps_logits:
            inputs["logits_to_keep"] = keep + 1
        logits = self.lm.model(**inputs).logits[:, -(keep + 1) : -1]
        targets = input_ids[:, width - keep :].to(device)
        token_nll = F.cross_entropy(logits.float().transpose(1, 2), targets, reduction="none")
        token_nll = token_nll.masked_fill(~target_mask.to(device), 0.0).double().cpu()
        return self._split(questions, token_nll.sum(1).numpy(), target_mask.sum(1).numpy())

    def _causal_packed_batch(
        self, questions: list[_EncodedQuestion]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """One forward per batch with each question packed as ``context cand₁ cand₂ ...``.

        A 4D attention mask lets every candidate see the context and its own earlier tokens
        only, and its position ids restart after the context, so each candidate is scored as if
        it followed the context alone, while the context is computed once and candidates are
        not padded to each other's length.
        """
        # torch: deferred, so importing this module loads no model stack
        import torch
        import torch.nn.functional as F

        model, device = self.lm.model, self.lm.device
        totals = [len(q.source) + sum(map(len, q.targets)) for q in questions]
        width = max(totals)
        # The last context position predicts each candidate's first token; logits are computed
        # only from there on (the candidates' block).
        window = max(sum(map(len, q.targets)) for q in questions) + 1
        input_ids = torch.full((len(questions), width), self.pad_id, dtype=torch.long)
        position_ids = torch.zeros((len(questions), width), dtype=torch.long)
        allowed = torch.zeros((len(questions), width, width), dtype=torch.bool)
        allowed[:, torch.arange(width), torch.arange(width)] = (
            True  # a padding row must attend somewhere
        )
        rows: list[int] = []
        positions: list[int] = []
        target_tokens: list[int] = []
        owners: list[int] = []
        candidate = 0
        for r, (q, total) in enumerate(zip(questions, totals)):
            offset, context_length = width - total, len(q.source)
            context_end = offset + context_length
            input_ids[r, offset:] = torch.tensor(
                q.source + [token for target in q.targets for token in target]
            )
            position_ids[r, offset:context_end] = torch.arange(context_length)
            allowed[r, offset:context_end, offset:context_end] = (
                torch.ones(context_length, context_length).tril().bool()
            )
            start = context_end
            for target in q.targets:
                stop = start + len(target)
                position_ids[r, start:stop] = torch.arange(
                    context_length, context_length + len(target)
                )
                allowed[r, start:stop, offset:context_end] = True
                allowed[r, start:stop, start:stop] = (
                    torch.ones(len(target), len(target)).tril().bool()
                )
                rows += [r] * len(target)
                positions += [context_end - 1, *range(start, stop - 1)]
                target_tokens += target
                owners += [candidate] * len(target)
                candidate += 1
                start = stop
        dtype = model.dtype if model.dtype.is_floating_point else torch.float32
        mask = torch.zeros(allowed.shape, dtype=dtype).masked_fill(
            ~allowed, torch.finfo(dtype).min
        )[:, None]
        inputs: dict[str, Any] = {
            "input_ids": input_ids.to(device),
            "attention_mask": mask.to(device),
            "position_ids": position_ids.to(device),
            "use_cache": False,
        }
        row_index, position_index = (
            torch.tensor(rows, device=device),
            torch.tensor(positions, device=device),
        )
        if self._head_on_hidden:
            # The output layer on the scored positions only: no (batch, length, vocabulary) tensor.
            hidden = model.get_decoder()(**inputs).last_hidden_state
            logits = model.get_output_embeddings()(hidden[row_index, position_index])
        else:
            if self._keeps_logits:
                inputs["logits_to_keep"] = window
            logits = model(**inputs).logits[:, -window:][
                row_index, position_index - (width - window)
            ]
        token_nll = F.cross_entropy(
            logits.float(), torch.tensor(target_tokens, device=device), reduction="none"
        )
        sums = torch.zeros(candidate, dtype=torch.float64, device=device)
        sums.index_add_(0, torch.tensor(owners, device=device), token_nll.double())
        counts = np.array([len(target) for q in questions for target in q.targets])
        return self._split(questions, sums.cpu().numpy(), counts)

    def _seq2seq_batch(
        self, questions: list[_EncodedQuestion]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        # torch: deferred, so importing this module loads no model stack
        import torch
        import torch.nn.functional as F

        model, device = self.lm.model, self.lm.device
        width = max(len(q.source) for q in questions)
        source_ids = torch.full((len(questions), width), self.pad_id, dtype=torch.long)
        source_mask = torch.zeros((len(questions), width), dtype=torch.long)
        for r, q in enumerate(questions):
            source_ids[r, : len(q.source)] = torch.tensor(q.source)
            source_mask[r, : len(q.source)] = 1
        targets = [target for q in questions for target in q.targets]
        owner = torch.tensor([r for r, q in enumerate(questions) for _ in q.targets], device=device)
        labels = torch.full((len(targets), max(map(len, targets))), -100, dtype=torch.long)
        for r, target in enumerate(targets):
            labels[r, : len(target)] = torch.tensor(target)
        labels = labels.to(device)
        # One encoder pass per context; every candidate of the question decodes against it.
        encoded = model.get_encoder()(
            input_ids=source_ids.to(device), attention_mask=source_mask.to(device)
        )
        encoded.last_hidden_state = encoded.last_hidden_state.index_select(0, owner)
        logits = model(
            encoder_outputs=encoded,
            attention_mask=source_mask.to(device).index_select(0, owner),
            decoder_input_ids=shift_right(labels, *self._decoder_start),
        ).logits
        token_nll = F.cross_entropy(
            logits.float().transpose(1, 2), labels, reduction="none", ignore_index=-100
        )
        counts = (labels != -100).sum(1).cpu().numpy()
        return self._split(questions, token_nll.double().sum(1).cpu().numpy(), counts)

    @staticmethod
    def _split(
        questions: list[_EncodedQuestion], sums: np.ndarray, counts: np.ndarray
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per question, the scores of its candidates (a repeated candidate gets its one score)."""
        out, start = [], 0
        for q in questions:
            stop = start + len(q.targets)
            mapping = np.asarray(q.candidate_targets)
            out.append(
                (
                    sums[start:stop].astype(np.float64)[mapping],
                    counts[start:stop].astype(np.int64)[mapping],
                )
            )
            start = stop
        return out

    def _fits_window(self, questions: list[_EncodedQuestion]) -> bool:
        """Whether a packed batch is exact: no layer's attention window cuts any context +
        candidate."""
        return self.attention_window is None or all(
            q.longest <= self.attention_window for q in questions
        )

    def score(
        self, contexts: Contexts, candidates: ResponseSets, progress: Progress | None = None
    ) -> CandidateLosses:
        """Summed token NLL and token count of every candidate; see the class docstring.

        ``progress`` is called with the number of questions finished after each forward pass.
        """
        # torch: deferred, so importing this module loads no model stack
        import torch

        turns_per_question, checked_candidates, _ = check_questions(contexts, candidates)
        encoded, truncated = [], 0
        for index, (turns, options) in enumerate(zip(turns_per_question, checked_candidates)):
            question, was_truncated = self._encode(index, turns, options)
            encoded.append(question)
            truncated += was_truncated
        # Longest first: similar lengths share a batch (little padding), and an out-of-memory
        # error shows in the first pass rather than at the end. Under split_work each process
        # runs every num_processes-th of these batches, each batch as one process would run it.
        order = work_share(
            sorted(range(len(encoded)), key=lambda i: encoded[i].longest, reverse=True),
            self.batch_size,
        )
        scored: list[tuple[np.ndarray, np.ndarray]] = []
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                batch = [encoded[i] for i in order[start : start + self.batch_size]]
                if self.lm.is_encoder_decoder:
                    forward = self._seq2seq_batch
                elif self.share_context and self._fits_window(batch):
                    forward = self._causal_packed_batch
                else:
                    forward = self._causal_batch
                scored += forward(batch)
                if progress is not None:
                    progress(len(batch))
        members, scored = gather_shares(order, scored)
        by_question = dict(zip(members, scored))  # every question is some process's: all are here
        sums = [by_question[index][0] for index in range(len(encoded))]
        counts = [by_question[index][1] for index in range(len(encoded))]
        return CandidateLosses(sums, counts, truncated)
