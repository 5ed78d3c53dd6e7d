"""Entropy-based data filtering (EDF; Csáky, Purgai & Recski, ACL 2019), target side.

Han et al. (2022, §5.2) compare DRESS against EDF "using target side entropy to filter the pairs".
Csáky et al. cluster utterances and measure, for each target (response) cluster, the entropy of
the source (context) clusters it is paired with:

    H(t) = - sum_s p(s | t) log2 p(s | t),    p(s | t) = count(s, t) / count(t)

A response paired with many different contexts ("yes", "i don't know") has a high entropy; the
pairs of every target whose entropy exceeds the threshold are removed from the training data.

This is their IDENTITY clustering (the variant Han et al.'s Table 3 row can use without an
embedding model, and the one Csáky et al. report best for target filtering): two utterances are in
one cluster when they are the same string after whitespace normalization (``" ".join(s.split())``,
as the released code, ricsinaruto/NeuralChatbots-DataFiltering, ``filtering/identity.py``).
Entropies are in bits (log base 2, as the released code).

The source (``source=``): Csáky et al. model dialogue as the "transduction of single dialog
turns" (§2) and measure a target's entropy over the source *utterances* it answers (their
entropy-based filtering; their datasets are pairs of consecutive utterances). ``source="utterance"``
(the default) does the same with a multi-turn context: the source is its last turn, normalized as
above, so three pairs whose contexts share a last turn give their target 0 bits.
``source="context"`` keeps every turn (the tuple of the normalized turns; the default of dialeval
0.1.0): the same three pairs with different earlier turns give log2 3 = 1.585 bits. With
single-utterance contexts the two agree.

Defaults, from Csáky et al. and their released code:

* ``threshold = 1.0`` bit: their threshold for DailyDialog with IDENTITY clustering, which removes
  6.98% of the pairs on the target side (their Table 1); they set each threshold so that a
  comparable share of the data goes. :func:`threshold_for_fraction` picks the threshold that
  removes a chosen share instead.
* ``max_words = 15``: the released code never filters a cluster whose utterances average 15 or
  more words (``max_avg_length``); for IDENTITY clusters that is the target's own word count.
  ``max_words=None`` turns this off.
* A target seen once has entropy 0 and is never removed (the released ``min_cluster_size = 2``
  follows from any threshold >= 0).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

from dialeval.validation import ArgumentError

CITATION = """@inproceedings{csaky-etal-2019-improving,
  title = {Improving Neural Conversational Models with Entropy-Based Data Filtering},
  author = {Cs{\\'a}ky, Rich{\\'a}rd and Purgai, Patrik and Recski, G{\\'a}bor},
  booktitle = {Proceedings of the 57th Annual Meeting of the Association for Computational Linguistics},
  year = {2019},
  url = {https://aclanthology.org/P19-1567}
}"""  # noqa: E501


def normalize_utterance(text: str) -> str:
    """IDENTITY clustering's key: the string with runs of whitespace collapsed."""
    return " ".join(text.split())


#: ``(context, response)`` pairs; a context is a string or a sequence of turns.
Pairs: TypeAlias = Sequence[tuple[str | Sequence[str], str]]
#: The pairs as checked: each context's source key and its normalized response.
_CheckedPairs: TypeAlias = list[tuple[tuple[str, ...], str]]

#: What a target's entropy is measured over: the context's last turn (Csáky et al.) or all its
#: turns.
SOURCES = ("utterance", "context")


def _check_source(source: object) -> None:
    if not isinstance(source, str) or source not in SOURCES:
        raise ArgumentError("source", f"must be one of {SOURCES}, got {source!r}")


def _source_key(context: object, index: int, source: str) -> tuple[str, ...]:
    if isinstance(context, str):
        return (normalize_utterance(context),)
    if isinstance(context, Sequence) and context and all(isinstance(turn, str) for turn in context):
        turns = context[-1:] if source == "utterance" else context
        return tuple(normalize_utterance(turn) for turn in turns)
    raise ArgumentError(
        "pairs", f"item {index}: the context must be a string or a non-empty list of strings"
    )


def _checked_pairs(pairs: Pairs, source: str) -> _CheckedPairs:
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence) or not pairs:
        raise ArgumentError("pairs", "must be a non-empty sequence of (context, response) pairs")
    checked: _CheckedPairs = []
    for index, pair in enumerate(pairs):
        if (
            not isinstance(pair, Sequence)
            or isinstance(pair, str)
            or len(pair) != 2
            or not isinstance(pair[1], str)
        ):
            raise ArgumentError(
                "pairs", f"item {index} must be a (context, response) pair with a string response"
            )
        checked.append((_source_key(pair[0], index, source), normalize_utterance(pair[1])))
    return checked


def target_entropies(pairs: Pairs, source: str = "utterance") -> list[float]:
    """The entropy in bits of each pair's target over the sources it is paired with (one value per
    pair).

    ``source``: ``"utterance"`` (default, Csáky et al.) the context's last turn; ``"context"``
    all its turns.
    """
    _check_source(source)
    return _entropies(_checked_pairs(pairs, source))


def _entropies(checked: _CheckedPairs) -> list[float]:
    joint = Counter(checked)
    targets = Counter(target for _, target in checked)
    entropy = {target: 0.0 for target in targets}
    for (_, target), count in joint.items():
        share = count / targets[target]
        entropy[target] -= share * math.log2(share)
    # 0.0, not -0.0, for a target with a single source
    return [entropy[target] + 0.0 for _, target in checked]


@dataclass
class EntropyFilterResult:
    """Which pairs EDF keeps and removes (indices into the input), and every pair's
    target entropy."""

    kept: list[int]
    removed: list[int]
    entropies: list[float]
    threshold: float
    source: str = "utterance"

    @property
    def removed_share(self) -> float:
        return len(self.removed) / (len(self.kept) + len(self.removed))


def _check_max_words(max_words: object) -> None:
    if max_words is not None and (
        isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1
    ):
        raise ArgumentError("max_words", f"must be an int >= 1 or None, got {max_words!r}")


def _removable(
    checked: _CheckedPairs, entropies: list[float], threshold: float, max_words: int | None
) -> list[bool]:
    return [
        entropy > threshold and (max_words is None or len(target.split()) < max_words)
        for (_, target), entropy in zip(checked, entropies)
    ]


def filter_by_target_entropy(
    pairs: Pairs, threshold: float = 1.0, max_words: int | None = 15, source: str = "utterance"
) -> EntropyFilterResult:
    """Remove the pairs whose target's entropy exceeds ``threshold`` bits (Csáky et al. 2019, TARGET
    / IDENTITY).

    Args:
        pairs: ``(context, response)`` pairs; a context is a string or a list of turns.
        threshold: entropy in bits above which a target's pairs go (Csáky et al., DailyDialog: 1.0).
        max_words: targets with this many words or more are kept whatever their entropy (the
            released code's ``max_avg_length``); ``None``: no length exemption.
        source: ``"utterance"`` (default): a target's entropy is over the last turns of its
            contexts, the source utterances of Csáky et al.; ``"context"``: over whole contexts
            (every turn; the default of dialeval 0.1.0).
    """
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float))
        or not math.isfinite(threshold)
        or threshold < 0
    ):
        raise ArgumentError("threshold", f"must be a finite number >= 0 (bits), got {threshold!r}")
    _check_max_words(max_words)
    _check_source(source)
    checked = _checked_pairs(pairs, source)
    entropies = _entropies(checked)
    removable = _removable(checked, entropies, float(threshold), max_words)
    return EntropyFilterResult(
        kept=[i for i, drop in enumerate(removable) if not drop],
        removed=[i for i, drop in enumerate(removable) if drop],
        entropies=entropies,
        threshold=float(threshold),
        source=source,
    )


def threshold_for_fraction(
    pairs: Pairs, fraction: float, max_words: int | None = 15, source: str = "utterance"
) -> float:
    """The smallest threshold (one of the pairs' entropies) that removes at most ``fraction`` of the
    pairs.

    Csáky et al. choose thresholds so that a similar share of each dataset is filtered (their
    Table 1: 5-15%); this finds the threshold for a share on another dataset. Pairs of one target
    go together, so the share removed can be below ``fraction``. ``source`` as in
    :func:`filter_by_target_entropy`.
    """
    if (
        isinstance(fraction, bool)
        or not isinstance(fraction, (int, float))
        or not 0 <= fraction < 1
    ):
        raise ArgumentError("fraction", f"must be in [0, 1), got {fraction!r}")
    _check_max_words(max_words)
    _check_source(source)
    checked = _checked_pairs(pairs, source)
    entropies = _entropies(checked)
    for candidate in sorted(set(entropies)):
        if sum(_removable(checked, entropies, candidate, max_words)) <= fraction * len(checked):
            return candidate
    return max(entropies)  # unreachable: the largest entropy removes nothing
