"""EAD, expectation-adjusted distinct: Distinct-n without its bias against long outputs.

Liu et al. (2022), "Rethinking and Refining the Distinct Metric" (ACL, short paper), show that
Distinct-n (distinct n-grams / all n-grams, Li et al. 2016) falls as a text grows even when its
words are drawn uniformly at random, so it penalises long responses. EAD divides the number of
distinct n-grams by the number expected when ``C`` n-grams are drawn uniformly from a vocabulary
of ``V`` items, instead of by ``C``:

    EAD = N_distinct / (V * (1 - ((V - 1) / V) ** C))

(the paper's §3; the authors' reference implementation, the Hugging Face Space
``lsy641/distinct``, computes it for unigrams over the tokens of evaluate's 13a tokenizer, with
``V`` given as ``vocab_size`` or counted from ``dataForVocabCal``). For n-grams of order ``n > 1``
dialeval takes the draw space to be ``V ** n``, the n-grams of a ``V``-word vocabulary; the
reference implementation has no such order. The expectation is computed as
``-expm1(C * log1p(-1 / V**n)) * V**n``, exact in float64 where the textbook form would round
``(V - 1) / V`` to 1; as ``V**n`` outgrows ``C`` it tends to ``C`` and EAD to Distinct-n.

``V`` has no default: the authors' implementation takes the evaluated model's vocabulary and
refuses to run without one, and EAD moves with ``V`` (by a quarter on a corpus between BERT's
30,522 and GPT-2's 50,257), so a silent default would make figures incomparable.

The evaluate module is ``expectation_adjusted_distinct.py`` beside this file; its card is
``README.md`` (how to choose ``V`` and every difference from the reference implementation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
    from dialeval.metrics.expectation_adjusted_distinct.scores import (
        VOCABULARY_ADVICE,
        expectation_adjusted_distinct,
        expectation_adjusted_distinct_scores,
        expected_distinct,
    )
else:
    # each name is imported from its module on first use: the metric's declaration (spec.py)
    # is read without loading numpy
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".scores": (
                "VOCABULARY_ADVICE",
                "expectation_adjusted_distinct",
                "expectation_adjusted_distinct_scores",
                "expected_distinct",
            )
        },
    )

__all__ = [
    "VOCABULARY_ADVICE",
    "expectation_adjusted_distinct",
    "expectation_adjusted_distinct_scores",
    "expected_distinct",
]
