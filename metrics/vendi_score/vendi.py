"""Vendi Score: the effective number of distinct items in a sample (Friedman & Dieng 2023).

Friedman & Dieng (2023, TMLR, "The Vendi Score: A Diversity Evaluation Metric for Machine
Learning", definition of the Vendi Score) take ``n`` items, a positive semidefinite similarity
kernel ``K`` (``n x n``) with ``K_ii = 1``, and the eigenvalues ``lambda_1..lambda_n`` of ``K / n``
(non-negative, summing to 1). The Vendi Score is the exponential of the Shannon entropy of those
eigenvalues (``q = 1`` below). Pasarkar & Dieng (2024, AISTATS, "Cousins of the Vendi Score")
extend it to every order ``q`` of the Rényi entropy (the Hill numbers of ecology), as does the
authors' ``vendi_score`` package (``entropy_q``)::

    q = 1       VS_1   = exp(-sum_i lambda_i log lambda_i)          (0 log 0 = 0)
    q = inf     VS_inf = 1 / max_i lambda_i
    q = 0       VS_0   = number of non-zero eigenvalues             (the rank of K)
    other q > 0 VS_q   = exp(log(sum_i lambda_i ** q) / (1 - q))

It ranges from 1 (all items identical) to ``n`` (all items orthogonal), and reads as "how many
really different items the sample holds". For every sample ``VS_q`` does not increase with ``q``;
small ``q`` weighs rare directions more, ``q = inf`` only looks at the dominant one.

Conventions of this module:

* Kernel: the cosine similarity of L2-normalized sentence embeddings ``X`` (``n x d``), so
  ``K = X X^T``. The non-zero eigenvalues of ``X X^T / n`` equal those of ``X^T X / n``
  (``d x d``); :func:`vendi_score_from_embeddings` uses that "dual" form when ``n > d``, which
  makes a corpus of 100k responses cost a 384 x 384 eigendecomposition instead of 100k x 100k.
* Precision: ``X^T X`` is summed block by block from the rows in their own dtype (float32
  embeddings: float32 products, as the authors' ``vendi_score.score_dual`` takes them, each block's
  added in float64), and every eigendecomposition is in float64. Up to ``d`` distinct responses of
  a text input are multiplied in float64. The blocks' worker threads and the order of the sums do
  not depend on the thread count, so neither does the figure (:mod:`.gram`).
* Numerical noise: in exact arithmetic the eigenvalues are ``>= 0`` and sum to 1 (the trace of
  ``K / n`` is 1). Floating-point eigensolvers return tiny negative values (~1e-17) for the zero
  eigenvalues, which would make ``log`` and the ``q < 1`` powers undefined (``(-1e-17) ** 0.5`` is
  NaN). Every eigenvalue at or below the numerical-rank tolerance
  ``max(lambda) * size * eps`` (``eps`` of float64; the rule of ``numpy.linalg.matrix_rank``) is
  set to exactly 0, and the rest is renormalized to sum to 1 so that it is a probability vector
  again (the correction is of the order of the rounding error). Zeroing the noise, not only
  the negative part of it, also makes the primal and the dual forms agree for small ``q``
  (where ``1e-17 ** q`` is not negligible) and defines ``q = 0`` as the numerical rank.
* Duplicates count: each occurrence of a response is one item, so repeating a response lowers
  the score (with orthogonal ``a`` and ``b``, ``["a", "b"]`` scores 2 and ``["a", "a", "b"]``
  ``exp(H(2/3, 1/3)) ~ 1.89``). This is the paper's definition applied to the sample as given. Each
  distinct text is embedded once (:func:`dialeval.metrics.engines.embedders.embed_unique`); the
  occurrences enter as counts, which is exactly the same as scoring the per-occurrence rows
  ``embeddings[index]``.

Scope: a list of response sets (``list[list[str]]``, one set per context) is scored per set
(the diversity of the responses to one context) and averaged over sets; a flat list
(``list[str]``) is one corpus scored as a whole (the diversity of everything a system says).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real
from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg

from dialeval.metrics.engines.embedders import DEFAULT_SENTENCE_MODEL, sentence_vectors, unit_rows
from dialeval.metrics.vendi_score.gram import blas_workers, dual_gram, row_norms
from dialeval.resampling import UnitStatistic
from dialeval.validation import (
    ArgumentError,
    check_corpus,
    check_flag,
    check_float_rows,
    check_response_sets,
    split_scope,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from dialeval.type_aliases import DeviceLike, Progress, SentenceEncoder, StrPath

#: Tolerance of the kernel checks: ``|K - K^T|``, ``|K_ii - 1|`` and the most negative eigenvalue
#: of ``K / n`` must not exceed it (float32 similarity matrices pass; indefinite ones do not).
KERNEL_ATOL = 1e-5
#: Tolerance of the unit-norm check of ``embeddings`` when ``normalize=False``.
NORM_ATOL = 1e-5

SCOPES = ("response_set", "corpus")

__all__ = [
    "DEFAULT_SENTENCE_MODEL",
    "KERNEL_ATOL",
    "check_orders",
    "order_key",
    "vendi_score",
    "vendi_score_from_eigenvalues",
    "vendi_score_from_embeddings",
    "vendi_score_from_kernel",
]


# --------------------------------------------------------------------------------------------
# orders


def _check_order(order: object, argument: str) -> float:
    if isinstance(order, str):
        if order.strip().lower() in {"inf", "infinity"}:
            return math.inf
        raise ArgumentError(argument, f"must be a non-negative number or 'inf', got {order!r}")
    if isinstance(order, bool) or not isinstance(order, Real):
        # ValueError, not TypeError: every bad input of dialeval's metrics raises ValueError.
        raise ArgumentError(
            f"{argument}",
            f"must be a non-negative number or 'inf', got {type(order).__name__}: {order!r}",
        )
    value = float(order)
    if math.isnan(value) or value < 0:
        raise ArgumentError(argument, f"must be a non-negative number or 'inf', got {order!r}")
    return value


def check_orders(orders: object, argument: str = "orders") -> list[float]:
    """Validate ``orders`` and return them as floats (``math.inf`` for ``'inf'``), duplicates
    removed.

    Accepts one order or a non-empty sequence of them; each must be a real number ``>= 0``,
    ``math.inf`` or the string ``'inf'``.
    """
    if isinstance(orders, (str, Real)) and not isinstance(orders, bool):
        orders = [orders]
    if not isinstance(orders, (Sequence, np.ndarray)) or len(orders) == 0:
        raise ArgumentError(
            argument,
            f"must be a non-empty list of orders (non-negative numbers or 'inf'), got {orders!r}",
        )
    checked = [_check_order(order, f"{argument}[{i}]") for i, order in enumerate(orders)]
    return list(dict.fromkeys(checked))


def order_key(order: float) -> str:
    """Result key of an order: ``vendi_score`` for q = 1, else ``vendi_score_q{q}``.

    ``2`` and ``2.0`` -> ``vendi_score_q2``; ``0.5`` -> ``vendi_score_q0.5``; inf ->
    ``vendi_score_qinf``.
    """
    order = _check_order(order, "order")
    if order == 1:
        return "vendi_score"
    if math.isinf(order):
        return "vendi_score_qinf"
    text = str(int(order)) if order.is_integer() else repr(order)
    return f"vendi_score_q{text}"


# --------------------------------------------------------------------------------------------
# from eigenvalues


def _clean_eigenvalues(eigenvalues: np.ndarray) -> np.ndarray:
    """Zero the numerical noise (<= max * size * eps, negatives included) and renormalize to sum
    1."""
    eigenvalues = np.asarray(eigenvalues, dtype=np.float64).ravel()
    top = float(eigenvalues.max())
    if not top > 0:
        raise ValueError(
            "the kernel has no positive eigenvalue; it is not a valid similarity kernel"
        )
    tolerance = top * eigenvalues.size * np.finfo(np.float64).eps
    cleaned = np.where(eigenvalues > tolerance, eigenvalues, 0.0)
    return cleaned / cleaned.sum()


def _score(p: np.ndarray, order: float) -> float:
    """``exp`` of the Rényi entropy of order ``order`` of the probability vector ``p`` (no
    zeros)."""
    if order == 0:
        return float(p.size)
    if order == 1:
        return float(np.exp(-np.sum(p * np.log(p))))
    top = float(p.max())
    if math.isinf(order):
        return 1.0 / top
    # log(sum p^q) = q log max + log(sum (p / max)^q): no underflow for large q.
    log_sum = order * math.log(top) + math.log(float(np.sum((p / top) ** order)))
    return float(math.exp(log_sum / (1.0 - order)))


def vendi_score_from_eigenvalues(
    eigenvalues: ArrayLike, orders: float | str | Sequence[float | str] = (1,)
) -> dict[str, float]:
    """Vendi Scores from the eigenvalues of ``K / n`` (any noise is cleaned as the module says)."""
    orders = check_orders(orders)
    eigenvalues = np.asarray(eigenvalues, dtype=np.float64).ravel()
    if eigenvalues.size == 0 or not np.all(np.isfinite(eigenvalues)):
        raise ArgumentError("eigenvalues", "must be a non-empty array of finite numbers")
    cleaned = _clean_eigenvalues(eigenvalues)
    p = cleaned[cleaned > 0]
    return {order_key(order): _score(p, order) for order in orders}


# --------------------------------------------------------------------------------------------
# from a kernel


def _as_float_array(value: object, argument: str, ndim: int) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ArgumentError(argument, f"must be a {ndim}-D array of numbers: {error}") from error
    if array.ndim != ndim:
        raise ArgumentError(argument, f"must be a {ndim}-D array, got shape {array.shape}")
    if array.size == 0:
        raise ArgumentError(argument, f"is empty (shape {array.shape})")
    if not np.all(np.isfinite(array)):
        raise ArgumentError(argument, "holds NaN or infinite values")
    return array


def vendi_score_from_kernel(
    kernel: ArrayLike, orders: float | str | Sequence[float | str] = (1,)
) -> dict[str, float]:
    """Vendi Scores of ``n`` items from their ``n x n`` similarity kernel.

    Args:
        kernel: square, symmetric, positive semidefinite, with ones on the diagonal (each checked
            within :data:`KERNEL_ATOL`; the matrix is then symmetrized).
        orders: orders ``q`` (numbers ``>= 0`` or ``'inf'``); see :func:`order_key` for the keys.

    Raises:
        ValueError: naming ``kernel`` or ``orders`` when they are not as described.
    """
    orders = check_orders(orders)
    matrix = _as_float_array(kernel, "kernel", 2)
    n = matrix.shape[0]
    if matrix.shape[1] != n:
        raise ArgumentError("kernel", f"must be square (n x n), got shape {matrix.shape}")
    asymmetry = float(np.max(np.abs(matrix - matrix.T)))
    if asymmetry > KERNEL_ATOL:
        raise ArgumentError(
            "kernel", f"must be symmetric: max |K - K^T| is {asymmetry:.3g} > {KERNEL_ATOL}"
        )
    diagonal_error = float(np.max(np.abs(np.diagonal(matrix) - 1.0)))
    if diagonal_error > KERNEL_ATOL:
        raise ArgumentError(
            "kernel",
            "must have ones on the diagonal (K_ii = 1, e.g. cosine similarity): max |K_ii - 1| "
            f"is {diagonal_error:.3g} > {KERNEL_ATOL}; normalize it as K_ij / sqrt(K_ii K_jj)",
        )
    eigenvalues = scipy.linalg.eigvalsh((matrix + matrix.T) / (2.0 * n))
    if eigenvalues.min() < -KERNEL_ATOL:
        raise ArgumentError(
            "kernel",
            f"must be positive semidefinite: K / n has the eigenvalue {eigenvalues.min():.3g} "
            f"< -{KERNEL_ATOL}",
        )
    return vendi_score_from_eigenvalues(eigenvalues, orders)


# --------------------------------------------------------------------------------------------
# from embeddings


def _primal_eigenvalues(
    rows: np.ndarray, weights: np.ndarray, inverse_norms: np.ndarray | None = None
) -> np.ndarray:
    """Spectrum of ``K / n`` for ``m <= d`` rows ``E`` where row ``u`` occurs ``weights[u] * n``
    times: that of ``W^1/2 E E^T W^1/2`` (``m x m``, ``W = diag(weights)``).

    ``inverse_norms`` L2-normalizes the rows in the same scaling (``sqrt(w_u) / ||e_u|| * e_u``),
    multiplied in their own dtype; the small symmetric matrix is decomposed in float64.
    """
    scale = np.sqrt(weights) if inverse_norms is None else np.sqrt(weights) * inverse_norms
    scaled = rows * scale.astype(rows.dtype, copy=False)[:, None]
    matrix = (scaled @ scaled.T).astype(np.float64, copy=False)
    return scipy.linalg.eigvalsh((matrix + matrix.T) / 2.0)


def _dual_eigenvalues(
    source: np.ndarray,
    weights: np.ndarray,
    index: np.ndarray | None = None,
    normalize: bool = True,
) -> np.ndarray:
    """Non-zero spectrum of ``K / n`` for ``m > d`` rows (``source``, or ``source[index]``) where
    row ``u`` occurs ``weights[u] * n`` times: that of ``E^T W E`` (``d x d``), summed block by
    block (:func:`dialeval.metrics.vendi_score.gram.dual_gram`) and decomposed in float64."""
    with blas_workers() as workers:
        gram, norms = dual_gram(source, weights, index, normalize=normalize, workers=workers)
        _check_norms(norms, normalize)
        # symmetric as summed: every block's product is (numpy fills both triangles alike)
        return scipy.linalg.eigvalsh(gram)


def _check_norms(norms: np.ndarray, normalize: bool) -> None:
    """Refuse rows with NaN or infinite values, zero rows when ``normalize``, and rows that are not
    unit-norm otherwise."""
    if not np.all(np.isfinite(norms)):
        raise ArgumentError("embeddings", "holds NaN or infinite values")
    if normalize:
        if np.any(norms == 0):
            raise ArgumentError(
                "embeddings", f"row {int(np.argmin(norms))} is zero and cannot be normalized"
            )
        return
    worst = float(np.max(np.abs(norms - 1.0)))
    if worst > NORM_ATOL:
        raise ArgumentError(
            "embeddings",
            f"must have unit-norm rows when normalize=False (max |norm - 1| is {worst:.3g}); "
            "pass normalize=True",
        )


def _rows_and_inverse_norms(
    embeddings: ArrayLike, normalize: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """The rows as a float array (float32 and float64 kept, anything else as float64) and, when
    ``normalize``, their inverse L2 norms; unit norms are checked otherwise."""
    rows = _checked_rows(embeddings)
    norms = row_norms(rows)
    _check_norms(norms, normalize)
    return rows, (1.0 / norms if normalize else None)


def _checked_rows(embeddings: ArrayLike) -> np.ndarray:
    rows = check_float_rows(embeddings)
    if rows.size == 0:
        raise ArgumentError("embeddings", f"is empty (shape {rows.shape})")
    return rows


def vendi_score_from_embeddings(
    embeddings: ArrayLike,
    orders: float | str | Sequence[float | str] = (1,),
    normalize: bool = True,
) -> dict[str, float]:
    """Vendi Scores of ``n`` items under the cosine kernel of their embeddings (``n x d``).

    The rows are L2-normalized (``normalize=True``) or checked to be unit-norm, so that
    ``K = X X^T`` has ``K_ii = 1``. For ``n <= d`` the eigenvalues of ``K / n`` are computed; for
    ``n > d`` those of ``X^T X / n`` (the same non-zero spectrum, a ``d x d`` problem). Products are
    in the rows' dtype (float32 rows: float32 products summed in float64), the eigenvalues in
    float64.
    """
    orders = check_orders(orders)
    normalize = check_flag(normalize, "normalize")  # "no" is truthy: it would normalize silently
    rows = _checked_rows(embeddings)
    n, d = rows.shape
    weights = np.full(n, 1.0 / n)
    if n <= d:
        rows, inverse_norms = _rows_and_inverse_norms(rows, normalize)
        eigenvalues = _primal_eigenvalues(rows, weights, inverse_norms)
    else:
        eigenvalues = _dual_eigenvalues(rows, weights, normalize=normalize)
    return vendi_score_from_eigenvalues(eigenvalues, orders)


def _unit_float64(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows normalized as the sentence encoder does (float32), then in float64: the rows and
    their float64 inverse norms (so that ``K_ii = 1`` to rounding)."""
    chosen = unit_rows(vectors).astype(np.float64)
    _, inverse_norms = _rows_and_inverse_norms(chosen, normalize=True)
    assert inverse_norms is not None  # given whenever normalize is true
    return chosen, inverse_norms


