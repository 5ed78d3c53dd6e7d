"""dialeval.metrics: pure metric functions (this package) and evaluate modules (sub-folders).

Scope matters: *set-level* metrics score the responses to one context (``list[str]``) and are
averaged over contexts; *corpus-level* metrics pool every generated response (``list[str]``).
"""
from pathlib import Path

from .bertscore import bertscore_diversity, bertscore_similarity_matrices
from .certainty_variety import certainty_variety, nbest_contradiction
from .corpus_lexical import corpus_ngram_diversity, distinct_n, entropy_n, lf, token_counts
from .cross_encoder import cross_encoder_similarity_matrices
from .embedders import (
    LastTokenEmbedder,
    MeanPoolingEmbedder,
    SentenceTransformerEmbedder,
    TextEmbedder,
    embedder_from_identity,
    load_embedder,
)
from .lexical import corpus_lexical_diversity, lexical_diversity, set_lexical_diversity
from .meta_evaluation import (
    bootstrap_spearman_ci,
    diversity_meta_evaluation,
    optimal_classification_accuracy,
    pearson,
    spearman,
    subsampled_spearman,
)
from .nli import NLIPairMatrix, NLIScorer, iter_nli_pair_matrices, nli_diversity, nli_pair_matrices
from .reduction import diversity_from_similarity_matrix, similarity_to_diversity
from .response_selection_core import (
    CandidateScorer,
    random_protocol_correlation,
    response_selection,
    system_ranking_correlation,
)
from .self_bleu import self_bleu
from .semantic_clusters import SemanticClusters, distribution_entropy, sem_ent
from .sentence_embedding import sent_bert_diversity
from .set_lexical import averaged_distinct_n, ngram_cosine_diversity, ngram_cosine_similarity
from .set_lexical_batch import batch_set_lexical_diversity
from .similarity import similarity_diversity, similarity_matrices
from .tokenization import casual_tokenize, tevet_tokenize
from .vendi import vendi_score, vendi_score_from_embeddings, vendi_score_from_kernel
from .yes_no import ModelYesNoClassifier, PrefixYesNoClassifier, load_yes_no_classifier


def evaluate_module_path(name: str) -> str:
    """Directory of the evaluate module ``name``, for ``evaluate.load(evaluate_module_path(name))``.

    Works from a source checkout and from an installed wheel alike.
    """
    path = Path(__file__).resolve().parent / name
    if not (path / f"{name}.py").is_file():
        available = sorted(p.name for p in Path(__file__).resolve().parent.iterdir() if (p / f"{p.name}.py").is_file())
        raise ValueError(f"`name` must be one of the evaluate modules {available}, got {name!r}")
    return str(path)


__all__ = [
    "PrefixYesNoClassifier",
    "nbest_contradiction",
    "ModelYesNoClassifier",
    "load_yes_no_classifier",
    "certainty_variety",
    "LastTokenEmbedder",
    "MeanPoolingEmbedder",
    "SemanticClusters",
    "SentenceTransformerEmbedder",
    "TextEmbedder",
    "distribution_entropy",
    "embedder_from_identity",
    "load_embedder",
    "sem_ent",
    "averaged_distinct_n",
    "batch_set_lexical_diversity",
    "bertscore_diversity",
    "bertscore_similarity_matrices",
    "bootstrap_spearman_ci",
    "casual_tokenize",
    "corpus_lexical_diversity",
    "corpus_ngram_diversity",
    "cross_encoder_similarity_matrices",
    "distinct_n",
    "diversity_from_similarity_matrix",
    "diversity_meta_evaluation",
    "entropy_n",
    "evaluate_module_path",
    "iter_nli_pair_matrices",
    "lexical_diversity",
    "lf",
    "ngram_cosine_diversity",
    "ngram_cosine_similarity",
    "nli_diversity",
    "nli_pair_matrices",
    "NLIPairMatrix",
    "NLIScorer",
    "optimal_classification_accuracy",
    "pearson",
    "CandidateScorer",
    "random_protocol_correlation",
    "response_selection",
    "system_ranking_correlation",
    "self_bleu",
    "sent_bert_diversity",
    "set_lexical_diversity",
    "similarity_diversity",
    "similarity_matrices",
    "similarity_to_diversity",
    "spearman",
    "subsampled_spearman",
    "tevet_tokenize",
    "token_counts",
    "vendi_score",
    "vendi_score_from_embeddings",
    "vendi_score_from_kernel",
]
