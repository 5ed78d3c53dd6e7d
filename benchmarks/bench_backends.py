"""Each runtime backend against torch float32: speed, one-time export cost and agreement.

1. Sentence encoder: ``embed_unique(texts, MiniLM, 64, "cpu", backend=B, dtype=D)`` on the first
   ``--texts`` distinct DailyDialog++ strings (context turns and responses, file order) with the
   embedded all-MiniLM-L6-v2, for torch float32, ONNX Runtime float32, OpenVINO float32 and
   OpenVINO bfloat16 (reduced precision, only when asked for). Agreement: max abs difference of
   the unit embeddings from torch float32's, and of sent-BERT set diversity (Tevet & Berant's §5,
   negated mean cosine over unordered pairs) over ``--sets`` consecutive sets of 10 of those texts.
2. Sequence classifier: ``nli_diversity(sets, model=DIR, batch_size=32, backend=B)`` on every
   ordered pair of the first ``--nli-sets`` decTest sets, with the seeded random
   distilroberta-shaped classifier ``bench_peers_nli.py`` builds; pairs/s and the max abs
   difference of the three class probabilities from torch float32's.

Timing: the backends of a model are interleaved in one process (round r rotates the order,
``--repeats`` rounds, medians of ``time.perf_counter``). Each backend's first call is timed on its
own, untimed in the medians: for ONNX Runtime and OpenVINO it exports the graph with torch's
exporter into an empty cache folder (``DIALEVAL_CACHE`` is pointed at a temporary folder), then
compiles it; for torch it only loads the model. That one-time cost is its own column.

Writes its section of ``benchmarks/RESULTS.md``.

Usage::

    .venv/bin/python benchmarks/bench_backends.py                       # a few minutes on 2 cores
    .venv/bin/python benchmarks/bench_backends.py --texts 300 --sets 30 --nli-sets 1 --repeats 1
"""

from __future__ import annotations

import _report

_report.set_offline_environment()  # before the libraries below read it

import argparse
import os
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import transformers
from _peers import DECTEST_FILE, MINILM, build_classifier, dailydialog_strings, shape_text
from _released_code import similarity_to_diversity
from _report import (
    RESULTS_PATH,
    Contention,
    dailydialog_records,
    details_head,
    interleaved,
    log,
    markdown_table,
    package_versions,
    section_text,
    write_section,
)

from dialeval.io import read_tevet_csv

SCRIPT = "bench_backends"
SET_SIZE = 10
#: (label, backend, dtype); the first is the reference every other is compared with.
ENCODER_RUNS = (
    ("torch float32", "torch", None),
    ("ONNX Runtime float32", "onnx", None),
    ("OpenVINO float32", "openvino", None),
    ("OpenVINO bfloat16 (reduced, opt-in)", "openvino", "bfloat16"),
)
CLASSIFIER_RUNS = ENCODER_RUNS


def distinct(texts: list[str], count: int) -> list[str]:
    return list(dict.fromkeys(text for text in texts if text.strip()))[:count]


def timed_first_call(call) -> tuple[float, object]:
    started = time.perf_counter()
    value = call()
    return time.perf_counter() - started, value


