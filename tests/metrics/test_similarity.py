"""Similarity diversity (Tevet & Berant §5) over sent-BERT, n-gram cosine and cross-encoder similarity."""

from pathlib import Path

import numpy as np
import pytest

from dialeval.hub import ModelNotAvailableError
from dialeval.metrics import ngram_cosine_diversity, sent_bert_diversity
from dialeval.metrics.engines.pair_scorer import PairScoringStats
from dialeval.metrics.similarity_diversity.cross_encoder import (
    cross_encoder_activation,
    cross_encoder_similarity_matrices,
)
from dialeval.metrics.similarity_diversity.similarity import (
    ngram_cosine_unit_similarity,
    similarity_diversity,
    similarity_matrices,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
SETS = [
    ["I stayed at home and relaxed.", "I just relaxed at home.", "Nothing much, relaxing at home."],
    [
        "I went hiking in the mountains.",
        "I fixed the kitchen sink.",
        "We ate seafood on the coast.",
        "I fixed the kitchen sink.",
    ],
]


def test_ngram_cosine_matrix_reproduces_tevet_cos_sim():
    for responses in SETS + [["a b c d e f", "a b c x y z", "q r s"]]:
        matrix = ngram_cosine_unit_similarity(responses).full_matrix(diagonal=1.0)
        assert np.allclose(matrix, matrix.T)
        expected = ngram_cosine_diversity(responses)
        assert similarity_diversity([responses], "ngram_cosine")[
            "similarity_diversity"
        ] == pytest.approx(expected, abs=1e-12)


def test_sent_bert_default_is_the_embedded_minilm_and_matches_sent_bert_diversity():
    result = similarity_diversity(SETS)
    assert result["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert [row["similarity_diversity"] for row in result["per_set"]] == pytest.approx(
        sent_bert_diversity(SETS), abs=1e-12
    )
    low, high = (row["similarity_diversity"] for row in result["per_set"])
    assert high > low + 0.2
    assert result["similarity_diversity"] == pytest.approx((low + high) / 2)


def test_matrices_are_symmetric_with_unit_diagonal():
    for matrix in similarity_matrices(SETS, "sent_bert"):
        assert np.allclose(matrix, matrix.T, atol=1e-6)
        assert np.allclose(np.diag(matrix), 1.0, atol=1e-5)


def test_dispatcher_rejects_bad_arguments():
    with pytest.raises(ValueError, match="similarity"):
        similarity_diversity(SETS, "jaccard")
    with pytest.raises(ValueError, match=r"^`max_n` does not apply to similarity="):
        similarity_diversity(SETS, "sent_bert", max_n=3)
    with pytest.raises(ValueError, match="model"):
        similarity_diversity(SETS, "ngram_cosine", model="x")
    with pytest.raises(ValueError, match=r"response_sets\[0\].*at least 2"):
        similarity_diversity([["alone"]], "ngram_cosine")


def test_missing_default_models_say_how_to_get_them():
    with pytest.raises(ModelNotAvailableError, match="cross-encoder/stsb-roberta-large"):
        similarity_diversity(SETS, "cross_encoder")


# ---------------------------------------------------------------- cross-encoder STS


def test_cross_encoder_equals_sentence_transformers_predict_averaged_over_both_orders(
    tiny_cross_encoder_path,
):
    from sentence_transformers import CrossEncoder

    reference = CrossEncoder(tiny_cross_encoder_path, device="cpu")
    stats = PairScoringStats()
    matrices = cross_encoder_similarity_matrices(
        SETS, model=tiny_cross_encoder_path, batch_size=3, stats=stats
    )
    for responses, matrix in zip(SETS, matrices):
        for i in range(len(responses)):
            for j in range(i):
                both = reference.predict(
                    [(responses[i], responses[j]), (responses[j], responses[i])]
                )
                assert matrix[i, j] == pytest.approx(float(np.mean(both)), abs=1e-5)
                assert matrix[j, i] == matrix[i, j]
    # Set 1 holds a duplicate: its pairs with the others repeat and are scored once.
    assert stats.num_unique_pairs < stats.num_pairs


def test_cross_encoder_scores_vary_and_reduce_to_diversity(tiny_cross_encoder_path):
    result = similarity_diversity(SETS, "cross_encoder", model=tiny_cross_encoder_path)
    values = [row["similarity_diversity"] for row in result["per_set"]]
    assert all(-1 <= value <= 0 for value in values)  # sigmoid scores in (0, 1)
    assert values[0] != pytest.approx(values[1])


def test_cross_encoder_activation_follows_the_checkpoint():
    class Config:
        pass

    config = Config()
    assert cross_encoder_activation(config) == "sigmoid"
    config.sentence_transformers = {"activation_fn": "torch.nn.modules.linear.Identity"}
    assert cross_encoder_activation(config) == "none"
    config.sentence_transformers = {"activation_fn": "torch.nn.modules.activation.Tanh"}
    with pytest.raises(ValueError, match="activation"):
        cross_encoder_activation(config)


def test_an_nli_model_is_not_a_cross_encoder(tiny_roberta_nli_path):
    with pytest.raises(ValueError, match="one-output"):
        similarity_diversity(SETS, "cross_encoder", model=tiny_roberta_nli_path)


# ---------------------------------------------------------------- the evaluate module


def test_evaluate_module_offline_with_the_embedded_model():
    import evaluate

    module = evaluate.load(str(REPO_ROOT / "metrics" / "similarity_diversity"))
    result = module.compute(predictions=SETS)
    assert result["per_set"] == similarity_diversity(SETS)["per_set"]
    ngram = module.compute(predictions=SETS, similarity="ngram_cosine", max_n=3)
    assert ngram["similarity_diversity"] == pytest.approx(
        np.mean([ngram_cosine_diversity(s, max_n=3) for s in SETS])
    )
    with pytest.raises(ValueError, match="predictions"):
        module.compute(predictions=[["a", "b"], 3])
    with pytest.raises(ValueError, match="references"):
        module.compute(predictions=SETS, references=SETS)
