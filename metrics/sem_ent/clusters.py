"""Sem-Ent (Han et al., Findings of EMNLP 2022, §3.1, Eq. 1-2): entropy over fitted semantic
clusters.

Responses of a reference corpus (the training set's gold responses in the paper) are embedded,
clustered into k semantic clusters, and a set of generated responses is scored by the entropy
of its cluster histogram: ``Sem-Ent = -sum_j p(j) ln p(j)`` (Eq. 2), at most ``ln k`` when the
responses spread evenly over the clusters.

The authors' released code fits the clusters as MAUVE does: L2-normalize each embedding, PCA
(not whitened) keeping the leading components up to 0.9 cumulative explained variance, then
k-means (k = 20, 5 restarts, up to 500 iterations, seeded); new texts go to the nearest
centroid. :class:`SemanticClusters` takes the same steps with scikit-learn (MAUVE's k-means is
faiss's, whose initialization and iterations differ: not the same fit), and saves the fitted
state as JSON + safetensors together with the embedder's identity, so that scores computed
later, elsewhere, are under the *same* clusters: Sem-Ent values are comparable only then.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dialeval.atomic_files import write_atomically
from dialeval.distributed import computed_on_main
from dialeval.metrics.engines.embedders import (
    RUNTIME_OPTIONS,
    embedder_from_identity,
    load_embedder,
)
from dialeval.metrics.sem_ent.saved_clusters import read_config, read_tensors
from dialeval.validation import (
    ArgumentError,
    ArgumentProblem,
    ArgumentTypeError,
    as_float_array,
    check_int,
    check_unicode_text,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from dialeval.metrics.engines.embedders import TextEmbedder
    from dialeval.type_aliases import StrPath

#: Above this many reference texts, ``algorithm="auto"`` switches from KMeans to MiniBatchKMeans.
#: benchmarks/bench_sem_ent.py: MiniBatch is >= 1.5x faster with inertia within 1% from 10k texts,
#: but k-means is <= 6% of the fit at any size (embedding dominates) and MiniBatch's partitions
#: differ from KMeans' more than two KMeans seeds do; so exact KMeans, the paper's algorithm, is
#: kept up to 100k texts (DailyDialog's training responses fit under it), and MiniBatch above
#: keeps k-means memory flat (32 vs 165 MiB at 100k, KMeans growing linearly).
MINIBATCH_THRESHOLD = 100_000
FORMAT_VERSION = 1
CONFIG_FILE = "semantic_clusters.json"
TENSORS_FILE = "semantic_clusters.safetensors"
ALGORITHMS = ("auto", "kmeans", "minibatch_kmeans")
#: The largest ``seed``: scikit-learn's ``random_state`` is below 2**32, and the fit seeds PCA with
#: ``seed + 1`` and k-means with ``seed + 2``.
MAX_SEED = 2**32 - 3


def _check_texts(texts: object, argument: str) -> list[str]:
    if isinstance(texts, (str, bytes)) or not isinstance(texts, (list, tuple)):
        raise ArgumentError(argument, f"must be a list of strings, got {type(texts).__name__}")
    if not texts:
        raise ArgumentError(argument, "is empty")
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise ArgumentError(
                f"{argument}[{index}]", f"must be a string, got {type(text).__name__}"
            )
        check_unicode_text(text, f"{argument}[{index}]")
    return list(texts)


def distribution_entropy(distribution: ArrayLike) -> float:
    """Natural-log entropy of a probability vector (Eq. 2); empty clusters contribute 0."""
    p = as_float_array(distribution, "distribution")
    if p.ndim != 1 or p.size == 0 or (p < 0).any() or not math.isclose(p.sum(), 1.0, abs_tol=1e-9):
        raise ArgumentError("distribution", "must be a non-empty 1-D probability vector")
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def _unit_rows(embeddings: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(embeddings, axis=1, keepdims=True)
    return embeddings / np.maximum(norms, np.finfo(embeddings.dtype).tiny)


def _project(points: np.ndarray, mean: np.ndarray, components: np.ndarray) -> np.ndarray:
    """PCA transform ``(x - mean) @ C.T`` without materializing the centred copy of ``points``."""
    return points @ components.T - mean @ components.T


def _nearest_centroid(reduced: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    # ||x - c||^2 up to the per-row constant ||x||^2, which does not change the argmin.
    distances = (centroids**2).sum(axis=1)[None, :] - 2.0 * reduced @ centroids.T
    return distances.argmin(axis=1)


def _reduce_and_cluster(
    points: np.ndarray,
    num_clusters: int,
    pca_variance: float,
    seed: int,
    n_init: int,
    max_iter: int,
    algorithm: str,
) -> dict:
    """PCA to ``pca_variance`` and k-means on unit-normalized ``points``: the fitted arrays, the
    kept dimensions, explained variance, inertia and the points' own cluster histogram."""
    # sklearn: deferred to the one path that needs it
    from sklearn.cluster import KMeans, MiniBatchKMeans
    from sklearn.decomposition import PCA

    # covariance_eigh: a d x d eigenproblem, linear in the number of texts (the full SVD is not).
    pca = PCA(n_components=None, svd_solver="covariance_eigh", random_state=seed + 1).fit(points)
    cumulative = np.cumsum(pca.explained_variance_ratio_)
    kept = (
        pca.n_components_
        if pca_variance >= 1
        else int(np.argmax(cumulative >= pca_variance - 1e-12)) + 1
    )
    mean = pca.mean_.astype(np.float32)
    components = np.ascontiguousarray(pca.components_[:kept], dtype=np.float32)
    reduced = _project(points, mean, components)
    if algorithm == "kmeans":
        kmeans = KMeans(num_clusters, n_init=n_init, max_iter=max_iter, random_state=seed + 2)
    else:
        kmeans = MiniBatchKMeans(
            num_clusters, n_init=n_init, max_iter=max_iter, random_state=seed + 2, batch_size=4096
        )
    kmeans.fit(reduced)
    centroids = kmeans.cluster_centers_.astype(np.float32)
    labels = _nearest_centroid(reduced, centroids)
    return {
        "pca_mean": mean,
        "pca_components": components,
        "centroids": centroids,
        "pca_dims": int(kept),
        "explained_variance": float(cumulative[kept - 1]),
        "inertia": float(kmeans.inertia_),
        "reference_distribution": np.bincount(labels, minlength=num_clusters) / len(labels),
    }


