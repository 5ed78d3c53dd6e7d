"""Start-up time of the command line: `dialeval --version`, `dialeval evaluate --help`, and
`dialeval evaluate`'s fixed cost before it reads its first text.

Each command runs in a fresh process (the installed `dialeval` script beside this interpreter),
the commands interleaved, several times; the median wall time is reported against its target
(`--version` < 0.3 s, `evaluate --help` < 0.8 s, `evaluate` until the first text is read < 1.5 s,
on the 2-core machine), with the minimum, the median CPU time of the process (user + system: what
start-up costs whatever else runs) and the share of the CPU other processes used meanwhile (a
busy machine stretches the wall time).

`dialeval evaluate SETS.jsonl -o OUT.json --no-progress` (the default metrics) reads SETS.jsonl
from a named pipe: the time is from the process's start until it opens the pipe to read (the
writer's ``open`` returns), its CPU time read from ``/proc`` at that moment; everything the
job does before it reads (parsing, planning the steps and outputs, the output checks and lock)
is in it. The process is then stopped (SIGTERM) unread: the job's work is ``bench_job.py``'s.

    python benchmarks/bench_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import errno
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
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
#: The row of the job's fixed cost, and its target median in seconds on the 2-core machine.
FIRST_READ = ("evaluate", "SETS.jsonl", "-o", "OUT.json", "--no-progress")
FIRST_READ_LABEL = "`dialeval evaluate` until the first text is read"
FIRST_READ_TARGET = 1.5


def _dialeval() -> str:
    script = Path(sys.executable).with_name("dialeval")
    if not script.is_file():
        raise SystemExit(f"no `dialeval` script beside {sys.executable}: install the package")
    return str(script)


Times = dict[tuple[str, ...], list[float]]


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process so far (Linux's ``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _opened_by_reader(pipe: Path, process: subprocess.Popen) -> int:
    """The write end of ``pipe``, opened as soon as ``process`` has opened it to read (polled each
    millisecond: a process that fails first must not leave this waiting)."""
    while True:
        try:
            return os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as error:  # ENXIO: no reader yet
            if error.errno != errno.ENXIO:
                raise
        if process.poll() is not None:
            raise RuntimeError(f"dialeval evaluate exited ({process.returncode}) before reading")
        time.sleep(0.001)


def _until_first_read(executable: str, environment: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of a fresh ``dialeval evaluate`` until it opens its input, a named
    pipe; the process is then stopped."""
    with tempfile.TemporaryDirectory() as folder:
        pipe = Path(folder) / FIRST_READ[1]
        os.mkfifo(pipe)
        arguments = [str(pipe), "-o", str(Path(folder) / FIRST_READ[3]), *FIRST_READ[4:]]
        start = time.perf_counter()
        process = subprocess.Popen(
            [executable, FIRST_READ[0], *arguments],
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            writer = _opened_by_reader(pipe, process)
            wall = time.perf_counter() - start
            cpu = _process_cpu_seconds(process.pid)
            os.close(writer)
        finally:
            process.send_signal(signal.SIGTERM)
            _, error = process.communicate(timeout=120)
        if process.returncode not in (0, 2, 128 + signal.SIGTERM, -signal.SIGTERM):
            raise RuntimeError(f"dialeval evaluate failed ({process.returncode}): {error[-2000:]}")
    return wall, cpu


def _command(
    executable: str, arguments: tuple[str, ...], environment: dict[str, str]
) -> Callable[[], tuple[float, float]]:
    def run() -> tuple[float, float]:
        start, start_cpu = time.perf_counter(), _children_cpu_seconds()
        subprocess.run(
            [executable, *arguments], env=environment, stdout=subprocess.DEVNULL, check=True
        )
        return time.perf_counter() - start, _children_cpu_seconds() - start_cpu

    return run


def measure(runs: int) -> tuple[Times, Times, float]:
    """Each command's wall and CPU times over ``runs`` interleaved rounds, and other processes'
    share of the CPU meanwhile."""
    executable = _dialeval()
    environment = {**os.environ, **OFFLINE_ENVIRONMENT}
    probes = {arguments: _command(executable, arguments, environment) for arguments, _ in COMMANDS}
    probes[FIRST_READ] = lambda: _until_first_read(executable, environment)
    times: Times = {arguments: [] for arguments in probes}
    cpu: Times = {arguments: [] for arguments in probes}
    with Contention() as contention:
        for _ in range(runs):
            for arguments, probe in probes.items():
                wall, seconds = probe()
                times[arguments].append(wall)
                cpu[arguments].append(seconds)
    return times, cpu, contention.share


def _rows() -> list[tuple[tuple[str, ...], str, float]]:
    return [
        (arguments, f"`dialeval {' '.join(arguments)}`", target) for arguments, target in COMMANDS
    ] + [(FIRST_READ, FIRST_READ_LABEL, FIRST_READ_TARGET)]


def section(times: Times, cpu: Times, others: float, runs: int) -> str:
    table = markdown_table(
        ["command", "median wall (s)", "min wall (s)", "median CPU (s)", "target wall (s)", "met"],
        "lrrrrl",
        [
            [
                label,
                f"{statistics.median(times[arguments]):.2f}",
                f"{min(times[arguments]):.2f}",
                f"{statistics.median(cpu[arguments]):.2f}",
                f"< {target}",
                "yes" if statistics.median(times[arguments]) < target else "no",
            ]
            for arguments, label, target in _rows()
        ],
    )
    lines = [
        "## Start-up of the command line (`bench_startup.py`)",
        "",
        (
            f"Each command in a fresh process, {runs} interleaved runs; other processes used "
            f"{others:.0%} of the CPU meanwhile (start-up is imports: a busy machine slows it). "
            f"{FIRST_READ_LABEL}: `dialeval {' '.join(FIRST_READ)}` (the default metrics) with "
            "SETS.jsonl a named pipe, from the process's start until it opens the pipe to read "
            "(its CPU time read at that moment); the process is stopped there."
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
    for arguments, label, _ in _rows():
        log(
            f"{label.replace('`', '')}: median {statistics.median(times[arguments]):.2f} s "
            f"wall, {statistics.median(cpu[arguments]):.2f} s CPU"
        )
    write_section(RESULTS_PATH, SCRIPT, section(times, cpu, others, runs))


if __name__ == "__main__":
    main()