def bench_encoder(texts: list[str], num_sets: int, repeats: int) -> list[tuple]:
    from dialeval.hub import resolve_model_path
    from dialeval.metrics.engines.embedders import embed_unique

    path = str(resolve_model_path(MINILM))
    warm = texts[:64]
    first = {}
    for label, backend, dtype in ENCODER_RUNS:
        log(f"encoder first call: {label}")
        first[label], _ = timed_first_call(
            lambda b=backend, d=dtype: embed_unique(warm, path, 64, "cpu", dtype=d, backend=b)
        )
    log(f"encoder: {len(texts):,} distinct texts, {repeats} rounds")
    with Contention() as contention:
        timings = interleaved(
            {
                label: (
                    lambda b=backend, d=dtype: embed_unique(
                        texts, path, 64, "cpu", dtype=d, backend=b
                    )[0]
                )
                for label, backend, dtype in ENCODER_RUNS
            },
            repeats,
        )
    sets = [slice(start, start + SET_SIZE) for start in range(0, num_sets * SET_SIZE, SET_SIZE)]
    reference = timings[ENCODER_RUNS[0][0]]
    reference_diversity = np.array([similarity_to_diversity(reference.value[s]) for s in sets])
    rows = []
    for label, _, _ in ENCODER_RUNS:
        vectors = timings[label].value
        diversity = np.array([similarity_to_diversity(vectors[s]) for s in sets])
        rows.append(
            (
                label,
                first[label],
                timings[label].wall_median,
                len(texts) / timings[label].wall_median,
                reference.wall_median / timings[label].wall_median,
                float(np.abs(vectors - reference.value).max()),
                float(np.abs(diversity - reference_diversity).max()),
                contention.share,
            )
        )
    return rows


def bench_classifier(path: str, response_sets: list[list[str]], repeats: int) -> list[tuple]:
    from dialeval.metrics import nli_diversity

    pairs = sum(len(s) * (len(s) - 1) for s in response_sets)

    def run(backend: str, dtype: str | None, sets: list[list[str]]) -> np.ndarray:
        out = nli_diversity(
            sets,
            model=path,
            device="cpu",
            batch_size=32,
            dtype=dtype,
            backend=backend,
            return_matrices=True,
        )
        return np.concatenate(
            [m.probabilities[~np.eye(m.size, dtype=bool)] for m in out["matrices"]]
        )

    first = {}
    for label, backend, dtype in CLASSIFIER_RUNS:
        log(f"classifier first call: {label}")
        first[label], _ = timed_first_call(lambda b=backend, d=dtype: run(b, d, response_sets[:1]))
    log(f"classifier: {len(response_sets)} sets, {pairs:,} ordered pairs, {repeats} rounds")
    with Contention() as contention:
        timings = interleaved(
            {
                label: (lambda b=backend, d=dtype: run(b, d, response_sets))
                for label, backend, dtype in CLASSIFIER_RUNS
            },
            repeats,
        )
    reference = timings[CLASSIFIER_RUNS[0][0]]
    rows = []
    for label, _, _ in CLASSIFIER_RUNS:
        probabilities = timings[label].value
        same = float((probabilities.argmax(1) == reference.value.argmax(1)).mean())
        rows.append(
            (
                label,
                first[label],
                timings[label].wall_median,
                pairs / timings[label].wall_median,
                reference.wall_median / timings[label].wall_median,
                float(np.abs(probabilities - reference.value).max()),
                same,
                contention.share,
            )
        )
    return rows


