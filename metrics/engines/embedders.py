"""Text embedders for Sem-Ent's semantic clusters (Han et al., Findings of EMNLP 2022, §3.1, §6.3).

Sem-Ent maps every response ``r`` to a semantic representation ``e(r)`` with a pretrained
language model, DialoGPT in the paper (§3.1), and clusters those vectors. The authors' released
code embeds each response *alone* with ``microsoft/DialoGPT-large`` as MAUVE does
(``featurize_tokens_from_model``): the response's GPT-2 tokens (no special tokens), cut to the
last 256, one forward with ``output_hidden_states=True``, and the final layer's hidden state at
the last real token. :class:`LastTokenEmbedder` is that embedder; :data:`PAPER_EMBEDDER` is its
identity. §6.3 reports Sem-Ent rankings robust to the language model (DialoGPT, RoBERTa,
GPT2-large; mean Spearman 0.88), so two alternatives are offered: :class:`MeanPoolingEmbedder`
(an encoder's mean-pooled last layer) and :class:`SentenceTransformerEmbedder` (the project's
default, the offline all-MiniLM-L6-v2).

Every embedder follows :class:`TextEmbedder`: ``identity()`` describes the vectors completely
(saved clusters refuse an embedder with another identity, since Sem-Ent values are comparable
only under the same embedder and clusters) and ``embed(texts)`` returns one float32 row per
text. Each distinct text is embedded once; batches are sorted by length and padded only to
their own longest text; models are loaded once per (resolved path, device, dtype, runtime backend).
"""

from __future__ import annotations

import inspect
import os
import sys
import warnings
from collections.abc import Hashable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from dialeval.distributed import gather_shares, is_sharing_work, work_share
from dialeval.graph_runners import EXPORTED_BACKENDS, in_lanes
from dialeval.hub import (
    EMBEDDED_SENTENCE_MODEL,
    LoadedModel,
    check_dtype,
    load_model,
    load_sentence_encoder,
    resolve_device,
    resolve_model_path,
)
from dialeval.metrics.engines.job_steps import announce_work
from dialeval.metrics.engines.shared_outputs import stored_vectors, vector_store
from dialeval.runtimes import check_backend
from dialeval.type_aliases import DeviceLike, Progress, SentenceEncoder, StrPath, Texts
from dialeval.validation import ArgumentError, check_int, check_progress, check_unicode_text

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import PreTrainedModel

KINDS = ("last_token", "mean_pooling", "sentence_transformers")
DEFAULT_SENTENCE_MODEL = EMBEDDED_SENTENCE_MODEL
DEFAULT_EMBEDDER_KIND = "sentence_transformers"
DEFAULT_MODELS = {
    "last_token": "microsoft/DialoGPT-large",
    "mean_pooling": "FacebookAI/roberta-base",  # the RoBERTa weights the paper's appendix names
    "sentence_transformers": EMBEDDED_SENTENCE_MODEL,
}
#: The embedder of the paper's released code (§3.1): DialoGPT-large, last real token, final layer.
PAPER_EMBEDDER = {
    "kind": "last_token",
    "model": "microsoft/DialoGPT-large",
    "max_length": 256,
    "truncation_side": "left",
    "layer": -1,
}
#: Options that change speed or memory but not the vectors (beyond float noise): never in an
#: identity.
RUNTIME_OPTIONS = ("batch_size", "device", "dtype", "backend")


@runtime_checkable
class TextEmbedder(Protocol):
    """What Sem-Ent's clustering needs from an embedder."""

    def identity(self) -> dict:
        """JSON-serializable, complete description of the vectors (kind, model id, settings)."""
        ...

    def embed(self, texts: list[str]) -> np.ndarray:
        """A float32 array ``(len(texts), dim)``, row ``i`` for ``texts[i]``."""
        ...


# ---------------------------------------------------------------- argument checks


def _check_model(model: object) -> str:
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if not isinstance(model, str) or not model:
        raise ArgumentError("model", f"must be a model id or a local directory, got {model!r}")
    return model


