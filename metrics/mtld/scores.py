"""The functions :mod:`dialeval.metrics.mtld` exports; its docstring describes the
measure."""

from __future__ import annotations

import re
import string
from typing import TYPE_CHECKING

import numpy as np

from dialeval.metrics.lexical_diversity.corpus import tokenize_corpus
from dialeval.validation import (
    check_corpus,
    check_real,
    check_response_sets,
    split_scope,
)

if TYPE_CHECKING:
    from dialeval.type_aliases import WordTokenizer

#: McCarthy & Jarvis's factor threshold (§"MTLD": TTR 0.72; they find 0.660-0.750 stable).
DEFAULT_THRESHOLD = 0.72

_DIGITS = re.compile(r"[0-9]+")
_PUNCTUATION = str.maketrans({mark: " " for mark in string.punctuation})


def mtld_words(text: str) -> list[str]:
    """The words of ``text`` as ``lexicalrichness`` tokenizes them: lower-cased, digits and dashes
    (``-``, en and em dash) removed, ASCII punctuation turned into spaces, split on white space."""
    text = _DIGITS.sub("", text.lower())
    for dash in ("–", "—", "-"):
        text = text.replace(dash, "")
    return text.translate(_PUNCTUATION).split()


def _check_threshold(threshold: object) -> float:
    return check_real(threshold, "threshold", 0, 1, open_bounds=(True, True), meaning=" (a TTR)")


def _factors(tokens: list[str], threshold: float) -> float:
    """Factors of one pass: full ones where the running TTR reaches ``threshold``, and the partial
    one."""
    factors, count = 0.0, 0
    seen: set[str] = set()
    for token in tokens:
        count += 1
        seen.add(token)
        if len(seen) / count <= threshold:
            factors += 1
            seen, count = set(), 0
    if count:
        factors += (1 - len(seen) / count) / (1 - threshold)
    return factors


def _mtld_of_tokens(tokens: list[str], threshold: float) -> float:
    if not tokens:
        return (
            0.0  # no words: nothing to measure (dialeval's convention for a text without n-grams)
        )
    passes = []
    for ordered in (tokens, tokens[::-1]):
        factors = _factors(ordered, threshold)
        # every token distinct: no factor at all; lexicalrichness counts one, so MTLD = the token
        # count
        passes.append(len(tokens) / (factors if factors > 0 else 1.0))
    return float(np.mean(passes))


def _tokens(
    responses: list[str],
    tokenizer: str | WordTokenizer | None,
    source: list[str] | list[list[str]],
    argument: str,
) -> list[str]:
    if tokenizer is None:
        return [word for response in responses for word in mtld_words(response)]
    return [
        token
        for tokens in tokenize_corpus(responses, tokenizer, source=source, argument=argument)
        for token in tokens
    ]


def mtld(
    responses: list[str],
    threshold: float = DEFAULT_THRESHOLD,
    tokenizer: str | WordTokenizer | None = None,
    allow_empty: bool = False,
) -> float:
    """MTLD of the responses read one after the other (one response set, or a corpus).

    Args:
        responses: the texts, in the order they are read.
        threshold: the factor TTR (default 0.72, McCarthy & Jarvis's), strictly between 0 and 1.
        tokenizer: None (default: :func:`mtld_words`, ``lexicalrichness``'s words), ``"casual"``,
            ``"tevet"`` or a callable ``str -> list[str]``.
        allow_empty: accept empty strings (responses without tokens).

    Returns:
        MTLD >= 0: the mean length, in tokens, of a stretch that keeps its TTR above
        ``threshold``; the token count when every token is distinct; 0.0 without tokens. It has no
        upper bound (a long text repeating one token once scores far more than its length).

    Raises:
        ValueError: naming the argument: ``responses`` not a non-empty list of strings,
            ``threshold`` not strictly between 0 and 1.
    """
    responses = check_corpus(responses, "responses", allow_empty=allow_empty)
    threshold = _check_threshold(threshold)
    return _mtld_of_tokens(_tokens(responses, tokenizer, responses, "responses"), threshold)


def mtld_scores(
    predictions: list[str] | list[list[str]],
    threshold: float = DEFAULT_THRESHOLD,
    tokenizer: str | WordTokenizer | None = None,
    allow_empty: bool = False,
) -> dict:
    """The evaluate module's figures: MTLD of a corpus (a flat list), or of each response set and
    their mean."""
    threshold = _check_threshold(threshold)
    if split_scope(predictions, "predictions") == "corpus":
        corpus = check_corpus(predictions, "predictions", allow_empty=allow_empty)
        tokens = _tokens(corpus, tokenizer, corpus, "predictions")
        return {
            "scope": "corpus",
            "mtld": _mtld_of_tokens(tokens, threshold),
            "threshold": threshold,
            "num_tokens": len(tokens),
            "num_responses": len(corpus),
        }
    sets = check_response_sets(predictions, "predictions", allow_empty=allow_empty)
    per_set = []
    for responses in sets:
        tokens = _tokens(responses, tokenizer, sets, "predictions")
        per_set.append({"mtld": _mtld_of_tokens(tokens, threshold), "num_tokens": len(tokens)})
    return {
        "scope": "response_set",
        "mtld": float(np.mean([row["mtld"] for row in per_set])),
        "threshold": threshold,
        "num_sets": len(per_set),
        "per_set": per_set,
    }


__all__ = ["DEFAULT_THRESHOLD", "mtld", "mtld_scores", "mtld_words"]
