"""Set-level lexical diversity of Tevet & Berant (2021, §5 and §6.2) for many response sets at once.

:func:`score_response_sets` is the one implementation of both set-level scores (averaged
distinct-n and n-gram cosine diversity, averaged over ``n = min_n..max_n``):
:func:`batch_set_lexical_diversity` and the per-set functions of :mod:`.set_level`
(:func:`~.set_level.averaged_distinct_n`, :func:`~.set_level.ngram_cosine_diversity`) call it.

Why it is vectorized: a response set is tiny (5 short responses in the paper's data), so scoring
sets one by one spends its time in Python overhead (tokenizing, building n-gram tuples and
``Counter``s, one ``np.mean`` per set and order). Scoring a whole evaluation at once turns this
into a handful of ``numpy`` operations per n-gram order over flat arrays:

1. every distinct response text is tokenized once and its tokens mapped to integer ids;
2. identical responses of a set (identical token lists) become one *unit* with a multiplicity
   ``m``, so a set of 10,000 copies of one response costs what a set of one response costs;
3. for each order n, every n-gram start gets a global rank with ``numpy.unique`` on
   (rank of the (n-1)-gram, next token id), as :func:`.corpus.weighted_ngram_counts` ranks the
   corpus's n-grams;
4. distinct-n: the distinct (set, n-gram) pairs of a set over its n-gram count, each unit's
   n-grams counted ``m`` times (0 without an n-gram);
5. cosine: the (unit, n-gram) counts, sorted by (set, n-gram, unit), so the entries of one n-gram
   within one set are adjacent; pairing entry ``e`` with ``e + d`` (``d = 1 .. k-1``) yields every
   unit pair's dot product, unit norms come from ``numpy.bincount``; similarities follow
   :func:`.set_level.cosine_of_counts` (``scipy.spatial.distance.cosine``'s steps; a response
   without an n-gram of the order has similarity 0, with itself too);
6. the §5 reduction ``-mean_{i>j} cos`` per set and order over the multiset of responses::

       ( sum_{a>b} m_a m_b cos(a, b) + sum_a C(m_a, 2) cos(a, a) ) / C(n, 2)

   with the unit pairs laid out in the released pair order (``for i: for j < i``) and summed
   with ``numpy.add.reduce``, as ``numpy.mean`` sums the released per-set Python lists; so a set
   without repeated responses (every ``m_a = 1``, the self term exactly 0) scores bit for bit
   what the released code scores. The mean over orders is ``numpy.mean`` as released.
"""

from __future__ import annotations

from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from dialeval.metrics.lexical_diversity.order_bounds import computed_orders
from dialeval.metrics.lexical_diversity.pair_memory import check_pair_memory
from dialeval.text import get_tokenizer
from dialeval.validation import ArgumentError, check_int, check_response_sets

if TYPE_CHECKING:
    from dialeval.type_aliases import WordTokenizer


def check_orders(min_n: int, max_n: int) -> tuple[int, int]:
    """``min_n`` and ``max_n`` as positive ints (numpy's too) with ``min_n <= max_n``."""
    min_n, max_n = check_int(min_n, "min_n"), check_int(max_n, "max_n")
    if min_n > max_n:
        raise ArgumentError("min_n", f"({min_n}) must not exceed `max_n` ({max_n})")
    return min_n, max_n


def _sequences(
    responses: list[str], tokenize: WordTokenizer
) -> tuple[list[tuple[int, ...]], np.ndarray, int]:
    """The distinct token-id sequences, each response's sequence index and the vocabulary size.

    Every distinct text is tokenized once; texts that tokenize alike share one sequence.
    """
    vocabulary: dict[str, int] = {}
    lookup = vocabulary.setdefault
    sequence_index: dict[tuple[int, ...], int] = {}
    add_sequence = sequence_index.setdefault
    memo = {
        text: add_sequence(
            tuple([lookup(token, len(vocabulary)) for token in tokenize(text)]), len(sequence_index)
        )
        for text in dict.fromkeys(responses)
    }
    sequence_of_response = np.fromiter(
        map(memo.__getitem__, responses), dtype=np.int64, count=len(responses)
    )
    return list(sequence_index), sequence_of_response, len(vocabulary)


