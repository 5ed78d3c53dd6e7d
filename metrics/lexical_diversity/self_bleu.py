"""Corpus-scope Self-BLEU (Zhu et al. 2018, "Texygen: A Benchmarking Platform for Text
Generation Models", SIGIR; ``geek-ai/Texygen`` ``utils/metrics/SelfBleu.py``).

Each response of the corpus in turn is the hypothesis and *all other* responses are its
references; its score is NLTK's ``sentence_bleu`` with uniform weights ``(1/max_n,) * max_n``
and ``SmoothingFunction().method1``; Self-BLEU is the plain mean of these scores. Higher
Self-BLEU means the responses repeat each other's n-grams: **less** diverse.

Choices:

* ``max_n=3`` by default, Texygen's default ``gram=3`` (Self-BLEU-3).
* Smoothing ``method1`` (a zero n-gram match count becomes ``0.1``), as in Texygen.
* Tokenization: NLTK's casual (tweet) tokenizer (the project's other corpus-scope lexical
  metrics use it); Texygen used ``nltk.word_tokenize``. A callable ``str -> list[str]`` can be
  given instead.
* Every response is scored against the whole rest of the corpus (Texygen's ``is_fast`` mode
  scores only the first 500 hypotheses; we do not subsample).

Exactness and speed. The naive loop calls ``sentence_bleu`` N times with N-1 references, i.e.
O(N^2) n-gram counting. Because the references of hypothesis ``i`` are all other responses,
NLTK's clipped count ``min(count_i(g), max_{j != i} count_j(g))`` only needs, for every n-gram
``g``, its largest count over the corpus, whether one response alone holds it, and the largest
count below it: ``max_{j != i}`` is then O(1). A response present two or more times is its own
reference, so its clipped counts are its counts.

The work runs on integer arrays (numpy), never on token strings or n-gram tuples:

1. Each distinct text is tokenized once into integer token ids
   (:func:`.corpus.distinct_token_ids`, the casual tokenizer's fast path) and scored once; a
   response's score is its text's.
2. Per order ``n``, :func:`.corpus.ngram_keys` gives every n-gram an int64 key. The
   (key, distinct text) pair of each n-gram occurrence is packed into one int64 (the keys ranked
   first where that could overflow) and sorted: the runs of equal values are each text's counts,
   grouped by n-gram. Per n-gram, ``numpy.maximum.reduceat`` / ``numpy.add.reduceat`` over its
   group give the largest count, how many texts hold it and the largest count below it. No
   count exceeds the largest, so ``max_{j != i}`` clips only the text holding the largest count
   alone (and present once), down to the largest count below; ``numpy.bincount`` sums what is
   clipped off per text, and the clipped count is the text's n-gram count minus that.
3. NLTK's closest reference length (closest to the hypothesis length, ties toward the shorter)
   over the other responses' lengths comes from the histogram of lengths: the hypothesis's own
   length when another response has it, else the nearest present length below or above.
4. The rest is NLTK's arithmetic, step by step (``nltk/translate/bleu_score.py``), on arrays
   where IEEE arithmetic gives the same bits as Python's: modified precision
   ``sum(clipped) / max(1, #hypothesis n-grams)`` (an int division, exact in float64); a score of
   0 when the unigram numerator is 0; method1 replaces a zero-numerator precision by
   ``(0 + 0.1) / denominator``; ``bp * exp(fsum(w * log(p)))`` with ``bp = 1`` if
   ``hyp_len > ref_len``, ``0`` if ``hyp_len == 0``, else ``exp(1 - ref_len / hyp_len)``. The
   transcendental functions and ``fsum`` stay Python's ``math`` (numpy's ``log`` / ``exp`` may
   differ in the last bit): ``log`` and the brevity ``exp`` once per distinct value, ``fsum`` and
   ``exp`` once per distinct text. The mean is Python's ``sum`` over the responses in order.

So the result equals the naive NLTK loop to the last bit in practice (the tests check 1e-12, and
``==`` against the former dict-of-tuples implementation) in O(T log T) time for T tokens of
the distinct texts, with memory a few int64 arrays of T (the tests bound the peak allocation at
150 bytes per token; the dict-of-tuples implementation took ~410).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal, overload

import numpy as np

from dialeval.metrics.lexical_diversity.corpus import KEY_LIMIT, distinct_token_ids, ngram_keys
from dialeval.metrics.lexical_diversity.order_bounds import computed_orders
from dialeval.validation import ArgumentError, check_corpus, check_flag, check_int

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from dialeval.type_aliases import WordTokenizer

_EPSILON = 0.1  # SmoothingFunction().method1's default epsilon
_FSUM_CHUNK = 1 << 16  # rows turned into Python floats at a time (bounded memory at 1M texts)


def _run_starts(values: np.ndarray) -> np.ndarray:
    """Indices where a run of equal values starts in ``values`` (non-empty)."""
    starts = np.empty(values.size, dtype=bool)
    starts[0] = True
    np.not_equal(values[1:], values[:-1], out=starts[1:])
    return np.flatnonzero(starts)


def _run_lengths(run_starts: np.ndarray, size: int) -> np.ndarray:
    """Lengths of the runs starting at ``run_starts`` in an array of ``size`` values."""
    lengths = np.empty(run_starts.size, dtype=np.int64)
    np.subtract(run_starts[1:], run_starts[:-1], out=lengths[:-1])
    lengths[-1] = size - run_starts[-1]
    return lengths


def _clipped_matches(
    n: int,
    keys: np.ndarray,
    starts: np.ndarray,
    key_bound: int,
    text_of_position: np.ndarray,
    lengths: np.ndarray,
    repeated: np.ndarray,
) -> np.ndarray:
    """Per distinct text ``i``, ``sum_g min(count_i(g), max_{j != i} count_j(g))`` over its n-grams.

    ``keys[starts]`` are the n-grams of order ``n`` of the distinct texts, in position order, as
    :func:`.corpus.ngram_keys` yields them; ``text_of_position`` says which text holds each token
    position, ``lengths`` the texts' token counts and ``repeated`` which texts are present two or
    more times in the corpus.
    """
    num_texts = lengths.size
    hypothesis_ngrams = np.maximum(lengths - (n - 1), 0)
    pairs = keys[starts]
    if pairs.size == 0:
        return hypothesis_ngrams
    if key_bound * num_texts >= KEY_LIMIT:
        _, pairs = np.unique(pairs, return_inverse=True)  # ranks, below pairs.size
    pairs *= num_texts
    pairs += text_of_position[: starts.size][starts]  # (n-gram, text), n-gram major
    pairs.sort()
    # Released as soon as used: at 1M texts each array here is ~45 MB.
    pair_starts = _run_starts(pairs)
    counts = _run_lengths(pair_starts, pairs.size)  # count_i(g), for each text i holding g
    pairs = pairs[pair_starts]
    del pair_starts
    pair_texts = np.empty(pairs.size, dtype=text_of_position.dtype)
    np.remainder(pairs, num_texts, out=pair_texts, casting="same_kind")
    pairs //= num_texts  # the n-gram of each (n-gram, text) pair
    key_starts = _run_starts(pairs)
    del pairs
    sizes = _run_lengths(key_starts, counts.size)
    largest = np.maximum.reduceat(counts, key_starts)
    at_top = counts == np.repeat(largest, sizes)
    alone = np.add.reduceat(at_top, key_starts, dtype=np.int64) == 1
    below_top = np.maximum.reduceat(np.where(at_top, 0, counts), key_starts)
    del key_starts, counts
    # No count exceeds the largest, so max_{j != i} = the largest clips nothing, except for the
    # text holding the largest count alone: the others' maximum is then the largest count below
    # it (0 when no other text has g). A text present 2+ times is its own reference: unclipped.
    # one per n-gram held alone at the top
    alone_texts = pair_texts[at_top & np.repeat(alone, sizes)]
    del pair_texts, at_top, sizes
    clipped_off = largest[alone] - below_top[alone]
    once = ~repeated[alone_texts]
    clipped_per_text = np.bincount(
        alone_texts[once], weights=clipped_off[once], minlength=num_texts
    )
    return hypothesis_ngrams - clipped_per_text.astype(np.int64)


def _closest_other_lengths(hyp_lengths: np.ndarray, length_counts: np.ndarray) -> np.ndarray:
    """NLTK's ``closest_ref_length`` for each hypothesis length, over the corpus's lengths
    (``length_counts[L]`` responses of ``L`` tokens) minus one occurrence of the hypothesis's."""
    present = np.flatnonzero(length_counts)  # ascending; every hypothesis length is among them
    at = np.searchsorted(present, hyp_lengths)
    below = present[np.maximum(at - 1, 0)]  # largest other length < hyp_len, where at > 0
    above = present[np.minimum(at + 1, present.size - 1)]  # smallest other > hyp_len, where any
    has_above = at + 1 < present.size
    # min(key=(abs(r - hyp_len), r)): ties go to the shorter length.
    take_below = (at > 0) & (~has_above | (hyp_lengths - below <= above - hyp_lengths))
    closest = np.where(take_below, below, above)
    return np.where(length_counts[hyp_lengths] >= 2, hyp_lengths, closest)