def _check_texts(texts: object) -> list[str]:
    if isinstance(texts, (str, bytes)) or not isinstance(texts, (list, tuple)):
        raise ArgumentError("texts", f"must be a list of strings, got {type(texts).__name__}")
    if not texts:
        raise ArgumentError("texts", "is empty: give at least one text to embed")
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise ArgumentError(
                f"texts[{index}]", f"must be a string, got {type(text).__name__}: {text!r:.60}"
            )
        check_unicode_text(text, f"texts[{index}]")
        if not text.strip():
            # A response without words has no meaning to cluster; MAUVE's featurizer drops such
            # texts silently, which would misalign rows with inputs.
            raise ArgumentError(
                f"texts[{index}]",
                f"is empty or whitespace-only ({text!r}); filter such responses out "
                "before embedding (an empty response has no semantic content to cluster)",
            )
    return list(texts)


def _in_order(order: list[int], parts: list[np.ndarray], count: int) -> np.ndarray:
    """Batches computed for the items ``order`` (this process's share under
    :func:`dialeval.distributed.split_work`), gathered and put back in item order (``count``
    items)."""
    mine = np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)
    members, computed = gather_shares(order, mine)
    vectors = np.empty((count, computed.shape[1]), dtype=np.float32)
    vectors[np.asarray(members, dtype=np.int64)] = computed
    return vectors


def _deduplicate(texts: list[str]) -> tuple[list[str], np.ndarray]:
    """Distinct texts in first-seen order, and each input's row among them."""
    row_of: dict[str, int] = {}
    rows = np.array([row_of.setdefault(text, len(row_of)) for text in texts], dtype=np.int64)
    return list(row_of), rows


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows L2-normalized as ``encode(normalize_embeddings=True)`` does it: torch's
    ``F.normalize`` in float32 when torch is loaded (a model ran on it), so stored raw vectors
    give that call's numbers bit for bit; otherwise (vectors from an exported encoder, which
    normalizes the same way in numpy) ``x / max(||x||, 1e-12)`` in numpy, within 5e-8 of torch's
    (a different summation order), without the seconds importing torch takes."""
    if vectors.size == 0:
        return np.asarray(vectors, dtype=np.float32)
    if "torch" not in sys.modules:
        rows = np.array(vectors, dtype=np.float32)
        rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), np.float32(1e-12))
        return rows
    # torch: deferred, so importing this module loads no model stack
    import torch

    with warnings.catch_warnings():
        # a read-only view of a job's store: normalize() only reads its input
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        source = torch.from_numpy(np.ascontiguousarray(vectors, dtype=np.float32))
    return torch.nn.functional.normalize(source, p=2, dim=1).numpy()


# ---------------------------------------------------------------- transformers models


def load_sentence_model(
    model: StrPath = DEFAULT_SENTENCE_MODEL,
    device: DeviceLike = None,
    dtype: str | None = None,
    backend: str | None = None,
) -> SentenceTransformer:
    """A ``SentenceTransformer`` through :func:`dialeval.hub.load_model` (once per model, device,
    dtype and runtime ``backend``)."""
    return load_model(
        model, "sentence_transformers", device=device, dtype=dtype, backend=backend
    ).model


def _sentence_encoder(
    model: StrPath | SentenceEncoder, device: DeviceLike, dtype: str | None, backend: str | None
) -> tuple[SentenceEncoder, tuple[object, ...]]:
    """The sentence-transformers encoder of ``model`` and the key of its vectors in a job's
    store."""
    if not isinstance(model, (str, os.PathLike)) and not callable(getattr(model, "encode", None)):
        raise ArgumentError(
            "model",
            "must be a sentence-transformers id, a local directory or a loaded model with "
            f"`encode`, got {model!r:.60}",
        )
    backend = check_backend(backend)  # checked whatever the model argument is
    if not isinstance(model, (str, os.PathLike)):
        # a loaded model: shared by identity, and kept alive by the key while the job runs
        return model, ("sentence_transformers", model)
    encoder = load_sentence_encoder(model, device, dtype, backend)
    # an exported graph runs on the CPU whatever device is named; resolving it would import torch
    exported = getattr(encoder, "backend", "torch") in EXPORTED_BACKENDS
    return encoder, (
        "sentence_transformers",
        resolve_model_path(os.fspath(model)),
        "cpu" if exported else str(resolve_device(device)),
        check_dtype(dtype),
        backend,
    )


def sentence_vectors(
    texts: Texts,
    model: StrPath | SentenceEncoder = DEFAULT_SENTENCE_MODEL,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    progress: Progress | None = None,
    backend: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The encoder's own (not normalized) vectors of ``texts``, each distinct text encoded once.

    ``model``: a sentence-transformers id or directory, or a loaded model with ``encode``.
    Inside :func:`~dialeval.metrics.engines.shared_outputs.shared_model_outputs` (a
    ``dialeval evaluate`` job) the encoder's vectors are shared with every other metric on the
    same model, device, dtype and ``backend`` (the runtime: "torch", "onnx" or "openvino", see
    :mod:`dialeval.runtimes`; default :data:`~dialeval.runtimes.DEFAULT_BACKEND`); ``progress``
    is called with the number of texts of each batch the encoder ran. :func:`unit_rows` of any
    rows gives :func:`embed_unique`'s numbers for them, so a metric can normalize a chunk at a
    time instead of copying a corpus's vectors.

    Returns:
        ``(vectors, index)``: float32 rows of the distinct texts (possibly a read-only view of the
        job's store), and ``vectors[index[t]]`` the vector of ``texts[t]``.
    """
    check_int(batch_size, "batch_size")
    check_progress(progress)
    encoder, key = _sentence_encoder(model, device, dtype, backend)
    unique, index = _deduplicate(list(texts))
    vectors = stored_vectors(
        key,
        unique,
        lambda missing: encode_sentences(encoder, missing, batch_size, progress),
        announce=lambda count: announce_work(progress, count, "text"),
    )
    return vectors, index


