"""Response-selection accuracy (Sato et al. 2020, §4) and the system-ranking correlation; building
test sets of your own (§3, App. A) and the RANDOM protocol (§4.2-4.3, Fig. 2).

The evaluate module is ``response_selection.py`` beside this file; its card is ``README.md``.
"""

from dialeval.metrics.response_selection.baselines import tfidf_selection
from dialeval.metrics.response_selection.construction import (
    BM25Retriever,
    CandidatePool,
    EmbeddingRetriever,
    assemble_questions,
    build_repository,
    filter_pool,
    random_trial,
    retrieve_candidate_pools,
    scoring_sheet,
)
from dialeval.metrics.response_selection.random_protocol import (
    random_protocol_accuracies,
    random_protocol_figure,
)
from dialeval.metrics.response_selection.selection import (
    random_protocol_correlation,
    read_selection_questions,
    response_selection,
    select_by_loss,
    system_ranking_correlation,
)

__all__ = [
    "BM25Retriever",
    "CandidatePool",
    "EmbeddingRetriever",
    "assemble_questions",
    "build_repository",
    "filter_pool",
    "random_protocol_accuracies",
    "random_protocol_correlation",
    "random_protocol_figure",
    "random_trial",
    "read_selection_questions",
    "response_selection",
    "retrieve_candidate_pools",
    "scoring_sheet",
    "select_by_loss",
    "system_ranking_correlation",
    "tfidf_selection",
]
