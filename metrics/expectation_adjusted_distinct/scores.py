"""The functions :mod:`dialeval.metrics.expectation_adjusted_distinct` exports; its docstring
describes the measure."""

from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from dialeval.metrics.lexical_diversity.corpus import (
    distinct_token_ids,
    tokenize_corpus,
    weighted_ngram_counts,
)
from dialeval.validation import (
    ArgumentError,
    check_corpus,
    check_int,
    check_response_sets,
    split_scope,
)

if TYPE_CHECKING:
    from dialeval.type_aliases import WordTokenizer

#: What to do when V is missing, shared by every message that asks for it.
VOCABULARY_ADVICE = (
    "EAD's V is the vocabulary size of the model that generated the texts (Liu et al.'s code "
    "takes it from the model and refuses to run without one), e.g. len(tokenizer): 50,257 for "
    "GPT-2, 30,522 for bert-base-uncased"
)


def expected_distinct(num_ngrams: int, vocab_size: int, n: int = 1) -> float:
    """Expected number of distinct items among ``num_ngrams`` uniform draws from ``vocab_size ** n``
    items.

    ``V' (1 - (1 - 1/V')**C)`` with ``V' = vocab_size ** n`` (Liu et al. 2022, §3), computed
    through ``log1p`` / ``expm1`` so that it stays exact when ``1/V'`` is far below float64's
    resolution around 1 (it tends to ``C`` as ``V'`` grows).
    """
    num_ngrams = check_int(num_ngrams, "num_ngrams", minimum=0)
    vocab_size = check_int(vocab_size, "vocab_size")
    n = check_int(n, "n")
    if num_ngrams == 0:
        return 0.0
    if vocab_size == 1:
        return 1.0
    log_space = n * math.log(vocab_size)
    draw_probability = math.exp(-log_space)  # 1 / V**n; 0.0 once V**n passes float64's range
    if draw_probability == 0.0:
        return float(num_ngrams)
    return -math.expm1(num_ngrams * math.log1p(-draw_probability)) / draw_probability


def _check_vocabulary(
    vocab_size: int | None, vocab_texts: list[str] | None, tokenizer: str | WordTokenizer
) -> int:
    if vocab_texts is None:
        if vocab_size is None:
            raise ArgumentError(
                "vocab_size", f"must be given (or `vocab_texts`): {VOCABULARY_ADVICE}"
            )
        return check_int(vocab_size, "vocab_size")
    if vocab_size is not None:
        raise ArgumentError(
            "vocab_texts",
            "is given along with `vocab_size`: give `vocab_size` or `vocab_texts`, not both "
            "(pass vocab_size=None with vocab_texts)",
        )
    vocab_texts = check_corpus(vocab_texts, "vocab_texts", allow_empty=True)
    vocabulary = {
        token
        for tokens in tokenize_corpus(
            list(dict.fromkeys(vocab_texts)), tokenizer, source=vocab_texts, argument="vocab_texts"
        )
        for token in tokens
    }
    if not vocabulary:
        raise ArgumentError("vocab_texts", "holds no tokens: V would be 0")
    return len(vocabulary)


def _ngram_totals(responses: list[str], n: int, tokenizer: str | WordTokenizer) -> tuple[int, int]:
    """(distinct n-grams, all n-grams) of ``responses``, n-grams never crossing a response."""
    multiplicity = Counter(responses)
    distinct = list(multiplicity)
    weights = np.fromiter(multiplicity.values(), dtype=np.int64, count=len(distinct))
    vocabulary_size, ids, lengths = distinct_token_ids(distinct, tokenizer, source=responses)
    longest = int(lengths.max()) if lengths.size else 0
    if n > longest:  # no response is long enough: no n-grams (and no loop over a huge n)
        return 0, 0
    counts = weighted_ngram_counts(ids, lengths, weights, vocabulary_size, n)[n]
    return int(counts.size), int(counts.sum())