def embed_unique(
    texts: Texts,
    model: StrPath | SentenceEncoder = DEFAULT_SENTENCE_MODEL,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    progress: Progress | None = None,
    backend: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """L2-normalized sentence embeddings of ``texts``, each distinct text encoded once (see
    :func:`sentence_vectors`; the rows equal ``encode(normalize_embeddings=True)``'s bit for bit).

    Returns:
        ``(embeddings, index)``: float32 rows of the distinct texts, and ``embeddings[index[t]]``
        the embedding of ``texts[t]``.
    """
    vectors, index = sentence_vectors(texts, model, batch_size, device, dtype, progress, backend)
    return unit_rows(vectors), index


def encode_for_job(
    texts: Texts,
    model: StrPath | SentenceEncoder = DEFAULT_SENTENCE_MODEL,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    progress: Progress | None = None,
    backend: str | None = None,
) -> int:
    """Encode the distinct ``texts`` the job's store does not hold yet, so that every metric of the
    job reads them from it (a no-op outside
    :func:`~dialeval.metrics.engines.shared_outputs.shared_model_outputs`, where nothing is kept).

    ``progress`` sees every distinct text once: the stored ones at once, the others per batch.
    Returns the number of texts encoded.
    """
    check_int(batch_size, "batch_size")
    check_progress(progress)
    encoder, key = _sentence_encoder(model, device, dtype, backend)
    store = vector_store(key)
    unique = list(dict.fromkeys(texts))
    missing = store.missing(unique)
    if progress is not None and len(unique) > len(missing):
        progress(len(unique) - len(missing))
    if missing:
        store.add(missing, encode_sentences(encoder, missing, batch_size, progress))
    return len(missing)


def encode_sentences(
    encoder: SentenceEncoder, texts: Texts, batch_size: int, progress: Progress | None = None
) -> np.ndarray:
    """``encoder.encode`` of distinct ``texts`` as float32 rows in input order, not normalized:
    one batch per call, batches sorted by tokens (tighter padding than encode's own character
    sort), shared among the processes under :func:`~dialeval.distributed.split_work`;
    ``progress`` sees each batch. In one process each batch is written straight into the
    result, so 1M texts hold one copy of their vectors, not three. An encoder with ``lanes`` > 1
    (an exported graph's, :func:`dialeval.graph_runners.encoder_lanes`) encodes that many
    batches at once, in threads; the rows are the same bits."""
    sharing = is_sharing_work()
    order = work_share(token_length_order(encoder, texts), batch_size)
    parts: list[np.ndarray] = []
    out: np.ndarray | None = None
    for members, batch in _encoded_batches(encoder, texts, order, batch_size):
        if sharing:
            parts.append(batch)
        else:
            if out is None:
                out = np.empty((len(texts), batch.shape[1]), dtype=np.float32)
            out[members] = batch
        if progress is not None:
            progress(len(members))
    if sharing:
        return _in_order(order, parts, len(texts))
    return out if out is not None else np.zeros((0, 0), dtype=np.float32)


def _encoded_batches(
    encoder: SentenceEncoder, texts: Texts, order: list[int], batch_size: int
) -> Iterator[tuple[list[int], np.ndarray]]:
    """``(members, rows)`` of each batch of ``order`` in turn, ``encoder.lanes`` batches at once
    (:func:`dialeval.graph_runners.in_lanes`)."""

    def encode(start: int) -> tuple[list[int], np.ndarray]:
        members = order[start : start + batch_size]
        rows = encoder.encode(
            [texts[i] for i in members],
            batch_size=batch_size,
            convert_to_numpy=True,
            normalize_embeddings=False,
            show_progress_bar=False,
        )
        return members, np.asarray(rows, dtype=np.float32)

    lanes = getattr(encoder, "lanes", 1)
    return in_lanes(
        encode, range(0, len(order), batch_size), lanes if isinstance(lanes, int) else 1
    )


LENGTH_CHUNK = 10_000


def token_length_order(encoder: SentenceEncoder, texts: Texts) -> list[int]:
    """Indices of ``texts`` longest first in *tokens*, for batches padded per batch.

    ``SentenceTransformer.encode`` sorts by characters; on 10,000 DailyDialog++ responses
    (all-MiniLM-L6-v2, batch 64) its batches hold 162,077 padded tokens for 122,430 real ones,
    token-sorted batches 124,839 (and 37% less attention work), which is what makes
    :func:`embed_unique` faster than ``encode`` (benchmarks/RESULTS.md, row 2). Falls back to
    characters when the model has no callable tokenizer.

    Texts are tokenized ``LENGTH_CHUNK`` at a time and only their lengths kept: all-MiniLM-L6-v2's
    tokenizer output for 635,891 distinct synthetic texts at once added 2.59 GiB to the process,
    10,000 at a time 0.07 GiB (and no slower).
    """
    tokenizer: Any = getattr(encoder, "tokenizer", None)
    token_lengths: Any = getattr(encoder, "token_lengths", None)  # an exported encoder's
    if not (callable(tokenizer) or callable(token_lengths)) or not texts:
        return sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
    limit = getattr(encoder, "max_seq_length", None)
    lengths = np.empty(len(texts), dtype=np.int64)
    for start in range(0, len(texts), LENGTH_CHUNK):
        chunk = texts[start : start + LENGTH_CHUNK]
        if callable(token_lengths):
            lengths[start : start + len(chunk)] = token_lengths(chunk)
            continue
        encoded = tokenizer(
            chunk,
            truncation=limit is not None,
            max_length=limit,
            verbose=False,
            return_attention_mask=False,
            return_token_type_ids=False,
        )
        lengths[start : start + len(chunk)] = [len(ids) for ids in encoded["input_ids"]]
    # A stable sort of the negated lengths: longest first, ties in input order (as
    # sorted(reverse=True)).
    return np.argsort(-lengths, kind="stable").tolist()


class _TransformerEmbedder:
    """Shared machinery: resolve at construction (fail fast), load at first use, batch by length."""

    kind: str

    def __init__(
        self,
        model: StrPath,
        max_length: int,
        batch_size: int,
        device: DeviceLike,
        dtype: str | None,
        layer: int,
        backend: str | None,
    ) -> None:
        self.model_name = _check_model(model)
        self.max_length = check_int(max_length, "max_length")
        self.batch_size = check_int(batch_size, "batch_size")
        if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)):
            raise ArgumentError(
                "layer", f"must be an int (an index into the hidden states), got {layer!r}"
            )
        self.layer = int(layer)
        self.dtype = check_dtype(dtype)
        self.backend = check_backend(backend)
        # Resolved now so that a missing model fails at construction, not after the data is read.
        self.model_path = resolve_model_path(self.model_name)
        self.device = str(resolve_device(device))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.identity()})"

    def identity(self) -> dict:
        raise NotImplementedError

    @property
    def loaded(self) -> LoadedModel[PreTrainedModel]:
        """The model and tokenizer, loaded on first use and shared by embedders of the same
        model."""
        loaded = load_model(
            self.model_path, "encoder", self.device, self.dtype, backend=self.backend
        )
        self._check_fits(loaded)
        return loaded

    def _check_fits(self, loaded: LoadedModel[PreTrainedModel]) -> None:
        limit = loaded.position_limit
        if limit is not None and self.max_length > limit:
            raise ArgumentError(
                "max_length",
                f"={self.max_length} exceeds the {limit} positions of {self.model_name!r}; "
                f"pass `max_length` <= {limit}",
            )
        layers = loaded.num_layers
        if layers is not None and not -(layers + 1) <= self.layer <= layers:
            raise ArgumentError(
                "layer",
                f"={self.layer} is out of range for {self.model_name!r}, which has {layers + 1} "
                f"hidden states (embeddings and {layers} layers): use {-(layers + 1)}..{layers}",
            )

    def _token_ids(self, loaded: LoadedModel[PreTrainedModel], texts: list[str]) -> list[list[int]]:
        raise NotImplementedError

    def _pool(
        self, hidden: torch.Tensor, attention_mask: torch.Tensor, lengths: list[int]
    ) -> torch.Tensor:
        raise NotImplementedError

    def _store_key(self) -> tuple[Hashable, ...]:
        return (
            self.kind,
            self.model_path,
            self.max_length,
            self.layer,
            self.device,
            self.dtype,
            self.backend,
        )

    def embed(self, texts: list[str], progress: Progress | None = None) -> np.ndarray:
        """One float32 row per text, in input order; each distinct text is run once (once per job
        inside :func:`~dialeval.metrics.engines.shared_outputs.shared_model_outputs`).

        Args:
            texts: non-empty list of non-blank strings.
            progress: called after each batch with the number of distinct texts it embedded
                (``tqdm(total=...).update`` fits).
        """
        texts = _check_texts(texts)
        unique, rows = _deduplicate(texts)
        vectors = stored_vectors(
            self._store_key(), unique, lambda missing: self._encode(missing, texts, progress)
        )
        return np.ascontiguousarray(vectors[rows])

    def _encode(self, unique: list[str], texts: list[str], progress: Progress | None) -> np.ndarray:
        """Vectors of the distinct texts ``unique`` (``texts``: the caller's, for error
        messages)."""
        # torch: deferred, so importing this module loads no model stack
        import torch

        loaded = self.loaded
        ids = self._token_ids(loaded, unique)
        for position, token_ids in enumerate(ids):
            if not token_ids:
                raise ArgumentError(
                    f"texts[{texts.index(unique[position])}]",
                    f"({unique[position]!r:.60}) has no "
                    f"tokens under the tokenizer of {self.model_name!r}",
                )
        # Longest first: an out-of-memory error shows on the first batch, not after an hour.
        order = work_share(
            sorted(range(len(unique)), key=lambda i: len(ids[i]), reverse=True), self.batch_size
        )
        parts: list[np.ndarray] = []
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                members = order[start : start + self.batch_size]
                lengths = [len(ids[i]) for i in members]
                input_ids = torch.full(
                    (len(members), max(lengths)), loaded.pad_token_id, dtype=torch.long
                )
                attention_mask = torch.zeros_like(input_ids)
                for row, i in enumerate(members):
                    # Right padding: real tokens keep positions 0..L-1, as when run alone.
                    input_ids[row, : lengths[row]] = torch.tensor(ids[i], dtype=torch.long)
                    attention_mask[row, : lengths[row]] = 1
                outputs = loaded.model(
                    input_ids=input_ids.to(loaded.device),
                    attention_mask=attention_mask.to(loaded.device),
                    output_hidden_states=True,
                    return_dict=True,
                )
                hidden = outputs.hidden_states[self.layer].float()
                batch = self._pool(hidden, attention_mask.to(loaded.device), lengths).cpu().numpy()
                parts.append(batch)
                if progress is not None:
                    progress(len(members))
        return _in_order(order, parts, len(unique))


