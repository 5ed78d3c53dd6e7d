"""Sem-Ent on DailyDialog++ with the embedded all-MiniLM-L6-v2: the numbers in metrics/sem_ent/README.md.

Fits k = 20 semantic clusters on every positive response of DailyDialog++'s positives-only
contexts (the training-like split; Han et al. fit on training gold responses, §3.1), then scores
(a) the dev set's human responses (5 per context), (b) a dull set of the same size made of the
head cluster's most typical reference responses (those nearest its centroid), and (c) the dev
set's random negatives (human responses of other dialogues). Repeats the fit for several
k-means seeds on the same embeddings to measure the seed-to-seed spread.

Usage::

    .venv/bin/python examples/measure_sem_ent.py --data-dir ../shared/data/dailydialog-plusplus [--seeds 0 1 2 3 4] [--plot DIR]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dialeval.datasets_scripts import load
from dialeval.metrics.engines.embedders import CachingEmbedder, load_embedder
from dialeval.metrics.sem_ent.clusters import SemanticClusters, sem_ent_from_labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir",
        required=True,
        help="folder with DailyDialog++'s dev.json, test.json, data_positives.json",
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--num-clusters", type=int, default=20)
    parser.add_argument(
        "--plot", help="write the sorted cluster distributions (paper Fig. 2/3) here"
    )
    args = parser.parse_args()

    positives = load("dailydialog_pp", "positives", split="train", data_dir=args.data_dir)
    dev = load("dailydialog_pp", split="validation", data_dir=args.data_dir)
    reference = [r for rs in positives["positive_responses"] for r in rs if r.strip()]
    human = [r for rs in dev["positive_responses"] for r in rs if r.strip()]
    random_negatives = [r for rs in dev["random_negative_responses"] for r in rs if r.strip()]
    print(
        f"reference {len(reference)} responses ({len(set(reference))} distinct); dev human {len(human)}; "
        f"random negatives {len(random_negatives)}"
    )

    embedder = CachingEmbedder(load_embedder())
    start = time.perf_counter()
    embedder.embed(list(dict.fromkeys(reference + human + random_negatives)))
    print(f"embedded in {time.perf_counter() - start:.0f} s")

    rows = []
    for seed in args.seeds:
        start = time.perf_counter()
        clusters = SemanticClusters.fit(
            reference, embedder, num_clusters=args.num_clusters, seed=seed
        )
        fit_s = time.perf_counter() - start
        head = int(np.argmax(clusters.reference_distribution))
        reduced = clusters.project(embedder.embed(reference))
        distance = np.linalg.norm(reduced - clusters.centroids[head], axis=1)
        typical = [reference[i] for i in np.argsort(distance, kind="stable")[: len(human)]]
        figures = {
            "reference": sem_ent_from_labels(clusters.assign(reference), clusters.num_clusters),
            "dev human": sem_ent_from_labels(clusters.assign(human), clusters.num_clusters),
            "dull (head cluster)": sem_ent_from_labels(
                clusters.assign(typical), clusters.num_clusters
            ),
            "random negatives": sem_ent_from_labels(
                clusters.assign(random_negatives), clusters.num_clusters
            ),
        }
        rows.append({name: result["sem_ent"] for name, result in figures.items()})
        print(
            f"seed {seed}: pca_dims {clusters.settings['pca_dims']}, fit {fit_s:.1f} s, head share "
            f"{clusters.reference_distribution[head]:.3f}, e.g. {typical[:3]} | "
            + ", ".join(f"{name} {value:.3f}" for name, value in rows[-1].items())
        )
        if args.plot and seed == args.seeds[0]:
            from dialeval.metrics.sem_ent.plot import plot_cluster_distribution

            for name, result in figures.items():
                path = plot_cluster_distribution(
                    result["cluster_distribution"],
                    f"{args.plot}/sem_ent_{name.split()[0]}.png",
                    title=f"DailyDialog++ {name}",
                    reference_distribution=clusters.reference_distribution,
                )
                print(f"plot: {path}")
    print(
        f"\nmax ln k = {np.log(args.num_clusters):.3f}; over seeds {args.seeds}: mean (std, range)"
    )
    for name in rows[0]:
        values = np.array([row[name] for row in rows])
        print(
            f"  {name:20s} {values.mean():.3f} ({values.std():.3f}, {values.min():.3f}-{values.max():.3f})"
        )


if __name__ == "__main__":
    main()
