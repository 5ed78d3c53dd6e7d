"""The ``d x d`` Gram matrix of many weighted, normalized embedding rows, block by block.

``dual_gram`` sums ``s_u^2 e_u e_u^T`` over the rows ``e_u`` (``s_u``: the square root of the row's
weight, divided by its norm when normalizing) without a full-size scaled copy: each block of rows is
scaled into a buffer of a few MiB in the rows' own dtype (float32 embeddings: a float32 ``syrk``,
as ``vendi_score.score_dual`` multiplies) and its product is added to a float64 sum. The row norms
come from the same pass and are returned for the caller's checks.

Threads: a BLAS that splits one ``syrk`` between its threads makes every thread wait for the
slowest, so on a core that another process holds the whole product runs at that core's pace (on
the shared 2-core machine two BLAS threads took several times as long as one). Here the BLAS runs
one thread per call and as many workers as it had threads take the blocks as they go, so a busy
core only means fewer blocks done there. The BLAS's thread count is restored afterwards; another
thread of the process calling the BLAS meanwhile gets one thread too.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

from dialeval.distributed import usable_cores

if TYPE_CHECKING:
    from threadpoolctl import ThreadpoolController

#: Bytes of one block of rows: large enough for the BLAS's product to run at the pace of one call
#: on all rows, small next to a corpus (a worker holds one block and its scaled copy).
BLOCK_BYTES = 8 << 20
#: Fewest rows of a block, whatever the width: fewer make the per-call overhead of the BLAS show.
MIN_BLOCK_ROWS = 256
#: Partial sums the blocks go to (see :func:`dual_gram`): more than the workers, so that a worker
#: never waits for a lane while another lane has blocks left.
LANES = 8

__all__ = [
    "BLOCK_BYTES",
    "LANES",
    "MIN_BLOCK_ROWS",
    "blas_workers",
    "block_rows",
    "dual_gram",
    "row_norms",
]


def block_rows(width: int, itemsize: int) -> int:
    """Rows of one block of ``width`` values of ``itemsize`` bytes."""
    return max(MIN_BLOCK_ROWS, BLOCK_BYTES // max(width * itemsize, 1))


@functools.cache
def _blas_pools() -> ThreadpoolController:
    """The BLAS libraries loaded now (numpy's and scipy's), found once: a scan takes ~15 ms."""
    # threadpoolctl: scikit-learn's dependency, also declared by dialeval
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(user_api="blas")


@contextmanager
def blas_workers() -> Iterator[int]:
    """Yields how many workers to run: the BLAS's thread count (at most the usable cores); inside
    the ``with`` block the BLAS runs one thread per call."""
    pools = _blas_pools()
    threads = max((pool.num_threads for pool in pools.lib_controllers), default=1)
    if threads <= 1:
        yield 1
        return
    # limited even for one worker: a single-threaded product is the one the workers compute
    with pools.limit(limits=1):
        yield max(1, min(threads, usable_cores()))


def row_norms(block: np.ndarray) -> np.ndarray:
    """L2 norms of the rows, in float64; a float32 square sum that overflows is redone in float64
    (a non-finite norm then means a NaN or infinite value)."""
    norms = np.sqrt(np.einsum("ij,ij->i", block, block)).astype(np.float64)
    overflowed = ~np.isfinite(norms)
    if overflowed.any():
        norms[overflowed] = np.linalg.norm(block[overflowed].astype(np.float64), axis=1)
    return norms


def dual_gram(
    source: np.ndarray,
    weights: np.ndarray,
    index: np.ndarray | None = None,
    normalize: bool = True,
    workers: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """``sum_u s_u^2 e_u e_u^T`` (float64, ``d x d``) and the norms of the rows ``e_u``.

    Args:
        source: the rows (``m x d``), or the rows ``index`` picks from (``source[index]``).
        weights: one non-negative weight a row; ``s_u = sqrt(weights[u])``, divided by the row's
            norm when ``normalize``.
        index: the rows of ``source`` to use, in order (None: all).
        normalize: divide each row by its L2 norm.
        workers: threads taking the blocks (see :func:`blas_workers`).

    Products are in float64 for float64 rows and in float32 otherwise, summed in float64. A row
    whose norm is zero, NaN or infinite leaves non-finite values in the matrix: the caller checks
    the norms before using it.
    """
    count = len(source) if index is None else len(index)
    width = source.shape[1]
    dtype = np.dtype(np.float64 if source.dtype == np.float64 else np.float32)
    step = block_rows(width, dtype.itemsize)
    num_blocks = -(-count // step)
    norms = np.empty(count, dtype=np.float64)
    # Block b is summed into lane b % lanes, each lane in block order, and the lanes in lane order:
    # the same sums in the same order however many workers take the lanes (bit-equal figures).
    lanes = max(1, min(LANES, num_blocks))
    totals = [np.zeros((width, width), dtype=np.float64) for _ in range(lanes)]
    next_block = list(range(lanes))
    busy = [False] * lanes
    lock = threading.Lock()

    def take_lane() -> int | None:
        """The free lane furthest behind that has blocks left, marked busy (None: none)."""
        with lock:
            free = [
                lane for lane in range(lanes) if not busy[lane] and next_block[lane] < num_blocks
            ]
            if not free:
                return None
            lane = min(free, key=next_block.__getitem__)
            busy[lane] = True
            return lane

    def work() -> None:
        # a gathered block in the products' dtype is a copy of its own, scaled in place
        own_copy = index is not None and source.dtype == dtype
        scaled = None if own_copy else np.empty((step, width), dtype=dtype)
        product = np.empty((width, width), dtype=dtype)
        while (lane := take_lane()) is not None:
            start = next_block[lane] * step
            stop = min(start + step, count)
            block = source[start:stop] if index is None else source[index[start:stop]]
            norms[start:stop] = row_norms(block)
            rows = block if scaled is None else scaled[: stop - start]
            # zero or non-finite norms: the caller refuses the rows, so their warnings say nothing
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                scale = np.sqrt(weights[start:stop])
                if normalize:
                    scale /= norms[start:stop]
                np.multiply(block, scale.astype(dtype)[:, None], out=rows, casting="unsafe")
                # ``rows.T @ rows``: numpy calls the BLAS's syrk (half the multiplications)
                np.matmul(rows.T, rows, out=product)
                totals[lane] += product
            with lock:
                next_block[lane] += lanes
                busy[lane] = False

    runs = min(workers, lanes)
    if runs <= 1:
        work()
    else:
        with ThreadPoolExecutor(max_workers=runs, thread_name_prefix="vendi-gram") as pool:
            for future in [pool.submit(work) for _ in range(runs)]:
                future.result()
    return functools.reduce(np.add, totals), norms
