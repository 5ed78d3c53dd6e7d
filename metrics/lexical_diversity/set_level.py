"""Set-level lexical diversity of Tevet & Berant (2021), §6.2.

Both metrics score one response set (the responses to one context) and average over n-gram
orders ``n ∈ {1, ..., 5}`` ("which we found to outperform any single choice of n", §6.2):

* averaged distinct-n: for each n, the number of distinct n-grams of the set divided by the
  number of n-grams (Li et al. 2016); 0 when the set has no n-gram of that order.
* n-gram cosine diversity ("cos-sim"): for each n, the §5 reduction
  ``-mean_{i>j} cos(c_i, c_j)`` over n-gram count vectors; a pair that shares no n-gram
  (including a response with no n-gram of that order) has similarity 0.

Tokenization, pair order and floating-point steps follow the authors' released code
(``GuyTevet/diversity-eval``: ``utils.lines_to_ngrams``, ``DistinctNgrams``,
``CosineSimilarity``, ``AveragedNgramDiversityMetric``), so the scores equal the released
``metric_AveragedDistinctNgrams`` / ``metric_AveragedCosineSimilarity`` columns to 3 decimals.

Both functions run the vectorized implementation of :mod:`.set_level_batch` on their one set
(one code path for one set and for many). It scores repeated responses (equal token lists) once,
weighted by multiplicity, so a set of 10,000 copies of one response costs what one response
costs; a set without repeats gets exactly the released pair loop's value.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dialeval.metrics.lexical_diversity.set_level_batch import check_orders, score_response_sets
from dialeval.text import get_tokenizer
from dialeval.validation import ArgumentError, check_int, check_response_set

if TYPE_CHECKING:
    from dialeval.type_aliases import WordTokenizer


def ngrams(tokens: list[str], n: int) -> list[tuple[str, ...]]:
    """The n-grams of one token list, in order (none when it is shorter than ``n``)."""
    if n > len(tokens):  # before range(n): a huge order costs nothing
        return []
    return list(zip(*(tokens[i:] for i in range(n))))


def averaged_distinct_n(
    responses: list[str],
    max_n: int = 5,
    min_n: int = 1,
    tokenizer: str | WordTokenizer = "tevet",
    allow_empty: bool = False,
) -> float:
    """Averaged distinct-n of one response set (Tevet & Berant 2021, §6.2).

    Args:
        responses: one response set (``list[str]``, at least one non-empty string).
        max_n, min_n: the n-gram orders averaged over (paper: 1..5). An order above the longest
            response's token count scores 0 and is not computed (O(1)): any max_n is accepted.
        tokenizer: ``"tevet"`` (default, the released tokenization), ``"casual"`` or a callable.
        allow_empty: score ``""`` as a response without n-grams instead of raising.

    Returns:
        The mean over n of ``#distinct n-grams / #n-grams``; in ``[0, 1]``, higher is more diverse.
    """
    responses = check_response_set(responses, "responses", allow_empty=allow_empty)
    min_n, max_n = check_orders(min_n, max_n)
    scores = score_response_sets(
        [responses], min_n, max_n, get_tokenizer(tokenizer, responses), cosine=False
    )
    return float(scores["averaged_distinct_n"][0])


def ngram_cosine_similarity(tokens_a: list[str], tokens_b: list[str], n: int) -> float:
    """Cosine between the n-gram count vectors of two token lists; 0 when they share no n-gram.

    Computed as ``scipy.spatial.distance.cosine`` does (``1 - clip(1 - uv/sqrt(uu*vv), 0, 2)``)
    so that values round exactly like the released scores.
    """
    check_int(n, "n")
    for name, tokens in (("tokens_a", tokens_a), ("tokens_b", tokens_b)):
        if (
            isinstance(tokens, (str, bytes))
            or not isinstance(tokens, Sequence)
            or not all(isinstance(token, str) for token in tokens)
        ):
            raise ArgumentError(name, f"must be a list of token strings, got {tokens!r:.60}")
    counts_a, counts_b = Counter(ngrams(tokens_a, n)), Counter(ngrams(tokens_b, n))
    return cosine_of_counts(counts_a, counts_b)


def cosine_of_counts(counts_a: Counter, counts_b: Counter) -> float:
    """Cosine of two n-gram count vectors, computed as ``scipy.spatial.distance.cosine`` does
    (Tevet's release)."""
    if len(counts_a) > len(counts_b):
        counts_a, counts_b = counts_b, counts_a
    dot = sum(count * counts_b[gram] for gram, count in counts_a.items() if gram in counts_b)
    if dot == 0:
        return 0.0
    norm_a = sum(count * count for count in counts_a.values())
    norm_b = sum(count * count for count in counts_b.values())
    distance = min(max(1.0 - dot / math.sqrt(norm_a * norm_b), 0.0), 2.0)
    return 1.0 - distance


def ngram_cosine_diversity(
    responses: list[str],
    max_n: int = 5,
    min_n: int = 1,
    tokenizer: str | WordTokenizer = "tevet",
    allow_empty: bool = False,
) -> float:
    """n-gram cosine diversity ("cos-sim") of one response set (Tevet & Berant 2021, §5 and §6.2).

    Args:
        responses: one response set with at least two responses (the metric compares pairs).
        max_n, min_n: the n-gram orders averaged over (paper: 1..5). An order above the longest
            response's token count scores 0 and is not computed (O(1)): any max_n is accepted.
        tokenizer: ``"tevet"`` (default), ``"casual"`` or a callable.
        allow_empty: score ``""`` as a response without n-grams instead of raising.

    Returns:
        The mean over n of ``-mean_{i>j} cos(c_i^n, c_j^n)``; in ``[-1, 0]``, higher is more
        diverse.

    Raises:
        ValueError: naming ``responses`` when its pairs of distinct responses would need more
            than the available memory (96 bytes a pair, :mod:`.pair_memory`), before allocating
            them.
    """
    responses = check_response_set(responses, "responses", min_size=2, allow_empty=allow_empty)
    min_n, max_n = check_orders(min_n, max_n)
    scores = score_response_sets(
        [responses], min_n, max_n, get_tokenizer(tokenizer, responses), argument="responses"
    )
    return float(scores["ngram_cosine_diversity"][0])