class LastTokenEmbedder(_TransformerEmbedder):
    """The paper's embedder (§3.1): a causal LM's final hidden state at the response's last token.

    As in the authors' released code (MAUVE's ``featurize_tokens_from_model``), each response is
    embedded alone: tokenized without special tokens, cut to its *last* ``max_length`` tokens,
    and represented by ``hidden_states[layer][sentence_length - 1]``. Batching pads on the right
    under an attention mask, so a text's vector does not depend on its batch (up to float noise).

    Args:
        model: a decoder (``microsoft/DialoGPT-large`` in the paper; ``gpt2-large`` in §6.3), Hub
            id or directory. Loaded with ``AutoModel`` (no LM head), never with remote code.
        max_length: tokens kept per text, counted from the end (256 in the released code).
        batch_size: texts per forward.
        device: torch device; default Accelerate's (the GPU when there is one).
        dtype: None (float32), "float32", "float16" or "bfloat16".
        layer: index into ``hidden_states`` (-1, the final layer, in the paper).
        backend: the runtime, "torch", "onnx" or "openvino" (:mod:`dialeval.runtimes`; default
            :data:`~dialeval.runtimes.DEFAULT_BACKEND`).
    """

    kind = "last_token"

    def __init__(
        self,
        model: StrPath = DEFAULT_MODELS["last_token"],
        max_length: int = 256,
        batch_size: int = 32,
        device: DeviceLike = None,
        dtype: str | None = None,
        layer: int = -1,
        backend: str | None = None,
    ) -> None:
        super().__init__(model, max_length, batch_size, device, dtype, layer, backend)

    def identity(self) -> dict:
        return {
            "kind": self.kind,
            "model": self.model_name,
            "max_length": self.max_length,
            "truncation_side": "left",
            "layer": self.layer,
        }

    def _token_ids(self, loaded: LoadedModel[PreTrainedModel], texts: list[str]) -> list[list[int]]:
        # verbose=False: long texts are expected here and cut below, not warned about.
        encoded = loaded.tokenizer(texts, add_special_tokens=False, truncation=False, verbose=False)
        # The end of a response is what its last-token state summarizes, so keep the end.
        return [list(ids[-self.max_length :]) for ids in encoded["input_ids"]]

    def _pool(
        self, hidden: torch.Tensor, attention_mask: torch.Tensor, lengths: list[int]
    ) -> torch.Tensor:
        # torch: deferred, so importing this module loads no model stack
        import torch

        last = torch.tensor(lengths, device=hidden.device) - 1
        return hidden[torch.arange(hidden.shape[0], device=hidden.device), last]


