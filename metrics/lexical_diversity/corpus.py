"""Corpus-scope lexical diversity: Dist-n, Ent-n and LF (Sem-Ent paper §2.2, §5.1, App. A.3).

Scope: one flat list holding every response a system generated (all contexts together).

* Dist-n (Li et al. 2016): distinct n-grams / all n-grams of the corpus.
* Ent-n (Serban et al. 2017; Zhang et al. 2018): Shannon entropy, in bits, of the corpus's
  n-gram frequency distribution (the released code uses ``np.log2``).
* LF (Li et al. 2019): the share of generated tokens that are low-frequency, i.e. whose count in a
  reference corpus is at most ``threshold`` (100 by default; App. A.3).

Tokenization is NLTK's casual tokenizer, case preserved, as App. A.3 and the released code
(``hyperconnect/sem-ent``, ``codes/utils/{dist,ent,low_frequency}.py``) do. n-grams never cross
response boundaries. Every distinct response is tokenized once (into integer token ids,
:func:`dialeval.text.casual_token_ids`) and counted once, weighted by how often it occurs; the
n-grams of every order are counted by sorting integer keys (:func:`weighted_ngram_counts`).
Entropies are summed over the counts in ascending order, so the values do not depend on the
order of the responses or on the number of tokenizing processes.
"""

from __future__ import annotations

import numbers
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from dialeval.metrics.lexical_diversity.order_bounds import check_listed_orders, computed_orders
from dialeval.text import casual_token_ids, casual_tokenize_many, get_tokenizer
from dialeval.validation import ArgumentError, check_corpus, check_int

if TYPE_CHECKING:
    from collections.abc import Iterator

    from dialeval.type_aliases import ResponseSets, Texts, WordTokenizer


def tokenize_corpus(
    responses: list[str],
    tokenizer: str | WordTokenizer = "casual",
    num_workers: int | None = None,
    *,
    source: Texts | ResponseSets | None = None,
    argument: str = "responses",
) -> list[tuple[str, ...]]:
    """Tokenize every response (each distinct text once, in parallel for large corpora, for
    "casual").

    ``source`` / ``argument``: the user's texts and their argument name, to name a text a custom
    tokenizer gives bad output for (:func:`dialeval.text.get_tokenizer`); default ``responses``."""
    if isinstance(tokenizer, str) and tokenizer == "casual":
        return casual_tokenize_many(responses, num_workers)
    tokenize = get_tokenizer(tokenizer, responses if source is None else source, argument)
    return [tuple(tokenize(response)) for response in responses]


def _token_ids(token_lists: list[tuple[str, ...]]) -> tuple[int, np.ndarray, np.ndarray]:
    vocabulary: dict[str, int] = {}
    lookup = vocabulary.setdefault
    ids = np.fromiter(
        (lookup(token, len(vocabulary)) for tokens in token_lists for token in tokens),
        dtype=np.int64,
    )
    lengths = np.fromiter(
        (len(tokens) for tokens in token_lists), dtype=np.int64, count=len(token_lists)
    )
    return len(vocabulary), ids, lengths


#: Keys must stay below this to fit int64 (keys are built as ``key * vocabulary_size + id``).
KEY_LIMIT = 2**63


def _group_counts(
    keys: np.ndarray, weights: np.ndarray, key_bound: int, weight_bound: int
) -> np.ndarray:
    """Summed weight of each distinct key (``0 <= key < key_bound``, ``0 < weight < weight_bound``),
    ascending."""
    if weight_bound <= 2:  # every text occurs once: the group sizes of the sorted keys
        ordered = np.sort(keys)
        edges = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
        return np.sort(np.diff(np.concatenate(([0], edges, [ordered.size]))))
    if key_bound * weight_bound < KEY_LIMIT:  # the weight packed below the key: one sort
        ordered_keys, ordered_weights = np.divmod(
            np.sort(keys * weight_bound + weights), weight_bound
        )
        edges = np.flatnonzero(ordered_keys[1:] != ordered_keys[:-1]) + 1
        return np.sort(np.add.reduceat(ordered_weights, np.concatenate(([0], edges))))
    order = np.argsort(keys)  # integer sums: float bincount weights would round above 2**53
    ordered_keys = keys[order]
    edges = np.flatnonzero(ordered_keys[1:] != ordered_keys[:-1]) + 1
    return np.sort(np.add.reduceat(weights[order], np.concatenate(([0], edges))))


