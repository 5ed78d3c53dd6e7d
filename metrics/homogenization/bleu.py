"""BLEU of every text against all the others, as evaluate's ``bleu`` module computes it, in bulk.

For each text ``i`` the ``diversity`` package calls ``evaluate.load("bleu").compute(predictions=
others, references=[[text_i]] * (n - 1))``: one corpus BLEU (tensorflow/nmt's ``compute_bleu``,
``max_order=4``, no smoothing) of the ``n - 1`` other texts as hypotheses with text ``i`` as the
single reference of each, on sacrebleu's ``13a`` tokens. That is::

    p_k   = sum_{j != i} clip_k(j, i) / sum_{j != i} max(len_j - k + 1, 0)      (0 if no k-gram)
    BLEU_i = exp(mean_k log p_k) * BP,   0 when some p_k is 0,
    BP    = min(1, exp(1 - (n - 1) len_i / sum_{j != i} len_j))

with ``clip_k(j, i) = sum_g min(count_j(g), count_i(g))`` over the k-grams ``g``. The clipped
matches of every text against every other come at once from sparse n-gram count matrices,
``min(a, b) = sum_{t >= 1} [a >= t][b >= t]``: for each order and threshold ``t`` the binary
matrix ``B_t = [C >= t]`` gives ``sum_j m_j min(C[j], C[i]) = (B_t B_t^T m)[i]`` summed over
``t``, computed as ``B_t (B_t^T m)`` so that no ``n x n`` matrix is ever built (linear time and
memory in the number of n-grams). Texts with the same tokens are scored once and weighted by
their multiplicity ``m``.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

import numpy as np

MAX_ORDER = 4

# sacrebleu's TokenizerRegexp (mteval-v13a), as vendored in evaluate's
# metrics/bleu/tokenizer_13a.py.
_13A_RULES = (
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),  # punctuation and symbols
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),  # period and comma unless preceded by a digit
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),  # period and comma unless followed by a digit
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),  # dash preceded by a digit
)


@lru_cache(maxsize=1 << 16)
def tokenize_13a(line: str) -> tuple[str, ...]:
    """evaluate's ``Tokenizer13a()(line)`` (sacrebleu's ``13a``), as a tuple."""
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = (
            line.replace("&quot;", '"')
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
        )
    line = f" {line} "
    for pattern, replacement in _13A_RULES:
        line = pattern.sub(replacement, line)
    return tuple(line.split())


def distinct_token_sequences(texts: list[str]) -> tuple[list[tuple[str, ...]], np.ndarray]:
    """The distinct ``13a`` tokenizations of ``texts`` (first-seen order) and how often each
    occurs."""
    counts: dict[tuple[str, ...], int] = {}
    for text in texts:
        tokens = tokenize_13a(text)
        counts[tokens] = counts.get(tokens, 0) + 1
    return list(counts), np.array(list(counts.values()), dtype=np.float64)


def clipped_match_sums(units: list[tuple[str, ...]], counts: np.ndarray, order: int) -> np.ndarray:
    """``sum_j m_j clip_order(j, i)`` for every unit ``i`` (``j`` over all units, ``i``
    included)."""
    # scipy: deferred to the one path that needs it
    from scipy import sparse

    ngram_ids: dict[tuple[str, ...], int] = {}
    rows, columns = [], []
    for row, tokens in enumerate(units):
        for start in range(len(tokens) - order + 1):
            rows.append(row)
            columns.append(ngram_ids.setdefault(tokens[start : start + order], len(ngram_ids)))
    if not rows:
        return np.zeros(len(units))
    ngram_counts = sparse.csr_matrix(
        (np.ones(len(rows), dtype=np.int32), (rows, columns)), shape=(len(units), len(ngram_ids))
    )
    ngram_counts.sum_duplicates()
    sums = np.zeros(len(units))
    for threshold in range(1, int(ngram_counts.data.max()) + 1):
        reaching = (ngram_counts >= threshold).astype(np.float64)
        sums += reaching @ (reaching.T @ counts)
    return sums


def bleu_against_each(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each distinct tokenization's BLEU as the reference of all the other texts, and its
    multiplicity.

    A reference or hypotheses without any token score 0 (evaluate's module divides by zero there).
    """
    units, counts = distinct_token_sequences(texts)
    size = counts.sum()
    lengths = np.array([len(tokens) for tokens in units], dtype=np.float64)
    hypothesis_length = counts @ lengths - lengths
    log_precision_sum = np.zeros(len(units))
    some_zero = np.zeros(len(units), dtype=bool)
    for order in range(1, MAX_ORDER + 1):
        ngrams_of = np.maximum(lengths - order + 1, 0)
        # less each text against itself
        matches = clipped_match_sums(units, counts, order) - ngrams_of
        possible = counts @ ngrams_of - ngrams_of
        with np.errstate(invalid="ignore", divide="ignore"):
            precision = np.where(possible > 0, matches / possible, 0.0)
            some_zero |= precision <= 0
            log_precision_sum += np.where(precision > 0, (1.0 / MAX_ORDER) * np.log(precision), 0.0)
    scores = np.zeros(len(units))
    for unit in np.flatnonzero(~some_zero & (lengths > 0)):
        ratio = hypothesis_length[unit] / ((size - 1) * lengths[unit])
        brevity_penalty = 1.0 if ratio > 1.0 else math.exp(1 - 1.0 / ratio)
        scores[unit] = math.exp(log_precision_sum[unit]) * brevity_penalty
    return scores, counts