@dataclass
class SemanticClusters:
    """k semantic clusters fitted on a reference corpus; see the module docstring.

    Build with :meth:`fit` or :meth:`load`. ``embedder`` is the
    :class:`~dialeval.metrics.engines.embedders.TextEmbedder` used to embed texts;
    ``embedder_identity`` is what was recorded when fitting.
    """

    embedder_identity: dict
    pca_mean: np.ndarray  # (dim,)
    pca_components: np.ndarray  # (kept, dim): the leading principal axes
    centroids: np.ndarray  # (k, kept)
    reference_distribution: np.ndarray  # (k,): cluster histogram of the fitted corpus
    settings: dict = field(default_factory=dict)
    embedder: TextEmbedder | None = field(default=None, repr=False, compare=False)

    @property
    def num_clusters(self) -> int:
        return int(self.centroids.shape[0])

    @classmethod
    def fit(
        cls,
        reference_texts: list[str],
        embedder: TextEmbedder | None = None,
        num_clusters: int = 20,
        pca_variance: float = 0.9,
        seed: int = 0,
        n_init: int = 5,
        max_iter: int = 500,
        algorithm: str = "auto",
    ) -> SemanticClusters:
        """Embed ``reference_texts``, reduce with PCA to ``pca_variance`` and run k-means.

        Args:
            reference_texts: the corpus that defines the clusters (e.g. training gold responses).
            embedder: a ``TextEmbedder``; default the embedded all-MiniLM-L6-v2
                (``load_embedder()``); the paper's is ``load_embedder("last_token")``
                (DialoGPT-large).
            num_clusters: k (paper: 20).
            pca_variance: keep the leading components until this share of variance (paper: 0.9);
                1.0 keeps them all.
            seed, n_init, max_iter: k-means seed, restarts (the best inertia is kept) and
                iterations.
            algorithm: ``"kmeans"``, ``"minibatch_kmeans"`` or ``"auto"`` (MiniBatchKMeans above
                :data:`MINIBATCH_THRESHOLD` texts).
        """
        texts = _check_texts(reference_texts, "reference_texts")
        num_clusters = check_int(num_clusters, "num_clusters", 2)
        seed = check_int(seed, "seed", 0)
        if seed > MAX_SEED:
            raise ArgumentError("seed", f"must be at most {MAX_SEED}, got {seed}")
        n_init = check_int(n_init, "n_init", 1)
        max_iter = check_int(max_iter, "max_iter", 1)
        if (
            isinstance(pca_variance, bool)
            or not isinstance(pca_variance, (int, float))
            or not 0 < pca_variance <= 1
        ):
            raise ArgumentError("pca_variance", f"must be in (0, 1], got {pca_variance!r}")
        if algorithm not in ALGORITHMS:
            raise ArgumentError("algorithm", f"must be one of {ALGORITHMS}, got {algorithm!r}")
        distinct = len(set(texts))
        if distinct < num_clusters:
            raise ArgumentError(
                "reference_texts",
                f"has {distinct} distinct texts, fewer than `num_clusters`={num_clusters}",
            )
        if embedder is None:
            embedder = load_embedder()
        else:
            _check_embedder(embedder)

        points = _unit_rows(np.asarray(embedder.embed(texts), dtype=np.float32))
        if algorithm == "auto":
            algorithm = "minibatch_kmeans" if len(texts) > MINIBATCH_THRESHOLD else "kmeans"
        # Under split_work the embedding above was shared and gathered, so every process holds the
        # same points; PCA + k-means then run on the main process alone and their result is
        # broadcast (dialeval.distributed.computed_on_main says why).
        fitted = computed_on_main(
            lambda: _reduce_and_cluster(
                points, num_clusters, pca_variance, seed, n_init, max_iter, algorithm
            )
        )
        return cls(
            embedder_identity=dict(embedder.identity()),
            pca_mean=fitted["pca_mean"],
            pca_components=fitted["pca_components"],
            centroids=fitted["centroids"],
            reference_distribution=fitted["reference_distribution"],
            settings={
                "num_clusters": num_clusters,
                "pca_variance": float(pca_variance),
                "pca_dims": fitted["pca_dims"],
                "explained_variance": fitted["explained_variance"],
                "seed": seed,
                "n_init": n_init,
                "max_iter": max_iter,
                "algorithm": algorithm,
                "num_reference_texts": len(texts),
                "inertia": fitted["inertia"],
            },
            embedder=embedder,
        )

    # -- assignment -------------------------------------------------------------------------

    def project(self, embeddings: ArrayLike) -> np.ndarray:
        """Raw embeddings -> the fitted PCA space (L2-normalized, centred, kept components)."""
        points = np.asarray(embeddings, dtype=np.float32)
        if points.ndim != 2 or points.shape[1] != self.pca_mean.shape[0]:
            raise ArgumentError(
                "embeddings", f"must be (n, {self.pca_mean.shape[0]}), got shape {points.shape}"
            )
        return _project(_unit_rows(points), self.pca_mean, self.pca_components)

    def _nearest(self, reduced: np.ndarray) -> np.ndarray:
        # NaN distances would all argmin to cluster 0: Sem-Ent 0.0, silently.
        if not (
            np.isfinite(self.centroids).all()
            and np.isfinite(self.pca_mean).all()
            and np.isfinite(self.pca_components).all()
        ):
            raise ArgumentError(
                "clusters", "hold non-finite centroids or PCA arrays: fit or save them again"
            )
        if not np.isfinite(reduced).all():
            raise ValueError(
                "the embeddings of `texts` hold non-finite values (the embedder returned NaN or "
                "inf)"
            )
        return _nearest_centroid(reduced, self.centroids)

    def _histogram(self, labels: np.ndarray) -> np.ndarray:
        return np.bincount(labels, minlength=self.num_clusters) / len(labels)

    def _require_embedder(self) -> TextEmbedder:
        if self.embedder is None:
            raise ValueError(
                "these clusters have no embedder; pass one to SemanticClusters.load(..., "
                "embedder=...)"
            )
        return self.embedder

    def assign_embeddings(self, embeddings: ArrayLike) -> np.ndarray:
        """Cluster id of each (raw, unnormalized) embedding row."""
        return self._nearest(self.project(embeddings))

    def assign(self, texts: list[str]) -> np.ndarray:
        """Cluster id (0..k-1) of each text: its nearest centroid after normalization and PCA."""
        texts = _check_texts(texts, "texts")
        return self.assign_embeddings(self._require_embedder().embed(texts))

    def distribution(self, texts: list[str]) -> np.ndarray:
        """The share of ``texts`` in each cluster (Eq. 1), a length-k vector summing to 1."""
        return self._histogram(self.assign(texts))

    # -- persistence ------------------------------------------------------------------------

    def save(self, directory: StrPath) -> Path:
        """Write ``semantic_clusters.json`` (settings, embedder identity) and ``.safetensors``
        (arrays)."""
        # safetensors: deferred to the one path that needs it
        from safetensors.numpy import save

        out = Path(directory)
        if out.exists() and not out.is_dir():  # rather than mkdir's bare "File exists"
            raise ArgumentError("directory", f"{str(out)!r} is a file, not a folder")
        out.mkdir(parents=True, exist_ok=True)
        arrays = {
            "pca_mean": self.pca_mean,
            "pca_components": self.pca_components,
            "centroids": self.centroids,
            "reference_distribution": np.asarray(self.reference_distribution, dtype=np.float64),
        }
        # safetensors writes an array's raw buffer: a Fortran-ordered one (PCA's components are)
        # would be read back transposed-scrambled.
        tensors = save({name: np.ascontiguousarray(array) for name, array in arrays.items()})
        # Each file is written whole, the tensors first; the config names the tensors' sha256, so a
        # save stopped between the two (new tensors beside an old config) is caught by load.
        write_atomically(out / TENSORS_FILE, tensors)
        config = {
            "format_version": FORMAT_VERSION,
            "embedder": self.embedder_identity,
            "settings": self.settings,
            "tensors_sha256": hashlib.sha256(tensors).hexdigest(),
        }
        write_atomically(out / CONFIG_FILE, json.dumps(config, indent=2) + "\n")
        return out

    @classmethod
    def load(
        cls,
        directory: str | Path,
        embedder: TextEmbedder | None = None,
        **embedder_options: Any,  # the recorded embedder's keywords (device, batch_size, ...)
    ) -> SemanticClusters:
        """Clusters saved by :meth:`save`. ``embedder`` must match the recorded identity exactly;
        without one, the recorded embedder is rebuilt (``embedder_options``: device, batch_size,
        ...)."""
        if not isinstance(directory, (str, Path)):
            raise ArgumentTypeError(
                "directory",
                f"must be a folder's path, got {type(directory).__name__}: {directory!r:.60}",
            )
        if embedder is not None:
            _check_embedder(embedder)
        folder = Path(directory)
        if not (folder / CONFIG_FILE).is_file() or not (folder / TENSORS_FILE).is_file():
            raise ArgumentError(
                "directory",
                f"{str(folder)!r} holds no saved clusters ({CONFIG_FILE} + {TENSORS_FILE})",
            )
        # a broken folder: a ValueError naming it, its file and key
        config = read_config(folder / CONFIG_FILE)
        if config.get("format_version") != FORMAT_VERSION:
            raise ValueError(
                f"{folder}: format_version {config.get('format_version')!r}, this dialeval reads "
                f"{FORMAT_VERSION}"
            )
        # absent in clusters saved before it was recorded
        recorded_sha256 = config.get("tensors_sha256")
        if (
            recorded_sha256 is not None
            and hashlib.sha256((folder / TENSORS_FILE).read_bytes()).hexdigest() != recorded_sha256
        ):
            raise ValueError(
                f"{folder}: {TENSORS_FILE} is not the one {CONFIG_FILE} was saved with (a save was "
                "stopped half way, or a file was replaced): save the clusters again"
            )
        recorded = config["embedder"]
        if embedder is None:
            try:
                embedder = embedder_from_identity(recorded, **embedder_options)
            except ArgumentProblem as error:
                if error.root in RUNTIME_OPTIONS:
                    raise  # the caller's own option, named as the caller gave it
                # The rest of the identity comes from the folder, not from the caller.
                raise ValueError(_recorded_embedder_problem(folder, error)) from error
        elif dict(embedder.identity()) != recorded:
            differences = {
                key: (recorded.get(key), embedder.identity().get(key))
                for key in sorted(set(recorded) | set(embedder.identity()))
                if recorded.get(key) != embedder.identity().get(key)
            }
            raise ArgumentError(
                "embedder",
                "does not match the one these clusters were fitted with; (saved, given) differ "
                f"in {differences}. Sem-Ent is comparable only under the same embedder and "
                "clusters.",
            )
        arrays = read_tensors(folder / TENSORS_FILE)
        return cls(
            embedder_identity=recorded,
            pca_mean=arrays["pca_mean"],
            pca_components=arrays["pca_components"],
            centroids=arrays["centroids"],
            reference_distribution=arrays["reference_distribution"],
            settings=config["settings"],
            embedder=embedder,
        )


