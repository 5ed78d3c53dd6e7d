"""A corpus's compression ratio on resamples, approximately, for ``dialeval evaluate --ci``.

Recompressing every resample costs a full gzip pass each (about as long as the run, per
resample). Instead each response gets its share of the corpus's compressed size: the DEFLATE
bytes it adds when the corpus is compressed in input order with a sync flush after each response
(so its repeats of earlier text are counted as the run counts them), scaled so that the shares
sum to the corpus's gzip size. A resample's ratio is its bytes over its responses' shares; all
ones give the figure itself.
"""

from __future__ import annotations

import zlib

import numpy as np

from dialeval.metrics.compression_ratio.scores import compression_ratio
from dialeval.resampling import UnitStatistic

#: How the figure is resampled.
METHOD = (
    "resample's bytes over its responses' shares of the corpus's compressed size (each "
    "response's DEFLATE output in input order; contexts fixed)"
)
#: gzip.compress's settings: DEFLATE at level 9 in a gzip container (window bits 16 + 15).
LEVEL, GZIP_WINDOW = 9, 31


def compression_statistic(responses: list[str]) -> UnitStatistic:
    """The gzip ratio of resampled ``responses`` (one unit per response)."""
    compressor = zlib.compressobj(LEVEL, zlib.DEFLATED, GZIP_WINDOW)
    shares = np.zeros(len(responses))
    sizes = np.zeros(len(responses))
    for position, response in enumerate(responses):
        # each response with the space that joins it to the one before (the run's " ".join)
        piece = (response if position == 0 else " " + response).encode("utf-8")
        sizes[position] = len(piece)
        shares[position] = len(compressor.compress(piece)) + len(
            compressor.flush(zlib.Z_SYNC_FLUSH)
        )
    # scaled to the run's gzip size (its ratio is bytes / compressed bytes)
    whole = len(" ".join(responses).encode("utf-8"))
    shares *= whole / compression_ratio(responses, allow_empty=True) / shares.sum()
    # a response's bytes with one joining space: a resample of r responses joins with r - 1
    spaced = sizes + (np.arange(len(responses)) == 0)

    def evaluate(counts: np.ndarray) -> np.ndarray:
        drawn = counts.sum(axis=1)
        compressed = counts @ shares
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(drawn > 0, (counts @ spaced - 1) / compressed, np.nan)

    return UnitStatistic(
        len(responses), evaluate, METHOD, "no response in the resample", exact=False
    )
