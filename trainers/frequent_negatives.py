"""Negative Training's negatives for the frequent-response problem (He & Glass, ACL 2020, §3.3).

He & Glass post-train an MLE-trained model: it decodes a response for training contexts
(greedy, their released ``TRAIN_SAMPLE_TYPE = 'max'``); a response whose share among the
generations is above ``r_thres`` is a *frequent response* and becomes a negative example for the
context that produced it; the model is then trained with a negative-NLL update on those negatives
interleaved with MLE updates on the gold data. Han et al. (2022, §5.2) use this as the NT baseline.

* :func:`response_ratios` / :func:`frequent_negatives`: the pure selection. A response's ratio is
  its count among the generations over their number, responses compared after whitespace
  normalization (the released code joins the sampled tokens with spaces); a generation is a
  negative when its ratio is *strictly* above ``r_thres`` (released: ``d_r[s] > R_THRES``).
  He & Glass set ``r_thres`` = 0.01 on Switchboard and 0.001 on Ubuntu / OpenSubtitles (released
  ``R_THRES``).
* :func:`negative_training_rows`: every gold pair paired with one negative (cycled in a seeded
  order), the examples :class:`~dialeval.trainers.UnlikelihoodTrainer` with
  ``negative_loss="negative_training"`` trains on (one MLE and one negative term per step, as the
  released ``POSITIVE_RATIO = 1``). The released code divides each negative batch by the tokens of
  *all* its generations (non-frequent ones weigh 0); the trainer divides by the negatives' tokens,
  so ``alpha = share`` (:attr:`FrequentNegatives.share`, the negatives' share of the generations)
  gives about the released magnitude.

Differences from He & Glass: the negatives are mined once, from the model before negative training
(the released code re-decodes every training batch and counts ratios over the last 200 batches'
generations); the released code also scales the end-of-sentence token's term by 0.1
(``FREQ_AVOID_SCAL``), which the weight -1 NLL here does not.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from dialeval.trainers.entropy_filtering import normalize_utterance
from dialeval.validation import ArgumentError


@dataclass(frozen=True)
class FrequentNegative:
    """One negative example: the context (by index and value) and its frequent generation."""

    context_index: int
    context: object
    response: str
    ratio: float


@dataclass
class FrequentNegatives:
    """The negatives, the threshold, the share of the generations they are, and every frequent
    response's ratio."""

    examples: list[FrequentNegative]
    r_thres: float
    share: float
    frequent: dict[str, float]


def _check_generations(generations: Sequence[str]) -> list[str]:
    if (
        isinstance(generations, (str, bytes))
        or not isinstance(generations, Sequence)
        or not generations
    ):
        raise ArgumentError("generations", "must be a non-empty sequence of strings")
    if not all(isinstance(text, str) for text in generations):
        raise ArgumentError("generations", "must hold strings only")
    return [normalize_utterance(text) for text in generations]


def response_ratios(generations: Sequence[str]) -> dict[str, float]:
    """Each distinct (whitespace-normalized) generation's count over the number of generations."""
    normalized = _check_generations(generations)
    return {text: count / len(normalized) for text, count in Counter(normalized).items()}


def frequent_negatives(
    contexts: Sequence[object], generations: Sequence[str], r_thres: float
) -> FrequentNegatives:
    """The generations whose ratio is above ``r_thres``, each a negative for the context that
    produced it.

    Args:
        contexts: the context each generation was decoded from (any value; kept as given).
        generations: the model's responses, one per context.
        r_thres: ratio threshold in [0, 1) (He & Glass: 0.01 Switchboard, 0.001 Ubuntu /
            OpenSubtitles).
    """
    if isinstance(r_thres, bool) or not isinstance(r_thres, (int, float)) or not 0 <= r_thres < 1:
        raise ArgumentError("r_thres", f"must be a number in [0, 1), got {r_thres!r}")
    ratios = response_ratios(generations)
    if (
        isinstance(contexts, (str, bytes))
        or not isinstance(contexts, Sequence)
        or len(contexts) != len(generations)
    ):
        raise ArgumentError(
            "contexts", f"must be a sequence with one context per generation ({len(generations)})"
        )
    frequent = {text: ratio for text, ratio in ratios.items() if ratio > r_thres}
    examples = [
        FrequentNegative(
            index, contexts[index], normalize_utterance(text), frequent[normalize_utterance(text)]
        )
        for index, text in enumerate(generations)
        if normalize_utterance(text) in frequent
    ]
    return FrequentNegatives(
        examples=examples,
        r_thres=float(r_thres),
        share=len(examples) / len(generations),
        frequent=frequent,
    )


def negative_training_rows(
    pairs: Sequence[tuple[object, str]], negatives: Sequence[FrequentNegative], seed: int = 0
) -> list[dict]:
    """Every gold ``(context, response)`` pair with one negative, negatives cycled in a seeded
    order.

    Returns dicts ``context``, ``response`` (gold) and ``negative_context``, ``negative_response``
    (the negative's own context: a negative is trained for the context that produced it).
    """
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence) or not pairs:
        raise ArgumentError("pairs", "must be a non-empty sequence of (context, response) pairs")
    if not negatives:
        raise ArgumentError(
            "negatives",
            "is empty: no generation is frequent at this r_thres, nothing to train against",
        )
    if not all(isinstance(negative, FrequentNegative) for negative in negatives):
        raise ArgumentError(
            "negatives", "must hold FrequentNegative items (frequent_negatives(...).examples)"
        )
    order = list(range(len(negatives)))
    random.Random(seed).shuffle(order)
    rows = []
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
        negative = negatives[order[index % len(order)]]
        rows.append(
            {
                "context": pair[0],
                "response": pair[1],
                "negative_context": negative.context,
                "negative_response": negative.response,
            }
        )
    return rows
