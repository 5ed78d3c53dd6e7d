"""Checks on the crowd scores released with Sato et al.'s (2020) response-selection test set.

Every candidate (ground truth first, then the three false candidates) was scored by five
crowd workers on 1 to 5, with 0 for an ungrammatical utterance (§3.1). Two checks:

- Fleiss' kappa (Table 1): 0.22 with the six scores as categories (footnote 3: "based on the
  scale of the scores as categorical"), 0.63 as two classes, score > 3 = appropriate. Computed
  with ``statsmodels.stats.inter_rater.fleiss_kappa`` over all candidates x 5 raters.
- The filtering rules of §3.1 hold for every question: a false candidate with three or more
  scores >= 3 (acceptable) or three or more 0s (ungrammatical) was removed, and so was a question
  whose ground truth got three or more scores <= 3.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

CANDIDATES_PER_QUESTION = 4
RATERS_PER_CANDIDATE = 5
SCORE_RANGE = (0, 5)
#: §3.1: "three or more annotators".
RULE_MIN_RATERS = 3
#: Table 1's two-class scoring: "scores higher than 3 are regarded as appropriate responses".
APPROPRIATE_ABOVE = 3


def scores_array(scores: ArrayLike) -> np.ndarray:
    """``scores`` as an int array ``(questions, 4, 5)``; ``ValueError`` if it has another shape or
    values outside 0-5."""
    try:
        array = np.asarray(scores)
    except ValueError:
        array = None
    shape = (CANDIDATES_PER_QUESTION, RATERS_PER_CANDIDATE)
    if array is None or array.ndim != 3 or array.shape[1:] != shape or len(array) == 0:
        raise ArgumentError(
            "scores",
            f"must be a non-empty list of questions, each {shape[0]} candidates x {shape[1]} "
            "integer scores",
        )
    if not np.issubdtype(array.dtype, np.integer):
        raise ArgumentError("scores", "must hold integers (0 = ungrammatical, 1 to 5)")
    if array.min() < SCORE_RANGE[0] or array.max() > SCORE_RANGE[1]:
        raise ArgumentError(
            "scores",
            f"must lie in {SCORE_RANGE[0]}..{SCORE_RANGE[1]}, got {array.min()}..{array.max()}",
        )
    return array.astype(np.int64)


def fleiss_kappa_of_scores(scores: ArrayLike, classes: str = "six") -> float:
    """Fleiss' kappa of the crowd scores over every candidate (paper Table 1).

    ``classes="six"``: the scores 0-5 as categories (Table 1: 0.22); ``"two"``: score > 3 vs
    the rest (Table 1: 0.63).
    """
    # statsmodels: deferred to the one path that needs it
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    if classes not in {"six", "two"}:
        raise ArgumentError("classes", f"must be 'six' or 'two', got {classes!r}")
    ratings = scores_array(scores).reshape(-1, RATERS_PER_CANDIDATE)
    if classes == "two":
        ratings = (ratings > APPROPRIATE_ABOVE).astype(np.int64)
    # n_cat fixes the category columns, so a score nobody gave still counts as a category.
    table, _ = aggregate_raters(ratings, n_cat=6 if classes == "six" else 2)
    return float(fleiss_kappa(table, method="fleiss"))


def filtering_violations(scores: ArrayLike) -> list[str]:
    """Every breach of §3.1's filtering rules, one message per candidate; empty when all hold."""
    array = scores_array(scores)
    violations = []
    for question, candidates in enumerate(array):
        ground_truth, false_candidates = candidates[0], candidates[1:]
        if (ground_truth <= 3).sum() >= RULE_MIN_RATERS:
            violations.append(
                f"question {question}: the ground truth has {int((ground_truth <= 3).sum())} "
                "scores <= 3"
            )
        for position, false_scores in enumerate(false_candidates, start=1):
            if (false_scores >= 3).sum() >= RULE_MIN_RATERS:
                violations.append(
                    f"question {question}, false candidate {position}: "
                    f"{int((false_scores >= 3).sum())} scores >= 3"
                )
            if (false_scores == 0).sum() >= RULE_MIN_RATERS:
                violations.append(
                    f"question {question}, false candidate {position}: "
                    f"{int((false_scores == 0).sum())} zeros"
                )
    return violations