def ngram_keys(
    ids: np.ndarray, lengths: np.ndarray, vocabulary_size: int, max_n: int
) -> Iterator[tuple[int, np.ndarray, np.ndarray, int]]:
    """For each order ``n = 1..max_n``, yield ``(n, keys, starts, key_bound)``: ``keys[p]`` is the
    key of the n-gram starting at token position ``p`` (``0 <= key < key_bound``) where
    ``starts[p]`` is true, i.e. ``keys[starts]`` are the texts' n-grams in position order. The
    arrays are the generator's own: read them, do not change them.

    ``ids`` holds the token ids (``0 <= id < vocabulary_size``) of texts concatenated and
    ``lengths`` each text's token count; n-grams never cross text boundaries. The n-gram starting
    at position ``p`` gets the key ``key(n-1) * vocabulary_size + ids[p + n - 1]`` (a number in
    base ``vocabulary_size``; where that could overflow int64, the (n-1)-gram keys are first
    replaced by their ranks). Equal n-grams get equal keys within one order.
    """
    ids = np.asarray(ids, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    total = ids.size
    # Tokens left in its text from each position on: an n-gram starts at p iff tokens_left[p] >= n.
    tokens_left = np.repeat(lengths, lengths) - (
        np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    )
    vocabulary_size = max(int(vocabulary_size), 1)
    keys, key_bound = ids, vocabulary_size  # keys[p]: the n-gram starting at p (where there is one)
    for n in range(1, max_n + 1):
        if n > 1:
            if key_bound * vocabulary_size >= KEY_LIMIT:
                valid = tokens_left[: keys.size] >= n - 1
                ranks = np.zeros(keys.size, dtype=np.int64)
                _, ranks[valid] = np.unique(keys[valid], return_inverse=True)
                keys, key_bound = ranks, int(ranks.max()) + 1 if ranks.size else 1
            keys = keys[:-1] * vocabulary_size + ids[n - 1 :]
            key_bound *= vocabulary_size
        starts = tokens_left[: keys.size] >= n
        yield n, keys, starts, key_bound


def weighted_ngram_counts(
    ids: np.ndarray, lengths: np.ndarray, weights: np.ndarray, vocabulary_size: int, max_n: int
) -> dict[int, np.ndarray]:
    """For each order ``1..max_n``, the counts of the corpus's distinct n-grams, sorted ascending.

    ``ids``, ``lengths`` and ``vocabulary_size`` as :func:`ngram_keys` takes them; ``weights``
    (positive ints) says how many times each text occurs in the corpus. The counts come sorted so
    that the Ent-n sums run in one order whatever the order of the texts, tokens or worker
    processes.

    Keys are counted by sorting, each position's weight packed below its key so that one sort
    carries both: numpy sorts int64 about 8x faster than it argsorts them, which
    ``numpy.unique(return_inverse=True)`` and a weighted ``bincount`` need (measured on
    DailyDialog++'s 1M bigrams, benchmarks/RESULTS.md).
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    position_weights = np.repeat(np.asarray(weights, dtype=np.int64), lengths)
    weight_bound = int(position_weights.max()) + 1 if position_weights.size else 1
    counts: dict[int, np.ndarray] = {}
    for n, keys, starts, key_bound in ngram_keys(ids, lengths, vocabulary_size, max_n):
        if not starts.any():
            counts[n] = np.zeros(0, dtype=np.int64)
            continue
        counts[n] = _group_counts(
            keys[starts], position_weights[: starts.size][starts], key_bound, weight_bound
        )
    return counts


def distinct_token_ids(
    texts: list[str],
    tokenizer: str | WordTokenizer = "casual",
    num_workers: int | None = None,
    *,
    source: Texts | ResponseSets | None = None,
    argument: str = "responses",
) -> tuple[int, np.ndarray, np.ndarray]:
    """``(vocabulary_size, ids, lengths)`` of ``texts`` (pass distinct texts: each is tokenized as
    it is): their tokens concatenated as integer ids, and each text's token count. ``num_workers``
    as :func:`dialeval.text.casual_token_ids` takes it (the casual tokenizer only); ``source`` /
    ``argument`` as :func:`tokenize_corpus`."""
    if isinstance(tokenizer, str) and tokenizer == "casual":
        vocabulary, ids, lengths = casual_token_ids(texts, num_workers)
        return len(vocabulary), ids, lengths
    tokenize = get_tokenizer(tokenizer, texts if source is None else source, argument)
    return _token_ids([tuple(tokenize(text)) for text in texts])


def corpus_ngram_counts(
    responses: list[str],
    max_n: int,
    tokenizer: str | WordTokenizer = "casual",
    num_workers: int | None = None,
    listed_orders: str | None = None,
) -> dict[int, np.ndarray]:
    """:func:`weighted_ngram_counts` of a corpus: each distinct response tokenized and counted
    once, weighted by how often it occurs. Orders above the longest response (no n-gram) are
    not computed and get no entry: pass ``listed_orders``, the argument's name, to refuse
    instead a ``max_n`` above ``max(longest, 3)`` (:func:`.order_bounds.check_listed_orders`)."""
    multiplicity = Counter(responses)
    distinct = list(multiplicity)
    weights = np.fromiter(multiplicity.values(), dtype=np.int64, count=len(distinct))
    vocabulary_size, ids, lengths = distinct_token_ids(
        distinct, tokenizer, num_workers, source=responses
    )
    longest = int(lengths.max()) if lengths.size else 0
    if listed_orders is not None:
        check_listed_orders(listed_orders, max_n, longest, DEFAULT_MAX_N)
    return weighted_ngram_counts(
        ids, lengths, weights, vocabulary_size, computed_orders(max_n, longest)
    )


#: corpus_ngram_diversity's default order: always accepted, even on one-word corpora.
DEFAULT_MAX_N = 3

_NO_NGRAMS = np.zeros(0, dtype=np.int64)


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
    responses: list[str],
    max_n: int = DEFAULT_MAX_N,
    tokenizer: str | WordTokenizer = "casual",
    allow_empty: bool = False,
    num_workers: int | None = None,
) -> dict[str, float]:
    """Dist-1..max_n and Ent-1..max_n of a corpus in one pass.

    ``num_workers``: tokenizing processes for the casual tokenizer (default: every core, at most
    8, from :data:`dialeval.text.PARALLEL_MIN_TEXTS` distinct responses on; the calling process
    tokenizes one share itself).

    Returns:
        ``{"distinct_1": ..., "entropy_1": ..., ..., "num_tokens": ...}``. A corpus without
        n-grams of some order scores 0 on it (the released code would divide by zero).

    Raises:
        ValueError: ``max_n`` above ``max(L, 3)``, L the longest response's token count (the
            result lists every order, so a huge ``max_n`` would be the allocation; orders in
            ``L+1..3`` are listed as 0), checked after tokenizing and before counting.
    """
    responses = check_corpus(responses, "responses", allow_empty=allow_empty)
    max_n = check_int(max_n, "max_n")
    counts = corpus_ngram_counts(responses, max_n, tokenizer, num_workers, listed_orders="max_n")
    result: dict[str, float] = {}
    for n in range(1, max_n + 1):
        result[f"distinct_{n}"] = _distinct(counts.get(n, _NO_NGRAMS))
        result[f"entropy_{n}"] = _entropy(counts.get(n, _NO_NGRAMS))
    result["num_tokens"] = int(counts.get(1, _NO_NGRAMS).sum())
    return result


def _one_order(
    responses: list[str], n: int, tokenizer: str | WordTokenizer, allow_empty: bool
) -> np.ndarray:
    """The n-gram counts of order ``n`` only (none, in O(1), when ``n`` exceeds the longest
    response)."""
    n = check_int(n, "n")
    responses = check_corpus(responses, "responses", allow_empty=allow_empty)
    return corpus_ngram_counts(responses, n, tokenizer).get(n, _NO_NGRAMS)


def distinct_n(
    responses: list[str],
    n: int = 1,
    tokenizer: str | WordTokenizer = "casual",
    allow_empty: bool = False,
) -> float:
    """Dist-n of a corpus: distinct n-grams / all n-grams (Li et al. 2016). In [0, 1].

    0 for an ``n`` above the longest response's token count (no n-gram), found without counting
    orders up to ``n``: any positive ``n`` is accepted."""
    return _distinct(_one_order(responses, n, tokenizer, allow_empty))


def entropy_n(
    responses: list[str],
    n: int = 1,
    tokenizer: str | WordTokenizer = "casual",
    allow_empty: bool = False,
) -> float:
    """Ent-n of a corpus: entropy in bits of its n-gram distribution (Zhang et al. 2018).

    0 for an ``n`` above the longest response's token count (no n-gram), as :func:`distinct_n`."""
    return _entropy(_one_order(responses, n, tokenizer, allow_empty))