def _score_occurrences(
    vectors: np.ndarray, index: np.ndarray, orders: list[float]
) -> dict[str, float]:
    """Scores of the rows ``vectors[index]`` (the encoder's vectors, normalized here), via the
    counts of each row: up to ``d`` distinct rows in float64, more in the rows' dtype (the
    encoder's float32) summed in float64, block by block without a copy of all rows."""
    rows, counts = np.unique(index, return_counts=True)
    weights = (counts / counts.sum()).astype(np.float64)
    if len(rows) <= vectors.shape[1]:
        chosen, inverse_norms = _unit_float64(vectors[rows])
        eigenvalues = _primal_eigenvalues(chosen, weights, inverse_norms)
    else:
        eigenvalues = _dual_eigenvalues(vectors, weights, rows)
    return vendi_score_from_eigenvalues(eigenvalues, orders)


def vendi_statistic(vectors: np.ndarray, index: np.ndarray) -> UnitStatistic:
    """Vendi (q = 1) of resampled responses (``dialeval evaluate --ci``), exactly, from the
    embeddings the run read (``vectors[index[u]]`` is response ``u``'s vector): a resample drawing
    response ``u`` ``c_u`` times is the multiset of its rows, scored as the metric scores it."""
    index = np.asarray(index)

    def evaluate(counts: np.ndarray) -> np.ndarray:
        values = np.full(len(counts), np.nan)
        for row, drawn in enumerate(np.rint(counts).astype(np.int64)):
            if drawn.sum() > 0:
                occurrences = np.repeat(index, drawn)
                values[row] = _score_occurrences(vectors, occurrences, [1.0])["vendi_score"]
        return values

    return UnitStatistic(
        len(index),
        evaluate,
        "recomputed on each resample from the embeddings of the one pass",
        "no response in the resample",
    )


