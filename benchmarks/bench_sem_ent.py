"""Benchmark Sem-Ent's cluster fitting (MiniLM embedding + PCA + k-means): scaling, naive reference, crossover.

Texts: every distinct, non-blank response of ``../shared/data``: DailyDialog++ (``data_positives``,
``dev``, ``test``; every ``*_responses`` field) and Tevet & Berant's CSVs (``raw/**/*.csv``,
``resp_*`` columns), in first-seen order, shuffled with a fixed seed (``--seed``); a size N
takes the first N. The embedder is the embedded all-MiniLM-L6-v2
(``load_embedder("sentence_transformers")``, CPU, float32), loaded once before any timing.

1. Scaling: for each N in ``--sizes`` (1k / 10k / 100k), ``SemanticClusters.fit(texts[:N],
   embedder, num_clusters=20, seed=0)`` (``algorithm="auto"``): wall time and peak RSS growth of
   the whole call. Stage breakdown: the embedding time is that of the ``embed`` call inside the
   fit (the embedder is wrapped by a proxy that times it and saves the vectors to a temporary
   ``.npy``; the save is excluded from the fit's time); PCA (``svd_solver="covariance_eigh"``,
   0.9 cumulative variance, projection) and k-means (the algorithm the fit chose, its settings)
   are then rerun on the saved vectors with the fit's settings, each timed on its own. Reported:
   time per 1k texts and the growth exponent ``log(t2/t1) / log(N2/N1)`` between sizes (1 = linear).
2. Naive reference (``--naive-sizes``, 1k / 10k; slow): the pipeline the released code amounts
   to (MAUVE's featurize + ``get_clusters``): ``SentenceTransformer.encode(text)`` once per text
   (one forward per text, no dedupe), sklearn ``normalize``, ``PCA(svd_solver="full")`` then
   ``transform(...)[:, :kept]``, ``KMeans(20, n_init=5, max_iter=500)``. Its KMeans gets the
   fit's ``random_state`` (seed + 2) so both start from the same seeding. Ratios ours/naive for
   time and peak RSS growth. Check: same number of PCA dimensions, and the fit's assignments
   (nearest centroid) vs. the naive KMeans labels agree up to a permutation: adjusted Rand index
   >= 0.99 (batching changes the embeddings' last float bits, which can flip border points).
3. KMeans vs MiniBatchKMeans crossover (``--crossover-sizes``; sets ``MINIBATCH_THRESHOLD`` in
   ``metrics/sem_ent/clusters.py``): on the first n of the largest size's saved embeddings,
   normalized and PCA-reduced as in the fit, ``KMeans(20, n_init=5, max_iter=500)`` vs
   ``MiniBatchKMeans(20, n_init=5, max_iter=500, batch_size=4096)`` (both ``random_state=2``):
   best of ``--repeats`` wall times, full-data inertia (computed here in float64 for both) and
   the ARI between their labels; for scale, the inertia ratio and ARI of KMeans with another
   seed against the first (two equally valid k-means partitions). Reported: the smallest measured n from which on MiniBatch
   is at least ``CLEARLY_FASTER`` x faster with inertia within ``INERTIA_TOLERANCE`` (the speed case for switching),
   next to the library's threshold and why it is higher (fidelity to KMeans; k-means is a small share of the fit).

Peak memory: resident set size sampled every 5 ms in a thread (``/proc/self/statm``), reported
as growth over the RSS just before the measured call (after ``gc.collect()`` and glibc's
``malloc_trim(0)``, so memory freed by an earlier measurement does not hide a later one's).
A warm-up fit and naive run on other texts come first (one-time costs). Other processes' share
of the CPU during each measurement (``/proc/stat``) is reported; above 10% the section says the
timings are disturbed.
Writes its section of ``benchmarks/RESULTS.md``; exits 1 when the naive check fails.

Usage::

    .venv/bin/python benchmarks/bench_sem_ent.py          # ~10-15 minutes on 2 cores
    .venv/bin/python benchmarks/bench_sem_ent.py --sizes 500 2000 --naive-sizes 500 --crossover-sizes 2000 \\
        --results /tmp/bench_sem_ent_smoke.md             # smoke run (< 1 minute)
"""

from __future__ import annotations

import os

# The embedded MiniLM needs no network; never let transformers / the Hub client try.
for _name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_name, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse
import ctypes
import datetime
import gc
import json
import math
import platform
import shlex
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path

