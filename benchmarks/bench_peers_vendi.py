"""Vendi Score, corpus and per set, against the vendi-score package.

5. Vendi Score: corpus ``vendi_score_from_embeddings(X)`` vs ``vendi_score.vendi.score_dual(X)``
   on ``--vendi-rows`` x 384 seeded Gaussian float32 rows (equal within 1e-5 relative); set level,
   a loop of ``vendi_score_from_embeddings`` vs a loop of the package's ``vendi.score_X`` over
   ``--vendi-sets`` sets of 5-10 such rows (each set equal within 1e-5 relative).

Row of ``bench_peers.py`` (timing, checks and report as its docstring says). Run alone,
this script writes the ``bench_peers`` section of ``benchmarks/RESULTS.md`` with its own rows only,
as ``bench_peers.py --only vendi`` does.

Usage::

    .venv/bin/python benchmarks/bench_peers_vendi.py --smoke    # tiny sizes, not a measurement
"""

from __future__ import annotations

import _report

_report.set_offline_environment()  # before the libraries below read it

import sys
from pathlib import Path

import numpy as np
from _peers import Inputs, Row, main
from _report import Contention, interleaved, log

VENDI_RTOL = 1e-5


# ---------------------------------------------------------------- 5. Vendi


def bench_vendi(num_rows: int, num_sets: int, repeats: int) -> list[Row]:
    from vendi_score import vendi

    from dialeval.metrics import vendi_score_from_embeddings

    rng = np.random.default_rng(0)
    embeddings = rng.standard_normal((num_rows, 384)).astype(np.float32)
    log(f"Vendi: corpus {num_rows:,} x 384 float32")
    small = embeddings[:500]
    with Contention() as contention:
        timings = interleaved(
            {
                "ours": lambda: vendi_score_from_embeddings(embeddings)["vendi_score"],
                "peer": lambda: float(vendi.score_dual(embeddings)),
            },
            max(repeats, 7),
            {
                "ours": lambda: vendi_score_from_embeddings(small),
                "peer": lambda: vendi.score_dual(small),
            },
        )
    ours, peer = timings["ours"].value, timings["peer"].value
    relative = abs(ours - peer) / abs(peer)
    rows = [
        Row(
            key="vendi_corpus",
            path="5. Vendi Score, corpus",
            data=f"{num_rows:,} x 384 float32 Gaussian rows",
            ours="`vendi_score_from_embeddings(X)`",
            peer="`vendi_score.vendi.score_dual(X)`",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=relative <= VENDI_RTOL,
            equal_detail=f"rel. diff {relative:.1e} (value {ours:.4f})",
            others=contention.share,
        )
    ]

    sizes = rng.integers(5, 11, size=num_sets)
    sets = [rng.standard_normal((int(size), 384)).astype(np.float32) for size in sizes]
    log(f"Vendi: {num_sets:,} sets of 5-10")
    with Contention() as contention:
        timings = interleaved(
            {
                "ours": lambda: [vendi_score_from_embeddings(x)["vendi_score"] for x in sets],
                "peer": lambda: [float(vendi.score_X(x)) for x in sets],
            },
            repeats,
            {
                "ours": lambda: vendi_score_from_embeddings(sets[0]),
                "peer": lambda: vendi.score_X(sets[0]),
            },
        )
    ours, peer = np.array(timings["ours"].value), np.array(timings["peer"].value)
    relative = float((np.abs(ours - peer) / np.abs(peer)).max())
    rows.append(
        Row(
            key="vendi_sets",
            path="5. Vendi Score, per set",
            data=f"{num_sets:,} sets of 5-10 Gaussian float32 384-d rows",
            ours="`vendi_score_from_embeddings(x)` per set",
            peer="`vendi_score.vendi.score_X(x)` per set",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=relative <= VENDI_RTOL,
            equal_detail=f"max rel. diff {relative:.1e}",
            others=contention.share,
        )
    )
    return rows


def run_vendi(inputs: Inputs) -> list[Row]:
    return bench_vendi(inputs.settings["vendi_rows"], inputs.settings["vendi_sets"], inputs.repeats)


ROWS = {"vendi": run_vendi}


if __name__ == "__main__":
    sys.exit(main(ROWS, __doc__, Path(__file__).name))
