"""Certainty and Variety of n-best lists (Sato et al. 2022, §3) and the yes/no classifiers.

The evaluate module is ``nbest_contradiction.py`` beside this file; its card is ``README.md``.
"""

from dialeval.metrics.nbest_contradiction.certainty_variety import (
    certainty_variety,
    nbest_contradiction,
)
from dialeval.metrics.nbest_contradiction.yes_no import (
    ModelYesNoClassifier,
    PrefixYesNoClassifier,
    load_yes_no_classifier,
)

__all__ = [
    "ModelYesNoClassifier",
    "PrefixYesNoClassifier",
    "certainty_variety",
    "load_yes_no_classifier",
    "nbest_contradiction",
]