import numpy as np
import sklearn
import torch
from _report import (
    RESULTS_PATH,
    PeakRSS,
    cpu_ticks,
    machine_line,
    markdown_table,
    others_share,
    section_text,
    write_section,
)
from sklearn.cluster import KMeans, MiniBatchKMeans
from sklearn.decomposition import PCA
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import normalize

from dialeval.io import read_tevet_csv
from dialeval.metrics.engines.embedders import load_embedder
from dialeval.metrics.sem_ent.clusters import MINIBATCH_THRESHOLD, SemanticClusters, _unit_rows

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_ROOT = REPO_ROOT.parent / "shared" / "data"
DAILYDIALOG_FILES = ("data_positives.json", "dev.json", "test.json")
SCRIPT = "bench_sem_ent"
NUM_CLUSTERS = 20
SEED = (
    0  # SemanticClusters.fit's seed: PCA random_state = seed + 1, k-means random_state = seed + 2
)
PCA_VARIANCE = 0.9
N_INIT = 5
MAX_ITER = 500
MINIBATCH_BATCH = 4096  # what SemanticClusters.fit passes to MiniBatchKMeans
ARI_TARGET = 0.99
CLEARLY_FASTER = 1.5  # MiniBatch speed-up over KMeans needed to switch
INERTIA_TOLERANCE = (
    1.01  # MiniBatch inertia / KMeans inertia allowed when switching (deterministic: seeded)
)

#: (label, share of the machine's CPU time used by *other* processes) for every measurement of
#: at least MIN_CONTENTION_TICKS machine ticks (shorter ones are too coarse at 100 ticks/s).
CONTENTION: list[tuple[str, float]] = []
MIN_CONTENTION_TICKS = 200


class Measured(PeakRSS):
    """PeakRSS that also records how much CPU other processes took meanwhile (timings disturbed)."""

    def __init__(self, label: str):
        self.label = label

    def __enter__(self):
        self._ticks = cpu_ticks()
        return super().__enter__()

    def __exit__(self, *exc):
        super().__exit__(*exc)
        end = cpu_ticks()
        self.others = others_share(self._ticks, end)
        if end[1] - self._ticks[1] >= MIN_CONTENTION_TICKS:
            CONTENTION.append((self.label, self.others))


def release_memory() -> None:
    """Collect garbage and hand freed heap pages back to the OS before a measurement."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


# ---------------------------------------------------------------- data


def load_texts(data_root: Path, seed: int) -> tuple[list[str], dict]:
    """Distinct non-blank responses of DailyDialog++ and Tevet's CSVs, shuffled with ``seed``."""
    texts: list[str] = []
    counts = {}
    for name in DAILYDIALOG_FILES:
        path = data_root / "dailydialog-plusplus" / name
        before = len(texts)
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    record = json.loads(line)
                    for key in sorted(k for k in record if k.endswith("_responses")):
                        texts.extend(record[key])
        counts[f"dailydialog-plusplus/{name}"] = len(texts) - before
    before = len(texts)
    csv_files = sorted((data_root / "tevet-diversity-eval" / "raw").rglob("*.csv"))
    for path in csv_files:
        for response_set in read_tevet_csv(path):
            texts.extend(response_set.responses)
    counts[f"tevet-diversity-eval/raw ({len(csv_files)} CSVs)"] = len(texts) - before
    distinct = list(dict.fromkeys(text for text in texts if isinstance(text, str) and text.strip()))
    order = np.random.default_rng(seed).permutation(len(distinct))
    return [distinct[i] for i in order], {
        "responses": len(texts),
        "distinct": len(distinct),
        "by_source": counts,
    }


# ---------------------------------------------------------------- ours


class CapturingEmbedder:
    """Delegates to ``inner``; times each ``embed`` and saves its vectors to ``path`` (save time kept apart)."""

    def __init__(self, inner, path: Path):
        self.inner = inner
        self.path = path
        self.embed_s = 0.0
        self.save_s = 0.0

    def identity(self) -> dict:
        return self.inner.identity()

    def embed(self, texts):
        start = time.perf_counter()
        vectors = self.inner.embed(texts)
        middle = time.perf_counter()
        np.save(self.path, vectors)
        self.embed_s += middle - start
        self.save_s += time.perf_counter() - middle
        return vectors


def reduce_like_fit(points: np.ndarray) -> tuple[np.ndarray, int]:
    """The fit's PCA step on unit rows: covariance_eigh, leading components up to PCA_VARIANCE, projection."""
    pca = PCA(n_components=None, svd_solver="covariance_eigh", random_state=SEED + 1).fit(points)
    cumulative = np.cumsum(pca.explained_variance_ratio_)
    kept = int(np.argmax(cumulative >= PCA_VARIANCE - 1e-12)) + 1
    mean = pca.mean_.astype(np.float32)
    components = np.ascontiguousarray(pca.components_[:kept], dtype=np.float32)
    return (points - mean) @ components.T, kept


