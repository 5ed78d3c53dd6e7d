"""Sentence embeddings and Sent-BERT diversity against sentence-transformers' encode.

2. Embeddings: ``dialeval.metrics.engines.embedders.embed_unique(texts)`` vs
   ``SentenceTransformer.encode(texts, normalize_embeddings=True)`` on the first ``--embed-texts``
   DailyDialog++ responses (file order, duplicates kept) with the embedded all-MiniLM-L6-v2;
   and ``dialeval.metrics.sent_bert_diversity(sets)`` vs one ``encode`` of all the sets' texts plus
   the §5 reduction per set in numpy (negated mean cosine over unordered pairs), on
   ``--sets`` DailyDialog++ dev/test sets of 5-10 responses (5 positive responses plus 0-5
   adversarial ones). Checks: vectors within 1e-5, diversities within 1e-5.

Row of ``bench_peers.py`` (timing, checks and report as its docstring says). Run alone,
this script writes the ``bench_peers`` section of ``benchmarks/RESULTS.md`` with its own rows only,
as ``bench_peers.py --only embeddings`` does.

Usage::

    .venv/bin/python benchmarks/bench_peers_embeddings.py --smoke    # tiny sizes, not a measurement
"""

from __future__ import annotations

import _report

_report.set_offline_environment()  # before the libraries below read it
import sys
from pathlib import Path

import numpy as np
from _peers import MINILM, Inputs, Row, dailydialog_responses, dailydialog_sets, main
from _released_code import similarity_to_diversity
from _report import Contention, interleaved, log

from dialeval.hub import resolve_model_path
from dialeval.runtimes import DEFAULT_BACKEND

VECTOR_ATOL = 1e-5
DIVERSITY_ATOL = 1e-5


# ---------------------------------------------------------------- 2. embeddings


def bench_embeddings(
    texts: list[str],
    response_sets: list[list[str]],
    repeats: int,
    backend: str = DEFAULT_BACKEND,
) -> list[Row]:
    from sentence_transformers import SentenceTransformer

    from dialeval.metrics import sent_bert_diversity
    from dialeval.metrics.engines.embedders import embed_unique

    path = str(resolve_model_path(MINILM))
    model = SentenceTransformer(path, device="cpu")
    encode = {
        "batch_size": 64,
        "normalize_embeddings": True,
        "convert_to_numpy": True,
        "show_progress_bar": False,
    }
    warm = texts[:64]
    warmups = {
        "ours": lambda: embed_unique(warm, path, 64, "cpu", backend=backend),
        "peer": lambda: model.encode(warm, **encode),
    }
    log(f"Embeddings: {len(texts):,} texts ({len(set(texts)):,} distinct)")
    with Contention() as contention:
        timings = interleaved(
            {
                "ours": lambda: embed_unique(texts, path, 64, "cpu", backend=backend),
                "peer": lambda: model.encode(texts, **encode),
            },
            repeats,
            warmups,
        )
    unique, index = timings["ours"].value
    difference = float(np.abs(unique[index] - timings["peer"].value).max())
    rows = [
        Row(
            key="embed_unique",
            path="2. Embeddings",
            data=f"{len(texts):,} DailyDialog++ responses ({len(set(texts)):,} distinct), "
            "all-MiniLM-L6-v2, batch 64",
            ours=f"`embed_unique(texts)`, {backend}",
            peer="`SentenceTransformer.encode(texts)`",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=difference <= VECTOR_ATOL,
            equal_detail=f"max abs diff {difference:.1e} (tol. {VECTOR_ATOL:.0e})",
            others=contention.share,
        )
    ]

    flat = [text for response_set in response_sets for text in response_set]

    def peer_sets():
        vectors = model.encode(flat, **encode)
        out, start = [], 0
        for response_set in response_sets:
            out.append(similarity_to_diversity(vectors[start : start + len(response_set)]))
            start += len(response_set)
        return out

    log(
        f"Sent-BERT diversity: {len(response_sets)} sets, {len(flat):,} texts ({len(set(flat)):,} distinct)"
    )
    with Contention() as contention:
        timings = interleaved(
            {
                "ours": lambda: sent_bert_diversity(
                    response_sets, model=path, device="cpu", backend=backend
                ),
                "peer": peer_sets,
            },
            repeats,
            {
                "ours": lambda: sent_bert_diversity(
                    response_sets[:2], model=path, device="cpu", backend=backend
                ),
                "peer": lambda: model.encode(flat[:10], **encode),
            },
        )
    difference = float(
        np.abs(np.array(timings["ours"].value) - np.array(timings["peer"].value)).max()
    )
    rows.append(
        Row(
            key="sent_bert",
            path="2. Sent-BERT diversity",
            data=f"{len(response_sets)} DailyDialog++ sets of 5-10 ({len(flat):,} "
            f"texts, {len(set(flat)):,} distinct), all-MiniLM-L6-v2",
            ours=f"`sent_bert_diversity(sets)`, {backend}",
            peer="one `encode` of all texts + numpy §5 reduction per set",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=difference <= DIVERSITY_ATOL,
            equal_detail=f"max abs diff {difference:.1e} (tol. {DIVERSITY_ATOL:.0e})",
            others=contention.share,
        )
    )
    return rows


def run_embeddings(inputs: Inputs) -> list[Row]:
    return bench_embeddings(
        dailydialog_responses(inputs.records)[: inputs.settings["embed_texts"]],
        dailydialog_sets(inputs.settings["sets"]),
        inputs.repeats,
        inputs.backend,
    )


ROWS = {"embeddings": run_embeddings}


if __name__ == "__main__":
    sys.exit(main(ROWS, __doc__, Path(__file__).name))
