"""Remote clique and chamfer distance: hand-computed values, the closed form and the blocked
nearest neighbour against scikit-learn's dense matrix (duplicates included), the `diversity`
package's own functions on DailyDialog++ responses, per-set and corpus paths, bad input."""

import numpy as np
import pytest
from diversity_peer_files import dailydialog_responses, peer_module
from sklearn.metrics.pairwise import cosine_distances

from dialeval.hub import EMBEDDED_SENTENCE_MODEL
from dialeval.metrics.embedding_distances import (
    chamfer_distance,
    chamfer_distance_from_embeddings,
    embedding_distances,
    remote_clique,
    remote_clique_from_embeddings,
)
from dialeval.metrics.engines.embedders import sentence_vectors
from dialeval.metrics.engines.shared_outputs import shared_model_outputs


def dense_reference(rows: np.ndarray) -> tuple[float, float]:
    """The package's two lines, unrounded: scikit-learn's matrix, row means / row minima off the diagonal."""
    distances = cosine_distances(rows)
    return float(np.mean(np.mean(distances, axis=1))), float(
        np.mean(np.min(distances + np.eye(len(rows)) * 1e9, axis=1))
    )


def test_hand_computed_values():
    e1, e2 = [1.0, 0.0], [0.0, 3.0]
    # [e1, e1, e2]: d = 0 between the copies, 1 to e2. Remote clique: rows (0+0+1)/3, (0+0+1)/3,
    # (1+1+0)/3 -> 4/9 (the diagonal counts: divided by n). Chamfer: 0, 0, 1 -> 1/3.
    assert remote_clique_from_embeddings([e1, e1, e2]) == pytest.approx(4 / 9, abs=1e-12)
    assert chamfer_distance_from_embeddings([e1, e1, e2]) == pytest.approx(1 / 3, abs=1e-12)
    # two vectors at 60 degrees: d = 1 - cos 60 = 0.5; remote clique (0 + 0.5) / 2 per row.
    pair = [[1.0, 0.0], [0.5, np.sqrt(3) / 2]]
    assert remote_clique_from_embeddings(pair) == pytest.approx(0.25, abs=1e-12)
    assert chamfer_distance_from_embeddings(pair) == pytest.approx(0.5, abs=1e-12)
    # opposite vectors: the largest distance, 2
    assert chamfer_distance_from_embeddings([[1.0, 1.0], [-2.0, -2.0]]) == pytest.approx(
        2.0, abs=1e-12
    )
    # copies of one vector (at any scale): 0 exactly, not -1e-7
    copies = (
        np.tile(np.array([[0.3, -1.2, 2.0]], dtype=np.float32), (50, 1))
        * np.arange(1, 51, dtype=np.float32)[:, None]
    )
    assert remote_clique_from_embeddings(copies) == 0.0
    assert chamfer_distance_from_embeddings(copies) == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("block_size", [1, 3, 7, 64, 2048])
def test_closed_form_and_blocked_chamfer_equal_the_dense_sklearn_computation(dtype, block_size):
    rng = np.random.default_rng(block_size)
    rows = rng.standard_normal((203, 24)).astype(dtype)
    rows[10] = rows[150]  # duplicates across blocks
    rows[11] = rows[150] * 4.0  # the same direction at another scale: distance 0 too
    rows[60:64] = rows[5]
    rows[200] = -rows[199]
    expected_rc, expected_cd = dense_reference(rows)
    assert remote_clique_from_embeddings(rows) == pytest.approx(expected_rc, abs=1e-6)
    assert chamfer_distance_from_embeddings(rows, block_size=block_size) == pytest.approx(
        expected_cd, abs=1e-6
    )


def test_tied_and_clustered_rows():
    # clusters of near-duplicates: the nearest other row is in the same cluster
    rng = np.random.default_rng(1)
    centres = rng.standard_normal((5, 8))
    rows = np.repeat(centres, 30, axis=0) + 1e-3 * rng.standard_normal((150, 8))
    expected_rc, expected_cd = dense_reference(rows)
    assert chamfer_distance_from_embeddings(rows, block_size=16) == pytest.approx(
        expected_cd, abs=1e-9
    )
    assert remote_clique_from_embeddings(rows) == pytest.approx(expected_rc, abs=1e-9)
    assert expected_cd < 1e-4 < expected_rc


