"""Vendi Score, corpus and per set, against the vendi-score package.

5. Vendi Score: corpus ``vendi_score_from_embeddings(X)`` vs ``vendi_score.vendi.score_dual(X)``
   on ``--vendi-rows`` x 384 seeded Gaussian float32 rows (equal within 1e-5 relative); set level,
   a loop of ``vendi_score_from_embeddings`` vs a loop of the package's ``vendi.score_X`` over
   ``--vendi-sets`` sets of 5-10 such rows (each set equal within 1e-5 relative).

Row of ``bench_peers.py`` (timing, checks and report as its docstring says). Run alone,
this script writes the ``bench_peers`` section of ``benchmarks/RESULTS.md`` with its own rows only,
as ``bench_peers.py --only vendi`` does.

``--settings`` measures the corpus row alone by thread count and load instead, and writes the
``bench_peers_vendi`` section: one fresh process per setting (1 and 2 threads: numpy's and scipy's
BLAS, OpenMP and torch, set before numpy loads), each quiet and then under load (a busy process
spinning beside the timed one, started before the process and stopped after it). In each, the
contenders run interleaved (rotated order, one untimed warm-up each), medians; every run's figure
must equal the package's of the same round within 1e-5 relative before its time counts.
``--before REF`` adds ``metrics/vendi_score/vendi.py`` as of the git revision ``REF`` (a temporary
module; or ``REF`` is such a file) as a third contender.

Usage::

    .venv/bin/python benchmarks/bench_peers_vendi.py --smoke    # tiny sizes, not a measurement
    .venv/bin/python benchmarks/bench_peers_vendi.py --settings --before main
"""

from __future__ import annotations

import _report

_report.set_offline_environment()  # before the libraries below read it

import argparse
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from _peers import Inputs, Row, main
from _report import (
    REPO_ROOT,
    RESULTS_PATH,
    Contention,
    details_head,
    interleaved,
    log,
    markdown_table,
    package_versions,
    section_text,
    write_section,
)

VENDI_RTOL = 1e-5
SETTINGS_SECTION = "bench_peers_vendi"
#: (label, threads, under load): the rows of the ``--settings`` table, in order.
SETTINGS = (
    ("1 thread", 1, False),
    ("2 threads", 2, False),
    ("1 thread, under load", 1, True),
    ("2 threads, under load", 2, True),
)
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
BUSY_LOOP = "while True: pass"


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


# ---------------------------------------------------------------- --settings: threads and load


def load_module_file(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure_setting(num_rows: int, repeats: int, threads: int, before: str | None) -> dict:
    """One setting, in this process (started with its thread variables): timings and checks."""
    import torch
    from threadpoolctl import threadpool_info, threadpool_limits
    from vendi_score import vendi

    from dialeval.metrics.vendi_score.vendi import vendi_score_from_embeddings

    torch.set_num_threads(threads)
    threadpool_limits(threads)
    embeddings = np.random.default_rng(0).standard_normal((num_rows, 384)).astype(np.float32)
    small = embeddings[:500]
    contenders = {
        "ours": lambda: vendi_score_from_embeddings(embeddings)["vendi_score"],
        "peer": lambda: float(vendi.score_dual(embeddings)),
    }
    warmups = {
        "ours": lambda: vendi_score_from_embeddings(small),
        "peer": lambda: vendi.score_dual(small),
    }
    if before:
        old = load_module_file(before, "vendi_before")
        contenders["before"] = lambda: old.vendi_score_from_embeddings(embeddings)["vendi_score"]
        warmups["before"] = lambda: old.vendi_score_from_embeddings(small)
    with Contention() as contention:
        timings = interleaved(contenders, repeats, warmups)
    peer_values = np.array(timings["peer"].values)
    result = {
        "threads": [(pool["prefix"], pool["num_threads"]) for pool in threadpool_info()],
        "others": contention.share,
        "value": float(peer_values[-1]),
    }
    for name, timing in timings.items():
        relative = np.abs(np.array(timing.values) - peer_values) / np.abs(peer_values)
        result[name] = {
            "wall": timing.wall,
            "cpu": timing.cpu,
            "wall_median": timing.wall_median,
            "cpu_median": timing.cpu_median,
            "max_relative": float(relative.max()),
        }
    return result


def run_setting(
    threads: int, loaded: bool, num_rows: int, repeats: int, before: str | None
) -> dict:
    """:func:`measure_setting` in a fresh process with ``threads`` threads, beside a busy process
    when ``loaded``."""
    environment = dict(os.environ, **{name: str(threads) for name in THREAD_VARIABLES})
    with tempfile.TemporaryDirectory(prefix="bench_vendi_") as folder:
        output = Path(folder) / "setting.json"
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--measure-setting",
            json.dumps([num_rows, repeats, threads, before, str(output)]),
        ]
        busy = subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) if loaded else None
        try:
            subprocess.run(command, env=environment, check=True)
        finally:
            if busy is not None:
                busy.kill()
                busy.wait()
        return json.loads(output.read_text(encoding="utf-8"))


