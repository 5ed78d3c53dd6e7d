"""dialeval.metrics: one subpackage per metric, named as its evaluate module, re-exported here.

Each ``<name>/`` holds the metric's pure functions (``__init__.py`` and small files), the
``evaluate`` module ``<name>.py`` and its card ``README.md``; ``engines/`` holds the shared model
engines; :mod:`dialeval.metrics.registry` lists every metric (CONTRIBUTING.md: adding one).

Scope matters: *set-level* metrics score the responses to one context (``list[str]``) and are
averaged over contexts; *corpus-level* metrics pool every generated response (``list[str]``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily, subpackage_exports
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
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
        expectation_adjusted_distinct_scores,
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
    from dialeval.metrics.mtld import mtld, mtld_scores, mtld_words
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

# Each public name and the module it is imported from on first use: importing an engine or one
# metric loads no other metric (and no model stack).
_EXPORTS_BY_MODULE: dict[str, tuple[str, ...]] = {
    "dialeval.metrics.compression_ratio": ("compression_ratio", "compression_ratio_per_set"),
    "dialeval.metrics.diversity_meta_eval": (
        "bootstrap_spearman_ci",
        "diversity_meta_evaluation",
        "optimal_classification_accuracy",
        "pearson",
        "spearman",
        "subsampled_spearman",
    ),
    "dialeval.metrics.embedding_distances": (
        "chamfer_distance",
        "chamfer_distance_from_embeddings",
        "embedding_distances",
        "remote_clique",
        "remote_clique_from_embeddings",
    ),
    "dialeval.metrics.engines.embedders": (
        "LastTokenEmbedder",
        "MeanPoolingEmbedder",
        "SentenceTransformerEmbedder",
        "TextEmbedder",
        "embedder_from_identity",
        "load_embedder",
    ),
    "dialeval.metrics.engines.lm_scorer": ("CandidateScorer",),
    "dialeval.metrics.engines.reduction": (
        "diversity_from_similarity_matrix",
        "similarity_to_diversity",
    ),
    "dialeval.metrics.expectation_adjusted_distinct": (
        "expectation_adjusted_distinct",
        "expectation_adjusted_distinct_scores",
        "expected_distinct",
    ),
    "dialeval.metrics.homogenization": (
        "homogenization",
        "homogenization_per_set",
        "homogenization_score",
    ),
    "dialeval.metrics.lexical_diversity": (
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
    ),
    "dialeval.metrics.mtld": ("mtld", "mtld_scores", "mtld_words"),
    "dialeval.metrics.nbest_contradiction": (
        "ModelYesNoClassifier",
        "PrefixYesNoClassifier",
        "certainty_variety",
        "load_yes_no_classifier",
        "nbest_contradiction",
    ),
    "dialeval.metrics.nli_diversity": (
        "NLIPairMatrix",
        "NLIScorer",
        "iter_nli_pair_matrices",
        "nli_diversity",
        "nli_pair_matrices",
    ),
    "dialeval.metrics.pos_templates": (
        "extract_templates",
        "pos_template_scores",
        "template_rate",
        "templates_per_token",
    ),
    "dialeval.metrics.response_selection": (
        "random_protocol_correlation",
        "response_selection",
        "system_ranking_correlation",
    ),
    "dialeval.metrics.self_repetition": (
        "self_repetition",
        "self_repetition_per_set",
        "self_repetition_scores",
    ),
    "dialeval.metrics.sem_ent": ("SemanticClusters", "distribution_entropy", "sem_ent"),
    "dialeval.metrics.similarity_diversity": (
        "bertscore_diversity",
        "bertscore_similarity_matrices",
        "cross_encoder_similarity_matrices",
        "sent_bert_diversity",
        "similarity_diversity",
        "similarity_matrices",
    ),
    "dialeval.metrics.vendi_score": (
        "vendi_score",
        "vendi_score_from_embeddings",
        "vendi_score_from_kernel",
    ),
    "dialeval.text": ("casual_tokenize", "tevet_tokenize"),
}
if not TYPE_CHECKING:
    # a metric folder not listed above exports the names of its subpackage's __all__
    __getattr__, __dir__ = export_lazily(
        __name__, _EXPORTS_BY_MODULE, more_exports=lambda: subpackage_exports(__name__)
    )


def evaluate_module_path(name: str) -> str:
    """Directory of the evaluate module ``name``, for ``evaluate.load(evaluate_module_path(name))``.

    Works from a source checkout and from an installed wheel alike; the names are the registry's.
    """
    # registry: deferred, it imports every metric's job (importing an engine loads none)
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
    "expectation_adjusted_distinct_scores",
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
    "mtld",
    "mtld_scores",
    "mtld_words",
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
