"""Sem-Ent's cluster fit against the MAUVE pipeline the Sem-Ent release uses.

7. Sem-Ent fit: ``SemanticClusters.fit`` vs the MAUVE pipeline the Sem-Ent release uses
   (``bench_sem_ent.measure_naive``: one ``encode`` per text, PCA, KMeans) on ``--sem-ent-texts``
   texts of ``bench_sem_ent.load_texts``; check as in bench_sem_ent (same PCA dims, ARI >= 0.99).

Row of ``bench_peers.py`` (timing, checks and report as its docstring says). Run alone,
this script writes the ``bench_peers`` section of ``benchmarks/RESULTS.md`` with its own rows only,
as ``bench_peers.py --only sem_ent`` does.

Usage::

    .venv/bin/python benchmarks/bench_peers_sem_ent.py --smoke    # tiny sizes, not a measurement
"""

from __future__ import annotations

import _report

_report.set_offline_environment()  # before the libraries below read it

import sys
from pathlib import Path

from _peers import Inputs, Row, main
from _report import DATA_ROOT, Contention, interleaved, log

from dialeval.runtimes import DEFAULT_BACKEND

# ---------------------------------------------------------------- 7. Sem-Ent


class KeepingEmbedder:
    """Delegates to ``inner`` and keeps the last vectors (for the check, untimed use)."""

    def __init__(self, inner):
        self.inner = inner
        self.vectors = None

    def identity(self) -> dict:
        return self.inner.identity()

    def embed(self, texts):
        self.vectors = self.inner.embed(texts)
        return self.vectors


def bench_sem_ent(size: int, repeats: int, backend: str = DEFAULT_BACKEND) -> list[Row]:
    import bench_sem_ent as reference
    from sklearn.metrics import adjusted_rand_score

    from dialeval.metrics.engines.embedders import load_embedder
    from dialeval.metrics.sem_ent.clusters import SemanticClusters

    texts, _ = reference.load_texts(DATA_ROOT, seed=0)
    sample, warm = texts[:size], texts[-min(100, size) :]
    embedder = load_embedder("sentence_transformers", batch_size=64, backend=backend)
    # the MAUVE pipeline encodes with sentence-transformers on torch, as its users run it
    peer_model = load_embedder("sentence_transformers", batch_size=64).loaded
    keeping = KeepingEmbedder(embedder)
    fit_options = {
        "num_clusters": reference.NUM_CLUSTERS,
        "seed": reference.SEED,
        "n_init": reference.N_INIT,
        "max_iter": reference.MAX_ITER,
    }
    log(f"Sem-Ent: {size:,} texts")
    with Contention() as contention:
        timings = interleaved(
            {
                "ours": lambda: SemanticClusters.fit(sample, keeping, **fit_options),
                "peer": lambda: reference.measure_naive(sample, peer_model),
            },
            repeats,
            {
                "ours": lambda: SemanticClusters.fit(warm, embedder, **fit_options),
                "peer": lambda: reference.measure_naive(warm[: reference.NUM_CLUSTERS], peer_model),
            },
        )
    clusters, naive = timings["ours"].value, timings["peer"].value
    labels = clusters.assign_embeddings(keeping.vectors)
    ari = float(adjusted_rand_score(naive["labels"], labels))
    same_dims = clusters.settings["pca_dims"] == naive["pca_dims"]
    timings["peer"].value = None
    return [
        Row(
            key="sem_ent",
            path="7. Sem-Ent cluster fit",
            data=f"{size:,} distinct DailyDialog++ / Tevet texts, all-MiniLM-L6-v2, "
            f"k = {reference.NUM_CLUSTERS}",
            ours=f"`SemanticClusters.fit(texts, embedder)`, {backend}",
            peer="MAUVE pipeline (`encode` per text, PCA, KMeans; `bench_sem_ent.measure_naive`)",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=same_dims and ari >= reference.ARI_TARGET,
            equal_detail=f"same PCA dims: {same_dims}; ARI {ari:.4f} (>= {reference.ARI_TARGET})",
            others=contention.share,
        )
    ]


def run_sem_ent(inputs: Inputs) -> list[Row]:
    return bench_sem_ent(inputs.settings["sem_ent_texts"], inputs.repeats, inputs.backend)


ROWS = {"sem_ent": run_sem_ent}


if __name__ == "__main__":
    sys.exit(main(ROWS, __doc__, Path(__file__).name))
