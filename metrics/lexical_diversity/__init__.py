"""Lexical diversity: per response set (Tevet & Berant 2021) and over a whole corpus (Han et al.
2022).

The evaluate module is ``lexical_diversity.py`` beside this file; its card is ``README.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
    from dialeval.metrics.lexical_diversity.by_scope import (
        corpus_lexical_diversity,
        lexical_diversity,
        set_lexical_diversity,
    )
    from dialeval.metrics.lexical_diversity.corpus import (
        corpus_ngram_diversity,
        distinct_n,
        entropy_n,
        lf,
        token_counts,
    )
    from dialeval.metrics.lexical_diversity.self_bleu import self_bleu
    from dialeval.metrics.lexical_diversity.set_level import (
        averaged_distinct_n,
        ngram_cosine_diversity,
        ngram_cosine_similarity,
    )
    from dialeval.metrics.lexical_diversity.set_level_batch import batch_set_lexical_diversity
else:
    # each name is imported from its module on first use
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".by_scope": ("corpus_lexical_diversity", "lexical_diversity", "set_lexical_diversity"),
            ".corpus": ("corpus_ngram_diversity", "distinct_n", "entropy_n", "lf", "token_counts"),
            ".self_bleu": ("self_bleu",),
            ".set_level": (
                "averaged_distinct_n",
                "ngram_cosine_diversity",
                "ngram_cosine_similarity",
            ),
            ".set_level_batch": ("batch_set_lexical_diversity",),
        },
    )

__all__ = [
    "averaged_distinct_n",
    "batch_set_lexical_diversity",
    "corpus_lexical_diversity",
    "corpus_ngram_diversity",
    "distinct_n",
    "entropy_n",
    "lexical_diversity",
    "lf",
    "ngram_cosine_diversity",
    "ngram_cosine_similarity",
    "self_bleu",
    "set_lexical_diversity",
    "token_counts",
]
