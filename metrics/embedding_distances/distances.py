"""Remote clique and chamfer distance: the mean and the nearest cosine distance between texts.

Cox et al. (2021, "Directed Diversity: Leveraging Language Embedding Distances for Collective
Creativity in Crowd Ideation", CHI '21) score a collection of ideas by distances between their
sentence embeddings; the ``diversity`` package (Shaib et al. 2024, ``diversity.embedding``)
computes two of them, as here. With ``d_ij = 1 - cos(e_i, e_j)`` (``d_ii = 0``, as scikit-learn's
``cosine_distances`` sets it) over ``n`` texts:

    remote clique     RC = mean_i ( (1 / n) sum_j d_ij )      the diagonal included: divided by n, not n - 1
    chamfer distance  CD = mean_i min_{j != i} d_ij            the nearest *other* text

Both are 0 for ``n`` copies of one text and grow with the spread of the texts (at most 2; about 1
for unrelated texts under most sentence models). Each occurrence of a text is one item: a duplicated
text is at distance 0 from its copy, so it lowers both figures.

Neither figure needs the ``n x n`` matrix the package builds (10 GB of float32 at 50,000 texts):

* Remote clique has a closed form on L2-normalised rows ``u_i``. ``sum_{i,j} cos_ij =
  ||sum_i u_i||^2``, and the diagonal (``cos_ii = 1``) is excluded by the convention ``d_ii = 0``,
  so ``sum_{i,j} d_ij = n(n - 1) - (||sum_i u_i||^2 - n) = n^2 - ||sum_i u_i||^2`` and
  ``RC = 1 - ||sum_i u_i||^2 / n^2``: ``O(n d)``, the rows summed in float64 a chunk at a time.
  Duplicates enter as counts (``sum_i u_i = sum_t c_t u_t`` over the distinct texts ``t``).
* Chamfer distance needs each text's nearest other text: the cosine similarities of the distinct
  rows are computed ``block_size x block_size`` tiles at a time (only the tiles on and above the
  diagonal, each updating the running maxima of its rows and of its columns), so the memory is
  ``O(n d + block_size^2)`` and the work half of the full product. A text that occurs twice has
  its copy at distance 0.

Distances are clipped into ``[0, 2]`` as scikit-learn clips them (float rounding can put
``1 - cos`` a few ulps below 0).
"""  # noqa: E501

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from dialeval.metrics.embedding_distances.defaults import FIGURES
from dialeval.metrics.engines.embedders import DEFAULT_SENTENCE_MODEL, sentence_vectors, unit_rows
from dialeval.metrics.engines.figure_statistics import chunked
from dialeval.metrics.engines.job_steps import announce_work
from dialeval.resampling import UnitStatistic
from dialeval.validation import (
    ArgumentError,
    check_corpus,
    check_float_rows,
    check_int,
    check_response_set,
    check_response_sets,
    split_scope,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

    from dialeval.type_aliases import DeviceLike, Progress, SentenceEncoder, StrPath

#: Rows (and columns) of one tile of cosine similarities: 2048 x 2048 float32 is 16 MiB.
BLOCK_SIZE = 2048
#: Rows upcast to float64 at a time for the remote-clique sum.
ROWS_PER_CHUNK = 65536


# --------------------------------------------------------------------------------------------
# on unit rows with counts (the distinct texts and how often each occurs)


def _remote_clique(unit: np.ndarray, counts: np.ndarray) -> float:
    """``1 - ||sum_t c_t u_t||^2 / n^2`` with the rows re-normalised in float64 (so that
    ``cos_ii = 1`` to rounding and n copies of one text give 0, not -1e-7)."""
    total = np.zeros(unit.shape[1], dtype=np.float64)
    for start in range(0, len(unit), ROWS_PER_CHUNK):
        rows = unit[start : start + ROWS_PER_CHUNK].astype(np.float64)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        total += counts[start : start + ROWS_PER_CHUNK].astype(np.float64) @ rows
    n = float(counts.sum())
    return float(np.clip(1.0 - float(total @ total) / (n * n), 0.0, 2.0))


def _nearest_similarities(
    unit: np.ndarray, block_size: int, progress: Progress | None = None
) -> np.ndarray:
    """For each row, its largest cosine similarity to another row (``-inf`` for a single row)."""
    m = len(unit)
    best = np.full(m, -np.inf, dtype=unit.dtype)
    for start in range(0, m, block_size):
        stop = min(start + block_size, m)
        rows = unit[start:stop]
        for other in range(start, m, block_size):
            other_stop = min(other + block_size, m)
            similarities = rows @ unit[other:other_stop].T
            if other == start:
                np.fill_diagonal(similarities, -np.inf)  # a row is not its own neighbour
            np.maximum(best[start:stop], similarities.max(axis=1), out=best[start:stop])
            if other != start:
                np.maximum(
                    best[other:other_stop], similarities.max(axis=0), out=best[other:other_stop]
                )
        if progress is not None:
            progress(stop - start)
    return best


def _chamfer_distance(
    unit: np.ndarray,
    counts: np.ndarray,
    block_size: int = BLOCK_SIZE,
    progress: Progress | None = None,
) -> float:
    """``mean_i min_{j != i} d_ij`` over the occurrences: a text occurring twice or more is at
    distance 0 from its copy, one occurring once at ``1 - max cos`` from the nearest other row."""
    nearest = np.clip(
        1.0 - _nearest_similarities(unit, block_size, progress).astype(np.float64), 0.0, 2.0
    )
    nearest[counts > 1] = 0.0
    return float(counts.astype(np.float64) @ nearest / counts.sum())


# --------------------------------------------------------------------------------------------
# from embeddings


def _unit_embeddings(embeddings: ArrayLike) -> np.ndarray:
    """``embeddings`` checked (2-D, finite, at least 2 rows, no zero row) and L2-normalised in their
    dtype (float32 kept, anything else as float64)."""
    rows = check_float_rows(embeddings)
    if rows.shape[0] < 2 or rows.shape[1] == 0:
        raise ArgumentError(
            "embeddings",
            "must hold at least 2 rows of at least 1 value (distances need two texts), "
            f"got shape {rows.shape}",
        )
    if not np.all(np.isfinite(rows)):
        raise ArgumentError("embeddings", "holds NaN or infinite values")
    unit = np.empty_like(rows)
    # float64 a chunk at a time: one copy of the rows in all
    for start in range(0, len(rows), ROWS_PER_CHUNK):
        chunk = rows[start : start + ROWS_PER_CHUNK].astype(np.float64)
        # scaled by the largest |value| first, so that rows of 1e-300 (whose squares underflow)
        # normalise too
        largest = np.max(np.abs(chunk), axis=1)
        if np.any(largest == 0):
            raise ArgumentError(
                "embeddings",
                f"row {start + int(np.argmin(largest))} is zero: its cosine distance is undefined",
            )
        chunk /= largest[:, None]
        chunk /= np.linalg.norm(chunk, axis=1, keepdims=True)
        unit[start : start + ROWS_PER_CHUNK] = chunk
    return unit


def remote_clique_from_embeddings(embeddings: ArrayLike) -> float:
    """Remote clique of ``n`` texts from their embeddings (``n x d``, one row per occurrence):
    ``mean_i (1/n) sum_j (1 - cos(e_i, e_j))`` with ``d_ii = 0``, in ``O(n d)`` (module docstring).

    Raises:
        ValueError: ``embeddings`` is not a finite 2-D array of at least 2 non-zero rows.
    """
    unit = _unit_embeddings(embeddings)
    return _remote_clique(unit, np.ones(len(unit), dtype=np.int64))


def chamfer_distance_from_embeddings(embeddings: ArrayLike, block_size: int = BLOCK_SIZE) -> float:
    """Chamfer distance of ``n`` texts from their embeddings (``n x d``, one row per occurrence):
    ``mean_i min_{j != i} (1 - cos(e_i, e_j))``, the similarities ``block_size`` rows and columns
    at a time (never an ``n x n`` matrix).

    Raises:
        ValueError: ``embeddings`` is not a finite 2-D array of at least 2 non-zero rows, or
            ``block_size`` is not a positive int.
    """
    block_size = check_int(block_size, "block_size")
    unit = _unit_embeddings(embeddings)
    return _chamfer_distance(unit, np.ones(len(unit), dtype=np.int64), block_size)


def _unit_float64(vectors: np.ndarray) -> np.ndarray:
    rows = unit_rows(vectors).astype(np.float64)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


# --------------------------------------------------------------------------------------------
# on resamples of a corpus (dialeval evaluate --ci), from the embeddings the run read


def remote_clique_statistic(vectors: np.ndarray, index: np.ndarray) -> UnitStatistic:
    """Remote clique of resampled responses, exactly (``vectors[index[u]]`` is response ``u``'s
    vector): the closed form ``1 - ||sum_u c_u u_u||^2 / n^2`` on the multiset drawn."""
    index = np.asarray(index)
    # a corpus of one chunk is normalised once; a larger one a chunk at a time (one copy in all)
    whole = _unit_float64(vectors) if len(vectors) <= ROWS_PER_CHUNK else None

    def rows(start: int) -> np.ndarray:
        if whole is not None:
            return whole
        return _unit_float64(vectors[start : start + ROWS_PER_CHUNK])

    def evaluate(counts: np.ndarray) -> np.ndarray:
        weights = np.zeros((len(counts), len(vectors)))
        np.add.at(weights.T, index, counts.T)  # each response's draws on its distinct row
        total = np.zeros((len(counts), vectors.shape[1]))
        for start in range(0, len(vectors), ROWS_PER_CHUNK):
            total += weights[:, start : start + ROWS_PER_CHUNK] @ rows(start)
        n = counts.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            value = 1.0 - np.einsum("kd,kd->k", total, total) / (n * n)
        return np.where(n > 0, np.clip(value, 0.0, 2.0), np.nan)

    return UnitStatistic(
        len(index),
        chunked(evaluate),
        "recomputed on each resample from the embeddings of the one pass",
        "no response in the resample",
    )


def chamfer_statistic(vectors: np.ndarray, index: np.ndarray) -> UnitStatistic:
    """Chamfer distance of resampled responses, approximately: every resample's nearest neighbours
    would cost ``O(n^2)`` each, so each response keeps its nearest-other distance in the whole
    corpus and a resample averages those (a response drawn twice is not moved to 0)."""
    index = np.asarray(index)
    rows, counts_of_row = np.unique(index, return_counts=True)
    nearest_of_row = np.zeros(len(vectors))
    unit = unit_rows(vectors[rows])
    nearest = np.clip(1.0 - _nearest_similarities(unit, BLOCK_SIZE).astype(np.float64), 0.0, 2.0)
    nearest[counts_of_row > 1] = 0.0  # a text that occurs twice has its copy at distance 0
    nearest_of_row[rows] = nearest
    per_response = nearest_of_row[index]

    def evaluate(counts: np.ndarray) -> np.ndarray:
        drawn = counts.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(drawn > 0, (counts @ per_response) / drawn, np.nan)

    return UnitStatistic(
        len(index),
        evaluate,
        "mean of per-response nearest-other distances in the whole corpus (neighbours fixed)",
        "no response in the resample",
        exact=False,
    )


STATISTICS: dict[str, Callable[[np.ndarray, np.ndarray], UnitStatistic]] = {
    "remote_clique": remote_clique_statistic,
    "chamfer_distance": chamfer_statistic,
}


# --------------------------------------------------------------------------------------------
# from texts


def _check_figures(figures: str | Sequence[str]) -> tuple[str, ...]:
    if isinstance(figures, str):
        figures = (figures,)
    if (
        not isinstance(figures, (list, tuple))
        or not figures
        or any(figure not in FIGURES for figure in figures)
    ):
        raise ArgumentError("figures", f"must be a non-empty list of {FIGURES}, got {figures!r}")
    return tuple(dict.fromkeys(figures))


def _figures_of(
    vectors: np.ndarray,
    index: np.ndarray,
    figures: tuple[str, ...],
    progress: Progress | None = None,
) -> dict[str, float]:
    """The figures of the occurrences ``vectors[index]`` (the encoder's raw distinct rows)."""
    rows, counts = np.unique(index, return_counts=True)
    # a corpus uses every distinct row: no copy of the vectors before the normalised one
    unit = unit_rows(vectors if len(rows) == len(vectors) else vectors[rows])
    norms = np.einsum("ij,ij->i", unit, unit)
    if np.any(norms == 0):
        raise ValueError(
            "the sentence model gave a zero vector for a text of `predictions`: its cosine "
            "distance is undefined"
        )
    result = {}
    if "remote_clique" in figures:
        result["remote_clique"] = _remote_clique(unit, counts)
    if "chamfer_distance" in figures:
        result["chamfer_distance"] = _chamfer_distance(unit, counts, BLOCK_SIZE, progress)
    return result


def embedding_distances(
    predictions: list[str] | list[list[str]],
    model: StrPath | SentenceEncoder = DEFAULT_SENTENCE_MODEL,
    figures: str | Sequence[str] = FIGURES,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    allow_empty: bool = False,
    progress: Progress | None = None,
    backend: str | None = None,
) -> dict:
    """Remote clique and chamfer distance of response sets (per set, then the mean) or of a corpus.

    Args:
        predictions: ``list[list[str]]`` (one response set per context, each of at least 2
            responses) or ``list[str]`` (a corpus of at least 2 responses).
        model: sentence-transformers id or directory, or a loaded model with ``encode``; default
            the embedded ``sentence-transformers/all-MiniLM-L6-v2`` (works offline; the package's
            default is ``Qwen/Qwen3-Embedding-0.6B``).
        figures: which of :data:`FIGURES` to compute (default both).
        batch_size, device, dtype, backend: passed to the sentence encoder.
        allow_empty: accept empty and whitespace-only responses (embedded as the model embeds them).
        progress: called with the number of texts of each batch the sentence model encodes, and of
            each block of rows the corpus chamfer distance finishes; inside a ``dialeval evaluate``
            job texts the job already encoded are not encoded again.

    Returns:
        ``{"scope": ..., <figures>...}`` plus ``num_sets`` and ``per_set`` (one dict of figures per
        set, input order; the top-level figures are their means) for response sets, or
        ``num_responses`` for a corpus.

    Raises:
        ValueError: naming ``predictions``, ``figures`` or ``model`` when they are not as described.
    """
    figures = _check_figures(figures)
    if split_scope(predictions, "predictions") == "corpus":
        corpus = check_response_set(predictions, "predictions", min_size=2, allow_empty=allow_empty)
        vectors, index = sentence_vectors(
            corpus, model, batch_size, device, dtype, progress=progress, backend=backend
        )
        if progress is not None and "chamfer_distance" in figures:
            announce_work(progress, len(vectors), "text")
        return {
            "scope": "corpus",
            **_figures_of(vectors, index, figures, progress),
            "num_responses": len(corpus),
        }
    response_sets = check_response_sets(
        predictions, "predictions", min_size=2, allow_empty=allow_empty
    )
    flat = [text for response_set in response_sets for text in response_set]
    vectors, index = sentence_vectors(
        flat, model, batch_size, device, dtype, progress=progress, backend=backend
    )
    per_set, start = [], 0
    for response_set in response_sets:
        per_set.append(_figures_of(vectors, index[start : start + len(response_set)], figures))
        start += len(response_set)
    means = {figure: float(np.mean([row[figure] for row in per_set])) for figure in figures}
    return {"scope": "response_set", **means, "num_sets": len(per_set), "per_set": per_set}


def _one_list(
    texts: list[str],
    model: StrPath | SentenceEncoder,
    batch_size: int,
    device: DeviceLike,
    dtype: str | None,
    allow_empty: bool,
    progress: Progress | None,
    figure: str,
    backend: str | None,
) -> float:
    texts = check_corpus(texts, "texts", allow_empty=allow_empty)
    if len(texts) < 2:
        raise ArgumentError(
            "texts", f"must hold at least 2 texts (distances need two), got {len(texts)}"
        )
    return embedding_distances(
        texts, model, (figure,), batch_size, device, dtype, allow_empty, progress, backend
    )[figure]


def remote_clique(
    texts: list[str],
    model: StrPath | SentenceEncoder = DEFAULT_SENTENCE_MODEL,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    allow_empty: bool = False,
    progress: Progress | None = None,
    backend: str | None = None,
) -> float:
    """Remote clique of ``texts`` (a corpus or one response set, at least 2) under the sentence
    model's embeddings; see :func:`embedding_distances` for the arguments."""
    return _one_list(
        texts, model, batch_size, device, dtype, allow_empty, progress, "remote_clique", backend
    )


def chamfer_distance(
    texts: list[str],
    model: StrPath | SentenceEncoder = DEFAULT_SENTENCE_MODEL,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    allow_empty: bool = False,
    progress: Progress | None = None,
    backend: str | None = None,
) -> float:
    """Chamfer distance of ``texts`` (a corpus or one response set, at least 2) under the sentence
    model's embeddings; see :func:`embedding_distances` for the arguments."""
    return _one_list(
        texts,
        model,
        batch_size,
        device,
        dtype,
        allow_empty,
        progress,
        "chamfer_distance",
        backend,
    )