def test_bad_embeddings_name_the_argument():
    for bad, message in [
        ([[1.0, 2.0]], "at least 2 rows"),
        ([1.0, 2.0], "2-D"),
        ([[1.0, np.nan], [1.0, 2.0]], "NaN"),
        ([[0.0, 0.0], [1.0, 2.0]], "row 0 is zero"),
        ([["a", "b"], ["c", "d"]], "numbers"),
        (np.zeros((3, 0)), "at least 2 rows"),
    ]:
        with pytest.raises(ValueError, match="`embeddings`") as error:
            remote_clique_from_embeddings(bad)
        assert message in str(error.value)
        with pytest.raises(ValueError, match="`embeddings`"):
            chamfer_distance_from_embeddings(bad)
    with pytest.raises(ValueError, match="`block_size`"):
        chamfer_distance_from_embeddings([[1.0, 0.0], [0.0, 1.0]], block_size=0)


def test_texts_paths_equal_the_embedding_paths(tiny_roberta_nli_path):
    texts = [
        "I love cats.",
        "I love cats.",
        "Dogs are fine.",
        "It is raining.",
        "So sunny today.",
        "I love cats!",
    ]
    vectors, index = sentence_vectors(texts, tiny_roberta_nli_path, device="cpu")
    rows = vectors[index]
    expected_rc, expected_cd = dense_reference(rows)
    result = embedding_distances(texts, tiny_roberta_nli_path, device="cpu")
    assert result["scope"] == "corpus" and result["num_responses"] == 6
    assert result["remote_clique"] == pytest.approx(expected_rc, abs=1e-6)
    assert result["chamfer_distance"] == pytest.approx(expected_cd, abs=1e-6)
    assert remote_clique(texts, tiny_roberta_nli_path, device="cpu") == result["remote_clique"]
    assert (
        chamfer_distance(texts, tiny_roberta_nli_path, device="cpu") == result["chamfer_distance"]
    )
    assert embedding_distances(
        texts, tiny_roberta_nli_path, figures=["chamfer_distance"], device="cpu"
    ) == {"scope": "corpus", "chamfer_distance": result["chamfer_distance"], "num_responses": 6}


def test_per_set_scope_scores_each_set_as_a_corpus_and_averages(tiny_roberta_nli_path):
    sets = [
        ["I love cats.", "I love cats.", "Dogs are fine."],
        ["It is raining.", "So sunny today."],
        ["Pizza?", "Sushi!", "Pasta.", "Pizza?"],
    ]
    result = embedding_distances(sets, tiny_roberta_nli_path, device="cpu")
    assert result["scope"] == "response_set" and result["num_sets"] == 3
    for row, response_set in zip(result["per_set"], sets, strict=True):
        alone = embedding_distances(response_set, tiny_roberta_nli_path, device="cpu")
        assert row == {
            "remote_clique": alone["remote_clique"],
            "chamfer_distance": alone["chamfer_distance"],
        }
    for figure in ("remote_clique", "chamfer_distance"):
        assert result[figure] == pytest.approx(np.mean([row[figure] for row in result["per_set"]]))
    # a set of two: chamfer is their distance, remote clique half of it (d_ii = 0 counts)
    assert result["per_set"][1]["remote_clique"] == pytest.approx(
        result["per_set"][1]["chamfer_distance"] / 2, abs=1e-6
    )


