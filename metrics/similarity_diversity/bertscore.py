"""BERTScore F1 as a pairwise similarity, and the diversity it induces.

Tevet & Berant (EACL 2021, §5) turn any similarity into a diversity metric: the negated mean
similarity over a response set's unordered pairs; one of the similarities of §6.2 is BERTScore
(Zhang et al., ICLR 2020, "BERTScore: Evaluating Text Generation with BERT"). This module
computes, for many response sets, each set's ``n x n`` matrix of BERTScore F1, embedding every
distinct sentence once (not once per pair) and loading the model once per (path, device, dtype,
runtime backend).

Conventions, mirrored from the reference implementation ``bert_score`` 0.3.13 (``score`` with
its defaults for English: ``roberta-large``, layer 17, ``idf=False``):

* Tokenization (``bert_score.utils.sent_encode``): the sentence is ``strip()``-ed and encoded with
  the tokenizer's special tokens, truncated to ``tokenizer.model_max_length``. For GPT-2/RoBERTa
  style tokenizers (``GPT2Tokenizer``/``RobertaTokenizer`` instances, which in transformers 5
  includes ``BartTokenizer``) bert_score asks for ``add_prefix_space=True`` so that the first
  word is encoded like every other word (``"Ġword"``). transformers 5 silently ignores that
  keyword in ``encode``, so the space is prepended here, which is what the slow tokenizer did
  with it. A sentence that is empty after ``strip()`` is its special tokens alone. A tokenizer
  without a ``model_max_length`` falls back to the model's number of positions. How many
  distinct sentences were truncated is in :class:`BERTScoreMatrices` (and a warning says so).
* Embeddings: the last hidden state of the encoder cut to its first ``num_layers`` layers
  (bert_score drops the later layers), i.e. ``hidden_states[num_layers]`` of the full model;
  ``num_layers=0`` is the embedding layer. The cut is the same on every backend (an exported
  backend runs a graph of the cut model: :mod:`dialeval.layer_stacks`), so the layers above are
  never computed. Encoder-decoder models use their encoder. Encoders
  without a BERT-style ``encoder.layer`` stack use ``hidden_states[num_layers]``, which differs
  from bert_score's cut stack only for architectures that normalize after their last layer
  (e.g. T5, mBART). Each token vector is L2-normalized.
* Weights: idf is off (bert_score's default): every token weighs 1 except the ids of the
  tokenizer's ``cls_token`` and ``sep_token`` (``<s>``/``</s>`` for RoBERTa, ``[CLS]``/``[SEP]``
  for BERT), which weigh 0, exactly as bert_score's ``idf_dict`` does. A tokenizer that declares
  no cls/sep token gets no zero weights, as in bert_score.
* Greedy matching: ``P(x, y) = sum_i w_i max_j cos(x_i, y_j) / sum_i w_i`` over the candidate
  ``x``'s tokens, ``R(x, y) = P(y, x)``, ``F = 2PR / (P + R)``; a NaN F (a sentence whose tokens
  all weigh 0, i.e. an empty one) becomes 0, as in bert_score. The max runs over the real
  tokens only. (bert_score also lets a padding position of its batch enter the max with cosine
  0, depending on which sentences share its batch; that changes a score only when all of a
  token's cosines are negative, practically never with roberta-large, whose cosines cluster so
  high that a random pair's F is 0.83, the baseline below.)
* Rescaling (``rescale_with_baseline=True``, bert_score's ``--rescale_with_baseline``): ``(F - b)
  / (1 - b)`` with the F baseline ``b`` of the model and layer; 1 stays 1, and a random pair of
  English sentences scores about 0.

``M[i, j]`` is F1 with ``s_i`` as the candidate and ``s_j`` as the reference, which equals F1
with the roles swapped, so each matrix is exactly symmetric (``R`` is computed as ``P``
transposed). The diagonal is the self-score (1 up to float rounding). Similarities are computed
in float32 on the model's device, as bert_score does; F and the rescaling in float64. The token
vectors of all distinct sentences stay on that device until the call returns (4 KiB per token
for roberta-large).
"""

from __future__ import annotations