class MeanPoolingEmbedder(_TransformerEmbedder):
    """An encoder's hidden states averaged over the real tokens (special tokens included).

    A §6.3-style alternative (the paper compares RoBERTa; the authors' appendix names
    ``roberta-base``): the tokenizer's usual special tokens are added, texts are cut on the
    right to ``max_length`` tokens, and ``hidden_states[layer]`` is averaged under the attention
    mask.

    Args:
        model: an encoder, Hub id or directory (default ``FacebookAI/roberta-base``, as the
            appendix).
        max_length: tokens kept per text including special tokens, from the start.
        batch_size, device, dtype, layer, backend: as for :class:`LastTokenEmbedder`.
    """

    kind = "mean_pooling"

    def __init__(
        self,
        model: StrPath = DEFAULT_MODELS["mean_pooling"],
        max_length: int = 512,
        batch_size: int = 32,
        device: DeviceLike = None,
        dtype: str | None = None,
        layer: int = -1,
        backend: str | None = None,
    ) -> None:
        super().__init__(model, max_length, batch_size, device, dtype, layer, backend)

    def identity(self) -> dict:
        return {
            "kind": self.kind,
            "model": self.model_name,
            "max_length": self.max_length,
            "layer": self.layer,
        }

    def _token_ids(self, loaded: LoadedModel[PreTrainedModel], texts: list[str]) -> list[list[int]]:
        encoded = loaded.tokenizer(
            texts, truncation=True, max_length=self.max_length, verbose=False
        )
        return [list(ids) for ids in encoded["input_ids"]]

    def _pool(
        self, hidden: torch.Tensor, attention_mask: torch.Tensor, lengths: list[int]
    ) -> torch.Tensor:
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(dim=1) / mask.sum(dim=1)