# --------------------------------------------------------------------------------------------
# from texts


def vendi_score(
    predictions: list[str] | list[list[str]],
    model: StrPath | SentenceEncoder = DEFAULT_SENTENCE_MODEL,
    orders: float | str | Sequence[float | str] = (1,),
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    scope: str | None = None,
    progress: Progress | None = None,
    allow_empty: bool = False,
    backend: str | None = None,
) -> dict:
    """Vendi Score of response sets (per set, then the mean) or of a corpus (one score).

    Args:
        predictions: ``list[list[str]]`` (one response set per context) or ``list[str]`` (a corpus).
        model: sentence-transformers id or directory, or a loaded model with ``encode``; default
            the embedded ``sentence-transformers/all-MiniLM-L6-v2`` (works offline).
        orders: orders ``q`` to report (numbers ``>= 0`` or ``'inf'``); default ``(1,)``.
        batch_size, device, dtype, backend: passed to the sentence encoder.
        scope: ``None`` (from the nesting), ``"response_set"`` or ``"corpus"``. ``"corpus"`` with
            response sets pools every response of every set into one corpus; ``"response_set"``
            with a flat list scores it as a single response set.
        progress: called with the number of texts of each batch the sentence model encodes
            (e.g. ``tqdm.update``); inside a ``dialeval evaluate`` job texts encoded by another
            metric on the same model are not encoded again.
        allow_empty: accept empty and whitespace-only responses (embedded as the model embeds them).

    Returns:
        ``{"scope": ..., "vendi_score": ..., "vendi_score_q{q}": ...}`` plus ``num_sets`` and
        ``per_set`` (one dict of scores per set, input order; the top-level scores are their means)
        for response sets, or ``num_responses`` for a corpus.
    """
    orders = check_orders(orders)
    nesting = split_scope(predictions, "predictions")
    if scope is None:
        scope = "response_set" if nesting == "sets" else "corpus"
    elif scope not in SCOPES:
        raise ArgumentError("scope", f"must be None, 'response_set' or 'corpus', got {scope!r}")

    if nesting == "sets":
        response_sets = check_response_sets(predictions, "predictions", allow_empty=allow_empty)
    else:
        corpus = check_corpus(predictions, "predictions", allow_empty=allow_empty)
        response_sets = [corpus]
    if scope == "corpus":
        response_sets = [[text for response_set in response_sets for text in response_set]]

    flat = [text for response_set in response_sets for text in response_set]
    # Normalized a set (or a chunk of a corpus) at a time: a corpus never holds a second copy of its
    # vectors.
    vectors, index = sentence_vectors(
        flat, model, batch_size, device, dtype, progress=progress, backend=backend
    )
    per_set, start = [], 0
    for response_set in response_sets:
        per_set.append(
            _score_occurrences(vectors, index[start : start + len(response_set)], orders)
        )
        start += len(response_set)

    if scope == "corpus":
        return {"scope": "corpus", **per_set[0], "num_responses": len(flat)}
    means = {key: float(np.mean([scores[key] for scores in per_set])) for key in per_set[0]}
    return {"scope": "response_set", **means, "num_sets": len(per_set), "per_set": per_set}