import csv
import hashlib
import math
import numbers
import os
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from dialeval.distributed import gather_shares, is_sharing_work, work_share
from dialeval.hub import (
    check_dtype,
    load_model,
    max_input_length,
    resolve_device,
    resolve_model_path,
)
from dialeval.metrics.engines.job_steps import announce_work
from dialeval.metrics.engines.reduction import UnitSimilarity, units_of
from dialeval.metrics.similarity_diversity.bertscore_baselines import EN_BASELINE_SHA256
from dialeval.metrics.similarity_diversity.defaults import DEFAULT_BERTSCORE_MODEL
from dialeval.runtimes import check_backend
from dialeval.validation import ArgumentError, check_int, check_response_sets

if TYPE_CHECKING:
    import torch
    from transformers import PretrainedConfig

    from dialeval.type_aliases import DeviceLike, Progress, StrPath, Tokenizer

DEFAULT_BERTSCORE_LAYER = 17  # bert_score.utils.model2layers["roberta-large"]

# bert_score 0.3.13, file bert_score/rescale_baseline/en/roberta-large.tsv, row LAYER=17
# (columns P, R, F). Only F is used: the metric is F1.
ROBERTA_LARGE_L17_BASELINE = {"P": 0.83150584, "R": 0.8314941, "F": 0.83122575}

# bert_score names the default model by its legacy id; both ids are the same checkpoint.
_DEFAULT_MODEL_IDS = frozenset({DEFAULT_BERTSCORE_MODEL, "roberta-large"})
# Elements of one (rows, n, L, L) similarity block: bounds memory for large sets.
_SIMILARITY_BLOCK = 1 << 24


@dataclass(frozen=True)
class BERTScoreMatrices:
    """What :func:`compute_bertscore_matrices` returns.

    Attributes:
        unit_similarities: per response set, the F1 of every pair of its distinct (stripped)
            sentences (:class:`~dialeval.metrics.engines.reduction.UnitSimilarity`).
        num_layers: the layer whose hidden states were used.
        baseline: the F baseline the scores were rescaled with, ``None`` when not rescaled.
        num_encoded: distinct sentences (after ``strip()``) run through the model.
        num_truncated: how many of those were cut to ``max_length`` tokens.
        max_length: the token limit (special tokens included).
    """

    unit_similarities: list[UnitSimilarity]
    num_layers: int
    baseline: float | None
    num_encoded: int
    num_truncated: int
    max_length: int

    @property
    def matrices(self) -> list[np.ndarray]:
        """One symmetric ``(n, n)`` float64 array of BERTScore F1 per response set."""
        return [units.full_matrix() for units in self.unit_similarities]


def _check_dtype(dtype: str | None) -> str:
    return check_dtype(dtype) or "float32"  # bert_score runs in the checkpoint's float32


def _load(
    model_path: str, device: str, dtype: str, backend: str = "torch", layers: int | None = None
) -> tuple[Tokenizer, torch.nn.Module]:
    """``(tokenizer, encoder)`` from :func:`dialeval.hub.load_model`; an encoder-decoder model
    contributes its encoder, as ``bert_score.utils.get_model`` does. ``layers``: the hidden state
    to be read, above which a BERT-family stack is cut, as bert_score cuts it (on every backend:
    :mod:`dialeval.layer_stacks`)."""
    loaded = load_model(
        model_path, "encoder", device=device, dtype=dtype, backend=backend, layers=layers
    )
    model: torch.nn.Module = loaded.model
    if hasattr(model, "encoder") and hasattr(model, "decoder"):
        model = cast("torch.nn.Module", model.encoder)
    return loaded.tokenizer, model


def _num_layers_available(config: PretrainedConfig) -> int | None:
    """The checkpoint's layers (an encoder-decoder's encoder layers), read from its config."""
    for name in ("num_hidden_layers", "num_layers", "encoder_layers", "n_layer"):
        value = getattr(config, name, None)
        if isinstance(value, int):
            return value
    return None