def iterations(model) -> str:
    """KMeans: Lloyd iterations of the kept run; MiniBatchKMeans: mini-batch steps of the kept run."""
    if isinstance(model, MiniBatchKMeans):
        return f"{int(model.n_steps_)} steps"
    return f"{int(model.n_iter_)} it."


def make_kmeans(algorithm: str):
    if algorithm == "kmeans":
        return KMeans(NUM_CLUSTERS, n_init=N_INIT, max_iter=MAX_ITER, random_state=SEED + 2)
    return MiniBatchKMeans(
        NUM_CLUSTERS,
        n_init=N_INIT,
        max_iter=MAX_ITER,
        random_state=SEED + 2,
        batch_size=MINIBATCH_BATCH,
    )


def measure_ours(texts: list[str], embedder, workdir: Path) -> dict:
    capture = CapturingEmbedder(embedder, workdir / f"embeddings_{len(texts)}.npy")
    release_memory()
    with Measured(f"fit {len(texts)}") as memory:
        start = time.perf_counter()
        clusters = SemanticClusters.fit(
            texts, capture, num_clusters=NUM_CLUSTERS, seed=SEED, n_init=N_INIT, max_iter=MAX_ITER
        )
        fit_s = time.perf_counter() - start - capture.save_s
    embeddings = np.load(capture.path)
    labels = clusters.assign_embeddings(embeddings)
    algorithm = clusters.settings["algorithm"]

    release_memory()
    with Measured(f"PCA {len(texts)}") as pca_memory:
        start = time.perf_counter()
        reduced, kept = reduce_like_fit(_unit_rows(embeddings))
        pca_s = time.perf_counter() - start
    release_memory()
    with Measured(f"k-means {len(texts)}") as kmeans_memory:
        start = time.perf_counter()
        kmeans = make_kmeans(algorithm).fit(reduced)
        kmeans_s = time.perf_counter() - start
    return {
        "n": len(texts),
        "fit_s": fit_s,
        "fit_mib": memory.growth_mib,
        "embed_s": capture.embed_s,
        "pca_s": pca_s,
        "pca_mib": pca_memory.growth_mib,
        "kmeans_s": kmeans_s,
        "kmeans_mib": kmeans_memory.growth_mib,
        "algorithm": algorithm,
        "pca_dims": clusters.settings["pca_dims"],
        "explained_variance": clusters.settings["explained_variance"],
        "inertia": clusters.settings["inertia"],
        "rerun_same": kept == clusters.settings["pca_dims"]
        and math.isclose(float(kmeans.inertia_), clusters.settings["inertia"], rel_tol=1e-6),
        "kmeans_iterations": iterations(kmeans),
        "labels": labels,
        "embeddings_path": capture.path,
    }


# ---------------------------------------------------------------- naive


def measure_naive(texts: list[str], sentence_model) -> dict:
    """One encode (forward) per text, PCA(svd_solver="full"), KMeans: MAUVE's featurize + get_clusters."""
    release_memory()
    with Measured(f"naive {len(texts)}") as memory:
        start = time.perf_counter()
        features = np.stack(
            [sentence_model.encode(text, show_progress_bar=False) for text in texts]
        )
        embedded = time.perf_counter()
        data = normalize(features, norm="l2", axis=1)
        pca = PCA(n_components=None, whiten=False, svd_solver="full", random_state=SEED + 1).fit(
            data
        )
        cumulative = np.cumsum(pca.explained_variance_ratio_)
        index = int(np.argmax(cumulative >= PCA_VARIANCE))
        data = pca.transform(data)[:, : index + 1]
        reduced = time.perf_counter()
        kmeans = KMeans(
            n_clusters=NUM_CLUSTERS, random_state=SEED + 2, n_init=N_INIT, max_iter=MAX_ITER
        ).fit(data)
        done = time.perf_counter()
    return {
        "n": len(texts),
        "total_s": done - start,
        "embed_s": embedded - start,
        "pca_s": reduced - embedded,
        "kmeans_s": done - reduced,
        "mib": memory.growth_mib,
        "pca_dims": index + 1,
        "inertia": float(kmeans.inertia_),
        "labels": kmeans.labels_,
        "features": features,
    }


