"""The functions :mod:`dialeval.metrics.self_repetition` exports; its docstring describes the
measure."""

from __future__ import annotations

import math
from collections import Counter

from dialeval.validation import check_corpus, check_int, check_response_sets, split_scope


def distinct_ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    """The distinct white-space n-grams of ``text`` (none when it is shorter than ``n``)."""
    tokens = text.split()
    if n > len(tokens):  # no n-gram; and no n-fold slicing for a huge n
        return set()
    return set(zip(*(tokens[offset:] for offset in range(n)), strict=False))


def self_repetition(texts: list[str], n: int = 4, allow_empty: bool = False) -> float:
    """``mean_i log(1 + sum over the distinct n-grams of text i of the number of other texts holding
    it)``.

    Args:
        texts: the responses (a corpus, or one response set).
        n: the n-gram order (4, as the package and Salkar et al.). A text shorter than ``n`` is
            skipped in O(1), so any positive int is accepted (every text then adds 0).
        allow_empty: accept empty and whitespace-only strings (no n-gram: they add 0).

    Raises:
        ValueError: ``texts`` is not a non-empty list of strings, or ``n`` is not a positive int.
    """
    n = check_int(n, "n")
    texts = check_corpus(texts, "texts", allow_empty=allow_empty)
    ngram_sets = [distinct_ngrams(text, n) for text in texts]
    documents: Counter[tuple[str, ...]] = Counter()
    for ngrams in ngram_sets:
        documents.update(ngrams)
    # math.fsum: the value does not depend on the order of the summation (the package's running
    # float sum differs from it by a few ulps at most).
    return math.fsum(
        math.log1p(sum(map(documents.__getitem__, ngrams)) - len(ngrams)) for ngrams in ngram_sets
    ) / len(texts)


def self_repetition_per_set(
    response_sets: list[list[str]], n: int = 4, allow_empty: bool = False
) -> list[float]:
    """:func:`self_repetition` of each response set (the other texts are those of the same set)."""
    n = check_int(n, "n")
    response_sets = check_response_sets(response_sets, "response_sets", allow_empty=allow_empty)
    return [self_repetition(responses, n, allow_empty) for responses in response_sets]


def self_repetition_scores(
    predictions: list[str] | list[list[str]], n: int = 4, allow_empty: bool = False
) -> dict:
    """The figures of the evaluate module: one corpus score for a flat list, or per set and their
    mean."""
    n = check_int(n, "n")
    if split_scope(predictions, "predictions") == "corpus":
        corpus = check_corpus(predictions, "predictions", allow_empty=allow_empty)
        return {
            "scope": "corpus",
            "self_repetition": self_repetition(corpus, n, allow_empty),
            "n": n,
            "num_responses": len(corpus),
        }
    sets = check_response_sets(predictions, "predictions", allow_empty=allow_empty)
    per_set = self_repetition_per_set(sets, n, allow_empty)
    return {
        "scope": "response_set",
        "self_repetition": math.fsum(per_set) / len(per_set),
        "n": n,
        "num_sets": len(per_set),
        "per_set": [{"self_repetition": value} for value in per_set],
    }


__all__ = ["self_repetition", "self_repetition_per_set", "self_repetition_scores"]