# ---------------------------------------------------------------- sentence-transformers


class SentenceTransformerEmbedder:
    """A sentence-transformers model's ``encode`` (default: the embedded all-MiniLM-L6-v2).

    The project's default embedder for Sem-Ent: offline and fast on a CPU. The model's own
    pipeline (pooling, its ``max_seq_length``, a Normalize module if it has one) applies;
    ``normalize=True`` adds L2 normalization on top (the clustering normalizes anyway).

    Args:
        model: a sentence-transformers id or directory.
        batch_size: texts per forward.
        device, dtype: as for :class:`LastTokenEmbedder`.
        normalize: passed to ``encode(normalize_embeddings=...)``.
        backend: as for :class:`LastTokenEmbedder`.
    """

    kind = "sentence_transformers"

    def __init__(
        self,
        model: StrPath = DEFAULT_MODELS["sentence_transformers"],
        batch_size: int = 64,
        device: DeviceLike = None,
        dtype: str | None = None,
        normalize: bool = False,
        backend: str | None = None,
    ) -> None:
        self.model_name = _check_model(model)
        self.batch_size = check_int(batch_size, "batch_size")
        self.dtype = check_dtype(dtype)
        self.backend = check_backend(backend)
        if not isinstance(normalize, bool):
            raise ArgumentError("normalize", f"must be a bool, got {normalize!r}")
        self.normalize = normalize
        resolve_model_path(self.model_name)  # fail fast when the model is missing
        self.device = str(resolve_device(device))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.identity()})"

    def identity(self) -> dict:
        return {"kind": self.kind, "model": self.model_name, "normalize": self.normalize}

    @property
    def loaded(self) -> SentenceTransformer:
        """The ``SentenceTransformer``, loaded on first use, shared per (model, device, dtype,
        backend)."""
        return load_sentence_model(self.model_name, self.device, self.dtype, self.backend)

    def embed(self, texts: list[str], progress: Progress | None = None) -> np.ndarray:
        """One float32 row per text, in input order; each distinct text is encoded once (once per
        job inside :func:`~dialeval.metrics.engines.shared_outputs.shared_model_outputs`, shared
        with sent-BERT and Vendi on the same model)."""
        texts = _check_texts(texts)
        unique, rows = _deduplicate(texts)
        key = (
            "sentence_transformers",
            resolve_model_path(self.model_name),
            self.device,
            self.dtype,
            self.backend,
        )
        raw = stored_vectors(
            key,
            unique,
            lambda missing: encode_sentences(self.loaded, missing, self.batch_size, progress),
        )
        vectors = unit_rows(raw) if self.normalize else raw
        return np.ascontiguousarray(vectors[rows])