def _recorded_embedder_problem(folder: Path, error: ArgumentProblem) -> str:
    """``error`` about the embedder identity saved in ``folder``, naming the folder, its config
    file and the key (``'embedder'``, or ``'embedder'.'kind'`` for one of its settings)."""
    key = "'embedder'" if error.root == "identity" else f"'embedder'.{error.root!r}"
    return f"{folder}: {CONFIG_FILE}'s {key} {error.problem}: save the clusters again"


def _check_embedder(embedder: object) -> None:
    if not all(callable(getattr(embedder, method, None)) for method in ("embed", "identity")):
        raise ArgumentTypeError(
            "embedder",
            "must be a TextEmbedder (with .embed(texts) and .identity()), got "
            f"{type(embedder).__name__}: {embedder!r:.60}",
        )


def sem_ent_from_labels(labels: ArrayLike, num_clusters: int) -> dict:
    """Sem-Ent of already-assigned cluster ids."""
    labels = np.asarray(labels)
    if labels.size == 0:
        raise ArgumentError("labels", "is empty")
    distribution = np.bincount(labels, minlength=num_clusters) / labels.size
    return {
        "sem_ent": distribution_entropy(distribution),
        "max_sem_ent": math.log(num_clusters),
        "cluster_distribution": distribution.tolist(),
        "num_texts": int(labels.size),
    }


def sem_ent(texts: list[str], clusters: SemanticClusters) -> dict:
    """Sem-Ent of generated responses under fitted ``clusters`` (Eq. 1-2).

    Returns:
        ``sem_ent`` (nats), ``max_sem_ent`` (``ln k``), ``cluster_distribution`` (k shares, cluster
        order) and ``num_texts``.
    """
    if not isinstance(clusters, SemanticClusters):
        raise ArgumentError(
            "clusters",
            f"must be SemanticClusters (fit or load them), got {type(clusters).__name__}",
        )
    return sem_ent_from_labels(clusters.assign(texts), clusters.num_clusters)