def _encode(
    tokenizer: Tokenizer, sentences: list[str], max_length: int
) -> tuple[list[list[int]], int]:
    """bert_score's ``sent_encode`` for each (already stripped) sentence; also the number
    truncated."""
    # transformers: deferred so importing this module loads no model stack
    from transformers import GPT2Tokenizer, RobertaTokenizer

    if isinstance(tokenizer, (GPT2Tokenizer, RobertaTokenizer)):
        texts = [" " + text if text else text for text in sentences]
    else:
        texts = list(sentences)
    ids = tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
    too_long = [k for k, row in enumerate(ids) if len(row) > max_length]
    if too_long:
        # Re-encoded with the tokenizer's own truncation so that the kept tokens are bert_score's.
        cut = tokenizer(
            [texts[k] for k in too_long],
            add_special_tokens=True,
            truncation=True,
            max_length=max_length,
        )["input_ids"]
        for k, row in zip(too_long, cut):
            ids[k] = row
    return [list(row) for row in ids], len(too_long)


def _embed(
    encoder: torch.nn.Module,
    ids: list[list[int]],
    pad_id: int,
    batch_size: int,
    hidden_layer: int,
    device: DeviceLike,
    progress: Progress | None = None,
) -> torch.Tensor:
    """Normalized token vectors of every sentence, concatenated: ``(total_tokens, d)`` float32.

    Sentences are run longest first in batches padded to the batch's longest, so that padding is
    small and an out-of-memory error shows on the first batch. ``hidden_layer``: the hidden state
    read (the last of an encoder cut there). ``progress`` sees the sentences of each batch.
    """
    # torch: deferred so importing this module loads no model stack
    import torch

    lengths = [len(row) for row in ids]
    order = work_share(sorted(range(len(ids)), key=lambda k: -lengths[k]), batch_size)
    announce_work(progress, len(order), "sentence")
    pieces: list = [None] * len(ids)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            width = lengths[batch[0]]
            input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
            attention_mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, k in enumerate(batch):
                input_ids[row, : lengths[k]] = torch.tensor(ids[k], dtype=torch.long)
                attention_mask[row, : lengths[k]] = 1
            output = encoder(
                input_ids=input_ids.to(device),
                attention_mask=attention_mask.to(device),
                output_hidden_states=True,
            )
            states = output.hidden_states[hidden_layer].float()
            states = states / states.norm(dim=-1, keepdim=True)
            for row, k in enumerate(batch):
                pieces[k] = states[row, : lengths[k]]
            if progress is not None:
                progress(len(batch))
    if is_sharing_work():
        members, mine = gather_shares(order, [pieces[k].cpu() for k in order])
        for k, piece in zip(members, mine):
            pieces[k] = piece.to(device)
    return torch.cat(pieces, dim=0)


