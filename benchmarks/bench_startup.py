"""Start-up time of the command line: `dialeval --version` and `dialeval evaluate --help`.

Each command runs in a fresh process (the installed `dialeval` script beside this interpreter),
the commands interleaved, several times; the median wall time is reported against its target
(`--version` < 0.3 s, `evaluate --help` < 0.8 s on the 2-core machine), with the minimum, the
median CPU time of the process (user + system: what start-up costs whatever else runs) and the
share of the CPU other processes used meanwhile (a busy machine stretches the wall time).

    python benchmarks/bench_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _report import (
    OFFLINE_ENVIRONMENT,
    RESULTS_PATH,
    Contention,
    details_head,
    log,
    markdown_table,
    section_text,
    write_section,
)

SCRIPT = "bench_startup"
#: (arguments, target median in seconds on the 2-core machine)
COMMANDS: tuple[tuple[tuple[str, ...], float], ...] = (
    (("--version",), 0.3),
    (("--help",), 0.3),
    (("evaluate", "--help"), 0.8),
)


def _dialeval() -> str:
    script = Path(sys.executable).with_name("dialeval")
    if not script.is_file():
        raise SystemExit(f"no `dialeval` script beside {sys.executable}: install the package")
    return str(script)


Times = dict[tuple[str, ...], list[float]]


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(runs: int) -> tuple[Times, Times, float]:
    """Each command's wall and CPU times over ``runs`` interleaved rounds, and other processes'
    share of the CPU meanwhile."""
    executable = _dialeval()
    environment = {**os.environ, **OFFLINE_ENVIRONMENT}
    times: Times = {arguments: [] for arguments, _ in COMMANDS}
    cpu: Times = {arguments: [] for arguments, _ in COMMANDS}
    with Contention() as contention:
        for _ in range(runs):
            for arguments, _ in COMMANDS:
                start, start_cpu = time.perf_counter(), _children_cpu_seconds()
                subprocess.run(
                    [executable, *arguments],
                    env=environment,
                    stdout=subprocess.DEVNULL,
                    check=True,
                )
                times[arguments].append(time.perf_counter() - start)
                cpu[arguments].append(_children_cpu_seconds() - start_cpu)
    return times, cpu, contention.share


def section(times: Times, cpu: Times, others: float, runs: int) -> str:
    table = markdown_table(
        ["command", "median wall (s)", "min wall (s)", "median CPU (s)", "target wall (s)", "met"],
        "lrrrrl",
        [
            [
                f"`dialeval {' '.join(arguments)}`",
                f"{statistics.median(times[arguments]):.2f}",
                f"{min(times[arguments]):.2f}",
                f"{statistics.median(cpu[arguments]):.2f}",
                f"< {target}",
                "yes" if statistics.median(times[arguments]) < target else "no",
            ]
            for arguments, target in COMMANDS
        ],
    )
    lines = [
        "## Start-up of the command line (`bench_startup.py`)",
        "",
        (
            f"Each command in a fresh process, {runs} interleaved runs; other processes used "
            f"{others:.0%} of the CPU meanwhile (start-up is imports: a busy machine slows it)."
        ),
        "",
        *table,
    ]
    if others > 0.25:
        lines += [
            "",
            "**Timings disturbed** by other processes' load: the targets are for an idle machine.",
        ]
    lines += ["", *details_head("python benchmarks/bench_startup.py")]
    return section_text(SCRIPT, lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs of each command (default: 7)")
    runs = parser.parse_args().runs
    times, cpu, others = measure(runs)
    for arguments, _ in COMMANDS:
        log(
            f"dialeval {' '.join(arguments)}: median {statistics.median(times[arguments]):.2f} s "
            f"wall, {statistics.median(cpu[arguments]):.2f} s CPU"
        )
    write_section(RESULTS_PATH, SCRIPT, section(times, cpu, others, runs))


if __name__ == "__main__":
    main()