def render_settings(
    results: list[tuple[str, dict]], num_rows: int, repeats: int, command: str, before: str | None
) -> str:
    has_before = before is not None
    header = ["setting", "others' CPU share", "ours", "peer"]
    header += (
        ["before", "ratio peer / ours", "ratio peer / before"]
        if has_before
        else ["ratio peer / ours"]
    )
    header += ["equal figures (max rel. diff to the peer's)"]
    rows = []
    for label, result in results:
        ours, peer = result["ours"], result["peer"]
        cells = [
            label,
            f"{result['others']:.0%}",
            f"{ours['wall_median']:.3f} s",
            f"{peer['wall_median']:.3f} s",
        ]
        if has_before:
            old = result["before"]
            cells += [
                f"{old['wall_median']:.3f} s",
                f"**{peer['wall_median'] / ours['wall_median']:.2f}x**",
                f"{peer['wall_median'] / old['wall_median']:.2f}x",
            ]
        else:
            cells.append(f"**{peer['wall_median'] / ours['wall_median']:.2f}x**")
        names = ("ours", "before") if has_before else ("ours",)
        cells.append(
            "yes: " + ", ".join(f"{name} {result[name]['max_relative']:.1e}" for name in names)
            if all(result[name]["max_relative"] <= VENDI_RTOL for name in names)
            else "**no**"
        )
        rows.append(cells)
    lines = [
        "## bench_peers_vendi: corpus Vendi by thread count and load",
        "",
        (
            f"`vendi_score_from_embeddings(X)` (ours) vs `vendi_score.vendi.score_dual(X)` (the peer) on "
            f"{num_rows:,} x 384 seeded Gaussian float32 rows"
            + (f", and ours as of `{before}` (before)" if has_before else "")
            + f". One fresh process per setting, its numpy, scipy, OpenMP and torch thread counts set "
            f"before numpy loads; under load, a busy Python loop spins beside it the whole time. "
            f"{repeats} interleaved rounds (rotated order, one untimed warm-up each), medians of wall "
            "time; ratio = peer / ours (>= 1.0: ours at least as fast). Every run's figure is checked "
            f"against the peer's of the same round (within {VENDI_RTOL:g} relative) before its time counts."
        ),
        "",
        *markdown_table(header, "lr" + "r" * (len(header) - 3) + "l", rows),
        "",
        *details_head(command),
        "- Versions: "
        + package_versions(
            ("numpy", "scipy", "scikit-learn", "threadpoolctl", "vendi-score", "torch")
        ),
        "- BLAS / OpenMP pools in each setting's process (threadpoolctl): "
        + "; ".join(
            f"{label}: " + ", ".join(f"{prefix} {count}" for prefix, count in result["threads"])
            for label, result in results
        ),
        f"- Figure: {results[0][1]['value']:.4f} (the peer's, float32 eigenvalues)",
        "",
        "All runs (wall seconds; "
        + ("ours | peer | before" if has_before else "ours | peer")
        + "):",
        "",
    ]
    for label, result in results:
        names = ("ours", "peer", "before") if has_before else ("ours", "peer")
        lines.append(
            f"- {label}: "
            + " | ".join(", ".join(f"{t:.3f}" for t in result[name]["wall"]) for name in names)
        )
    return section_text(SETTINGS_SECTION, lines)


def settings_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="corpus Vendi by thread count and load")
    parser.add_argument("--settings", action="store_true", required=True)
    parser.add_argument("--vendi-rows", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument(
        "--before",
        default=None,
        help="a git revision (its metrics/vendi_score/vendi.py also runs) or such a file",
    )
    parser.add_argument("--results", type=Path, default=RESULTS_PATH)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_vendi_before_") as folder:
        before_path = None
        if args.before and Path(args.before).is_file():
            before_path = str(Path(args.before).resolve())
        elif args.before:
            source = subprocess.run(
                ["git", "show", f"{args.before}:metrics/vendi_score/vendi.py"],
                cwd=REPO_ROOT,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            before_path = str(Path(folder) / "vendi_before.py")
            Path(before_path).write_text(source, encoding="utf-8")
        results = []
        for label, threads, loaded in SETTINGS:
            log(f"Vendi corpus, {label}")
            results.append(
                (label, run_setting(threads, loaded, args.vendi_rows, args.repeats, before_path))
            )
    command = ".venv/bin/python benchmarks/bench_peers_vendi.py " + shlex.join(argv)
    write_section(
        args.results,
        SETTINGS_SECTION,
        render_settings(results, args.vendi_rows, args.repeats, command, args.before),
    )
    failed = False
    for label, result in results:
        ratio = result["peer"]["wall_median"] / result["ours"]["wall_median"]
        extra = ""
        if "before" in result:
            extra = (
                f", before {result['peer']['wall_median'] / result['before']['wall_median']:.2f}x"
            )
        equal = all(
            result[n]["max_relative"] <= VENDI_RTOL for n in ("ours", "before") if n in result
        )
        failed |= not equal
        print(
            f"{label:24s} others {result['others']:4.0%}  ours {ratio:.2f}x{extra}  equal {equal}"
        )
    print(f"wrote {args.results}")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--measure-setting":
        rows, rounds, thread_count, before_file, output_file = json.loads(sys.argv[2])
        measured = measure_setting(rows, rounds, thread_count, before_file)
        Path(output_file).write_text(json.dumps(measured), encoding="utf-8")
        sys.exit(0)
    if "--settings" in sys.argv[1:]:
        sys.exit(settings_main(sys.argv[1:]))
    sys.exit(main(ROWS, __doc__, Path(__file__).name))