def _map_distinct(function: Callable[[float], float], values: np.ndarray) -> np.ndarray:
    """``function`` (a ``float -> float`` of Python's ``math``) of each value, called once per
    distinct value."""
    distinct, inverse = np.unique(values, return_inverse=True)
    return np.array([function(value) for value in distinct.tolist()], dtype=np.float64)[inverse]


def _exact_multiple(value: float, count: int) -> list[float]:
    """Floats summing exactly to ``count * value`` (``value * 2**b`` for each bit ``b`` of
    ``count``, each exact): ``math.fsum`` of them and other terms is ``fsum`` of ``count``
    copies."""
    return [math.ldexp(value, bit) for bit in range(count.bit_length()) if count >> bit & 1]


def _bleu_scores(
    numerators: np.ndarray, hyp_lengths: np.ndarray, ref_lengths: np.ndarray, max_n: int
) -> np.ndarray:
    """NLTK's ``sentence_bleu`` of each distinct text from its clipped matches per order
    (``numerators[i, n - 1]``), its length and its closest reference length; see the module
    docstring. ``numerators`` may hold fewer than ``max_n`` orders: the orders above are those
    above the longest text, with no n-gram (method1's precision ``0.1 / 1`` for every text),
    added in O(log) per text."""
    num_texts, computed = numerators.shape
    if computed == 0:  # every text is empty: BLEU 0
        return np.zeros(num_texts)
    weight = 1 / max_n
    log_terms = np.empty((num_texts, computed))
    for k in range(computed):
        numerator = numerators[:, k]
        denominator = np.maximum(hyp_lengths - k, 1)  # max(1, #hypothesis (k+1)-grams)
        # nltk: float(Fraction(num, den)) is int true division; method1 for a zero numerator.
        precision = np.where(numerator != 0, numerator / denominator, _EPSILON / denominator)
        log_terms[:, k] = weight * _map_distinct(math.log, precision)
    brevity = np.ones(num_texts)  # hyp_len > ref_len
    short = (hyp_lengths <= ref_lengths) & (hyp_lengths > 0)
    if short.any():
        brevity[short] = _map_distinct(math.exp, 1 - ref_lengths[short] / hyp_lengths[short])
    brevity[hyp_lengths == 0] = 0.0
    no_ngram_terms = tuple(_exact_multiple(weight * math.log(_EPSILON), max_n - computed))
    geometric_means = np.empty(num_texts)
    for start in range(0, num_texts, _FSUM_CHUNK):
        chunk = log_terms[start : start + _FSUM_CHUNK]
        # 1-D tolist: no list per row
        rows: Iterator[tuple[float, ...]] = zip(*(chunk[:, k].tolist() for k in range(computed)))
        if no_ngram_terms:
            rows = (row + no_ngram_terms for row in rows)
        geometric_means[start : start + chunk.shape[0]] = list(map(math.exp, map(math.fsum, rows)))
    scores = brevity * geometric_means
    scores[numerators[:, 0] == 0] = 0.0
    return scores


