"""Set-level lexical diversity of Tevet & Berant (2021, §5 and §6.2) for many response sets at once.

:func:`batch_set_lexical_diversity` computes the same two scores as the per-set functions of
:mod:`.set_lexical` (averaged distinct-n and n-gram cosine diversity, averaged over
``n = min_n..max_n``) for every set of a list, bit for bit: the per-set functions stay the
reference and the public single-set API.

Why a batch version exists: a response set is tiny (5 short responses in the paper's data), so
scoring sets one by one spends its time in Python overhead (tokenizing, building n-gram tuples
and ``Counter``s, one ``np.mean`` per set and order). Scoring a whole evaluation at once turns
this into a handful of ``numpy`` operations per n-gram order over flat arrays:

1. every distinct response is tokenized once and its tokens mapped to integer ids;
2. for each order n, every n-gram start gets a global rank with ``numpy.unique`` on
   (rank of the (n-1)-gram, next token id), as :func:`.corpus.ngram_count_arrays` does;
3. distinct-n: the distinct (set, n-gram) pairs of a set over its n-gram count (0 without one);
4. cosine: the (response, n-gram) counts, sorted by (set, n-gram, response), so the entries of
   one n-gram within one set are adjacent; pairing entry ``e`` with ``e + d`` (``d = 1 .. k-1``)
   yields every pair's dot product, response norms come from ``numpy.bincount``; similarities
   follow :func:`.set_level.cosine_of_counts` (``scipy.spatial.distance.cosine``'s steps);
5. the §5 reduction ``-mean_{i>j}`` per set and order, and the mean over orders, are taken with
   ``numpy.mean`` over rows laid out in the released pair order (``for i: for j < i``), which
   sums exactly as ``numpy.mean`` over the per-set Python lists does.
"""
from __future__ import annotations

from itertools import chain

import numpy as np

from dialeval.metrics.lexical_diversity.set_level import check_orders
from dialeval.text import get_tokenizer
from dialeval.validation import check_response_sets


def _token_id_lists(responses: list[str], tokenize) -> tuple[list[list[int]], int]:
    """Token ids of every response (each distinct text tokenized once) and the vocabulary size."""
    vocabulary: dict[str, int] = {}
    lookup = vocabulary.setdefault
    memo = {text: [lookup(token, len(vocabulary)) for token in tokenize(text)] for text in dict.fromkeys(responses)}
    return [memo[text] for text in responses], len(vocabulary)