def token_counts(
    texts: list[str], tokenizer: str | WordTokenizer = "casual", argument: str = "texts"
) -> Counter:
    """Token frequencies of a reference corpus, for :func:`lf`'s ``reference`` (``argument``: its
    name in error messages)."""
    texts = check_corpus(texts, argument, allow_empty=True)
    counts: Counter = Counter()
    for tokens in tokenize_corpus(texts, tokenizer, argument=argument):
        counts.update(tokens)
    return counts


def _check_frequencies(reference: Mapping) -> Mapping:
    """A {token: count} mapping: string tokens, counts non-negative integers (numpy's too; a
    count of NaN, 2.5 or a non-string token would silently count as rare or not)."""
    for token, count in reference.items():
        if not isinstance(token, str):
            raise ArgumentError(
                "reference",
                f"keys must be token strings, got {type(token).__name__}: {token!r:.60}",
            )
        if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 0:
            raise ArgumentError(
                f"reference[{token!r:.60}]",
                f"must be a non-negative count (an int), got {count!r}",
            )
    return reference


def lf(
    responses: list[str],
    reference: list[str] | Mapping[str, int] | None = None,
    threshold: int = 100,
    tokenizer: str | WordTokenizer = "casual",
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
    threshold = check_int(threshold, "threshold", 0)
    generated = token_counts(responses, tokenizer, "responses")
    if reference is None:
        frequencies: Mapping[str, int] = generated
    elif isinstance(reference, Mapping):
        frequencies = _check_frequencies(reference)
    elif isinstance(reference, (list, tuple)):
        frequencies = token_counts(
            check_corpus(reference, "reference", allow_empty=allow_empty), tokenizer, "reference"
        )
    else:
        raise ArgumentError(
            "reference",
            "must be None, a list of reference texts or a {token: count} mapping, "
            f"got {type(reference).__name__}",
        )
    total = sum(generated.values())
    if total == 0:
        return 0.0
    low = sum(count for token, count in generated.items() if frequencies.get(token, 0) <= threshold)
    return low / total
