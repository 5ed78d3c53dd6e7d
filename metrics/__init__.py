"""dialeval.metrics: one subpackage per metric, named as its evaluate module, re-exported here.

Each ``<name>/`` holds the metric's pure functions (``__init__.py`` and small files), the
``evaluate`` module ``<name>.py`` and its card ``README.md``; ``engines/`` holds the shared model
engines; :mod:`dialeval.metrics.registry` lists every metric (CONTRIBUTING.md: adding one).

Scope matters: *set-level* metrics score the responses to one context (``list[str]``) and are
averaged over contexts; *corpus-level* metrics pool every generated response (``list[str]``).
"""

from dialeval.metrics.compression_ratio import compression_ratio, compression_ratio_per_set
from dialeval.metrics.diversity_meta_eval import (
    bootstrap_spearman_ci,
    diversity_meta_evaluation,
    optimal_classification_accuracy,
    pearson,
    spearman,
    subsampled_spearman,
)
from dialeval.metrics.embedding_distances import (
    chamfer_distance,
    chamfer_distance_from_embeddings,
    embedding_distances,
    remote_clique,
    remote_clique_from_embeddings,
)
from dialeval.metrics.engines.embedders import (
    LastTokenEmbedder,
    MeanPoolingEmbedder,
    SentenceTransformerEmbedder,
    TextEmbedder,
    embedder_from_identity,
    load_embedder,
)
from dialeval.metrics.engines.lm_scorer import CandidateScorer
from dialeval.metrics.engines.reduction import (
    diversity_from_similarity_matrix,
    similarity_to_diversity,
)
from dialeval.metrics.expectation_adjusted_distinct import (
    expectation_adjusted_distinct,
    expected_distinct,
)
from dialeval.metrics.homogenization import (
    homogenization,
    homogenization_per_set,
    homogenization_score,
)
from dialeval.metrics.lexical_diversity import (
    averaged_distinct_n,
    batch_set_lexical_diversity,
    corpus_lexical_diversity,
    corpus_ngram_diversity,
    distinct_n,
    entropy_n,
    lexical_diversity,
    lf,
    ngram_cosine_diversity,
    ngram_cosine_similarity,
    self_bleu,
    set_lexical_diversity,
    token_counts,
)
from dialeval.metrics.nbest_contradiction import (
    ModelYesNoClassifier,
    PrefixYesNoClassifier,
    certainty_variety,
    load_yes_no_classifier,
    nbest_contradiction,
)
from dialeval.metrics.nli_diversity import (
    NLIPairMatrix,
    NLIScorer,
    iter_nli_pair_matrices,
    nli_diversity,
    nli_pair_matrices,
)
from dialeval.metrics.pos_templates import (
    extract_templates,
    pos_template_scores,
    template_rate,
    templates_per_token,
)
from dialeval.metrics.response_selection import (
    random_protocol_correlation,
    response_selection,
    system_ranking_correlation,
)
from dialeval.metrics.self_repetition import (
    self_repetition,
    self_repetition_per_set,
    self_repetition_scores,
)
from dialeval.metrics.sem_ent import SemanticClusters, distribution_entropy, sem_ent
from dialeval.metrics.similarity_diversity import (
    bertscore_diversity,
    bertscore_similarity_matrices,
    cross_encoder_similarity_matrices,
    sent_bert_diversity,
    similarity_diversity,
    similarity_matrices,
)
from dialeval.metrics.vendi_score import (
    vendi_score,
    vendi_score_from_embeddings,
    vendi_score_from_kernel,
)
from dialeval.text import casual_tokenize, tevet_tokenize
from dialeval.validation import ArgumentError


def evaluate_module_path(name: str) -> str:
    """Directory of the evaluate module ``name``, for ``evaluate.load(evaluate_module_path(name))``.

    Works from a source checkout and from an installed wheel alike; the names are the registry's.
    """
    from dialeval.metrics import registry

    if name not in registry.BY_NAME:
        raise ArgumentError(
            "name", f"must be one of the evaluate modules {sorted(registry.BY_NAME)}, got {name!r}"
        )
    return str(registry.BY_NAME[name].module_dir)


__all__ = [
    "CandidateScorer",
    "LastTokenEmbedder",
    "MeanPoolingEmbedder",
    "ModelYesNoClassifier",
    "NLIPairMatrix",
    "NLIScorer",
    "PrefixYesNoClassifier",
    "SemanticClusters",
    "SentenceTransformerEmbedder",
    "TextEmbedder",
    "averaged_distinct_n",
    "batch_set_lexical_diversity",
    "bertscore_diversity",
    "bertscore_similarity_matrices",
    "bootstrap_spearman_ci",
    "casual_tokenize",
    "certainty_variety",
    "chamfer_distance",
    "chamfer_distance_from_embeddings",
    "compression_ratio",
    "compression_ratio_per_set",
    "corpus_lexical_diversity",
    "corpus_ngram_diversity",
    "cross_encoder_similarity_matrices",
    "distinct_n",
    "distribution_entropy",
    "diversity_from_similarity_matrix",
    "diversity_meta_evaluation",
    "embedder_from_identity",
    "embedding_distances",
    "entropy_n",
    "evaluate_module_path",
    "expectation_adjusted_distinct",
    "expected_distinct",
    # part-of-speech templates (the `diversity` package's)
    "extract_templates",
    "homogenization",
    "homogenization_per_set",
    "homogenization_score",
    "iter_nli_pair_matrices",
    "lexical_diversity",
    "lf",
    "load_embedder",
    "load_yes_no_classifier",
    "nbest_contradiction",
    "ngram_cosine_diversity",
    "ngram_cosine_similarity",
    "nli_diversity",
    "nli_pair_matrices",
    "optimal_classification_accuracy",
    "pearson",
    "pos_template_scores",
    "random_protocol_correlation",
    "remote_clique",
    "remote_clique_from_embeddings",
    "response_selection",
    "self_bleu",
    "self_repetition",
    "self_repetition_per_set",
    "self_repetition_scores",
    "sem_ent",
    "sent_bert_diversity",
    "set_lexical_diversity",
    "similarity_diversity",
    "similarity_matrices",
    "similarity_to_diversity",
    "spearman",
    "subsampled_spearman",
    "system_ranking_correlation",
    "template_rate",
    "templates_per_token",
    "tevet_tokenize",
    "token_counts",
    "vendi_score",
    "vendi_score_from_embeddings",
    "vendi_score_from_kernel",
]


def _export_registered_functions() -> None:
    """Put every registered metric's public functions on this package too, so that a new metric's
    registry entry is all it takes (the names imported above stay as they are)."""
    import importlib
    import inspect

    from dialeval.metrics import registry

    namespace = globals()
    for metric in registry.METRICS:
        package = importlib.import_module(f"dialeval.metrics.{metric.name}")
        for name in metric.functions:
            # a subpackage named as its function sits here as a module until the function replaces
            # it
            if name not in namespace or inspect.ismodule(namespace[name]):
                namespace[name] = getattr(package, name)
            if name not in __all__:
                __all__.append(name)


_export_registered_functions()