def compare(ours: dict, naive: dict) -> dict:
    mine = _unit_rows(np.load(ours["embeddings_path"]))
    reference = _unit_rows(naive["features"].astype(np.float32))
    max_cos_distance = float((1.0 - (mine * reference).sum(axis=1)).max())
    ari = float(adjusted_rand_score(naive["labels"], ours["labels"]))
    same_dims = ours["pca_dims"] == naive["pca_dims"]
    return {
        "n": ours["n"],
        "ari": ari,
        "same_dims": same_dims,
        "max_cos_distance": max_cos_distance,
        "inertia_rel": ours["inertia"] / naive["inertia"] - 1.0,
        "ok": same_dims and ari >= ARI_TARGET,
    }


# ---------------------------------------------------------------- crossover


def inertia(points: np.ndarray, centroids: np.ndarray) -> tuple[float, np.ndarray]:
    """Full-data sum of squared distances to the nearest centroid (float64), and the labels."""
    x = points.astype(np.float64)
    c = centroids.astype(np.float64)
    distances = (x**2).sum(1)[:, None] - 2.0 * x @ c.T + (c**2).sum(1)[None, :]
    labels = distances.argmin(1)
    return float(np.maximum(distances[np.arange(len(x)), labels], 0).sum()), labels


def bench_crossover(embeddings_path: Path, sizes: list[int], repeats: int) -> list[dict]:
    embeddings = np.load(embeddings_path)
    rows = []
    for n in sizes:
        reduced, kept = reduce_like_fit(_unit_rows(embeddings[:n]))
        row = {"n": n, "pca_dims": kept}
        for algorithm in ("kmeans", "minibatch_kmeans"):
            times = []
            for repeat in range(repeats):
                release_memory()
                with Measured(f"{algorithm} {n}") as memory:
                    start = time.perf_counter()
                    model = make_kmeans(algorithm).fit(reduced)
                    times.append(time.perf_counter() - start)
                if repeat == 0:
                    row[f"{algorithm}_mib"] = memory.growth_mib
            row[f"{algorithm}_s"] = min(times)
            row[f"{algorithm}_inertia"], row[f"{algorithm}_labels"] = inertia(
                reduced, model.cluster_centers_
            )
            row[f"{algorithm}_iterations"] = iterations(model)
        # Baseline agreement: KMeans with another seed (how stable the partition is at all).
        other = KMeans(NUM_CLUSTERS, n_init=N_INIT, max_iter=MAX_ITER, random_state=SEED + 3).fit(
            reduced
        )
        other_inertia, other_labels = inertia(reduced, other.cluster_centers_)
        row["seed_ari"] = float(adjusted_rand_score(row["kmeans_labels"], other_labels))
        row["seed_inertia_ratio"] = other_inertia / row["kmeans_inertia"]
        row["speedup"] = row["kmeans_s"] / row["minibatch_kmeans_s"]
        row["inertia_ratio"] = row["minibatch_kmeans_inertia"] / row["kmeans_inertia"]
        row["ari"] = float(
            adjusted_rand_score(row.pop("kmeans_labels"), row.pop("minibatch_kmeans_labels"))
        )
        row["qualifies"] = (
            row["speedup"] >= CLEARLY_FASTER and row["inertia_ratio"] <= INERTIA_TOLERANCE
        )
        rows.append(row)
        print({k: v for k, v in row.items()}, flush=True)
    return rows


def recommend_threshold(rows: list[dict]) -> tuple[int | None, str]:
    """Smallest measured n from which on (at every larger measured n too) MiniBatch qualifies."""
    if not rows:
        return None, "no crossover measured"
    rows = sorted(rows, key=lambda r: r["n"])
    first = None
    for index, row in enumerate(rows):
        if all(r["qualifies"] for r in rows[index:]):
            first = row["n"]
            break
    criterion = (
        f"MiniBatch >= {CLEARLY_FASTER:g}x faster and inertia within {INERTIA_TOLERANCE - 1:.0%}"
    )
    if first is None:
        return None, (
            f"no measured size up to {rows[-1]['n']:,} meets the criterion ({criterion}) at it and every larger size: "
            f"keep KMeans through at least {rows[-1]['n']:,} texts (`MINIBATCH_THRESHOLD` >= {rows[-1]['n']:,})"
        )
    return first, (
        f"from {first:,} texts on, every measured size meets the speed criterion ({criterion}), so speed "
        f"alone would switch there. The library keeps `MINIBATCH_THRESHOLD = {MINIBATCH_THRESHOLD:_}`: k-means "
        "is a few percent of the fit at any size (embedding dominates), while MiniBatch's partitions differ from "
        "KMeans' more than two KMeans seeds differ from each other, so exact KMeans (the paper's algorithm) is kept "
        "until its memory, which grows with n, starts to matter"
    )


