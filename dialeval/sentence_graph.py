"""A sentence-transformers model encoded from its exported transformer without torch: the
``tokenizers`` library for the tokens, ONNX Runtime or OpenVINO for the transformer, numpy for
pooling and normalization.

Importing torch, transformers and sentence-transformers takes about 12 s on the 2-core machine
(``python -c "import sentence_transformers"``: 12.8 s; ``numpy``, ``onnxruntime`` and
``tokenizers``: 0.37 s), more than the encoding of a 10,000-response job's texts takes half of.
So a job that encodes with an exported model reads what it needs from a record stored beside the
export, and imports none of them.

The record exists only for the pipelines whose every step this module reproduces (a Transformer
module taking plain text with right padding and truncation, no lower-casing, no prompts, no
truncated dimension; then mean, CLS or max pooling; then optionally Normalize), and only after a
check against sentence-transformers itself. When :mod:`dialeval.hub` loads such a model on an
exported backend through sentence-transformers, :func:`store_checked_pipeline` tokenizes probe
texts with the model's own tokenizer and with the ``tokenizers`` copy of it, and encodes them
through both pipelines (the same graph, sentence-transformers' pooling against this module's);
only when every token id, mask and type id agrees and every embedding is within
:data:`AGREEMENT` does it write the record. The record is found by the digest of the model's
pipeline files (everything in the model folder and its module folders but the weights), so a
changed tokenizer or pooling configuration is never read from a stale one.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from dialeval.atomic_files import temporary_name
from dialeval.graph_runners import cached_export, encoder_lanes, graph_runner, in_lanes
from dialeval.validation import ArgumentError, check_int

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer


class Runner(Protocol):
    """What computes the transformer: an exported graph's runner
    (:mod:`dialeval.graph_runners`) or :class:`dialeval.torch_bert.TorchBertRunner`."""

    precision: str
    #: how many threads may call it at once, each computing its call alone
    lanes: int

    def __call__(self, feeds: dict[str, np.ndarray], outputs: list[str]) -> list[np.ndarray]: ...


#: Bumped when the record's fields or their meaning change: older records are then not read.
RECORD_FORMAT = 1
RECORD_FOLDER = "sentence_encoders"
#: Largest difference between this module's embeddings and sentence-transformers' (the same
#: graph) for which a record is written: the job's float32 agreement.
AGREEMENT = 1e-5
POOLINGS = ("mean", "cls", "max")
#: Files of a model folder that are not part of its pipeline's digest: the weights (the export
#: is keyed by them) and exported graphs.
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".onnx", ".onnx_data", ".h5", ".msgpack", ".ot")
#: Texts the check tokenizes and encodes: punctuation, accents, other scripts, emoji, white
#: space, the tokenizer's own special tokens as text, an empty text, and (added per model) one
#: longer than the model's limit.
PROBES = (
    "Hello, World! How are you doing today?",
    "  leading and trailing spaces  ",
    "Ünïcödé naïve café, résumé and Straße",
    "日本語のテキストと한국어 문장",
    "emoji 😀👍🏽 and symbols ©®™ € £",
    "tab\tnew\nline and   runs of   spaces",
    "can't won't I'm you're",
    "",
    "[CLS] [SEP] [PAD] [MASK] <s> </s> <pad> <unk>",
    "3.14159 1,000,000 2026-11-27 12:30pm",
    "A",
)


def pipeline_digest(model_path: str) -> str:
    """The sha256 of every file of the model folder and of its modules' folders (as
    ``modules.json`` names them) but the weights: the tokenizer, the modules' configurations."""
    root = Path(model_path)
    folders = [root]
    modules = root / "modules.json"
    if modules.is_file():
        entries = json.loads(modules.read_text(encoding="utf-8"))
        if isinstance(entries, list):
            folders += [
                root / entry["path"]
                for entry in entries
                if isinstance(entry, dict) and isinstance(entry.get("path"), str) and entry["path"]
            ]
    digest = hashlib.sha256()
    for folder in dict.fromkeys(folders):
        if not folder.is_dir():  # a module without files of its own (Normalize)
            continue
        for entry in sorted(folder.iterdir()):
            if not entry.is_file() or entry.name.endswith(_WEIGHT_SUFFIXES):
                continue
            digest.update(f"{entry.relative_to(root)}\0".encode())
            digest.update(hashlib.sha256(entry.read_bytes()).digest())
    return digest.hexdigest()


