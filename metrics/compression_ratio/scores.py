"""The functions :mod:`dialeval.metrics.compression_ratio` exports; its docstring describes the
measure."""

from __future__ import annotations

import gzip
import lzma

from dialeval.validation import ArgumentError, check_corpus, check_response_sets, split_scope

ALGORITHMS = ("gzip", "xz")


def _compressed_size(data: bytes, algorithm: str) -> int:
    if algorithm == "gzip":
        return len(gzip.compress(data, mtime=0))
    return len(lzma.compress(data))  # the .xz container at preset 6, as lzma.open writes it


def compression_ratio(
    texts: list[str], algorithm: str = "gzip", allow_empty: bool = False
) -> float:
    """``size(" ".join(texts)) / size(compress(" ".join(texts)))`` in UTF-8 bytes.

    Args:
        texts: the responses (a corpus, or one response set).
        algorithm: ``"gzip"`` (default, DEFLATE at level 9) or ``"xz"`` (LZMA2, preset 6).
        allow_empty: accept empty strings (they add only the joining space).

    Raises:
        ValueError: ``texts`` is not a non-empty list of strings, or ``algorithm`` is unknown.
    """
    if algorithm not in ALGORITHMS:
        raise ArgumentError("algorithm", f"must be one of {ALGORITHMS}, got {algorithm!r}")
    texts = check_corpus(texts, "texts", allow_empty=allow_empty)
    data = " ".join(texts).encode("utf-8")
    return len(data) / _compressed_size(data, algorithm)


def compression_ratio_per_set(
    response_sets: list[list[str]], algorithm: str = "gzip", allow_empty: bool = False
) -> list[float]:
    """:func:`compression_ratio` of each response set."""
    response_sets = check_response_sets(response_sets, "response_sets", allow_empty=allow_empty)
    return [compression_ratio(responses, algorithm, allow_empty) for responses in response_sets]


def compression_ratio_scores(
    predictions: list[str] | list[list[str]], algorithm: str = "gzip", allow_empty: bool = False
) -> dict:
    """The figures of the evaluate module: one corpus ratio for a flat list, or per set and their
    mean."""
    if split_scope(predictions, "predictions") == "corpus":
        corpus = check_corpus(predictions, "predictions", allow_empty=allow_empty)
        return {
            "scope": "corpus",
            "compression_ratio": compression_ratio(corpus, algorithm, allow_empty),
            "algorithm": algorithm,
            "num_responses": len(corpus),
        }
    sets = check_response_sets(predictions, "predictions", allow_empty=allow_empty)
    per_set = compression_ratio_per_set(sets, algorithm, allow_empty)
    return {
        "scope": "response_set",
        "compression_ratio": sum(per_set) / len(per_set),
        "algorithm": algorithm,
        "num_sets": len(per_set),
        "per_set": [{"compression_ratio": value} for value in per_set],
    }


__all__ = [
    "ALGORITHMS",
    "compression_ratio",
    "compression_ratio_per_set",
    "compression_ratio_scores",
]