# ---------------------------------------------------------------- factories

_CLASSES = {
    "last_token": LastTokenEmbedder,
    "mean_pooling": MeanPoolingEmbedder,
    "sentence_transformers": SentenceTransformerEmbedder,
}


def _class_of(kind: object) -> type:
    if kind not in _CLASSES:
        raise ArgumentError("kind", f"must be one of {KINDS}, got {kind!r}")
    return _CLASSES[kind]


def _options_of(cls: type) -> tuple[str, ...]:
    return tuple(name for name in inspect.signature(cls).parameters if name != "model")


def load_embedder(
    kind: str = DEFAULT_EMBEDDER_KIND, model: StrPath | None = None, **options: Any
) -> TextEmbedder:
    """An embedder of ``kind`` (see :data:`KINDS`); ``model=None`` picks :data:`DEFAULT_MODELS`
    [kind].

    ``load_embedder("last_token")`` is the paper's (DialoGPT-large, §3.1). ``options`` go to the
    class: ``batch_size``, ``device``, ``dtype``, ``backend``, and ``max_length``/``layer`` or
    ``normalize``.
    """
    cls = _class_of(kind)
    unknown = sorted(set(options) - set(_options_of(cls)))
    if unknown:
        raise ArgumentError(
            unknown[0],
            f"is not an option of {cls.__name__} (given: {unknown}); its options are "
            f"{_options_of(cls)}",
            mentions=(),
        )
    return cls(DEFAULT_MODELS[kind] if model is None else model, **options)


