"""SemanticClusters and Sem-Ent (Han et al. 2022, §3.1 Eq. 1-2) with a controlled embedder."""

import json
import math

import numpy as np
import pytest

from dialeval.metrics.sem_ent.clusters import (
    CONFIG_FILE,
    SemanticClusters,
    distribution_entropy,
    sem_ent,
    sem_ent_from_labels,
)

TOPICS = 4


class TopicEmbedder:
    """Texts "t<topic>-<i>" lie near one of TOPICS well-separated directions; records what it embeds."""

    def __init__(self, dim=16, name="topic-embedder", noise=0.05):
        self.dim, self.name, self.noise = dim, name, noise
        self.embedded = []

    def identity(self):
        return {"kind": "test", "model": self.name, "dim": self.dim}

    def embed(self, texts):
        self.embedded.extend(texts)
        rows = []
        for text in texts:
            topic = int(text.split("-")[0][1:])
            rng = np.random.default_rng(abs(hash(text)) % 2**32)
            vector = np.zeros(self.dim)
            vector[topic] = 1.0
            rows.append(vector + self.noise * rng.standard_normal(self.dim))
        return np.asarray(rows, dtype=np.float32)


def corpus(per_topic=30):
    return [f"t{topic}-{i}" for topic in range(TOPICS) for i in range(per_topic)]


@pytest.fixture(scope="module")
def fitted():
    return SemanticClusters.fit(corpus(), TopicEmbedder(), num_clusters=TOPICS, seed=0)


def test_entropy_edge_cases():
    assert distribution_entropy([1.0, 0.0, 0.0]) == 0.0
    assert distribution_entropy(np.full(20, 0.05)) == pytest.approx(math.log(20))
    assert distribution_entropy([0.5, 0.25, 0.25]) == pytest.approx(
        -(0.5 * math.log(0.5) + 0.5 * math.log(0.25))
    )
    for bad in ([], [0.5, 0.6], [-0.1, 1.1], [[0.5, 0.5]]):
        with pytest.raises(ValueError, match="`distribution`"):
            distribution_entropy(bad)


def test_one_cluster_gives_zero_and_uniform_gives_ln_k(fitted):
    one_topic = [f"t2-{i}" for i in range(100, 140)]
    result = sem_ent(one_topic, fitted)
    assert result["sem_ent"] == 0.0 and result["max_sem_ent"] == pytest.approx(math.log(TOPICS))
    assert sorted(result["cluster_distribution"]) == [0.0, 0.0, 0.0, 1.0]
    uniform = [f"t{topic}-{i}" for topic in range(TOPICS) for i in range(200, 210)]
    assert sem_ent(uniform, fitted)["sem_ent"] == pytest.approx(math.log(TOPICS))
    assert sem_ent_from_labels([0, 0, 1, 1], 4)["sem_ent"] == pytest.approx(math.log(2))


def test_clusters_recover_the_topics(fitted):
    labels = fitted.assign(corpus())
    per_topic = labels.reshape(TOPICS, -1)
    assert all(len(set(row)) == 1 for row in per_topic) and len(set(per_topic[:, 0])) == TOPICS
    assert fitted.reference_distribution.tolist() == [0.25] * TOPICS
    assert fitted.settings["pca_dims"] <= 16 and fitted.settings["explained_variance"] >= 0.9


def test_pca_keeps_the_leading_components_up_to_the_variance_share():
    from sklearn.decomposition import PCA

    texts = corpus(20)
    embedder = TopicEmbedder(noise=0.3)
    clusters = SemanticClusters.fit(texts, embedder, num_clusters=TOPICS, pca_variance=0.8)
    points = embedder.embed(texts)
    points = points / np.linalg.norm(points, axis=1, keepdims=True)
    cumulative = np.cumsum(PCA().fit(points).explained_variance_ratio_)
    # MAUVE's rule: the first index reaching it, inclusive
    expected = int(np.argmax(cumulative >= 0.8)) + 1
    assert clusters.settings["pca_dims"] == expected
    assert (
        SemanticClusters.fit(texts, embedder, num_clusters=TOPICS, pca_variance=1.0).settings[
            "pca_dims"
        ]
        == 16
    )


def test_assignment_is_nearest_centroid_after_normalisation_and_pca(fitted):
    texts = corpus(5)
    raw = TopicEmbedder().embed(texts)
    unit = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    reduced = (unit - fitted.pca_mean) @ fitted.pca_components.T
    expected = np.linalg.norm(reduced[:, None, :] - fitted.centroids[None], axis=2).argmin(axis=1)
    assert fitted.assign(texts).tolist() == expected.tolist()
    # Scaling an embedding does not move it: rows are L2-normalized first.
    assert fitted.assign_embeddings(raw * 7.0).tolist() == expected.tolist()