# ---------------------------------------------------------------- report


def exponent(a: float, b: float, n_a: int, n_b: int) -> float:
    if a <= 0 or b <= 0:
        return float("nan")
    return math.log(b / a) / math.log(n_b / n_a)


def contention_line() -> str:
    if not CONTENTION:
        return "- CPU contention: not measured"
    shares = sorted(share for _, share in CONTENTION)
    label, worst = max(CONTENTION, key=lambda item: item[1])
    return (
        f"- CPU contention: other processes used a median {shares[len(shares) // 2]:.0%} and at most {worst:.0%} "
        f'(during "{label}") of the machine\'s CPU time across the {len(shares)} measurements of >= 1 s (from /proc/stat).'
    )


def render(
    info: dict,
    scaling: list[dict],
    naive: list[dict],
    checks: list[dict],
    crossover: list[dict],
    command: str,
) -> str:
    threshold, recommendation = recommend_threshold(crossover)
    lines = [
        "## bench_sem_ent: Sem-Ent cluster fitting (MiniLM embedding + PCA + k-means)",
        "",
        f"- Date: {datetime.date.today().isoformat()}",
        f"- Command: `{command}`",
        machine_line(),
        (
            f"- Versions: Python {platform.python_version()}, torch {torch.__version__} ({torch.get_num_threads()} threads), "
            f"scikit-learn {sklearn.__version__}, numpy {np.__version__}"
        ),
        (
            f'- Embedder: `load_embedder("sentence_transformers")` (embedded all-MiniLM-L6-v2, 384-d), CPU, float32, '
            f"batch size {info['batch_size']}; loaded before any timing (load time excluded everywhere)."
        ),
        (
            f"- Texts: {info['distinct']:,} distinct non-blank responses (of {info['responses']:,}) from DailyDialog++ "
            "(`data_positives`, `dev`, `test`, every `*_responses` field) and Tevet & Berant's 18 raw CSVs; shuffled "
            f"(seed {info['seed']}), first N taken. All texts are distinct, so the embedder's dedupe saves nothing here."
        ),
        (
            f"- Fit: `SemanticClusters.fit(texts[:N], embedder, num_clusters={NUM_CLUSTERS}, seed={SEED})` (n_init={N_INIT}, "
            f'max_iter={MAX_ITER}, `algorithm="auto"`, `MINIBATCH_THRESHOLD` = {MINIBATCH_THRESHOLD:,} during this run). '
            "Embedding time: the `embed` call inside the fit; PCA and k-means: rerun alone on the same vectors with the "
            "fit's settings. Peak memory: growth of the process RSS (sampled every 5 ms) during the call. One run each, "
            "after a warm-up fit and naive run on 300 / 40 other texts."
        ),
        contention_line(),
        "",
        "### 1. Scaling",
        "",
        *markdown_table(
            (
                "N",
                "fit wall time",
                "per 1k texts",
                "embedding",
                "PCA",
                "k-means (algorithm, iterations)",
                "PCA dims",
                "peak RSS growth (fit)",
                "PCA / k-means alone",
            ),
            "rrrrrrrrr",
            [
                (
                    f"{r['n']:,}",
                    f"{r['fit_s']:.1f} s",
                    f"{r['fit_s'] / r['n'] * 1000:.2f} s",
                    f"{r['embed_s']:.1f} s ({r['n'] / r['embed_s']:.0f} texts/s)",
                    f"{r['pca_s']:.3f} s",
                    f"{r['kmeans_s']:.2f} s ({r['algorithm']}, {r['kmeans_iterations']})",
                    f"{r['pca_dims']} ({r['explained_variance']:.3f})",
                    f"{r['fit_mib']:.0f} MiB",
                    f"{r['pca_mib']:.0f} / {r['kmeans_mib']:.0f} MiB",
                )
                for r in scaling
            ],
        ),
    ]
    if len(scaling) > 1:
        lines += [
            "",
            "Growth exponent `log(t2/t1) / log(N2/N1)` (1 = linear):",
            "",
            *markdown_table(
                (
                    "from → to",
                    "fit wall time",
                    "embedding",
                    "PCA",
                    "k-means",
                    "peak RSS growth (fit)",
                ),
                "lrrrrr",
                [
                    (
                        f"{a['n']:,} → {b['n']:,}",
                        *(
                            f"{exponent(a[key], b[key], a['n'], b['n']):.2f}"
                            for key in ("fit_s", "embed_s", "pca_s", "kmeans_s", "fit_mib")
                        ),
                    )
                    for a, b in pairwise(scaling)
                ],
            ),
        ]
        algorithms = {r["algorithm"] for r in scaling}
        if len(algorithms) > 1:
            lines += [
                "",
                f'(The k-means column switches algorithm with `"auto"` at {MINIBATCH_THRESHOLD:,} texts; see §3.)',
            ]
    lines += [
        "",
        "### 2. Against the naive pipeline",
        "",
        (
            "Naive: MAUVE's featurize + `get_clusters`, which the Sem-Ent release uses: `SentenceTransformer.encode(text)` once "
            'per text (one forward each, no dedupe), sklearn `normalize`, `PCA(svd_solver="full")`, `transform(...)[:, :kept]`, '
            f"`KMeans({NUM_CLUSTERS}, n_init={N_INIT}, max_iter={MAX_ITER}, random_state={SEED + 2})` (the fit's random_state, "
            "so both start from the same seeding)."
        ),
        "",
    ]
    by_n = {r["n"]: r for r in scaling}
    naive_rows = []
    for r in naive:
        o = by_n[r["n"]]
        ratio = f"{o['fit_mib'] / r['mib']:.2f}" if r["mib"] > 0 else "–"
        naive_rows.append(
            (
                f"{r['n']:,}",
                f"{r['embed_s']:.1f} / {r['pca_s']:.3f} / {r['kmeans_s']:.2f} s",
                f"{r['total_s']:.1f} s",
                f"{o['fit_s']:.1f} s",
                f"**{r['total_s'] / o['fit_s']:.1f}x**",
                f"{r['mib']:.0f} MiB",
                f"{o['fit_mib']:.0f} MiB",
                ratio,
            )
        )
    lines += markdown_table(
        (
            "N",
            "naive: embedding / PCA / k-means",
            "naive total",
            "ours (fit)",
            "speed-up",
            "naive peak RSS",
            "ours peak RSS",
            "memory ours/naive",
        ),
        "rrrrrrrr",
        naive_rows,
    )
    lines += [
        "",
        *markdown_table(
            (
                "N",
                "same PCA dims",
                "ARI ours vs naive",
                "inertia ours/naive − 1",
                "max cosine distance between the two embeddings of a text",
                "check",
            ),
            "rlrrrl",
            [
                (
                    f"{c['n']:,}",
                    c["same_dims"],
                    f"{c['ari']:.4f}",
                    f"{c['inertia_rel']:+.1e}",
                    f"{c['max_cos_distance']:.1e}",
                    f"{'passed' if c['ok'] else '**FAILED**'} (ARI >= {ARI_TARGET})",
                )
                for c in checks
            ],
        ),
    ]
    lines += [
        "",
        "### 3. KMeans vs MiniBatchKMeans (sets `MINIBATCH_THRESHOLD`)",
        "",
        (
            f"On the first n of the {scaling[-1]['n']:,} saved MiniLM embeddings, normalized and PCA-reduced as in the fit. "
            f"`KMeans({NUM_CLUSTERS}, n_init={N_INIT}, max_iter={MAX_ITER})` vs `MiniBatchKMeans({NUM_CLUSTERS}, n_init={N_INIT}, "
            f"max_iter={MAX_ITER}, batch_size={MINIBATCH_BATCH})`, both `random_state={SEED + 2}`; best of {info['repeats']} "
            "wall times; inertia = full-data sum of squared distances to the nearest centroid (float64) for both; ARI between "
            f"their labels. For scale, KMeans with another seed ({SEED + 3}) against the first: how much two equally valid "
            "k-means partitions of these features differ."
        ),
        "",
        *markdown_table(
            (
                "n",
                "PCA dims",
                "KMeans",
                "MiniBatchKMeans",
                "speed-up",
                "inertia MiniBatch / KMeans",
                "ARI MiniBatch vs KMeans",
                f"KMeans seed {SEED + 3} vs {SEED + 2}: inertia ratio, ARI",
                "peak RSS KMeans / MiniBatch",
                "meets criterion",
            ),
            "rrrrrrrrrl",
            [
                (
                    f"{r['n']:,}",
                    r["pca_dims"],
                    f"{r['kmeans_s']:.2f} s ({r['kmeans_iterations']})",
                    f"{r['minibatch_kmeans_s']:.2f} s ({r['minibatch_kmeans_iterations']})",
                    f"{r['speedup']:.2f}x",
                    f"{r['inertia_ratio']:.4f}",
                    f"{r['ari']:.3f}",
                    f"{r['seed_inertia_ratio']:.4f}, {r['seed_ari']:.3f}",
                    f"{r['kmeans_mib']:.0f} / {r['minibatch_kmeans_mib']:.0f} MiB",
                    "yes" if r["qualifies"] else "no",
                )
                for r in crossover
            ],
        ),
    ]
    lines += ["", f"Recommendation: {recommendation}."]
    lines += ["", "### Conclusion", ""] + conclusion(scaling, naive, checks, crossover, threshold)
    return section_text(SCRIPT, lines)


