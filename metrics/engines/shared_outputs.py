"""One pass per model per job: the vectors an encoder computed, shared by every metric of a job.

Inside :func:`shared_model_outputs` every embedder of the engines (``embed_unique`` for sent-BERT
and Vendi, the Sem-Ent embedders) looks a text up before encoding it: sent-BERT, Vendi and
Sem-Ent on the same sentence model then encode each distinct text of the job once, whichever
runs first. A store is keyed by what decides the vectors (the encoder kind and settings, the
resolved model path, device and dtype), so two spellings of one model (a Hub id and its
snapshot folder) share theirs. Vectors are kept as the encoder returned them (float32, not
normalized); each caller normalizes its copy, so every metric of a job reads the same vector for
a text. A text's float32 vector still depends on the texts it was batched with (batches are
sorted by token length and padded): a job that also encodes, say, a Sem-Ent reference corpus or
another system's responses can move a figure by about 1e-7 relative against the metric run alone
(measured: sent-BERT diversity per set up to 1.6e-7, Vendi 2e-9 relative), the same order as
``SentenceTransformer.encode`` on the same texts in another order.

Outside the block nothing is kept between calls (a fresh store serves one call), so a long
training loop or DTG never grows a cache it did not ask for.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Hashable, Iterator

import numpy as np

_ACTIVE: contextvars.ContextVar[dict[Hashable, VectorStore] | None] = contextvars.ContextVar(
    "dialeval_shared_outputs", default=None
)


class VectorStore:
    """Float32 vectors of distinct texts under one encoder, appended batch by batch."""

    def __init__(self) -> None:
        self._row: dict[str, int] = {}
        self._matrix: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self._row)

    def missing(self, texts: list[str]) -> list[str]:
        """The distinct texts of ``texts`` not stored yet, in first-seen order."""
        return list(dict.fromkeys(text for text in texts if text not in self._row))

    def add(self, texts: list[str], vectors: np.ndarray) -> None:
        """Store ``vectors[i]`` for ``texts[i]`` (distinct texts, none stored yet)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise ValueError(
                f"expected one vector per text ({len(texts)}), got shape {vectors.shape}"
            )
        if not texts:
            return
        start = len(self._row)
        for offset, text in enumerate(texts):
            if self._row.setdefault(text, start + offset) != start + offset:
                raise ValueError(f"text {text!r:.60} is stored already")
        # The first block is taken as it is: a job that encodes everything in one call holds
        # one copy of its vectors, never two.
        self._matrix = vectors if self._matrix is None else np.concatenate([self._matrix, vectors])

    def rows(self, texts: list[str]) -> np.ndarray:
        """Each text's row (every text must be stored)."""
        return np.fromiter((self._row[text] for text in texts), dtype=np.int64, count=len(texts))

    def vectors(self, texts: list[str]) -> np.ndarray:
        """The float32 vectors of ``texts``, in that order: a read-only view of the store when
        they are stored one after the other (a job's whole input: no second copy of 1M
        vectors), else a copy."""
        if self._matrix is None:
            return np.zeros((0, 0), dtype=np.float32)
        rows = self.rows(texts)
        if (
            len(rows)
            and rows[-1] - rows[0] == len(rows) - 1
            and np.array_equal(rows, np.arange(rows[0], rows[-1] + 1))
        ):
            view = self._matrix[rows[0] : rows[-1] + 1]
            view.flags.writeable = False
            return view
        return self._matrix[rows]


@contextlib.contextmanager
def shared_model_outputs() -> Iterator[dict[Hashable, VectorStore]]:
    """Share encoders' vectors among every metric run in the block (nested blocks share the outer
    one)."""
    active = _ACTIVE.get()
    if active is not None:
        yield active
        return
    stores: dict[Hashable, VectorStore] = {}
    token = _ACTIVE.set(stores)
    try:
        yield stores
    finally:
        _ACTIVE.reset(token)


def vector_store(key: Hashable) -> VectorStore:
    """The job's store for ``key``, or a fresh one outside :func:`shared_model_outputs`."""
    stores = _ACTIVE.get()
    if stores is None:
        return VectorStore()
    return stores.setdefault(key, VectorStore())


def stored_vectors(
    key: Hashable,
    texts: list[str],
    encode: Callable[[list[str]], np.ndarray],
    announce: Callable[[int], object] | None = None,
) -> np.ndarray:
    """The vectors of ``texts`` (float32, one row per text), running ``encode`` only on the
    distinct texts the store for ``key`` does not hold yet (``announce(n)`` first says how many)."""
    store = vector_store(key)
    missing = store.missing(texts)
    if missing:
        if announce is not None:
            announce(len(missing))
        store.add(missing, encode(missing))
    return store.vectors(texts)
