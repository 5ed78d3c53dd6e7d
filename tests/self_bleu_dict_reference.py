"""Self-BLEU as dialeval computed it before the integer-array implementation (commit 856fbf0,
``metrics/lexical_diversity/self_bleu.py``: Python dicts of n-gram tuples per distinct response),
kept verbatim but for the docstrings, so that tests/metrics/test_self_bleu.py can check that the
array implementation returns exactly (``==``) the same floats.
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


def dict_self_bleu(
    responses: list[str],
    max_n: int = 3,
    tokenizer="casual",
    allow_empty: bool = False,
    return_per_response: bool = False,
):
    """The former ``self_bleu`` (same arguments and result)."""
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
                clipped += min(other_max, count)
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