def embedder_from_identity(identity: Mapping[str, Any], **runtime_options: Any) -> TextEmbedder:
    """Rebuild the embedder an :meth:`identity` describes (e.g. the one saved with clusters).

    ``runtime_options`` (``batch_size``, ``device``, ``dtype``, ``backend``) may differ from the
    original run: they do not change the vectors beyond float noise.

    Raises:
        ValueError: the identity is malformed, names an unknown kind or setting, or cannot be
            reproduced exactly; or a runtime option would change the identity.
    """
    if not isinstance(identity, Mapping) or "kind" not in identity:
        raise ArgumentError(
            "identity", f"must be a dict with a 'kind' (one of {KINDS}), got {identity!r}"
        )
    cls = _class_of(identity["kind"])
    not_runtime = sorted(set(runtime_options) - set(RUNTIME_OPTIONS))
    if not_runtime:
        raise ArgumentError(
            not_runtime[0],
            f"cannot be given with an identity (the rest is fixed by it): only {RUNTIME_OPTIONS} "
            f"may, got {not_runtime}",
            mentions=(),
        )
    settings = {key: value for key, value in identity.items() if key != "kind"}
    if "model" not in settings:
        raise ArgumentError("identity", f"has no 'model': {dict(identity)!r}")
    constructor = {
        key: value for key, value in settings.items() if key in _options_of(cls) or key == "model"
    }
    embedder = cls(**constructor, **runtime_options)
    rebuilt = embedder.identity()
    if rebuilt != dict(identity):
        differences = {
            key: (identity.get(key), rebuilt.get(key))
            for key in sorted(set(identity) | set(rebuilt))
            if identity.get(key) != rebuilt.get(key)
        }
        raise ArgumentError(
            "identity",
            f"cannot be rebuilt exactly as an embedder; (given, rebuilt) differ in {differences}",
        )
    return embedder


__all__ = [
    "DEFAULT_EMBEDDER_KIND",
    "DEFAULT_MODELS",
    "KINDS",
    "PAPER_EMBEDDER",
    "LastTokenEmbedder",
    "MeanPoolingEmbedder",
    "SentenceTransformerEmbedder",
    "TextEmbedder",
    "embed_unique",
    "embedder_from_identity",
    "load_embedder",
    "load_sentence_model",
]


class CachingEmbedder:
    """Wraps an embedder and remembers every text's vector across calls (same identity).

    For fitting the same corpus several times (k-means seed or k sweeps) or scoring many systems
    against one reference: each distinct text goes through the model once per process.
    """

    def __init__(self, embedder: TextEmbedder):
        if not isinstance(embedder, TextEmbedder):
            raise ArgumentError(
                "embedder", f"must have identity() and embed(texts), got {type(embedder).__name__}"
            )
        self.embedder = embedder
        self._vectors: dict[str, np.ndarray] = {}

    def identity(self) -> dict:
        return self.embedder.identity()

    def embed(self, texts: list[str]) -> np.ndarray:
        texts = _check_texts(texts)
        missing = list(dict.fromkeys(text for text in texts if text not in self._vectors))
        if missing:
            for text, vector in zip(missing, self.embedder.embed(missing), strict=True):
                self._vectors[text] = vector
        return np.stack([self._vectors[text] for text in texts]).astype(np.float32, copy=False)
