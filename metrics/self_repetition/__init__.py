"""Self-repetition score: how many of each text's n-grams the other texts also contain (higher =
more repetitive).

Salkar et al. (2022, "Self-Repetition in Abstractive Neural Summarizers", AACL-IJCNLP)
measure how often a system reuses n-grams (n >= 4) across its outputs for different inputs. The
``diversity`` package (Shaib et al. 2024, ``self_repetition_score``) turns that into one figure,
which this module computes: with ``G_i`` the set of distinct whitespace-token n-grams of text
``i`` and ``df(g)`` the number of texts whose set holds ``g``,

    SR(texts) = mean_i log(1 + sum_{g in G_i} (df(g) - 1))

(natural log; ``df(g) - 1`` counts the *other* texts that contain ``g``). A text with fewer than
``n`` tokens has no n-gram and adds ``log(1) = 0``, as in the package. The package pools the
n-gram lists with ``sum(lists, [])``, which copies the growing list once per text (quadratic);
here every distinct n-gram is counted once per text in one ``Counter`` pass (linear).

The evaluate module is ``self_repetition.py`` beside this file; its card is ``README.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
    from dialeval.metrics.self_repetition.scores import (
        self_repetition,
        self_repetition_per_set,
        self_repetition_scores,
    )
else:
    # each name is imported from its module on first use: the metric's declaration (spec.py)
    # is read without loading numpy
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".scores": (
                "self_repetition",
                "self_repetition_per_set",
                "self_repetition_scores",
            )
        },
    )

__all__ = ["self_repetition", "self_repetition_per_set", "self_repetition_scores"]