def test_bad_texts_name_the_argument(tiny_roberta_nli_path):
    with pytest.raises(ValueError, match="`predictions` must hold at least 2"):
        embedding_distances(["only one"], tiny_roberta_nli_path)
    with pytest.raises(ValueError, match=r"`predictions\[1\]` must hold at least 2"):
        embedding_distances([["a", "b"], ["c"]], tiny_roberta_nli_path)
    with pytest.raises(ValueError, match=r"`predictions\[1\]` is an empty string"):
        embedding_distances(["a", ""], tiny_roberta_nli_path)
    with pytest.raises(ValueError, match="`figures`"):
        embedding_distances(["a", "b"], tiny_roberta_nli_path, figures=("vendi",))
    with pytest.raises(ValueError, match="`texts` must hold at least 2"):
        remote_clique(["one"], tiny_roberta_nli_path)
    with pytest.raises(ValueError, match="`texts`"):
        chamfer_distance("not a list", tiny_roberta_nli_path)
    with pytest.raises(ValueError, match="`model`"):
        remote_clique(["a", "b"], 3)


class SameVectors:
    """Stands in for the package's ``SentenceTransformer``: our engine's vectors of the texts."""

    def __init__(self, model):
        self.model = model

    def encode(self, data, batch_size=64, show_progress_bar=False):
        vectors, index = sentence_vectors(list(data), self.model, device="cpu")
        return vectors[index]  # float32, not normalised: as encode() returns them


def test_equal_to_the_diversity_package_on_dailydialog(shared_data, monkeypatch):
    """The package's functions, its SentenceTransformer replaced by one returning the vectors our
    path uses (the embedded all-MiniLM-L6-v2's, each text encoded once in the block), on 300
    DailyDialog++ responses with duplicates."""
    peer = peer_module("embedding")
    responses = dailydialog_responses(shared_data, 300)
    assert len(set(responses)) < len(responses)

    monkeypatch.setattr(peer, "SentenceTransformer", SameVectors)
    with shared_model_outputs():
        compare_with_the_package(peer, responses)


def compare_with_the_package(peer, responses):
    ours = embedding_distances(responses, EMBEDDED_SENTENCE_MODEL, device="cpu")
    expected_rc, expected_cd = dense_reference(
        SameVectors(EMBEDDED_SENTENCE_MODEL).encode(responses)
    )
    assert 0.1 < expected_cd < expected_rc < 1.5
    assert ours["remote_clique"] == pytest.approx(expected_rc, abs=1e-5)
    assert ours["chamfer_distance"] == pytest.approx(expected_cd, abs=1e-5)
    # the package rounds to 3 decimals
    for figure, function in (
        ("remote_clique", peer.remote_clique),
        ("chamfer_distance", peer.chamfer_dist),
    ):
        assert (
            abs(ours[figure] - function(responses, model=EMBEDDED_SENTENCE_MODEL, verbose=False))
            <= 5e-4 + 1e-6
        )
    sets = [responses[i : i + 6] for i in range(0, 60, 6)]
    per_set = embedding_distances(sets, EMBEDDED_SENTENCE_MODEL, device="cpu")["per_set"]
    for row, response_set in zip(per_set, sets, strict=True):
        for figure, function in (
            ("remote_clique", peer.remote_clique),
            ("chamfer_distance", peer.chamfer_dist),
        ):
            assert (
                abs(
                    row[figure]
                    - function(response_set, model=EMBEDDED_SENTENCE_MODEL, verbose=False)
                )
                <= 5e-4 + 1e-6
            )


def test_memory_stays_linear_in_the_rows():
    """Allocations, not time (deterministic): 6,000 rows would need a 144 MB float32 distance
    matrix; the closed form and the tiles need a few copies of the rows and one tile."""
    import tracemalloc

    rows = np.random.default_rng(0).standard_normal((6_000, 8)).astype(np.float32)
    rows[1] = rows[0]
    tracemalloc.start()
    try:
        remote_clique_from_embeddings(rows)
        chamfer_distance_from_embeddings(rows, block_size=512)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024 * 1024, peak  # rows: 0.2 MB (float32), 0.4 MB (float64); a tile: 1 MB


@pytest.mark.parametrize(
    "figure", [remote_clique_from_embeddings, chamfer_distance_from_embeddings]
)
def test_complex_embeddings_are_refused_not_cast_to_their_real_part(figure):
    rows = np.array([[1 + 1j, 0.5], [0.2, 1j]])
    with pytest.raises(ValueError, match="`embeddings` must hold real numbers"):
        figure(rows)
