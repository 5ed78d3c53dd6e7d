"""Homogenization of a resampled corpus, approximately: each response keeps its mean similarity to
every other response of the whole corpus, and a resample averages those (an exact recomputation
is ``O(n^2)`` pairs per resample), for ``dialeval evaluate --ci``. Their mean over the corpus is
the figure itself."""

from __future__ import annotations

import numpy as np

from dialeval.metrics.homogenization.bleu import bleu_against_each, tokenize_13a
from dialeval.metrics.homogenization.rouge_l import _BLOCK_ELEMENTS, encode_units, rouge_tokens

#: How the figure is resampled.
METHOD = "mean of per-response homogenization against the whole corpus (the others fixed)"


def _first_seen(keys: list) -> np.ndarray:
    index: dict = {}
    return np.array([index.setdefault(key, len(index)) for key in keys], dtype=np.int64)


def rouge_l_per_response(texts: list[str], use_stemmer: bool = False) -> np.ndarray:
    """Each text's mean ROUGE-L F-measure with every other position of ``texts``."""
    # rapidfuzz: deferred to the one path that needs it
    from rapidfuzz.distance import LCSseq
    from rapidfuzz.process import cdist

    sequences, lengths, counts = encode_units(texts, use_stemmer)
    rows = max(1, _BLOCK_ELEMENTS // len(sequences))
    sums = np.zeros(len(sequences))
    for start in range(0, len(sequences), rows):
        stop = min(start + rows, len(sequences))
        lcs = cdist(sequences[start:stop], sequences, scorer=LCSseq.similarity, dtype=np.int32)
        denominator = lengths[start:stop, None] + lengths[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            fmeasure = np.where(lcs > 0, 2.0 * lcs / denominator, 0.0)
        sums[start:stop] = fmeasure @ counts
    sums -= lengths > 0  # a position against itself is not a pair
    unit = _first_seen([tuple(rouge_tokens(text, use_stemmer)) for text in texts])
    return sums[unit] / (len(texts) - 1)


def bleu_per_response(texts: list[str]) -> np.ndarray:
    """Each text's BLEU as the reference of all the other texts."""
    scores, _ = bleu_against_each(texts)
    return scores[_first_seen([tokenize_13a(text) for text in texts])]
