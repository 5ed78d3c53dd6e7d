"""Response-selection accuracy (Sato et al. 2020, §4) and the system-ranking correlation.

The evaluate module is ``response_selection.py`` beside this file; its card is ``README.md``.
"""
from dialeval.metrics.response_selection.selection import (
    random_protocol_correlation,
    read_selection_questions,
    response_selection,
    select_by_loss,
    system_ranking_correlation,
)

__all__ = [
    "random_protocol_correlation", "read_selection_questions", "response_selection", "select_by_loss",
    "system_ranking_correlation",
]