def openvino_capabilities() -> list[str]:
    import openvino

    return list(openvino.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES"))


def render(encoder, classifier, args, command: str, shape: str) -> str:
    lines = [
        "## bench_backends: runtime backends against torch float32",
        "",
        (
            "Each backend of `dialeval.hub.load_model` on the same inputs in one process, calls "
            f"interleaved ({args.repeats} rounds, rotated order), medians. Speed-up = torch float32 "
            "wall time / the backend's. First call: the backend's first call on a small input, timed "
            "alone (ONNX Runtime and OpenVINO: export with torch's exporter into an empty cache, "
            "then compile; torch: load only); later processes reuse the export."
        ),
        "",
        (
            f"all-MiniLM-L6-v2 (embedded), `embed_unique` of {args.texts:,} distinct DailyDialog++ "
            f"texts, batch 64; sent-BERT diversity over {args.sets:,} sets of {SET_SIZE} of them:"
        ),
        "",
        *markdown_table(
            (
                "backend",
                "first call (export + load)",
                "wall",
                "texts/s",
                "speed-up",
                "max abs diff, embeddings",
                "max abs diff, set diversity",
            ),
            "lrrrrrr",
            [
                (
                    label,
                    f"{first:.1f} s",
                    f"{wall:.2f} s",
                    f"{rate:,.0f}",
                    f"{speedup:.2f}x",
                    f"{vector_diff:.1e}",
                    f"{set_diff:.1e}",
                )
                for label, first, wall, rate, speedup, vector_diff, set_diff, _ in encoder
            ],
        ),
        "",
        (
            f"Seeded random `RobertaForSequenceClassification` ({shape}), as bench_peers_nli builds "
            f"it; `nli_diversity` on every ordered pair of the first {args.nli_sets} decTest sets, "
            "batch 32:"
        ),
        "",
        *markdown_table(
            (
                "backend",
                "first call (export + load)",
                "wall",
                "pairs/s",
                "speed-up",
                "max abs diff, probabilities",
                "same argmax",
            ),
            "lrrrrrr",
            [
                (
                    label,
                    f"{first:.1f} s",
                    f"{wall:.2f} s",
                    f"{rate:,.0f}",
                    f"{speedup:.2f}x",
                    f"{difference:.1e}",
                    f"{same:.1%}",
                )
                for label, first, wall, rate, speedup, difference, same, _ in classifier
            ],
        ),
        "",
        *details_head(command),
        (
            f"- Versions: Python {platform.python_version()}, torch {torch.__version__} "
            f"({torch.get_num_threads()} threads), transformers {transformers.__version__}, "
            + package_versions(("onnxruntime", "onnx", "openvino"))
        ),
        (
            "- Other processes' share of the machine's CPU (from `/proc/stat`; above ~10% the "
            f"timings are disturbed): encoder {encoder[0][-1]:.0%}, classifier "
            f"{classifier[0][-1]:.0%}; load average at the end "
            f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}."
        ),
        (
            "- OpenVINO's CPU capabilities here: "
            f"{', '.join(openvino_capabilities())}; where BF16 is not among them, the bfloat16 "
            "hint runs float32 and that row measures no reduced precision."
        ),
    ]
    return section_text(SCRIPT, lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--texts", type=int, default=10_000, help="distinct texts encoded")
    parser.add_argument("--sets", type=int, default=1_000, help=f"sets of {SET_SIZE} compared")
    parser.add_argument("--nli-sets", type=int, default=2, help="decTest sets (90 pairs each)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--results", type=Path, default=RESULTS_PATH)
    args = parser.parse_args(argv)
    if min(args.texts, args.sets, args.nli_sets, args.repeats) < 1:
        parser.error("--texts, --sets, --nli-sets and --repeats must be positive")
    if args.sets * SET_SIZE > args.texts:
        parser.error(f"--sets x {SET_SIZE} must not exceed --texts")
    transformers.utils.logging.disable_progress_bar()
    transformers.logging.set_verbosity_error()
    with tempfile.TemporaryDirectory(prefix="bench_backends_") as workdir:
        os.environ["DIALEVAL_CACHE"] = str(Path(workdir) / "cache")  # every export is measured
        texts = distinct(dailydialog_strings(dailydialog_records()), args.texts)
        if len(texts) < args.texts:
            parser.error(f"only {len(texts):,} distinct DailyDialog++ texts")
        encoder = bench_encoder(texts, args.sets, args.repeats)
        dectest = [s.responses for s in read_tevet_csv(DECTEST_FILE)]
        path = build_classifier(
            Path(workdir) / "nli", [t for s in dectest for t in s], "distilroberta"
        )
        shape = shape_text(path)
        classifier = bench_classifier(path, dectest[: args.nli_sets], args.repeats)
    command = ".venv/bin/python benchmarks/bench_backends.py " + shlex.join(
        argv if argv is not None else sys.argv[1:]
    )
    write_section(args.results, SCRIPT, render(encoder, classifier, args, command.strip(), shape))
    for row in encoder + classifier:
        print(row)
    print(f"wrote {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
