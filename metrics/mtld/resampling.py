"""A corpus's MTLD on resamples, approximately, for ``dialeval evaluate --ci``.

MTLD reads the tokens in order, so an exact resample is a full pass each. Instead each response
keeps the factors that close in it in the corpus's forward and backward passes (the partial
factor goes to the response each pass ends in) and its token count; a resample's MTLD is the
mean over the two passes of its tokens over its factors, as :func:`.scores._mtld_of_tokens`
combines them. All ones give the figure itself.
"""

from __future__ import annotations

import numpy as np

from dialeval.metrics.mtld.scores import DEFAULT_THRESHOLD, mtld_words
from dialeval.resampling import UnitStatistic

#: How the figure is resampled.
METHOD = (
    "resample's tokens over the MTLD factors its responses close in the corpus's two passes "
    "(contexts fixed)"
)


def _factors_by_response(words: list[list[str]], threshold: float, backward: bool) -> np.ndarray:
    """The factors that close in each response in one pass (``_factors``'s rule)."""
    factors = np.zeros(len(words))
    seen: set[str] = set()
    count, last = 0, None
    order = range(len(words) - 1, -1, -1) if backward else range(len(words))
    for response in order:
        tokens = words[response][::-1] if backward else words[response]
        for token in tokens:
            count += 1
            seen.add(token)
            if len(seen) / count <= threshold:
                factors[response] += 1
                seen, count = set(), 0
        if tokens:
            last = response
    if count and last is not None:
        factors[last] += (1 - len(seen) / count) / (1 - threshold)
    return factors


def mtld_statistic(responses: list[str], threshold: float = DEFAULT_THRESHOLD) -> UnitStatistic:
    """MTLD of resampled ``responses`` (one unit per response; the job's words)."""
    words = [mtld_words(response) for response in responses]
    tokens = np.array([len(w) for w in words], dtype=float)
    passes = [_factors_by_response(words, threshold, backward) for backward in (False, True)]

    def evaluate(counts: np.ndarray) -> np.ndarray:
        total = counts @ tokens
        values = []
        for factors in passes:
            drawn = counts @ factors
            values.append(total / np.where(drawn > 0, drawn, 1.0))
        return np.where(total > 0, (values[0] + values[1]) / 2, 0.0)

    return UnitStatistic(len(responses), evaluate, METHOD, exact=False)
