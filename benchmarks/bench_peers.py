"""Benchmark every dialeval path against the library a user would pick instead ("dialeval vs peers").

Each row times ours and its peer in the same process and run, on the same inputs, checks that
they give the same outputs, and reports the ratio peer time / our time (>= 1.0: we are at least
as fast). Timing: the calls of a row are interleaved (round r runs them in an order rotated by r,
``--repeats`` rounds; every contender is called once on a small input first, untimed, for its
one-time costs: model load, thread pools, oneDNN kernels); per call ``time.perf_counter`` wall
time and CPU time (``time.process_time`` of this process, all threads, plus the CPU time of
reaped child processes from ``os.times``: ours tokenizes large corpora in worker processes).
The table gives the medians; the ratio is that of the wall medians (the cheap corpus Vendi row runs
at least 7 rounds). The share of the machine's CPU that other processes took during each row
(``/proc/stat``) is reported: this 2-core machine is shared, and timings under contention are
noisy. ``--threads`` sets torch's thread count (default: torch's, one per core) and, through
threadpoolctl, that of numpy's and scipy's BLAS (OpenBLAS starts one thread per core whatever torch
uses: without the limit a "1 thread" run still multiplied the Vendi rows' matrices on two threads,
which under contention spin and wait for each other). On a busy machine
two OpenMP threads that wait for each other at every operation's barrier slow small forwards
down by an order of magnitude (one MiniLM ``encode`` of one text: 0.8 s with 2 threads, 0.09 s with
1, measured here at a load average of 3 on 2 cores), which inflates the ratios of the rows whose
peer runs one small forward per item (7, 8); ``--threads 1`` keeps such a run comparable.
``--backend torch|onnx|openvino`` (default: dialeval's default backend) is the runtime of OUR side
of every model-backed row (1, 2, 6, 7, 8), in float32, recorded in the section's text; every peer
runs on torch float32, as a user runs it. The rows' tolerances hold for a float32 backend: its
differences from torch are float32 noise (``bench_backends.py``: about 4e-7 on MiniLM vectors,
2e-7 on NLI probabilities).

Rows (peers are in the ``bench`` extra of setup.py; ``make bench`` installs ``diversity`` with
``--no-deps``), each described, with its inputs and its equality check, in the docstring of the
script that holds it (runnable alone: it then writes the section with its own rows, as ``--only``
does; what they share is in ``_peers.py``):

1. NLI Diversity (``bench_peers_nli.py``).
2. Embeddings and sent-BERT diversity (``bench_peers_embeddings.py``).
3. Corpus lexical and 4. Self-BLEU (``bench_peers_lexical.py``).
5. Vendi Score (``bench_peers_vendi.py``).
6. BERTScore (``bench_peers_bertscore.py``).
7. Sem-Ent fit (``bench_peers_sem_ent.py``).
8. Response selection (``bench_peers_selection.py``).
9. Part-of-speech templates, 10. remote clique and chamfer distance, 11. self-repetition and
   12. homogenization (``--only homogenization``; not in the default run), against the
   ``diversity`` package (``bench_peers_diversity_package.py``).

Writes its section of ``benchmarks/RESULTS.md`` (``--smoke``: tiny models and sizes, a
temporary file unless ``--results`` is given). Exits 1 when any equality check fails.

Usage::

    .venv/bin/python benchmarks/bench_peers.py            # ~6-8 minutes on 2 idle cores
    .venv/bin/python benchmarks/bench_peers.py --smoke    # < 1 minute, not a measurement
"""

from __future__ import annotations

import _report

_report.set_offline_environment()  # before the libraries below read it

import sys
from pathlib import Path

import bench_peers_bertscore
import bench_peers_diversity_package
import bench_peers_embeddings
import bench_peers_lexical
import bench_peers_nli
import bench_peers_selection
import bench_peers_sem_ent
import bench_peers_vendi
from _peers import main

ROWS = {
    **bench_peers_nli.ROWS,
    **bench_peers_embeddings.ROWS,
    **bench_peers_lexical.ROWS,
    **bench_peers_vendi.ROWS,
    **bench_peers_bertscore.ROWS,
    **bench_peers_sem_ent.ROWS,
    **bench_peers_selection.ROWS,
    **bench_peers_diversity_package.ROWS,
}

if __name__ == "__main__":
    sys.exit(main(ROWS, __doc__, Path(__file__).name))
