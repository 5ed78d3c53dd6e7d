"""Certainty and Variety of n-best lists (Sato et al. 2022, §3) and the yes/no classifiers.

The evaluate module is ``nbest_contradiction.py`` beside this file; its card is ``README.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
    from dialeval.metrics.nbest_contradiction.certainty_variety import (
        certainty_variety,
        nbest_contradiction,
    )
    from dialeval.metrics.nbest_contradiction.yes_no import (
        ModelYesNoClassifier,
        PrefixYesNoClassifier,
        load_yes_no_classifier,
    )
else:
    # each name is imported from its module on first use
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".certainty_variety": ("certainty_variety", "nbest_contradiction"),
            ".yes_no": ("ModelYesNoClassifier", "PrefixYesNoClassifier", "load_yes_no_classifier"),
        },
    )

__all__ = [
    "ModelYesNoClassifier",
    "PrefixYesNoClassifier",
    "certainty_variety",
    "load_yes_no_classifier",
    "nbest_contradiction",
]