def batch_set_lexical_diversity(
    response_sets: list[list[str]], max_n: int = 5, min_n: int = 1, tokenizer="tevet", allow_empty: bool = False
) -> dict[str, np.ndarray]:
    """Averaged distinct-n and n-gram cosine diversity of many response sets (Tevet & Berant 2021, §6.2).

    Equal, bit for bit, to calling :func:`.set_level.averaged_distinct_n` and
    :func:`.set_level.ngram_cosine_diversity` on each set, but vectorized over all sets.

    Args:
        response_sets: one response set (``list[str]``, at least 2 responses) per context; sets
            may differ in size.
        max_n, min_n: the n-gram orders averaged over (paper: 1..5).
        tokenizer: ``"tevet"`` (default, the released tokenization), ``"casual"`` or a callable.
        allow_empty: score ``""`` as a response without n-grams instead of raising.

    Returns:
        ``{"averaged_distinct_n": array, "ngram_cosine_diversity": array}``, float64 arrays of
        one score per set, in input order.
    """
    response_sets = check_response_sets(response_sets, "predictions", min_size=2, allow_empty=allow_empty)
    check_orders(min_n, max_n)
    tokenize = get_tokenizer(tokenizer)

    num_sets = len(response_sets)
    set_sizes = np.fromiter(map(len, response_sets), dtype=np.int64, count=num_sets)
    responses = [response for response_set in response_sets for response in response_set]
    num_responses = len(responses)
    id_lists, vocabulary_size = _token_id_lists(responses, tokenize)
    lengths = np.fromiter(map(len, id_lists), dtype=np.int64, count=num_responses)
    total = int(lengths.sum())
    flat_ids = np.fromiter(chain.from_iterable(id_lists), dtype=np.int64, count=total)

    # Per token: its response, and how many tokens its response has from it on.
    response_of_token = np.repeat(np.arange(num_responses, dtype=np.int64), lengths)
    tokens_left = np.repeat(np.cumsum(lengths), lengths) - np.arange(total, dtype=np.int64)
    # Per response: its set and its index inside the set.
    set_of_response = np.repeat(np.arange(num_sets, dtype=np.int64), set_sizes)
    response_offset = np.cumsum(set_sizes) - set_sizes
    local_of_response = np.arange(num_responses, dtype=np.int64) - np.repeat(response_offset, set_sizes)
    # Pairs (i, j), i > j, of each set in the released order; pair (i, j) is i*(i-1)/2 + j in its set.
    pair_counts = set_sizes * (set_sizes - 1) // 2
    pair_offset = np.cumsum(pair_counts) - pair_counts
    num_pairs = int(pair_counts.sum())
    pair_first = np.empty(num_pairs, dtype=np.int64)  # global response index of i
    pair_second = np.empty(num_pairs, dtype=np.int64)  # global response index of j
    size_groups = []  # (sets of size k, (num_sets_k, k*(k-1)/2) matrix of their pair indices)
    for k in np.unique(set_sizes).tolist():
        sets_k = np.flatnonzero(set_sizes == k)
        rows, cols = np.tril_indices(k, -1)  # (1,0), (2,0), (2,1), ...: for i: for j < i
        pair_index = pair_offset[sets_k, None] + np.arange(rows.size, dtype=np.int64)
        pair_first[pair_index] = response_offset[sets_k, None] + rows
        pair_second[pair_index] = response_offset[sets_k, None] + cols
        size_groups.append((sets_k, pair_index))
    max_size = int(set_sizes.max())

    orders = range(min_n, max_n + 1)
    distinct = np.empty((num_sets, len(orders)), dtype=np.float64)
    diversity = np.empty((num_sets, len(orders)), dtype=np.float64)
    rank = flat_ids  # rank of the (n-1)-gram starting at each position (valid where tokens_left >= n-1)
    key_base = max(vocabulary_size, 1)
    for n in range(1, max_n + 1):
        starts = np.flatnonzero(tokens_left >= n)
        keys = flat_ids if n == 1 else rank[starts] * key_base + flat_ids[starts + n - 1]
        grams, gram_of_start = np.unique(keys, return_inverse=True)
        rank = np.full(total, -1, dtype=np.int64)
        rank[starts] = gram_of_start
        if n < min_n:
            continue
        column = n - min_n
        num_grams = max(grams.size, 1)

        # (response, n-gram) counts, then sorted by (set, n-gram, response).
        start_response = response_of_token[starts]
        entry_keys, entry_counts = np.unique(start_response * num_grams + gram_of_start, return_counts=True)
        entry_response = entry_keys // num_grams
        entry_set = set_of_response[entry_response]
        entry_group = entry_set * num_grams + entry_keys % num_grams  # (set, n-gram)
        order = np.argsort(entry_group, kind="stable")  # entries stay sorted by response inside a group
        entry_response, entry_set, entry_group = entry_response[order], entry_set[order], entry_group[order]
        entry_counts = entry_counts[order]

        # Distinct-n: distinct (set, n-gram) pairs / n-grams of the set.
        first_of_group = np.ones(entry_group.size, dtype=bool)
        first_of_group[1:] = entry_group[1:] != entry_group[:-1]
        distinct_per_set = np.bincount(entry_set[first_of_group], minlength=num_sets)
        grams_per_set = np.bincount(set_of_response[start_response], minlength=num_sets)
        distinct[:, column] = np.divide(
            distinct_per_set, grams_per_set, out=np.zeros(num_sets, dtype=np.float64), where=grams_per_set > 0
        )

        # Cosine: dot products of the pairs sharing an n-gram, squared norms per response.
        norms = np.bincount(entry_response, weights=entry_counts * entry_counts, minlength=num_responses)
        norms = norms.astype(np.int64)  # exact: integer sums far below 2**53
        pair_parts, product_parts = [], []
        for d in range(1, min(max_size, entry_group.size)):
            lower = np.flatnonzero(entry_group[d:] == entry_group[:-d])
            if lower.size == 0:
                break  # no group has more than d entries, hence none more than d + 1
            upper = lower + d
            i = local_of_response[entry_response[upper]]
            j = local_of_response[entry_response[lower]]
            pair_parts.append(pair_offset[entry_set[lower]] + i * (i - 1) // 2 + j)
            product_parts.append(entry_counts[lower] * entry_counts[upper])
        similarity = np.zeros(num_pairs, dtype=np.float64)  # no shared n-gram: similarity 0
        if pair_parts:
            dots = np.bincount(
                np.concatenate(pair_parts), weights=np.concatenate(product_parts), minlength=num_pairs
            )  # integer-valued, exact
            shared = np.flatnonzero(dots > 0)
            norm_products = (norms[pair_first[shared]] * norms[pair_second[shared]]).astype(np.float64)
            distance = np.clip(1.0 - dots[shared] / np.sqrt(norm_products), 0.0, 2.0)
            similarity[shared] = 1.0 - distance
        for sets_k, pair_index in size_groups:
            diversity[sets_k, column] = -np.mean(similarity[pair_index], axis=1)

    return {
        "averaged_distinct_n": np.mean(distinct, axis=1),
        "ngram_cosine_diversity": np.mean(diversity, axis=1),
    }
