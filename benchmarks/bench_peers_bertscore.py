"""BERTScore diversity against bert_score's BERTScorer.

6. BERTScore: ``dialeval.metrics.bertscore_diversity(sets, model=DIR, num_layers=4,
   rescale_with_baseline=False)`` vs ``bert_score.BERTScorer(model_type=DIR, num_layers=4)
   .score`` on every unordered pair of the first ``--bertscore-sets`` decTest sets, reduced the
   same way. ``DIR`` is the model of (1) declared ``RobertaTokenizer`` (roberta-large's
   conventions: prefix space, ``<s>``/``</s>`` weigh 0); ``bert_score.utils.sent_encode`` is
   patched for transformers 5 as ``tests/metrics/test_bertscore.py`` does. Check: F1 of every
   pair within 1e-5.

Row of ``bench_peers.py`` (timing, checks and report as its docstring says). Run alone,
this script writes the ``bench_peers`` section of ``benchmarks/RESULTS.md`` with its own rows only,
as ``bench_peers.py --only bertscore`` does.

Usage::

    .venv/bin/python benchmarks/bench_peers_bertscore.py --smoke    # tiny sizes, not a measurement
"""

from __future__ import annotations

import _report

_report.set_offline_environment()  # before the libraries below read it

import sys
from pathlib import Path

import numpy as np
from _peers import (
    BERTSCORE_ATOL,
    BERTSCORE_LAYERS,
    Inputs,
    Row,
    main,
    reference_sent_encode,
    with_roberta_tokenizer_class,
)
from _report import Contention, interleaved, log

from dialeval.runtimes import DEFAULT_BACKEND

# ---------------------------------------------------------------- 6. BERTScore


def bench_bertscore(
    path: str,
    response_sets: list[list[str]],
    repeats: int,
    backend: str = DEFAULT_BACKEND,
    device: str = "cpu",
    num_layers: int = BERTSCORE_LAYERS,
) -> list[Row]:
    import bert_score

    from dialeval.metrics import bertscore_diversity
    from dialeval.metrics.similarity_diversity import bertscore_similarity_matrices

    bert_score.utils.sent_encode = (
        reference_sent_encode  # score() reaches it through bert_score.utils' globals
    )
    scorer = bert_score.BERTScorer(
        model_type=path, num_layers=num_layers, batch_size=64, device=device
    )
    options = {
        "model": path,
        "num_layers": num_layers,
        "rescale_with_baseline": False,
        "batch_size": 64,
        "device": device,
        "backend": backend,
    }
    pairs = [
        (s, i, j)
        for s, responses in enumerate(response_sets)
        for i in range(len(responses))
        for j in range(i + 1, len(responses))
    ]
    candidates = [response_sets[s][i] for s, i, _ in pairs]
    references = [response_sets[s][j] for s, _, j in pairs]

    def peer():
        _, _, f1 = scorer.score(candidates, references, batch_size=64)
        f1 = f1.double().cpu().numpy()
        out, start = [], 0
        for responses in response_sets:
            count = len(responses) * (len(responses) - 1) // 2
            out.append(-float(f1[start : start + count].mean()))
            start += count
        return out, f1

    log(f"BERTScore: {len(response_sets)} sets, {len(pairs):,} unordered pairs")
    warm = [response_sets[0][:3]]
    with Contention() as contention:
        timings = interleaved(
            {"ours": lambda: bertscore_diversity(response_sets, **options), "peer": peer},
            repeats,
            {
                "ours": lambda: bertscore_diversity(warm, **options),
                "peer": lambda: scorer.score(warm[0][:2], warm[0][1:3]),
            },
        )
    peer_diversity, peer_f1 = timings["peer"].value
    timings["peer"].value = peer_diversity
    matrices = bertscore_similarity_matrices(response_sets, **{k: v for k, v in options.items()})
    ours_f1 = np.array([matrices[s][i, j] for s, i, j in pairs])
    difference = float(np.abs(ours_f1 - peer_f1).max())
    diversity_difference = float(
        np.abs(np.array(timings["ours"].value) - np.array(peer_diversity)).max()
    )
    return [
        Row(
            key="bertscore",
            path="6. BERTScore diversity",
            data=f"{len(response_sets)} sets, {len(pairs):,} "
            f"unordered pairs, layer {num_layers}, batch 64",
            ours=f"`bertscore_diversity(sets, rescale_with_baseline=False)`, {backend}",
            peer="`bert_score.BERTScorer(...).score(cands, refs)` on every unordered pair (sent_encode patched)",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=difference <= BERTSCORE_ATOL,
            equal_detail=f"max abs F1 diff {difference:.1e} (tol. {BERTSCORE_ATOL:.0e}); diversities {diversity_difference:.1e}",
            others=contention.share,
        )
    ]


def run_bertscore(inputs: Inputs) -> list[Row]:
    path = with_roberta_tokenizer_class(inputs.nli_classifier(), inputs.workdir / "bertscore")
    return bench_bertscore(
        path,
        inputs.dectest_sets[: inputs.settings["bertscore_sets"]],
        inputs.repeats,
        inputs.backend,
    )


ROWS = {"bertscore": run_bertscore}


if __name__ == "__main__":
    sys.exit(main(ROWS, __doc__, Path(__file__).name))
