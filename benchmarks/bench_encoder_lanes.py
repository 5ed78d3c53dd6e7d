"""The exported sentence encoder in lanes against one multithreaded ONNX Runtime session.

``encode_sentences(encoder, texts, B)`` (the job's embedding step: batches sorted by tokens, one
``encode`` call per batch) on the first N distinct DailyDialog++ strings for each N of ``--texts`` (context turns
and responses, file order) with the embedded all-MiniLM-L6-v2, for each batch size B of
``--batch-sizes``, two ways:

- one session: ONNX Runtime's intra-op threads (its default, one per core), one batch at a time;
- lanes: one session with ``intra_op_num_threads=1`` called from ``--lanes`` threads at once
  (``dialeval.graph_runners.encoder_lanes`` picks that for the job on 2-4 cores).

Both run the same cached graph with the same checked record
(:class:`dialeval.sentence_graph.ExportedSentenceEncoder`). Agreement: whether each batch size's
rows are bit-identical between the two, and the largest difference from one session at the
first batch size. Timing: interleaved rounds in one process (rotated order), medians.

Writes its section of ``benchmarks/RESULTS.md``.

Usage::

    .venv/bin/python benchmarks/bench_encoder_lanes.py                  # about 3 minutes on 2 cores
    .venv/bin/python benchmarks/bench_encoder_lanes.py --texts 300 --repeats 1 --results /tmp/r.md
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from pathlib import Path

import _report
import numpy as np
from _peers import MINILM, dailydialog_strings
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

from dialeval import graph_runners

SCRIPT = "bench_encoder_lanes"


def exported_encoders(lanes: int) -> tuple[object, object]:
    """The embedded MiniLM as two exported encoders on the same graph and record: one session
    with ONNX Runtime's threads, and one of ``lanes`` single-thread lanes."""
    from dialeval import hub
    from dialeval.graph_runners import cached_export, graph_runner
    from dialeval.sentence_graph import ExportedSentenceEncoder, read_record

    path = str(hub.resolve_model_path(MINILM))
    hub.load_sentence_encoder(path, device="cpu", backend="onnx")  # exports, checks, records
    _, graph = cached_export(path, "encoder")
    record = None if graph is None else read_record(graph.parent, path)
    if graph is None or record is None:
        raise SystemExit("the MiniLM pipeline was not recorded: nothing to run without torch")
    return (
        ExportedSentenceEncoder(graph_runner(graph, "onnx", "float32", 1), record, "onnx"),
        ExportedSentenceEncoder(graph_runner(graph, "onnx", "float32", lanes), record, "onnx"),
    )


def measure(texts: list[str], batch_sizes: list[int], lanes: int, repeats: int) -> dict:
    from dialeval.metrics.engines.embedders import encode_sentences

    one, laned = exported_encoders(lanes)
    contenders = {}
    for size in batch_sizes:
        contenders[f"one session, batch {size}"] = lambda s=size: encode_sentences(one, texts, s)
        contenders[f"{lanes} lanes, batch {size}"] = lambda s=size: encode_sentences(
            laned, texts, s
        )
    log(f"{len(texts):,} distinct texts, batch sizes {batch_sizes}, {repeats} rounds")
    with Contention() as contention:
        timings = interleaved(
            contenders, repeats, {"both": lambda: encode_sentences(laned, texts[:64], 64)}
        )
    reference = timings[f"one session, batch {batch_sizes[0]}"]
    rows = []
    for size in batch_sizes:
        single = timings[f"one session, batch {size}"]
        both = timings[f"{lanes} lanes, batch {size}"]
        for label, timing in (
            (f"one session ({os.cpu_count()} cores)", single),
            (f"{lanes} lanes", both),
        ):
            rows.append(
                (
                    label,
                    size,
                    f"{timing.wall_median:.2f} s",
                    f"{min(timing.wall):.2f}-{max(timing.wall):.2f} s",
                    f"{single.wall_median / timing.wall_median:.2f}x",
                    "yes" if np.array_equal(both.value, single.value) else "no",
                    f"{float(np.abs(timing.value - reference.value).max()):.1e}",
                )
            )
    rows = [(f"{len(texts):,}", *row) for row in rows]
    return {"rows": rows, "share": contention.share, "timings": timings, "texts": len(texts)}


def render(results: list[dict], args: argparse.Namespace, command: str) -> str:
    lines = [
        "## bench_encoder_lanes: the exported sentence encoder in lanes",
        "",
        (
            "`encode_sentences` (the job's embedding step) of the first N distinct DailyDialog++ "
            "strings (context turns and responses) with the embedded all-MiniLM-L6-v2's ONNX "
            f"graph: one session with ONNX Runtime's intra-op threads against {args.lanes} "
            "single-thread lanes, per batch size, every input in lanes however few its batches "
            "(`LANE_MIN_ITEMS_PER_LANE` set to 1: the job runs fewer than 8 batches a lane on "
            f"the threaded session); {args.repeats} interleaved rounds, medians. Speed-up: one "
            "session's median at that size and batch size / the row's."
        ),
        "",
        *markdown_table(
            [
                "texts",
                "encoder",
                "batch",
                "wall (median)",
                "wall (range)",
                "speed-up",
                "bit-identical, lanes vs one session",
                f"max abs diff vs one session, batch {args.batch_sizes[0]}",
            ],
            "rlrrrrll",
            [row for result in results for row in result["rows"]],
        ),
        "",
        *details_head(command),
        f"- Versions: {package_versions(['onnxruntime', 'tokenizers', 'numpy'])}",
        (
            "- Other processes' share of the machine's CPU (from `/proc/stat`; above ~10% the "
            "timings are disturbed): "
            + ", ".join(f"{result['texts']:,} texts {result['share']:.0%}" for result in results)
            + "."
        ),
        "",
        "All runs (wall seconds):",
        "",
        *(
            f"- {result['texts']:,} texts, {name}: "
            + ", ".join(f"{wall:.2f}" for wall in timing.wall)
            for result in results
            for name, timing in result["timings"].items()
        ),
    ]
    return section_text(SCRIPT, lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--texts", type=int, nargs="+", default=[300, 3_000], help="distinct texts encoded, per run"
    )
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[64, 32])
    parser.add_argument("--lanes", type=int, default=2, help="threads of the lanes encoder")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--results", type=Path, default=RESULTS_PATH)
    args = parser.parse_args(argv)
    if min(*args.texts, args.repeats, *args.batch_sizes) < 1 or args.lanes < 2:
        parser.error("--texts, --repeats and --batch-sizes must be positive, --lanes at least 2")
    _report.set_offline_environment()
    with tempfile.TemporaryDirectory(prefix="bench_encoder_lanes_") as workdir:
        os.environ["DIALEVAL_CACHE"] = str(Path(workdir) / "cache")
        strings = dailydialog_strings(dailydialog_records())
        distinct = list(dict.fromkeys(text for text in strings if text.strip()))
        # every size in lanes, however few its batches: the minimum is what this measures
        graph_runners.LANE_MIN_ITEMS_PER_LANE = 1
        results = [
            measure(distinct[:count], args.batch_sizes, args.lanes, args.repeats)
            for count in args.texts
        ]
    command = ".venv/bin/python benchmarks/bench_encoder_lanes.py " + shlex.join(
        argv if argv is not None else sys.argv[1:]
    )
    write_section(args.results, SCRIPT, render(results, args, command.strip()))
    for result in results:
        for row in result["rows"]:
            print(row)
    print(f"wrote {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
