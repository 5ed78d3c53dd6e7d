"""Corpus-scope lexical diversity: Dist-n, Ent-n and LF (Sem-Ent paper §2.2, §5.1, App. A.3).

Scope: one flat list holding every response a system generated (all contexts together).

* Dist-n (Li et al. 2016): distinct n-grams / all n-grams of the corpus.
* Ent-n (Serban et al. 2017; Zhang et al. 2018): Shannon entropy, in bits, of the corpus's
  n-gram frequency distribution (the released code uses ``np.log2``).
* LF (Li et al. 2019): the share of generated tokens that are low-frequency, i.e. whose count in a
  reference corpus is at most ``threshold`` (100 by default; App. A.3).

Tokenization is NLTK's casual tokenizer, case preserved, as App. A.3 and the released code
(``hyperconnect/sem-ent``, ``codes/utils/{dist,ent,low_frequency}.py``) do. n-grams never cross
response boundaries. Every distinct response is tokenized once and all orders are counted in
one pass: tokens become integer ids and the n-grams of order n are ranked with ``numpy.unique``
on the pair (rank of the (n-1)-gram, next token id).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import numpy as np

from dialeval.text import casual_tokenize_many, get_tokenizer
from dialeval.validation import check_corpus


def _check_order(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"`{name}` must be a positive int, got {value!r}")


def tokenize_corpus(responses: list[str], tokenizer="casual", num_workers: int | None = None) -> list[tuple[str, ...]]:
    """Tokenize every response (each distinct text once, in parallel for large corpora, for "casual")."""
    if isinstance(tokenizer, str) and tokenizer == "casual":
        return casual_tokenize_many(responses, num_workers)
    tokenize = get_tokenizer(tokenizer)
    return [tuple(tokenize(response)) for response in responses]


def ngram_count_arrays(token_lists: list[tuple[str, ...]], max_n: int) -> dict[int, np.ndarray]:
    """For each order ``1..max_n``, the counts of the corpus's distinct n-grams (order arbitrary)."""
    vocabulary: dict[str, int] = {}
    lookup = vocabulary.setdefault
    flat_ids = np.fromiter(
        (lookup(token, len(vocabulary)) for tokens in token_lists for token in tokens), dtype=np.int64
    )
    lengths = np.fromiter((len(tokens) for tokens in token_lists), dtype=np.int64, count=len(token_lists))
    total = int(lengths.sum())
    # Position of every token inside its response, and the length of that response.
    response_length = np.repeat(lengths, lengths)
    position = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    tokens_left = response_length - position  # n-gram of order n can start here iff tokens_left >= n

    counts: dict[int, np.ndarray] = {}
    rank = flat_ids  # rank of the n-gram starting at each position (valid where tokens_left >= n)
    vocabulary_size = max(len(vocabulary), 1)
    for n in range(1, max_n + 1):
        starts = np.flatnonzero(tokens_left >= n)
        if n == 1:
            keys = flat_ids
        else:
            keys = rank[starts] * vocabulary_size + flat_ids[starts + n - 1]
        if keys.size == 0:
            counts[n] = np.zeros(0, dtype=np.int64)
            continue
        _, inverse, counts[n] = np.unique(keys, return_inverse=True, return_counts=True)
        rank = np.full(total, -1, dtype=np.int64)
        rank[starts] = inverse
    return counts


def _distinct(counts: np.ndarray) -> float:
    total = int(counts.sum())
    return counts.size / total if total else 0.0


def _entropy(counts: np.ndarray) -> float:
    total = int(counts.sum())
    if total == 0:
        return 0.0
    probabilities = counts / total
    return float(-(probabilities * np.log2(probabilities)).sum())


