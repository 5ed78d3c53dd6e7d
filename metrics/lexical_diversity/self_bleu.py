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
``g``, its largest count over the corpus, which response holds it, and the second largest count
(equal to the largest on a tie): ``max_{j != i}`` is then O(1). NLTK's closest reference length
(closest to the hypothesis length, ties toward the shorter) over the other responses' lengths is
found by bisection in the sorted length array with one occurrence of the hypothesis's own length
left out. The remaining arithmetic is NLTK's, step by step (``nltk/translate/bleu_score.py``):
modified precision ``sum(clipped) / max(1, #hypothesis n-grams)``; a score of 0 when the
unigram numerator is 0; method1 replaces a zero-numerator precision by ``(0 + 0.1) / denominator``;
``bp * exp(fsum(w * log(p)))`` with ``bp = 1`` if ``hyp_len > ref_len``, ``0`` if ``hyp_len == 0``,
else ``exp(1 - ref_len / hyp_len)``. So the result equals the naive NLTK loop to the last bit
in practice (the tests check 1e-12) in O(total n-grams + N log N).
"""
from __future__ import annotations

import math
from bisect import bisect_left, bisect_right

from dialeval.metrics.lexical_diversity.corpus import tokenize_corpus
from dialeval.validation import check_corpus, check_flag

_EPSILON = 0.1  # SmoothingFunction().method1's default epsilon


def _check_max_n(max_n: object) -> None:
    if isinstance(max_n, bool) or not isinstance(max_n, int) or max_n < 1:
        raise ValueError(f"`max_n` must be a positive int, got {max_n!r}")


def _closest_other_length(sorted_lengths: list[int], hyp_len: int) -> int:
    """NLTK's ``closest_ref_length`` over the corpus lengths minus one occurrence of ``hyp_len``."""
    low = bisect_left(sorted_lengths, hyp_len)
    high = bisect_right(sorted_lengths, hyp_len)
    if high - low >= 2:  # another response has exactly the hypothesis's length
        return hyp_len
    below = sorted_lengths[low - 1] if low > 0 else None  # largest other length < hyp_len
    above = sorted_lengths[high] if high < len(sorted_lengths) else None  # smallest other > hyp_len
    if below is None:
        return above
    if above is None:
        return below
    # min(key=(abs(r - hyp_len), r)): ties go to the shorter length.
    return below if hyp_len - below <= above - hyp_len else above


def _ngram_counts(tokens: tuple[str, ...], n: int) -> dict:
    counts: dict = {}
    if len(tokens) >= n:
        grams = zip(*(tokens[k:] for k in range(n))) if n > 1 else tokens
        get = counts.get
        for gram in grams:
            counts[gram] = get(gram, 0) + 1
    return counts


def self_bleu(
    responses: list[str],
    max_n: int = 3,
    tokenizer="casual",
    allow_empty: bool = False,
    return_per_response: bool = False,
):
    """Self-BLEU of a corpus (Zhu et al. 2018, Texygen); see the module docstring.

    Args:
        responses: the corpus (``list[str]``, at least 2 responses).
        max_n: highest n-gram order; weights are uniform ``(1/max_n,) * max_n`` (Texygen: 3).
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
        raise ValueError(
            f"`responses` must hold at least 2 responses (Self-BLEU scores each against the others), "
            f"got {len(responses)}"
        )
    _check_max_n(max_n)
    token_lists = tokenize_corpus(responses, tokenizer)

    # Identical token sequences get identical scores: score each distinct one once.
    unique_index: dict[tuple[str, ...], int] = {}
    owner = [unique_index.setdefault(tokens, len(unique_index)) for tokens in token_lists]
    uniques = list(unique_index)
    multiplicity = [0] * len(uniques)
    for u in owner:
        multiplicity[u] += 1

    sorted_lengths = sorted(len(tokens) for tokens in token_lists)
    weight = 1 / max_n
    numerators = [[0] * max_n for _ in uniques]
    denominators = [[1] * max_n for _ in uniques]

    for order in range(1, max_n + 1):
        counts_per_unique = [_ngram_counts(tokens, order) for tokens in uniques]
        # n-gram -> [largest count, distinct response holding it, second largest count].
        # A distinct response present m >= 2 times holds its counts twice, so its own copy
        # makes the second largest equal to the largest.
        stats: dict = {}
        get = stats.get
        for u, counts in enumerate(counts_per_unique):
            repeated = multiplicity[u] >= 2
            for gram, count in counts.items():
                entry = get(gram)
                if entry is None:
                    stats[gram] = [count, u, count if repeated else 0]
                elif count > entry[0]:
                    entry[2] = count if repeated else entry[0]
                    entry[0] = count
                    entry[1] = u
                elif count > entry[2]:
                    entry[2] = count
        for u, counts in enumerate(counts_per_unique):
            clipped = 0
            for gram, count in counts.items():
                largest, holder, second = stats[gram]
                other_max = second if holder == u else largest
                clipped += count if count < other_max else other_max
            numerators[u][order - 1] = clipped
            denominators[u][order - 1] = max(1, len(uniques[u]) - order + 1)

    unique_scores = []
    for u, tokens in enumerate(uniques):
        p_numerators = numerators[u]
        if p_numerators[0] == 0:
            unique_scores.append(0.0)
            continue
        hyp_len = len(tokens)
        ref_len = _closest_other_length(sorted_lengths, hyp_len)
        if hyp_len > ref_len:
            bp = 1
        elif hyp_len == 0:
            bp = 0
        else:
            bp = math.exp(1 - ref_len / hyp_len)
        log_terms = []
        for numerator, denominator in zip(p_numerators, denominators[u]):
            # nltk: float(Fraction(num, den)) is int true division; method1 for a zero numerator.
            p = numerator / denominator if numerator != 0 else (numerator + _EPSILON) / denominator
            log_terms.append(weight * math.log(p))
        unique_scores.append(bp * math.exp(math.fsum(log_terms)))

    per_response = [unique_scores[u] for u in owner]
    score = sum(per_response) / len(per_response)  # Texygen: sum(bleu) / len(bleu)
    if return_per_response:
        return score, per_response
    return score
