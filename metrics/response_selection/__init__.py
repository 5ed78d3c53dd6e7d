"""Response-selection accuracy (Sato et al. 2020, §4) and the system-ranking correlation; building
test sets of your own (§3, App. A) and the RANDOM protocol (§4.2-4.3, Fig. 2).

The evaluate module is ``response_selection.py`` beside this file; its card is ``README.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
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
else:
    # each name is imported from its module on first use
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".baselines": ("tfidf_selection",),
            ".construction": (
                "BM25Retriever",
                "CandidatePool",
                "EmbeddingRetriever",
                "assemble_questions",
                "build_repository",
                "filter_pool",
                "random_trial",
                "retrieve_candidate_pools",
                "scoring_sheet",
            ),
            ".random_protocol": ("random_protocol_accuracies", "random_protocol_figure"),
            ".selection": (
                "random_protocol_correlation",
                "read_selection_questions",
                "response_selection",
                "select_by_loss",
                "system_ranking_correlation",
            ),
        },
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