def corpus_ngram_diversity(
    responses: list[str], max_n: int = 3, tokenizer="casual", allow_empty: bool = False, num_workers: int | None = None
) -> dict[str, float]:
    """Dist-1..max_n and Ent-1..max_n of a corpus in one pass.

    ``num_workers``: tokenizing processes (default: all cores from 100k distinct responses on).

    Returns:
        ``{"distinct_1": ..., "entropy_1": ..., ..., "num_tokens": ...}``. A corpus without
        n-grams of some order scores 0 on it (the released code would divide by zero).
    """
    responses = check_corpus(responses, "responses", allow_empty=allow_empty)
    _check_order("max_n", max_n)
    counts = ngram_count_arrays(tokenize_corpus(responses, tokenizer, num_workers), max_n)
    result: dict[str, float] = {}
    for n in range(1, max_n + 1):
        result[f"distinct_{n}"] = _distinct(counts[n])
        result[f"entropy_{n}"] = _entropy(counts[n])
    result["num_tokens"] = int(counts[1].sum())
    return result


def distinct_n(responses: list[str], n: int = 1, tokenizer="casual", allow_empty: bool = False) -> float:
    """Dist-n of a corpus: distinct n-grams / all n-grams (Li et al. 2016). In [0, 1]."""
    _check_order("n", n)
    return corpus_ngram_diversity(responses, max_n=n, tokenizer=tokenizer, allow_empty=allow_empty)[f"distinct_{n}"]


def entropy_n(responses: list[str], n: int = 1, tokenizer="casual", allow_empty: bool = False) -> float:
    """Ent-n of a corpus: entropy in bits of its n-gram distribution (Zhang et al. 2018)."""
    _check_order("n", n)
    return corpus_ngram_diversity(responses, max_n=n, tokenizer=tokenizer, allow_empty=allow_empty)[f"entropy_{n}"]


def token_counts(texts: list[str], tokenizer="casual") -> Counter:
    """Token frequencies of a reference corpus, for :func:`lf`'s ``reference``."""
    texts = check_corpus(texts, "texts", allow_empty=True)
    counts: Counter = Counter()
    for tokens in tokenize_corpus(texts, tokenizer):
        counts.update(tokens)
    return counts


def _check_frequencies(reference: Mapping) -> Mapping:
    """A {token: count} mapping: string tokens, counts finite non-negative numbers (a count of
    NaN or a non-string token would silently count as rare)."""
    for token, count in reference.items():
        if not isinstance(token, str):
            raise ValueError(f"`reference` keys must be token strings, got {type(token).__name__}: {token!r:.60}")
        if isinstance(count, bool) or not isinstance(count, (int, float, np.integer, np.floating)) or not np.isfinite(count) or count < 0:
            raise ValueError(f"`reference[{token!r:.60}]` must be a non-negative count, got {count!r}")
    return reference


def lf(
    responses: list[str],
    reference: list[str] | Mapping[str, int] | None = None,
    threshold: int = 100,
    tokenizer="casual",
    allow_empty: bool = False,
) -> float:
    """Low-frequency token ratio, LF (Li et al. 2019; Sem-Ent paper App. A.3).

    Args:
        responses: the generated corpus.
        reference: where token frequencies come from: the training corpus as a list of texts, or a
            ready ``{token: count}`` mapping (see :func:`token_counts`). ``None`` counts the
            generated corpus itself, as the Sem-Ent released code (``LFCalculator``) does.
        threshold: a token is low-frequency when its count is ``<= threshold``. The paper says
            "less than 100"; the released code tests ``v <= 100``, which we follow.

    Returns:
        Low-frequency token occurrences / all token occurrences of ``responses`` (0 if none).
    """
    responses = check_corpus(responses, "responses", allow_empty=allow_empty)
    if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 0:
        raise ValueError(f"`threshold` must be a non-negative int, got {threshold!r}")
    generated = token_counts(responses, tokenizer)
    if reference is None:
        frequencies: Mapping[str, int] = generated
    elif isinstance(reference, Mapping):
        frequencies = _check_frequencies(reference)
    elif isinstance(reference, (list, tuple)):
        frequencies = token_counts(check_corpus(reference, "reference", allow_empty=allow_empty), tokenizer)
    else:
        raise ValueError(
            f"`reference` must be None, a list of reference texts or a {{token: count}} mapping, "
            f"got {type(reference).__name__}"
        )
    total = sum(generated.values())
    if total == 0:
        return 0.0
    low = sum(count for token, count in generated.items() if frequencies.get(token, 0) <= threshold)
    return low / total