def test_save_load_round_trip_assigns_identically(fitted, tmp_path):
    fitted.save(tmp_path / "clusters")
    config = json.loads((tmp_path / "clusters" / CONFIG_FILE).read_text(encoding="utf-8"))
    assert (
        config["embedder"] == TopicEmbedder().identity()
        and config["settings"]["num_clusters"] == TOPICS
    )
    assert not list((tmp_path / "clusters").glob("*.pkl"))
    loaded = SemanticClusters.load(tmp_path / "clusters", embedder=TopicEmbedder())
    texts = [f"t{t}-{i}" for t in range(TOPICS) for i in range(50, 57)]
    assert loaded.assign(texts).tolist() == fitted.assign(texts).tolist()
    assert sem_ent(texts, loaded) == sem_ent(texts, fitted)
    np.testing.assert_array_equal(loaded.centroids, fitted.centroids)
    np.testing.assert_array_equal(loaded.reference_distribution, fitted.reference_distribution)


def test_a_different_embedder_is_refused(fitted, tmp_path):
    fitted.save(tmp_path / "c")
    with pytest.raises(ValueError, match="does not match.*model"):
        SemanticClusters.load(tmp_path / "c", embedder=TopicEmbedder(name="another-model"))
    with pytest.raises(ValueError, match="holds no saved clusters"):
        SemanticClusters.load(tmp_path / "nothing-here")


def test_a_save_stopped_between_its_two_files_is_caught_on_load(fitted, tmp_path, monkeypatch):
    from dialeval.metrics.sem_ent import clusters

    fitted.save(tmp_path / "c")
    old_config = (tmp_path / "c" / CONFIG_FILE).read_bytes()
    other = SemanticClusters.fit(
        corpus(15), TopicEmbedder(noise=0.5), num_clusters=6, seed=4, n_init=2
    )
    written = clusters.write_atomically

    def stop_before_the_config(path, data):
        if path.name == CONFIG_FILE:
            raise KeyboardInterrupt
        return written(path, data)

    monkeypatch.setattr(clusters, "write_atomically", stop_before_the_config)
    with pytest.raises(KeyboardInterrupt):
        other.save(tmp_path / "c")  # new tensors are in, the config is still the old one
    assert (tmp_path / "c" / CONFIG_FILE).read_bytes() == old_config
    with pytest.raises(ValueError, match="is not the one semantic_clusters.json was saved with"):
        SemanticClusters.load(tmp_path / "c", embedder=TopicEmbedder())


def test_saving_into_a_file_names_the_argument(fitted, tmp_path):
    taken = tmp_path / "in.jsonl"
    taken.write_text("mine\n", encoding="utf-8")
    with pytest.raises(ValueError, match="`directory` .*in.jsonl' is a file, not a folder"):
        fitted.save(taken)
    assert taken.read_text(encoding="utf-8") == "mine\n"


def test_fixed_seed_reproduces_and_seeds_are_recorded():
    texts = corpus(15)
    first = SemanticClusters.fit(texts, TopicEmbedder(noise=0.5), num_clusters=6, seed=3, n_init=2)
    second = SemanticClusters.fit(texts, TopicEmbedder(noise=0.5), num_clusters=6, seed=3, n_init=2)
    np.testing.assert_array_equal(first.centroids, second.centroids)
    assert first.settings["seed"] == 3 and first.settings["n_init"] == 2


def test_minibatch_algorithm_is_available_and_recorded():
    clusters = SemanticClusters.fit(
        corpus(), TopicEmbedder(), num_clusters=TOPICS, algorithm="minibatch_kmeans"
    )
    assert clusters.settings["algorithm"] == "minibatch_kmeans"
    labels = clusters.assign(corpus()).reshape(TOPICS, -1)
    assert len(set(labels[:, 0])) == TOPICS


def test_bad_input_is_named(fitted):
    with pytest.raises(ValueError, match="`texts` is empty"):
        sem_ent([], fitted)
    with pytest.raises(ValueError, match="`texts`"):
        fitted.assign("t0-1")
    with pytest.raises(ValueError, match=r"`reference_texts\[1\]`"):
        SemanticClusters.fit(["t0-1", 3], TopicEmbedder())
    with pytest.raises(ValueError, match="`reference_texts` is empty"):
        SemanticClusters.fit([], TopicEmbedder())
    with pytest.raises(ValueError, match="fewer than `num_clusters`"):
        SemanticClusters.fit(["t0-1", "t0-1", "t1-1"], TopicEmbedder(), num_clusters=3)
    with pytest.raises(ValueError, match="`pca_variance`"):
        SemanticClusters.fit(corpus(), TopicEmbedder(), pca_variance=0)
    with pytest.raises(ValueError, match="`algorithm`"):
        SemanticClusters.fit(corpus(), TopicEmbedder(), algorithm="faiss")
    with pytest.raises(ValueError, match="`clusters`"):
        sem_ent(["t0-1"], "clusters/")
    with pytest.raises(ValueError, match=r"`embeddings` must be \(n, 16\)"):
        fitted.assign_embeddings(np.ones(16))