@overload
def self_bleu(
    responses: list[str],
    max_n: int = 3,
    tokenizer: str | WordTokenizer = "casual",
    allow_empty: bool = False,
    return_per_response: Literal[False] = False,
) -> float: ...


@overload
def self_bleu(
    responses: list[str],
    max_n: int = 3,
    tokenizer: str | WordTokenizer = "casual",
    allow_empty: bool = False,
    *,
    return_per_response: Literal[True],
) -> tuple[float, list[float]]: ...


@overload
def self_bleu(
    responses: list[str],
    max_n: int = 3,
    tokenizer: str | WordTokenizer = "casual",
    allow_empty: bool = False,
    *,
    return_per_response: bool,
) -> float | tuple[float, list[float]]: ...


def self_bleu(
    responses: list[str],
    max_n: int = 3,
    tokenizer: str | WordTokenizer = "casual",
    allow_empty: bool = False,
    return_per_response: bool = False,
) -> float | tuple[float, list[float]]:
    """Self-BLEU of a corpus (Zhu et al. 2018, Texygen); see the module docstring.

    Args:
        responses: the corpus (``list[str]``, at least 2 responses).
        max_n: highest n-gram order; weights are uniform ``(1/max_n,) * max_n`` (Texygen: 3).
            Orders above the longest response's token count have no n-gram and are not
            counted: each adds method1's ``log(0.1)`` term in O(1), so any positive int is accepted.
        tokenizer: ``"casual"`` (NLTK's casual tokenizer) or a callable ``str -> list[str]``.
        allow_empty: score ``""`` as a response without tokens (its BLEU is 0) instead of raising.
        return_per_response: also return each response's BLEU against the others.

    Returns:
        The mean BLEU in ``[0, 1]`` (higher = less diverse), or ``(mean, per_response)`` when
        ``return_per_response`` is true. Equal to averaging
        ``sentence_bleu(others, hyp, weights, smoothing_function=SmoothingFunction().method1)``.
    """
    responses = check_corpus(responses, "responses", allow_empty=allow_empty)
    return_per_response = check_flag(return_per_response, "return_per_response")
    if len(responses) < 2:
        raise ArgumentError(
            "responses",
            "must hold at least 2 responses (Self-BLEU scores each against the others), "
            f"got {len(responses)}",
        )
    max_n = check_int(max_n, "max_n")

    # Identical texts get identical scores: score each distinct text once.
    text_index: dict[str, int] = {}
    owner = np.fromiter(
        (text_index.setdefault(text, len(text_index)) for text in responses),
        dtype=np.int64,
        count=len(responses),
    )
    distinct = list(text_index)
    del text_index
    vocabulary_size, ids, lengths = distinct_token_ids(distinct, tokenizer, source=responses)
    del distinct
    multiplicity = np.bincount(owner, minlength=lengths.size)
    repeated = multiplicity >= 2

    text_index_type = np.int32 if lengths.size <= np.iinfo(np.int32).max else np.int64
    text_of_position = np.repeat(np.arange(lengths.size, dtype=text_index_type), lengths)
    # Orders above the longest text have no n-gram: not counted (see _bleu_scores).
    computed = computed_orders(max_n, int(lengths.max()) if lengths.size else 0)
    numerators = np.zeros((lengths.size, computed), dtype=np.int64)
    for n, keys, starts, key_bound in ngram_keys(ids, lengths, vocabulary_size, computed):
        numerators[:, n - 1] = _clipped_matches(
            n, keys, starts, key_bound, text_of_position, lengths, repeated
        )
    del ids, text_of_position
    ref_lengths = _closest_other_lengths(lengths, np.bincount(lengths, weights=multiplicity))
    text_scores = _bleu_scores(numerators, lengths, ref_lengths, max_n)

    per_response = text_scores[owner].tolist()
    score = sum(per_response) / len(per_response)  # Texygen: sum(bleu) / len(bleu)
    if return_per_response:
        return score, per_response
    return score