def score_response_sets(
    response_sets: list[list[str]],
    min_n: int,
    max_n: int,
    tokenize: WordTokenizer,
    cosine: bool = True,
    argument: str = "response_sets",
) -> dict[str, np.ndarray]:
    """Both set-level scores of already validated sets (see the module docstring).

    Args:
        response_sets: non-empty response sets (at least 2 responses each when ``cosine``).
        min_n, max_n: checked n-gram orders.
        tokenize: ``str -> list[str]``.
        cosine: also compute the n-gram cosine diversity (averaged distinct-n alone needs no pairs).
        argument: the caller's name for ``response_sets``, for the memory refusal.

    Raises:
        ValueError: naming ``argument`` when ``cosine`` and the pairs of distinct responses need
            more than the available memory (:func:`.pair_memory.check_pair_memory`, checked
            before any pair is allocated).

    Returns:
        ``{"averaged_distinct_n": array}`` (and ``"ngram_cosine_diversity"`` when ``cosine``),
        float64 arrays of one score per set.
    """
    num_sets = len(response_sets)
    set_sizes = np.fromiter(map(len, response_sets), dtype=np.int64, count=num_sets)
    responses = [response for response_set in response_sets for response in response_set]
    sequences, sequence_of_response, vocabulary_size = _sequences(responses, tokenize)

    # Units: the distinct sequences of each set, in order of first occurrence, with multiplicities.
    set_of_response = np.repeat(np.arange(num_sets, dtype=np.int64), set_sizes)
    unit_keys, first_response, multiplicity = np.unique(
        set_of_response * len(sequences) + sequence_of_response,
        return_index=True,
        return_counts=True,
    )
    by_occurrence = np.argsort(first_response, kind="stable")
    unit_keys, multiplicity = unit_keys[by_occurrence], multiplicity[by_occurrence]
    set_of_unit = unit_keys // len(sequences)
    unit_sequences = [sequences[index] for index in (unit_keys % len(sequences)).tolist()]
    num_units = len(unit_sequences)
    units_per_set = np.bincount(set_of_unit, minlength=num_sets)

    lengths = np.fromiter(map(len, unit_sequences), dtype=np.int64, count=num_units)
    total = int(lengths.sum())
    flat_ids = np.fromiter(chain.from_iterable(unit_sequences), dtype=np.int64, count=total)
    # Per token: its unit, and how many tokens its unit has from it on.
    unit_of_token = np.repeat(np.arange(num_units, dtype=np.int64), lengths)
    tokens_left = np.repeat(np.cumsum(lengths), lengths) - np.arange(total, dtype=np.int64)
    # Per unit: its index among its set's units.
    unit_offset = np.cumsum(units_per_set) - units_per_set
    local_of_unit = np.arange(num_units, dtype=np.int64) - np.repeat(unit_offset, units_per_set)

    if cosine:
        # Unit pairs (i, j), i > j, of each set in the released order; pair (i, j) is i*(i-1)/2 + j
        # in its set.
        pair_counts = units_per_set * (units_per_set - 1) // 2
        pair_offset = np.cumsum(pair_counts) - pair_counts
        num_pairs = int(pair_counts.sum())
        check_pair_memory(num_pairs, int(units_per_set.max()), argument)  # before any pair array
        pair_first = np.empty(num_pairs, dtype=np.int64)  # global unit index of i
        pair_second = np.empty(num_pairs, dtype=np.int64)  # global unit index of j
        size_groups = []  # (sets of k units, (num_sets_k, k*(k-1)/2) matrix of their pair indices)
        for k in np.unique(units_per_set).tolist():
            sets_k = np.flatnonzero(units_per_set == k)
            rows, cols = np.tril_indices(k, -1)  # (1,0), (2,0), (2,1), ...: for i: for j < i
            pair_index = pair_offset[sets_k, None] + np.arange(rows.size, dtype=np.int64)
            pair_first[pair_index] = unit_offset[sets_k, None] + rows
            pair_second[pair_index] = unit_offset[sets_k, None] + cols
            size_groups.append((sets_k, pair_index))
        # Weights: m_i * m_j per unit pair, C(m, 2) per unit paired with a copy of itself.
        pair_weight = (multiplicity[pair_first] * multiplicity[pair_second]).astype(np.float64)
        self_weight = (multiplicity * (multiplicity - 1) // 2).astype(np.float64)
        has_repeats = bool(self_weight.any())
        response_pairs = set_sizes * (set_sizes - 1) // 2  # C(n, 2): the mean's denominator
    max_units = int(units_per_set.max())

    # Orders above the longest response have no n-gram: each scores 0 (distinct-n and cosine
    # alike) and is not computed, so a huge max_n costs what the longest response's length costs.
    last_order = computed_orders(max_n, int(lengths.max()) if num_units else 0)
    num_computed = max(last_order - min_n + 1, 0)
    distinct = np.empty((num_sets, num_computed), dtype=np.float64)
    diversity = np.empty((num_sets, num_computed), dtype=np.float64)
    # rank of the (n-1)-gram starting at each position (valid where tokens_left >= n-1)
    rank = flat_ids
    key_base = max(vocabulary_size, 1)
    for n in range(1, last_order + 1):
        starts = np.flatnonzero(tokens_left >= n)
        keys = flat_ids if n == 1 else rank[starts] * key_base + flat_ids[starts + n - 1]
        grams, gram_of_start = np.unique(keys, return_inverse=True)
        rank = np.full(total, -1, dtype=np.int64)
        rank[starts] = gram_of_start
        if n < min_n:
            continue
        column = n - min_n
        num_grams = max(grams.size, 1)

        # (unit, n-gram) counts, then sorted by (set, n-gram, unit).
        start_unit = unit_of_token[starts]
        entry_keys, entry_counts = np.unique(
            start_unit * num_grams + gram_of_start, return_counts=True
        )
        entry_unit = entry_keys // num_grams
        entry_set = set_of_unit[entry_unit]
        entry_group = entry_set * num_grams + entry_keys % num_grams  # (set, n-gram)
        order = np.argsort(entry_group, kind="stable")  # entries stay sorted by unit inside a group
        entry_unit, entry_set, entry_group = entry_unit[order], entry_set[order], entry_group[order]
        entry_counts = entry_counts[order]

        # Distinct-n: distinct (set, n-gram) pairs / n-grams of the set (a unit's counted m times).
        first_of_group = np.ones(entry_group.size, dtype=bool)
        first_of_group[1:] = entry_group[1:] != entry_group[:-1]
        distinct_per_set = np.bincount(entry_set[first_of_group], minlength=num_sets)
        grams_per_set = np.bincount(
            set_of_unit[start_unit], weights=multiplicity[start_unit], minlength=num_sets
        )
        distinct[:, column] = np.divide(
            distinct_per_set,
            grams_per_set,
            out=np.zeros(num_sets, dtype=np.float64),
            where=grams_per_set > 0,
        )  # integer-valued weights: exact counts
        if not cosine:
            continue

        # Cosine: dot products of the unit pairs sharing an n-gram, squared norms per unit.
        norms = np.bincount(entry_unit, weights=entry_counts * entry_counts, minlength=num_units)
        norms = norms.astype(np.int64)  # exact: integer sums far below 2**53
        pair_parts, product_parts = [], []
        for d in range(1, min(max_units, entry_group.size)):
            lower = np.flatnonzero(entry_group[d:] == entry_group[:-d])
            if lower.size == 0:
                break  # no group has more than d entries, hence none more than d + 1
            upper = lower + d
            i = local_of_unit[entry_unit[upper]]
            j = local_of_unit[entry_unit[lower]]
            pair_parts.append(pair_offset[entry_set[lower]] + i * (i - 1) // 2 + j)
            product_parts.append(entry_counts[lower] * entry_counts[upper])
        similarity = np.zeros(num_pairs, dtype=np.float64)  # no shared n-gram: similarity 0
        if pair_parts:
            dots = np.bincount(
                np.concatenate(pair_parts),
                weights=np.concatenate(product_parts),
                minlength=num_pairs,
            )  # integer-valued, exact
            shared = np.flatnonzero(dots > 0)
            norm_products = (norms[pair_first[shared]] * norms[pair_second[shared]]).astype(
                np.float64
            )
            distance = np.clip(1.0 - dots[shared] / np.sqrt(norm_products), 0.0, 2.0)
            similarity[shared] = 1.0 - distance
        if has_repeats:
            similarity *= pair_weight  # exact where both weights are 1
            # cos(a, a) as cosine_of_counts computes it: dot = norm, 0 without an n-gram.
            with np.errstate(invalid="ignore", divide="ignore"):
                self_distance = np.clip(
                    1.0 - norms / np.sqrt((norms * norms).astype(np.float64)), 0.0, 2.0
                )
            self_similarity = np.where(norms > 0, 1.0 - self_distance, 0.0)
            self_sums = np.bincount(
                set_of_unit, weights=self_weight * self_similarity, minlength=num_sets
            )
        for sets_k, pair_index in size_groups:
            pair_sums = np.add.reduce(similarity[pair_index], axis=1)  # numpy.mean's summation
            if has_repeats:
                pair_sums = pair_sums + self_sums[sets_k]  # + 0.0 for a set without repeats: exact
            diversity[sets_k, column] = -(pair_sums / response_pairs[sets_k])

    scores = {"averaged_distinct_n": _mean_over_orders(distinct, max_n - min_n + 1)}
    if cosine:
        scores["ngram_cosine_diversity"] = _mean_over_orders(diversity, max_n - min_n + 1)
    return scores


def _mean_over_orders(computed: np.ndarray, num_orders: int) -> np.ndarray:
    """The mean over ``num_orders`` orders of which ``computed`` holds the first columns, the
    others scoring 0 (not stored). The columns are added in order, as ``numpy.mean`` sums fewer
    than 8 values (so the released 1..5 scores are unchanged), and trailing zeros change no bit:
    a set scores the same alone as in a batch whose longest response is longer."""
    total = np.zeros(computed.shape[0], dtype=np.float64)
    for column in computed.T:
        total += column
    return total / num_orders


def batch_set_lexical_diversity(
    response_sets: list[list[str]],
    max_n: int = 5,
    min_n: int = 1,
    tokenizer: str | WordTokenizer = "tevet",
    allow_empty: bool = False,
) -> dict[str, np.ndarray]:
    """Averaged distinct-n and n-gram cosine diversity of many response sets (Tevet & Berant 2021,
    §6.2).

    The same implementation as :func:`.set_level.averaged_distinct_n` and
    :func:`.set_level.ngram_cosine_diversity` (equal values for every set), vectorized over all
    sets.

    Args:
        response_sets: one response set (``list[str]``, at least 2 responses) per context; sets
            may differ in size.
        max_n, min_n: the n-gram orders averaged over (paper: 1..5). An order above the longest
            response's token count scores 0 and is not computed (O(1)): any max_n is accepted.
        tokenizer: ``"tevet"`` (default, the released tokenization), ``"casual"`` or a callable.
        allow_empty: score ``""`` as a response without n-grams instead of raising.

    Returns:
        ``{"averaged_distinct_n": array, "ngram_cosine_diversity": array}``, float64 arrays of
        one score per set, in input order.
    """
    response_sets = check_response_sets(
        response_sets, "response_sets", min_size=2, allow_empty=allow_empty
    )
    min_n, max_n = check_orders(min_n, max_n)
    return score_response_sets(
        response_sets,
        min_n,
        max_n,
        get_tokenizer(tokenizer, response_sets, "response_sets"),
        argument="response_sets",
    )
