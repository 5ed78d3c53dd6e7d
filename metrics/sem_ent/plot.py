"""Sem-Ent's sorted cluster distribution (Han et al. 2022, Fig. 2 and 3), built on
``matplotlib.figure.Figure`` (no pyplot state, no GUI backend): clusters sorted by their share
(head clusters first) as bars; the dashed line is the uniform share 1/k, where Sem-Ent reaches
its maximum ln k. ``dialeval evaluate --plot DIR`` draws it through Sem-Ent's output hook
(``outputs.py``)."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from dialeval.atomic_files import write_atomically
from dialeval.validation import ArgumentError


def plot_cluster_distribution(
    distribution: Sequence[float],
    path: str | Path,
    title: str = "Sem-Ent cluster distribution",
    reference_distribution: Sequence[float] | None = None,
) -> Path:
    """Bars of ``distribution`` sorted descending; ``reference_distribution`` (e.g. the fitted
    corpus) is drawn as a step line in the same cluster order when given."""
    shares = np.asarray(distribution, dtype=np.float64)
    if shares.ndim != 1 or shares.size < 2 or not math.isclose(shares.sum(), 1.0, abs_tol=1e-6):
        raise ArgumentError(
            "distribution", "must be a 1-D vector of at least 2 shares summing to 1"
        )
    order = np.argsort(-shares, kind="stable")
    positions = np.arange(1, shares.size + 1)
    figure = Figure(figsize=(7, 3.5), layout="constrained")
    axes = figure.add_subplot()
    axes.bar(positions, shares[order], color="tab:blue", label="generated")
    if reference_distribution is not None:
        reference = np.asarray(reference_distribution, dtype=np.float64)
        if reference.shape != shares.shape:
            raise ArgumentError(
                "reference_distribution",
                f"must have {shares.size} shares, got shape {reference.shape}",
            )
        axes.step(
            positions, reference[order], where="mid", color="tab:orange", label="reference corpus"
        )
    axes.axhline(
        1.0 / shares.size,
        color="black",
        linestyle="--",
        linewidth=1,
        label=f"uniform (1/{shares.size})",
    )
    entropy = float(-(shares[shares > 0] * np.log(shares[shares > 0])).sum())
    axes.set_title(f"{title}: Sem-Ent {entropy:.3f} of max {math.log(shares.size):.3f}", fontsize=9)
    axes.set_xlabel("cluster (sorted by share)")
    axes.set_ylabel("share of responses")
    axes.set_xticks(positions, [str(int(i)) for i in order + 1], fontsize=7)
    axes.legend(fontsize=8)
    buffer = io.BytesIO()  # rendered in memory, then written whole: no half-written figure
    figure.savefig(buffer, format="png", dpi=120)
    return write_atomically(path, buffer.getvalue())
