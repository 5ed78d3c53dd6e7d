"""ROUGE-L F-measure over every pair of texts, as Google's ``rouge_score`` computes it, in bulk.

``rouge_score`` (0.1.2, ``RougeScorer(["rougeL"], use_stemmer)``) tokenizes a text by lowercasing
it, replacing every run of characters outside ``[a-z0-9]`` by a space, optionally stemming the
tokens longer than 3 characters with NLTK's ``PorterStemmer()`` and splitting; the F-measure of a
pair is ``2PR / (P + R)`` with ``P = LCS / len(prediction)`` and ``R = LCS / len(target)``, i.e.
``2 LCS / (len(a) + len(b))``, symmetric in the pair, and 0 when either text has no token.

Instead of a Python dynamic programme per pair, each distinct token becomes one code point and
the LCS of every pair comes from ``rapidfuzz.process.cdist`` with the bit-parallel
``LCSseq.similarity`` (C++), row block by row block, so memory stays ``O(block x distinct)``.
Texts with the same tokens are scored once and weighted by how often they occur.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    from nltk.stem.porter import PorterStemmer

    from dialeval.type_aliases import Progress

_NON_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")
_VALID_TOKEN = re.compile(r"^[a-z0-9]+$")
# Elements of one (rows x distinct) block of LCS lengths.
_BLOCK_ELEMENTS = 1 << 22
# Python strings may not hold the surrogate code points as text a C++ scorer reads reliably.
_SURROGATES = range(0xD800, 0xE000)


@lru_cache(maxsize=1)
def _porter_stemmer() -> PorterStemmer:
    # nltk: importing it loads scikit-learn, scipy and pandas; only this path needs it
    from nltk.stem import porter

    return porter.PorterStemmer()  # rouge_score's tokenizers.DefaultTokenizer's stemmer


@lru_cache(maxsize=1 << 16)
def _stem(token: str) -> str:
    return _porter_stemmer().stem(token)


def rouge_tokens(text: str, use_stemmer: bool = False) -> list[str]:
    """``rouge_score.tokenize.tokenize(text, stemmer)``: the tokens ROUGE-L compares."""
    if not isinstance(text, str):
        raise ArgumentError("text", f"must be a string, got {type(text).__name__}")
    tokens = _NON_ALPHANUMERIC.sub(" ", text.lower()).split()
    if use_stemmer:
        tokens = [_stem(token) if len(token) > 3 else token for token in tokens]
    return [token for token in tokens if _VALID_TOKEN.match(token)]


def _code_point(index: int) -> str:
    return chr(index + len(_SURROGATES) if index >= _SURROGATES.start else index)


def encode_units(
    texts: list[str], use_stemmer: bool
) -> tuple[list[str] | list[list[int]], np.ndarray, np.ndarray]:
    """The distinct token sequences of ``texts`` as code-point strings (one code point per distinct
    token; lists of ints beyond the code-point range), their lengths and their multiplicities."""
    vocabulary: dict[str, int] = {}
    tokens_of_text: dict[str, tuple[int, ...]] = {}
    counts: dict[tuple[int, ...], int] = {}
    for text in texts:
        ids = tokens_of_text.get(text)
        if ids is None:
            ids = tuple(
                vocabulary.setdefault(token, len(vocabulary))
                for token in rouge_tokens(text, use_stemmer)
            )
            tokens_of_text[text] = ids
        counts[ids] = counts.get(ids, 0) + 1
    units = list(counts)
    if len(vocabulary) + len(_SURROGATES) <= 0x10FFFF:
        sequences: list[str] | list[list[int]] = [
            "".join(_code_point(index) for index in ids) for ids in units
        ]
    else:  # more distinct tokens than code points: rapidfuzz hashes lists of ints instead
        sequences = [list(ids) for ids in units]
    lengths = np.array([len(ids) for ids in units], dtype=np.float64)
    return sequences, lengths, np.array([counts[ids] for ids in units], dtype=np.float64)


def rouge_l_pair_sum(
    texts: list[str], use_stemmer: bool = False, workers: int = 1, progress: Progress | None = None
) -> float:
    """``sum_{i != j} F_L(texts[i], texts[j])`` over the ordered pairs of distinct positions.

    ``progress(k)`` is called after each block of ``k`` distinct token sequences.
    """
    # rapidfuzz: deferred to the one path that needs it
    from rapidfuzz.distance import LCSseq
    from rapidfuzz.process import cdist

    sequences, lengths, counts = encode_units(texts, use_stemmer)
    rows = max(1, _BLOCK_ELEMENTS // len(sequences))
    total = 0.0
    for start in range(0, len(sequences), rows):
        stop = min(start + rows, len(sequences))
        lcs = cdist(
            sequences[start:stop],
            sequences,
            scorer=LCSseq.similarity,
            dtype=np.int32,
            workers=workers,
        )
        denominator = lengths[start:stop, None] + lengths[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            fmeasure = np.where(lcs > 0, 2.0 * lcs / denominator, 0.0)
        total += float(counts[start:stop] @ fmeasure @ counts)
        if progress is not None:
            progress(stop - start)
    # Each position against itself (F = 1 for a text with tokens) is not a pair.
    return total - float(counts @ (lengths > 0))


def rouge_l_per_response(texts: list[str], use_stemmer: bool = False) -> np.ndarray:
    """Each text's mean ROUGE-L F-measure with every other position of ``texts`` (their mean is
    ``rouge_l_pair_sum / (n (n - 1))``), for ``dialeval evaluate --ci``."""
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
    units: dict[tuple[str, ...], int] = {}
    unit = [units.setdefault(tuple(rouge_tokens(t, use_stemmer)), len(units)) for t in texts]
    return sums[unit] / (len(texts) - 1)