def _record_path(export_dir: Path, model_path: str) -> Path:
    return export_dir / RECORD_FOLDER / f"{pipeline_digest(model_path)}.json"


class ExportedSentenceEncoder:
    """``encode`` as ``SentenceTransformer.encode`` gives it for the pipelines this module
    reproduces, from a checked record and what computes the transformer: an exported graph's
    runner on the CPU, or :class:`dialeval.torch_bert.TorchBertRunner` on torch's device.
    Float32 only (OpenVINO's reduced precision is never checked, so never recorded)."""

    def __init__(self, runner: Runner, record: dict[str, Any], backend: str) -> None:
        # tokenizers: deferred, so that importing this module loads no tokenizer library
        from tokenizers import Tokenizer

        self.runner = runner
        self.backend = backend
        self.precision = runner.precision
        #: how many batches run at once (threads, :func:`dialeval.graph_runners.encoder_lanes`):
        #: ``encode`` runs its own batches so, and a caller may make that many ``encode`` calls
        #: at once; each batch's rows are the same bits whichever lane computes it
        self.lanes = runner.lanes
        self.pooling: str = record["pooling"]
        self.normalize: bool = record["normalize"]
        self.inputs: list[str] = record["inputs"]
        self.max_seq_length: int | None = record["max_length"]
        self.dimension: int = record["dimension"]
        self.pad_id: int = record["pad_id"]
        self.pad_type_id: int = record["pad_type_id"]
        self.tokenizer: Tokenizer = Tokenizer.from_str(record["tokenizer"])
        self.tokenizer.no_padding()
        if self.max_seq_length is None:
            self.tokenizer.no_truncation()
        else:
            self.tokenizer.enable_truncation(self.max_seq_length, strategy="longest_first")

    def get_sentence_embedding_dimension(self) -> int:
        return self.dimension

    def token_lengths(self, texts: Sequence[str]) -> np.ndarray:
        """Tokens of each text as the model reads it (special tokens in, truncated)."""
        return np.fromiter(
            (len(encoding.ids) for encoding in self.tokenizer.encode_batch(list(texts))),
            dtype=np.int64,
            count=len(texts),
        )

    def tokenize(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The padded int64 batch of ``texts`` the graph takes (right padding to the longest)."""
        encodings = self.tokenizer.encode_batch(list(texts))
        width = max((len(encoding.ids) for encoding in encodings), default=0)
        ids = np.full((len(texts), width), self.pad_id, dtype=np.int64)
        types = np.full((len(texts), width), self.pad_type_id, dtype=np.int64)
        mask = np.zeros((len(texts), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            length = len(encoding.ids)
            ids[row, :length] = encoding.ids
            types[row, :length] = encoding.type_ids
            mask[row, :length] = encoding.attention_mask
        batch = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            batch["token_type_ids"] = types
        return batch

    def _pool(self, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        # sentence-transformers' Pooling arithmetic in float32 (its accumulation dtype for a
        # float32 model)
        if self.pooling == "cls":
            return hidden[:, 0]
        kept = mask[:, :, None].astype(np.float32)
        if self.pooling == "max":
            return np.where(kept > 0, hidden, np.float32(-np.inf)).max(axis=1)
        counts = np.maximum(kept.sum(axis=1), np.float32(1e-9))
        return (hidden * kept).sum(axis=1) / counts

    def encode(
        self,
        inputs: list[str] | str,
        /,
        *,
        batch_size: int = 32,
        convert_to_numpy: bool = True,
        normalize_embeddings: bool = False,
        show_progress_bar: bool | None = None,
    ) -> np.ndarray:
        """One float32 row per text (a single row for a single string), in input order."""
        del show_progress_bar  # the job shows its own progress, per batch
        if not convert_to_numpy:
            raise ArgumentError("convert_to_numpy", "must be True for an exported encoder")
        batch_size = check_int(batch_size, "batch_size")
        single = isinstance(inputs, str)
        texts = [inputs] if single else list(inputs)
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise ArgumentError(
                    "inputs", f"item {index} must be a string, got {type(text).__name__}"
                )
        rows = np.empty((len(texts), self.dimension), dtype=np.float32)
        # longest first, as sentence-transformers batches (by characters there): tight padding
        order = np.argsort(-np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)))

        def encode_batch(start: int) -> tuple[np.ndarray, np.ndarray]:
            members = order[start : start + batch_size]
            batch = self.tokenize([texts[i] for i in members])
            (hidden,) = self.runner(batch, ["last_hidden_state"])
            return members, self._pool(
                np.asarray(hidden, dtype=np.float32), batch["attention_mask"]
            )

        for members, pooled in in_lanes(encode_batch, range(0, len(texts), batch_size), self.lanes):
            rows[members] = pooled
        if self.normalize or normalize_embeddings:
            # torch.nn.functional.normalize: x / max(||x||, 1e-12)
            norms = np.linalg.norm(rows, axis=1, keepdims=True)
            rows /= np.maximum(norms, np.float32(1e-12))
        return rows[0] if single else rows


def describe_pipeline(sentence_model: SentenceTransformer) -> dict[str, Any] | None:
    """The record of ``sentence_model``'s pipeline (tokenizer, limit, padding, pooling,
    normalization), or None when one of its steps is outside what this module reproduces. The
    record is written only once :func:`store_checked_pipeline` has checked it."""
    modules = list(sentence_model)
    names = [type(module).__name__ for module in modules]
    if names not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return None
    transformer, pooling = modules[0], modules[1]
    tokenizer = getattr(transformer, "tokenizer", None)
    backend_tokenizer = getattr(tokenizer, "backend_tokenizer", None)
    if backend_tokenizer is None or getattr(transformer, "processor", tokenizer) is not tokenizer:
        return None
    if (
        getattr(transformer, "do_lower_case", False)
        or any((getattr(sentence_model, "prompts", None) or {}).values())
        or getattr(sentence_model, "default_prompt_name", None)
        or getattr(sentence_model, "truncate_dim", None) is not None
        or getattr(tokenizer, "padding_side", "right") != "right"
        or getattr(tokenizer, "truncation_side", "right") != "right"
        or getattr(pooling, "pooling_mode", None) not in POOLINGS
    ):
        return None
    if len(modules) == 3 and getattr(modules[2], "module_input_name", None) != "sentence_embedding":
        return None
    limit = getattr(tokenizer, "model_max_length", None)
    pad_id = getattr(tokenizer, "pad_token_id", None)
    if pad_id is None:
        return None
    # sentence-transformers 6 renamed the method (the old name warns)
    dimension_of = getattr(sentence_model, "get_embedding_dimension", None) or getattr(
        sentence_model, "get_sentence_embedding_dimension", None
    )
    dimension = dimension_of() if callable(dimension_of) else None
    if not isinstance(dimension, int):
        return None
    # the copy with no padding or truncation of its own: the encoder sets both per use
    copy = type(backend_tokenizer).from_str(backend_tokenizer.to_str())
    copy.no_padding()
    copy.no_truncation()
    return {
        "format": RECORD_FORMAT,
        "tokenizer": copy.to_str(),
        "max_length": int(limit) if isinstance(limit, int) and limit < 1_000_000 else None,
        "pad_id": int(pad_id),
        "pad_type_id": int(getattr(tokenizer, "pad_token_type_id", 0) or 0),
        "pooling": pooling.pooling_mode,
        "normalize": len(modules) == 3,
        "dimension": dimension,
        "inputs": list(getattr(transformer.model, "inputs", ["input_ids", "attention_mask"])),
    }


def _probes(limit: int | None) -> list[str]:
    long_text = " ".join(["word"] * ((limit or 64) + 8))
    return [*PROBES, long_text]


def pipelines_agree(sentence_model: SentenceTransformer, encoder: ExportedSentenceEncoder) -> bool:
    """Whether ``encoder`` gives ``sentence_model``'s tokens and, within :data:`AGREEMENT`, its
    embeddings on the probe texts."""
    texts = _probes(encoder.max_seq_length)
    tokenizer: Any = sentence_model[0].tokenizer
    theirs = tokenizer(texts, padding=True, truncation="longest_first", return_tensors="np")
    ours = encoder.tokenize(texts)
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        if name not in ours:
            continue
        if name not in theirs or not np.array_equal(np.asarray(theirs[name]), ours[name]):
            return False
    expected = np.asarray(
        sentence_model.encode(texts, batch_size=4, convert_to_numpy=True, show_progress_bar=False),
        dtype=np.float32,
    )
    got = encoder.encode(texts, batch_size=4)
    return expected.shape == got.shape and bool(np.abs(expected - got).max() <= AGREEMENT)


def store_checked_pipeline(
    sentence_model: SentenceTransformer,
    model_path: str,
    folder: Path,
    runner: Runner,
    backend: str,
) -> bool:
    """Write the record of ``sentence_model``'s pipeline in ``folder`` (its exported graph's, or
    :func:`dialeval.torch_bert.record_folder`) when the pipeline is one this module reproduces
    and :func:`pipelines_agree` with ``runner`` computing its transformer; whether it was
    written. Best effort: a cache that cannot be written leaves the model on
    sentence-transformers."""
    if runner.precision != "float32":
        return False
    target = _record_path(folder, model_path)
    if target.is_file():
        return True
    record = describe_pipeline(sentence_model)
    if record is None:
        return False
    try:
        agree = pipelines_agree(sentence_model, ExportedSentenceEncoder(runner, record, backend))
    except Exception:  # noqa: BLE001 - any failure of the check leaves the model unrecorded
        return False
    if not agree:
        return False
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = temporary_name(target, "record")
        staging.write_text(json.dumps(record), encoding="utf-8")
        os.replace(staging, target)
    except OSError:
        return False
    return True


def read_record(folder: Path, model_path: str) -> dict[str, Any] | None:
    """The checked record of ``model_path``'s pipeline in ``folder``; None when there is none,
    or it is unreadable or of another format."""
    try:
        record = json.loads(_record_path(folder, model_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        return None
    return record


def load_checked_encoder(
    model_path: str, transformer_folder: str, backend: str, precision: str
) -> ExportedSentenceEncoder | None:
    """The encoder of ``model_path`` from its export and its checked record, without torch;
    None when either is not in the cache (or the record is of another format or unreadable),
    when the folder holds no weights to key an export on, or when ``precision`` is not float32."""
    if precision != "float32":
        return None
    try:
        _, graph = cached_export(transformer_folder, "encoder")
    except ArgumentError:  # no weight files to find an export by
        return None
    if graph is None:
        return None
    record = read_record(graph.parent, model_path)
    if record is None:
        return None
    runner = graph_runner(graph, backend, precision, encoder_lanes())
    encoder = ExportedSentenceEncoder(runner, record, backend)
    return encoder if encoder.precision == "float32" else None


__all__ = [
    "AGREEMENT",
    "ExportedSentenceEncoder",
    "describe_pipeline",
    "load_checked_encoder",
    "pipeline_digest",
    "pipelines_agree",
    "read_record",
    "store_checked_pipeline",
]