def conclusion(scaling, naive, checks, crossover, threshold) -> list[str]:
    out = []
    disturbed = [(label, share) for label, share in CONTENTION if share > 0.10]
    if disturbed:
        out.append(
            f"- **Disturbed**: other processes took more than 10% of the CPU during {len(disturbed)} measurement(s) "
            f"({', '.join(f'{label}: {share:.0%}' for label, share in disturbed[:6])}); rerun on an idle machine."
        )
    if len(scaling) > 1:
        a, b = scaling[0], scaling[-1]
        share = b["embed_s"] / b["fit_s"]
        out.append(
            f"- Time: {a['fit_s'] / a['n'] * 1000:.2f} s per 1k texts at {a['n']:,} and {b['fit_s'] / b['n'] * 1000:.2f} s at "
            f"{b['n']:,}; growth exponent {exponent(a['fit_s'], b['fit_s'], a['n'], b['n']):.2f} over the whole range. "
            f"Embedding is {share:.0%} of the fit at {b['n']:,} (exponent {exponent(a['embed_s'], b['embed_s'], a['n'], b['n']):.2f}); "
            f"PCA and k-means take {b['pca_s'] + b['kmeans_s']:.1f} s together there."
        )
        out.append(
            f"- Memory: peak RSS growth {a['fit_mib']:.0f} MiB at {a['n']:,} and {b['fit_mib']:.0f} MiB at {b['n']:,} "
            f"(exponent {exponent(a['fit_mib'], b['fit_mib'], a['n'], b['n']):.2f}); for scale, one float32 384-d copy of "
            f"the embeddings is {b['n'] * 384 * 4 / 2**20:.0f} MiB at {b['n']:,}. A fixed part (batch activations, "
            "tokenizer and allocator pools) weighs most at small N."
        )
        c = scaling[-2]
        per_text = (b["fit_mib"] - c["fit_mib"]) * 2**20 / (b["n"] - c["n"])
        out.append(
            f"- Marginal memory {c['n']:,} → {b['n']:,}: {per_text / 1024:.1f} KiB per added text, i.e. "
            f"{per_text / (384 * 4):.1f} float32 384-d rows (fixed part + a linear part; the PCA step alone, which "
            f"holds the normalized copy, its centered temporary and the projection, grows {b['pca_mib']:.0f} MiB at "
            f"{b['n']:,})."
        )
    for r, c in zip(naive, checks):
        o = next(s for s in scaling if s["n"] == r["n"])
        out.append(
            f"- Naive at {r['n']:,}: {r['total_s'] / o['fit_s']:.1f}x slower than the fit ({r['embed_s'] / r['total_s']:.0%} of it "
            f"one-text forwards); memory ours/naive {o['fit_mib'] / r['mib']:.2f}"
            + ("" if r["mib"] > 0 else " (n/a)")
            + f"; same PCA dims: {c['same_dims']}, ARI {c['ari']:.4f}."
        )
    if crossover:
        speedups = ", ".join(f"{r['speedup']:.1f}x at {r['n']:,}" for r in crossover)
        ratios = ", ".join(f"{r['inertia_ratio']:.3f}" for r in crossover)
        aris = ", ".join(f"{r['ari']:.2f} (seed vs seed {r['seed_ari']:.2f})" for r in crossover)
        out.append(
            f"- Crossover: MiniBatch speed-up {speedups}; inertia ratio {ratios}; ARI MiniBatch vs KMeans {aris}. "
            + (
                f"Speed alone would switch from {threshold:,}; the library switches above {MINIBATCH_THRESHOLD:,} (see §3)."
                if threshold
                else "No measured size supports switching."
            )
        )
        top = crossover[-1]
        fit = next((r for r in scaling if r["n"] == top["n"]), None)
        if fit is not None:
            out.append(
                f"- Weight of that choice: at {top['n']:,} texts KMeans takes {top['kmeans_s']:.1f} s and MiniBatch "
                f"{top['minibatch_kmeans_s']:.1f} s against {fit['embed_s']:.0f} s of embedding, so the threshold moves the "
                f"fit's total by {(top['kmeans_s'] - top['minibatch_kmeans_s']) / fit['fit_s']:.0%} at most; KMeans' peak "
                f"memory is {top['kmeans_mib']:.0f} vs {top['minibatch_kmeans_mib']:.0f} MiB. k = {NUM_CLUSTERS} partitions "
                "of these features are not unique (two KMeans seeds agree at ARI "
                f"{min(r['seed_ari'] for r in crossover):.2f}-{max(r['seed_ari'] for r in crossover):.2f}), and MiniBatch's "
                f"agrees with KMeans' less ({min(r['ari'] for r in crossover):.2f}-{max(r['ari'] for r in crossover):.2f}) "
                "even where its inertia is close."
            )
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--naive-sizes", type=int, nargs="*", default=[1_000, 10_000])
    parser.add_argument(
        "--crossover-sizes", type=int, nargs="*", default=[5_000, 10_000, 20_000, 50_000, 100_000]
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="k-means timings of the crossover: best of this many"
    )
    parser.add_argument(
        "--batch-size", type=int, default=64, help="the embedder's batch size (its default: 64)"
    )
    parser.add_argument("--seed", type=int, default=0, help="shuffle seed for the texts")
    parser.add_argument("--data-root", type=Path, default=DATA_ROOT)
    parser.add_argument("--results", type=Path, default=RESULTS_PATH)
    args = parser.parse_args(argv)
    if not (args.data_root / "dailydialog-plusplus").is_dir():
        print(
            f"bench_sem_ent: {args.data_root} has no dailydialog-plusplus (the papers' data lives in ../shared/data); nothing measured"
        )
        return 1
    sizes = sorted(set(args.sizes))
    texts, info = load_texts(args.data_root, args.seed)
    if sizes[-1] > len(texts):
        parser.error(
            f"--sizes up to {sizes[-1]:,} but only {len(texts):,} distinct texts are available"
        )
    missing = sorted(set(args.naive_sizes) - set(sizes))
    if missing:
        parser.error(
            f"--naive-sizes {missing} must also be in --sizes (ours is compared at the same N)"
        )
    crossover_sizes = sorted(n for n in set(args.crossover_sizes) if n <= sizes[-1])
    if len(crossover_sizes) < len(set(args.crossover_sizes)):
        print(
            f"crossover sizes above {sizes[-1]:,} (the largest --sizes, whose embeddings are reused) are skipped"
        )
    info.update(seed=args.seed, repeats=args.repeats, batch_size=args.batch_size)
    print({k: v for k, v in info.items()}, flush=True)

    embedder = load_embedder("sentence_transformers", batch_size=args.batch_size)
    sentence_model = embedder.loaded
    # Warm-up outside the timings on texts past the largest size: model load, thread pools,
    # oneDNN / BLAS buffers, so the first measured call does not pay one-time costs the others skip.
    SemanticClusters.fit(texts[-300:], embedder, num_clusters=NUM_CLUSTERS, seed=SEED, n_init=1)
    measure_naive(texts[-40:], sentence_model)
    CONTENTION.clear()

    scaling, naive, checks = [], [], []
    with tempfile.TemporaryDirectory(prefix="bench_sem_ent_") as workdir:
        for n in sizes:
            ours = measure_ours(texts[:n], embedder, Path(workdir))
            print({k: v for k, v in ours.items() if k != "labels"}, flush=True)
            scaling.append(ours)
            if n in args.naive_sizes:
                reference = measure_naive(texts[:n], sentence_model)
                check = compare(ours, reference)
                print(
                    {k: v for k, v in reference.items() if k not in ("labels", "features")},
                    check,
                    flush=True,
                )
                del reference["labels"], reference["features"]
                naive.append(reference)
                checks.append(check)
            del ours["labels"]
        crossover = bench_crossover(scaling[-1]["embeddings_path"], crossover_sizes, args.repeats)

    command = ".venv/bin/python benchmarks/bench_sem_ent.py " + shlex.join(
        argv if argv is not None else sys.argv[1:]
    )
    write_section(
        args.results, SCRIPT, render(info, scaling, naive, checks, crossover, command.strip())
    )
    print(recommend_threshold(crossover)[1])
    print(f"wrote {args.results}")
    return 0 if all(c["ok"] for c in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
