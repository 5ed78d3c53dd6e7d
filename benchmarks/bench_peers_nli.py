"""NLI Diversity against sentence-transformers' CrossEncoder, the transformers pipeline and the bare-forward ceiling.

1. NLI Diversity: pairs/s of ``dialeval.metrics.nli_diversity(sets, model=DIR, batch_size=B)``
   vs sentence-transformers ``CrossEncoder(DIR).predict(pairs, batch_size=B)`` vs the transformers
   ``pipeline("text-classification", model=DIR)`` on ``{"text", "text_pair"}`` dicts with
   ``batch_size=B``, vs the bare-forward ceiling: the same distinct pairs tokenized, sorted
   longest first and right-padded per batch of B *before* the timer, only the forwards timed under
   ``torch.inference_mode`` (ours as a fraction of it). Pairs: every ordered pair of the first
   ``--nli-sets`` sets of Tevet & Berant's ``dec_test_200_with_hds_resp_gen.csv`` (10 responses,
   90 pairs a set); the peers get all pairs, ours and the ceiling score each distinct pair once.
   Model: a seeded random ``RobertaForSequenceClassification`` of distilroberta-base's shape
   (6 x 768, 12 heads, FFN 3072, 50,265-token table, 3 labels) with a byte-level BPE trained on the
   file (as ``bench_nli.py``). Check: the same argmax class for every pair on all four paths, and
   its probability within 1e-4 of ours (softmax of the CrossEncoder's and the ceiling's logits,
   the pipeline's score); a random classifier may predict one class for every pair, so the
   probabilities are the informative part.

Row of ``bench_peers.py`` (timing, checks and report as its docstring says). Run alone,
this script writes the ``bench_peers`` section of ``benchmarks/RESULTS.md`` with its own rows only,
as ``bench_peers.py --only nli`` does.

Usage::

    .venv/bin/python benchmarks/bench_peers_nli.py --smoke    # tiny sizes, not a measurement
"""

from __future__ import annotations

import _report

_report.set_offline_environment()  # before the libraries below read it

import sys
from pathlib import Path

import numpy as np
import torch
import transformers
from _peers import LABELS, Inputs, Row, main
from _report import Contention, interleaved, log

from dialeval.runtimes import DEFAULT_BACKEND

PROBABILITY_ATOL = 1e-4  # padding and batch shapes change float32 summation order


# ---------------------------------------------------------------- 1. NLI


def ordered_pair_list(response_sets: list[list[str]]) -> list[tuple[str, str]]:
    return [
        (s[i], s[j]) for s in response_sets for i in range(len(s)) for j in range(len(s)) if i != j
    ]