def _ead(responses: list[str], n: int, vocab_size: int, tokenizer: str | WordTokenizer) -> dict:
    num_distinct, num_ngrams = _ngram_totals(responses, n, tokenizer)
    expected = expected_distinct(num_ngrams, vocab_size, n)
    return {
        "ead": num_distinct / expected if expected else 0.0,
        "distinct": num_distinct / num_ngrams if num_ngrams else 0.0,
        "num_distinct_ngrams": num_distinct,
        "num_ngrams": num_ngrams,
    }


def expectation_adjusted_distinct(
    responses: list[str],
    n: int = 1,
    vocab_size: int | None = None,
    vocab_texts: list[str] | None = None,
    tokenizer: str | WordTokenizer = "casual",
    allow_empty: bool = False,
) -> float:
    """EAD of a corpus (or of one response set): distinct n-grams over their expected number.

    Args:
        responses: the texts, scored together (n-grams never cross a text's boundary).
        n: the n-gram order (1, the reference implementation's, by default).
        vocab_size: V, the vocabulary the tokens are drawn from: the vocabulary size of the
            model that generated ``responses`` (``len(tokenizer)``), as the authors' code takes
            it. Required unless ``vocab_texts`` is given; no default.
        vocab_texts: count V instead as the distinct tokens of these texts (under ``tokenizer``),
            as the reference implementation's ``dataForVocabCal`` does; then pass
            ``vocab_size=None``.
        tokenizer: ``"casual"`` (NLTK's casual tokenizer, as dialeval's Dist-n; default),
            ``"tevet"`` or a callable ``str -> list[str]``.
        allow_empty: accept empty strings (responses without tokens).

    Returns:
        EAD >= 0: about Distinct-n for outputs much shorter than V, N_distinct / V for outputs
        much longer. It is not bounded by 1: texts whose C n-grams are all distinct score
        C / E(C) > 1 (1.00007 for 5 tokens under V = 30,522), and a ``vocab_size`` below the
        number of distinct n-grams the texts use gives more. 0.0 when there is no n-gram
        (Dist-n's convention in dialeval).

    Raises:
        ValueError: naming the argument: ``responses`` not a non-empty list of strings, ``n`` or
            ``vocab_size`` not a positive int, both or neither of ``vocab_size`` / ``vocab_texts``
            (neither: ``vocab_size`` must be given).
    """
    responses = check_corpus(responses, "responses", allow_empty=allow_empty)
    n = check_int(n, "n")
    vocab_size = _check_vocabulary(vocab_size, vocab_texts, tokenizer)
    return _ead(responses, n, vocab_size, tokenizer)["ead"]


def expectation_adjusted_distinct_scores(
    predictions: list[str] | list[list[str]],
    n: int = 1,
    vocab_size: int | None = None,
    vocab_texts: list[str] | None = None,
    tokenizer: str | WordTokenizer = "casual",
    allow_empty: bool = False,
) -> dict:
    """The evaluate module's figures: EAD of a corpus (a flat list), or of each response set and
    their mean.

    Each result row also carries Distinct-n under the same tokens (``distinct``) and the counts
    behind both, so the length adjustment is visible.
    """
    n = check_int(n, "n")
    if split_scope(predictions, "predictions") == "corpus":
        corpus = check_corpus(predictions, "predictions", allow_empty=allow_empty)
        size = _check_vocabulary(vocab_size, vocab_texts, tokenizer)
        return {
            "scope": "corpus",
            **_ead(corpus, n, size, tokenizer),
            "n": n,
            "vocab_size": size,
            "num_responses": len(corpus),
        }
    sets = check_response_sets(predictions, "predictions", allow_empty=allow_empty)
    size = _check_vocabulary(vocab_size, vocab_texts, tokenizer)
    per_set = [_ead(responses, n, size, tokenizer) for responses in sets]
    return {
        "scope": "response_set",
        "ead": float(np.mean([row["ead"] for row in per_set])),
        "distinct": float(np.mean([row["distinct"] for row in per_set])),
        "n": n,
        "vocab_size": size,
        "num_sets": len(per_set),
        "per_set": per_set,
    }


__all__ = [
    "VOCABULARY_ADVICE",
    "expectation_adjusted_distinct",
    "expectation_adjusted_distinct_scores",
    "expected_distinct",
]
