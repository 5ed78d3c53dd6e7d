from dialeval.datasets_scripts.response_selection.released_scores import (
    filtering_violations,
    fleiss_kappa_of_scores,
)
from dialeval.datasets_scripts.response_selection.response_selection import (
    ResponseSelection,
    ResponseSelectionConfig,
)

__all__ = [
    "ResponseSelection",
    "ResponseSelectionConfig",
    "filtering_violations",
    "fleiss_kappa_of_scores",
]