def _precision_matrix(
    vectors: torch.Tensor, weights: torch.Tensor, starts: torch.Tensor, lengths: torch.Tensor
) -> np.ndarray:
    """``P[a, b]``: precision of sentence ``a`` as candidate against ``b`` as reference, float64.

    The set is padded to its longest sentence; one einsum gives the cosines of every token pair
    of every ordered pair of sentences (in row blocks, to bound memory), padding is masked out of
    the max, and the normalized weights (0 on padding) average the maxima.
    """
    # torch: deferred so importing this module loads no model stack
    import torch

    device = vectors.device
    n, width = len(lengths), int(lengths.max())
    positions = torch.arange(width, device=device)
    real = positions[None, :] < lengths[:, None]
    index = torch.where(real, starts[:, None] + positions[None, :], 0)
    tokens = vectors[index] * real[..., None]
    token_weights = weights[index] * real
    rows = max(1, _SIMILARITY_BLOCK // (n * width * width))
    blocks = []
    for start in range(0, n, rows):
        cosines = torch.einsum("ald,bmd->ablm", tokens[start : start + rows], tokens)
        cosines = cosines.masked_fill(~real[None, :, None, :], -math.inf)
        best = cosines.amax(dim=-1)  # (rows, n, width): best match in b of each token of a
        blocks.append((best * token_weights[start : start + rows, None, :]).sum(dim=-1))
    return torch.cat(blocks, dim=0).double().cpu().numpy()


def _resolve_num_layers(model: str, num_layers: int | None, available: int | None) -> int:
    if num_layers is None:
        if model in _DEFAULT_MODEL_IDS:
            return DEFAULT_BERTSCORE_LAYER
        if available is None:
            raise ArgumentError(
                "num_layers",
                "must be given: the model's number of layers could not be read from its config",
            )
        return available
    checked = check_num_layers(num_layers)
    assert checked is not None  # None was handled above
    num_layers = checked
    if available is not None and num_layers > available:
        raise ArgumentError(
            "num_layers",
            f"must be at most {available} (the model's number of layers), got {num_layers}",
        )
    return num_layers


def read_baseline_file(path: StrPath, num_layers: int) -> float:
    """The F baseline at layer ``num_layers`` of a bert_score baseline file (CSV ``LAYER,P,R,F``,
    one row per layer, as ``bert_score/rescale_baseline/<lang>/<model>.tsv``)."""
    if not os.path.isfile(path):
        raise ArgumentError("baseline", f"{str(path)!r} is not a file")
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    if not rows or not {"LAYER", "F"} <= set(rows[0]):
        raise ArgumentError(
            "baseline", f"{str(path)!r} is not a bert_score baseline file (columns LAYER,P,R,F)"
        )
    for row in rows:
        if row["LAYER"].strip() == str(num_layers):
            value = float(row["F"])
            if not (math.isfinite(value) and value < 1):
                raise ArgumentError(
                    "baseline",
                    f"{str(path)!r}: layer {num_layers} has F = {value}, not a baseline below 1",
                )
            return value
    raise ArgumentError(
        "baseline",
        f"{str(path)!r} has no row for layer {num_layers} (layers "
        f"{rows[0]['LAYER']}..{rows[-1]['LAYER']})",
    )


def published_baseline_file(model: str) -> str | None:
    """bert_score's published English baseline file for ``model``, from an installed bert-score,
    checked against its pinned sha256 (:data:`EN_BASELINE_SHA256`); None when bert-score is not
    installed or publishes none for ``model``. ``model`` is matched by its Hub id as bert_score
    names it (``microsoft/deberta-xlarge-mnli``) or without its organisation
    (``FacebookAI/roberta-base`` -> ``roberta-base``); a local directory matches nothing."""
    # read from importlib.util at call time: tests patch it there to hide bert-score
    from importlib.util import find_spec

    spec = find_spec("bert_score")
    if spec is None or spec.origin is None or os.path.isdir(model):
        return None
    for name in dict.fromkeys((model, model.split("/", 1)[-1])):
        if name not in EN_BASELINE_SHA256:
            continue
        path = os.path.join(os.path.dirname(spec.origin), "rescale_baseline", "en", f"{name}.tsv")
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
        if digest != EN_BASELINE_SHA256[name]:
            raise ValueError(
                f"bert_score's baseline file {path} has sha256 {digest}, not the published "
                f"{EN_BASELINE_SHA256[name]}; pass `baseline=` or `rescale_with_baseline=False`"
            )
        return path
    return None


def _resolve_baseline(
    model: str, num_layers: int, rescale_with_baseline: bool, baseline: float | StrPath | None
) -> float | None:
    if not rescale_with_baseline:
        return None
    if isinstance(baseline, (str, os.PathLike)):
        return read_baseline_file(baseline, num_layers)
    if baseline is not None:
        return float(baseline)
    if model in _DEFAULT_MODEL_IDS and num_layers == DEFAULT_BERTSCORE_LAYER:
        return ROBERTA_LARGE_L17_BASELINE["F"]
    published = published_baseline_file(model)
    if published is not None:
        return read_baseline_file(published, num_layers)
    raise ArgumentError(
        "rescale_with_baseline",
        f"=True needs a baseline, and none is known for model {model!r} at layer {num_layers}: "
        "bert-score publishes none for it or is not installed; pass `baseline=` (a number, or "
        "bert_score's baseline file rescale_baseline/<lang>/<model>.tsv, read at that layer) or "
        "`rescale_with_baseline=False`",
    )


def check_num_layers(num_layers: object) -> int | None:
    """``num_layers`` as None (the model's default layer) or an int >= 0 (numpy's too)."""
    if num_layers is None:
        return None
    if (
        isinstance(num_layers, bool)
        or not isinstance(num_layers, numbers.Integral)
        or num_layers < 0
    ):
        raise ArgumentError("num_layers", f"must be None or an int >= 0, got {num_layers!r}")
    return int(num_layers)


def check_encoder_options(
    model: object,
    num_layers: object,
    batch_size: object,
    device: DeviceLike,
    dtype: str | None,
    backend: str | None = None,
) -> None:
    """Refuse a bad BERTScore encoder option before any model loads, naming it: a caller whose
    chosen path does not encode (homogenization's ROUGE-L) checks them all the same, so a typo is
    never accepted silently. ``model`` None stands for the caller's default model."""
    if model is not None and not isinstance(model, str):
        raise ArgumentError(
            "model",
            f"must be a model id or a local directory, got {type(model).__name__}: {model!r:.60}",
        )
    check_num_layers(num_layers)
    check_int(batch_size, "batch_size")
    check_dtype(dtype)
    check_backend(backend)
    if device is not None:
        resolve_device(device)


def _check_arguments(
    batch_size: int, rescale_with_baseline: bool, baseline: float | StrPath | None
) -> None:
    check_int(batch_size, "batch_size")
    if not isinstance(rescale_with_baseline, bool):
        raise ArgumentError(
            "rescale_with_baseline", f"must be a bool, got {rescale_with_baseline!r}"
        )
    if isinstance(baseline, (str, os.PathLike)):
        return  # a baseline file, read once the layer is known
    is_number = isinstance(baseline, (int, float)) and not isinstance(baseline, bool)
    if baseline is not None and not (is_number and math.isfinite(baseline) and baseline < 1):
        raise ArgumentError(
            "baseline",
            "must be None, a finite number below 1 (an F baseline) or a bert_score "
            f"baseline file, got {baseline!r}",
        )


def compute_bertscore_matrices(
    response_sets: list[list[str]],
    model: str = DEFAULT_BERTSCORE_MODEL,
    num_layers: int | None = None,
    rescale_with_baseline: bool = True,
    baseline: float | None = None,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    allow_empty: bool = False,
    progress: Progress | None = None,
    backend: str | None = None,
) -> BERTScoreMatrices:
    """Pairwise BERTScore F1 of each response set, with how the sentences were encoded.

    Same arguments as :func:`bertscore_similarity_matrices`; ``progress`` is called with the number
    of sentences of each encoder batch. Warns when sentences are truncated.
    """
    response_sets = check_response_sets(
        response_sets, "response_sets", min_size=2, allow_empty=allow_empty
    )
    _check_arguments(batch_size, rescale_with_baseline, baseline)
    dtype = _check_dtype(dtype)
    backend = check_backend(backend)
    if not isinstance(model, str):
        raise ArgumentError("model", f"must be a model id or a local directory, got {model!r}")
    model_path, device = resolve_model_path(model), resolve_device(device)
    # transformers: deferred so importing this module loads no model stack
    from transformers import AutoConfig

    available = _num_layers_available(AutoConfig.from_pretrained(model_path))
    num_layers = _resolve_num_layers(model, num_layers, available)
    # A smaller model under a large one's name (the default layer above its top) reads its top.
    hidden_layer = num_layers if available is None else min(num_layers, available)
    # the top layer is read from the whole model, whose export is the one other callers share
    cut = hidden_layer if available is None or hidden_layer < available else None
    tokenizer, encoder = _load(model_path, str(device), dtype, backend, cut)
    scale_base = _resolve_baseline(model, num_layers, rescale_with_baseline, baseline)

    # torch: deferred so importing this module loads no model stack
    import torch

    # Keyed on the stripped text: bert_score strips before encoding, so "a" and "a " embed alike.
    unique = list(
        dict.fromkeys(text.strip() for response_set in response_sets for text in response_set)
    )
    position = {text: k for k, text in enumerate(unique)}
    max_length = max_input_length(cast("PretrainedConfig", encoder.config), tokenizer) or 10**9
    ids, num_truncated = _encode(tokenizer, unique, max_length)
    if num_truncated:
        warnings.warn(
            f"{num_truncated} of {len(unique)} distinct sentences exceed {max_length} tokens and "
            "were truncated (as bert_score does)",
            stacklevel=2,
        )

    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    vectors = _embed(encoder, ids, pad_id, batch_size, hidden_layer, device, progress)

    zero_weight = {tokenizer.cls_token_id, tokenizer.sep_token_id} - {None}
    raw_weights = torch.tensor(
        [0.0 if token in zero_weight else 1.0 for row in ids for token in row],
        dtype=torch.float32,
        device=vectors.device,
    )
    lengths_all = torch.tensor([len(row) for row in ids], dtype=torch.long, device=vectors.device)
    starts_all = torch.cumsum(lengths_all, dim=0) - lengths_all
    sentence_of_token = torch.repeat_interleave(
        torch.arange(len(ids), device=vectors.device), lengths_all
    )
    totals = torch.zeros(len(ids), dtype=torch.float32, device=vectors.device).index_add_(
        0, sentence_of_token, raw_weights
    )
    # 0/0 = NaN for a sentence whose tokens all weigh 0, which becomes F = 0 below, as in
    # bert_score.
    weights = raw_weights / totals[sentence_of_token]

    similarities = []
    with torch.inference_mode():
        for response_set in response_sets:
            sentences, unit_of_item = units_of([position[text.strip()] for text in response_set])
            members = torch.tensor(sentences, device=vectors.device)
            precision = _precision_matrix(
                vectors, weights, starts_all[members], lengths_all[members]
            )
            recall = precision.T
            with np.errstate(invalid="ignore", divide="ignore"):
                f1 = 2 * precision * recall / (precision + recall)
            f1[np.isnan(f1)] = 0.0
            if scale_base is not None:
                f1 = (f1 - scale_base) / (1 - scale_base)
            similarities.append(UnitSimilarity(f1, unit_of_item))
    return BERTScoreMatrices(
        unit_similarities=similarities,
        num_layers=num_layers,
        baseline=scale_base,
        num_encoded=len(unique),
        num_truncated=num_truncated,
        max_length=max_length,
    )


def bertscore_similarity_matrices(
    response_sets: list[list[str]],
    model: str = DEFAULT_BERTSCORE_MODEL,
    num_layers: int | None = None,
    rescale_with_baseline: bool = True,
    baseline: float | None = None,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    allow_empty: bool = False,
    backend: str | None = None,
) -> list[np.ndarray]:
    """One symmetric ``(n, n)`` float64 matrix of BERTScore F1 per response set.

    Args:
        response_sets: one list of at least two responses per context.
        model: a Hub id (in the local cache) or a local directory; default ``roberta-large``.
        num_layers: the layer whose hidden states are used; None means 17 for the default model
            (bert_score's choice) and the model's last layer otherwise.
        rescale_with_baseline: map F to ``(F - b) / (1 - b)``. The baseline ``b`` is built in for
            the default model at layer 17 and read from bert-score's published file for the other
            models it publishes one for (:func:`published_baseline_file`, when bert-score is
            installed); other models need ``baseline=``.
        baseline: an explicit F baseline (overrides the known one): a number, or the path of a
            bert_score baseline file (``LAYER,P,R,F`` rows), read at the layer used.
        batch_size: sentences per forward pass.
        device: a torch device; None picks the GPU when there is one.
        dtype: None (float32), 'float32', 'float16' or 'bfloat16' for the model weights.
        backend: the encoder's runtime, "torch", "onnx" or "openvino" (:mod:`dialeval.runtimes`).
        allow_empty: accept empty and whitespace-only responses (no weighted token: F = 0 against
            any).

    idf weighting is off (bert_score's default). See :func:`compute_bertscore_matrices` for the
    number of truncated sentences.

    Raises:
        ValueError: bad input, or rescaling asked for without a known or given baseline.
        ModelNotAvailableError: the model is not on this machine.
    """
    return compute_bertscore_matrices(
        response_sets,
        model,
        num_layers,
        rescale_with_baseline,
        baseline,
        batch_size,
        device,
        dtype,
        allow_empty,
        backend=backend,
    ).matrices


def bertscore_diversity(
    response_sets: list[list[str]],
    model: str = DEFAULT_BERTSCORE_MODEL,
    num_layers: int | None = None,
    rescale_with_baseline: bool = True,
    baseline: float | None = None,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    allow_empty: bool = False,
    backend: str | None = None,
) -> list[float]:
    """BERTScore diversity of each set (Tevet & Berant §5): ``-mean_{i>j} F1(s_i, s_j)``; higher is
    more diverse."""
    result = compute_bertscore_matrices(
        response_sets,
        model,
        num_layers,
        rescale_with_baseline,
        baseline,
        batch_size,
        device,
        dtype,
        allow_empty,
        backend=backend,
    )
    return [units.diversity() for units in result.unit_similarities]