def prepare_ceiling(path: str, pairs: list[tuple[str, str]], batch_size: int):
    """Distinct pairs tokenized, sorted longest first, right-padded per batch (before any timer)."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    unique: dict[tuple[str, str], int] = {}
    rows = np.array([unique.setdefault(pair, len(unique)) for pair in pairs], dtype=np.int64)
    distinct = list(unique)
    encoded = tokenizer(
        [a for a, _ in distinct], [b for _, b in distinct], truncation=True, verbose=False
    )
    features = [{key: values[i] for key, values in encoded.items()} for i in range(len(distinct))]
    order = sorted(range(len(distinct)), key=lambda i: len(features[i]["input_ids"]), reverse=True)
    batches, members_of = [], []
    for start in range(0, len(order), batch_size):
        members = order[start : start + batch_size]
        batches.append(
            tokenizer.pad([features[i] for i in members], padding_side="right", return_tensors="pt")
        )
        members_of.append(members)
    return batches, members_of, rows, len(distinct)


def bench_nli(
    path: str,
    response_sets: list[list[str]],
    batch_size: int,
    repeats: int,
    backend: str = DEFAULT_BACKEND,
) -> list[Row]:
    from sentence_transformers import CrossEncoder

    from dialeval.metrics import nli_diversity

    pairs = ordered_pair_list(response_sets)
    log(f"NLI: {len(response_sets)} sets, {len(pairs)} ordered pairs")
    cross_encoder = CrossEncoder(path, device="cpu")
    classify = transformers.pipeline("text-classification", model=path, device="cpu")
    model = transformers.AutoModelForSequenceClassification.from_pretrained(path).eval()
    batches, members_of, rows, num_distinct = prepare_ceiling(path, pairs, batch_size)
    pipeline_inputs = [{"text": a, "text_pair": b} for a, b in pairs]
    label_index = {name.lower(): index for index, name in LABELS.items()}

    def ours():
        return nli_diversity(
            response_sets,
            model=path,
            device="cpu",
            batch_size=batch_size,
            return_matrices=True,
            backend=backend,
        )

    def cross():
        return cross_encoder.predict(pairs, batch_size=batch_size, show_progress_bar=False)

    def pipe():
        return classify(pipeline_inputs, batch_size=batch_size)

    def ceiling():
        return ceiling_forward(model, batches)

    first = response_sets[:1]
    first_pairs = ordered_pair_list(first)
    warmups = {
        "ours": lambda: nli_diversity(
            first, model=path, device="cpu", batch_size=batch_size, backend=backend
        ),
        "CrossEncoder": lambda: cross_encoder.predict(
            first_pairs, batch_size=batch_size, show_progress_bar=False
        ),
        "pipeline": lambda: classify(
            [{"text": a, "text_pair": b} for a, b in first_pairs], batch_size=batch_size
        ),
        "ceiling": lambda: ceiling_forward(model, batches[:1] + batches[-1:]),
    }
    with Contention() as contention:
        timings = interleaved(
            {"ours": ours, "CrossEncoder": cross, "pipeline": pipe, "ceiling": ceiling},
            repeats,
            warmups,
        )

    # Every path as (argmax class, probability of that class) per ordered pair, in `pairs` order.
    matrices = timings["ours"].value["matrices"]
    ours_probabilities = np.concatenate(
        [m.probabilities[~np.eye(m.size, dtype=bool)] for m in matrices]
    )
    predicted = ours_probabilities.argmax(axis=1)
    ceiling_logits = np.empty((num_distinct, 3))
    for members, logits in zip(members_of, timings["ceiling"].value):
        ceiling_logits[members] = logits.double().numpy()
    outputs = {}
    for name, logits in (
        ("CrossEncoder", np.asarray(timings["CrossEncoder"].value, dtype=np.float64)),
        ("ceiling", ceiling_logits[rows]),
    ):
        probabilities = torch.from_numpy(logits).softmax(-1).numpy()
        classes = probabilities.argmax(axis=1)
        outputs[name] = (classes, probabilities[np.arange(len(classes)), classes])
    outputs["pipeline"] = (
        np.array([label_index[out["label"].lower()] for out in timings["pipeline"].value]),
        np.array([out["score"] for out in timings["pipeline"].value]),
    )
    checks = {}
    for name, (classes, top) in outputs.items():
        same = float((classes == predicted).mean())
        difference = float(np.abs(top - ours_probabilities[np.arange(len(classes)), classes]).max())
        checks[name] = (
            same == 1.0 and difference <= PROBABILITY_ATOL,
            f"same argmax class on {same:.1%} of pairs, max |Δp| of it {difference:.1e} (tol. {PROBABILITY_ATOL:.0e})",
        )
    counts = np.bincount(predicted, minlength=3).tolist()
    data = (
        f"{len(response_sets)} decTest sets x 90 = {len(pairs):,} ordered pairs ({num_distinct:,} distinct), "
        f"batch {batch_size}"
    )
    rate = len(pairs) / timings["ours"].wall_median
    out = []
    for name, peer in (
        ("CrossEncoder", "sentence-transformers `CrossEncoder(DIR).predict(pairs)`"),
        ("pipeline", 'transformers `pipeline("text-classification", model=DIR)`'),
    ):
        out.append(
            Row(
                key=f"nli_{name.lower()}",
                path="1. NLI Diversity",
                data=data,
                ours=f"`nli_diversity`, {backend} ({rate:.0f} pairs/s)",
                peer=f"{peer} ({len(pairs) / timings[name].wall_median:.0f} pairs/s)",
                ours_timing=timings["ours"],
                peer_timing=timings[name],
                equal=checks[name][0],
                equal_detail=checks[name][1],
                others=contention.share,
            )
        )
    out.append(
        Row(
            key="nli_ceiling",
            path="1. NLI Diversity",
            data=data,
            ours=f"`nli_diversity`, {backend} ({rate:.0f} pairs/s)",
            peer=f"bare forwards on pre-padded batches ({len(pairs) / timings['ceiling'].wall_median:.0f} pairs/s)",
            ours_timing=timings["ours"],
            peer_timing=timings["ceiling"],
            equal=checks["ceiling"][0],
            equal_detail=checks["ceiling"][1],
            ratio_kind="ceiling",
            others=contention.share,
            notes=[f"predicted classes (contradiction, neutral, entailment): {counts}"],
        )
    )
    return out


def ceiling_forward(model, batches):
    with torch.inference_mode():
        return [model(**batch).logits for batch in batches]


def run_nli(inputs: Inputs) -> list[Row]:
    return bench_nli(
        inputs.nli_classifier(),
        inputs.dectest_sets[: inputs.settings["nli_sets"]],
        inputs.settings["nli_batch_size"],
        inputs.repeats,
        inputs.backend,
    )


ROWS = {"nli": run_nli}


if __name__ == "__main__":
    sys.exit(main(ROWS, __doc__, Path(__file__).name))
