"""What every benchmark script shares: the machine line and its own section of RESULTS.md, the
papers' data, interleaved timing, other processes' CPU share, and runs of a whole process tree."""

from __future__ import annotations

import gc
import json
import os
import platform
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

RESULTS_PATH = Path(__file__).resolve().parent / "RESULTS.md"
REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_ROOT = REPO_ROOT.parent / "shared" / "data"
DAILYDIALOG = DATA_ROOT / "dailydialog-plusplus"
DAILYDIALOG_FILES = ("data_positives.json", "dev.json", "test.json")
#: The machine has no Hugging Face Hub: its libraries must not try it.
OFFLINE_ENVIRONMENT = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_EVALUATE_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
RESULTS_HEADER = (
    "# Benchmarks\n\n"
    "Measured results of the scripts in `benchmarks/` (run them with `make bench`). Each script\n"
    "rewrites only its own section, delimited by `<!-- <script>:start -->` / `<!-- <script>:end -->`.\n"
)


def total_ram_gib() -> str:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return f"{int(line.split()[1]) / 1024**2:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


#: CPU flags (``/proc/cpuinfo``) that change which kernels the runtimes pick, widest first
VECTOR_EXTENSIONS = (
    ("amx_bf16", "AMX-BF16"),
    ("avx512_bf16", "AVX512-BF16"),
    ("avx512_fp16", "AVX512-FP16"),
    ("avx512f", "AVX-512"),
    ("avx2", "AVX2"),
)


def vector_extensions(flags: str | None = None) -> str:
    """The CPU's vector extensions among ``VECTOR_EXTENSIONS`` (from ``flags``, else
    ``/proc/cpuinfo``'s first ``flags`` line): the same model name ("AMD EPYC") covers CPUs with
    AVX2 only and with AVX-512, whose float32 speed differs."""
    if flags is None:
        flags = ""
        try:
            with open("/proc/cpuinfo", encoding="utf-8") as handle:
                for line in handle:
                    if line.startswith("flags"):
                        flags = line.split(":", 1)[1]
                        break
        except OSError:
            pass
    present = set(flags.split())
    found = [name for flag, name in VECTOR_EXTENSIONS if flag in present]
    return ", ".join(found) if found else "no AVX2"


def package_versions(names) -> str:
    """``"name version, ..."`` of the installed distributions ``names`` (``(not installed)`` for a missing one)."""
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for name in names:
        try:
            out.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            out.append(f"{name} (not installed)")
    return ", ".join(out)


def details_head(command: str) -> list[str]:
    """The first lines of a section's details: heading, date, command and machine."""
    import datetime

    return [
        "### Details",
        "",
        f"- Date: {datetime.date.today().isoformat()}",
        f"- Command: `{command}`",
        machine_line(),
    ]


def machine_line() -> str:
    return (
        f"- Machine: {platform.platform()} ({platform.machine()}), {cpu_model()} "
        f"({vector_extensions()}), "
        f"`os.cpu_count()` = {os.cpu_count()}, RAM {total_ram_gib()}"
    )


def section_markers(script: str) -> tuple[str, str]:
    return f"<!-- {script}:start -->", f"<!-- {script}:end -->"


def section_text(script: str, lines: Sequence[str]) -> str:
    """``script``'s section of RESULTS.md: ``lines`` between its markers, ending in a newline."""
    start_marker, end_marker = section_markers(script)
    return "\n".join([start_marker, *lines, end_marker]) + "\n"


#: The alignment row's cell per column letter: ``l`` left, ``r`` right.
ALIGNMENTS = {"l": "---", "r": "---:"}


def table_row(cells: Sequence[object]) -> str:
    """One Markdown table row: the cells as given, between pipes."""
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def markdown_table(
    header: Sequence[str], align: str, rows: Iterable[Sequence[object]]
) -> list[str]:
    """The lines of a Markdown table: ``header``, the alignment row (``align``: one letter of
    :data:`ALIGNMENTS` a column) and ``rows``; every benchmark's tables come from here."""
    if len(align) != len(header) or set(align) - set(ALIGNMENTS):
        raise ValueError(
            f"align {align!r} does not give one of l/r for each of {len(header)} columns"
        )
    lines = [table_row(header), "|" + "".join(ALIGNMENTS[letter] + "|" for letter in align)]
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"row {row!r} has {len(row)} cells, the header {len(header)}")
        lines.append(table_row(row))
    return lines


def write_section(path: Path, script: str, section: str) -> None:
    """Replace ``script``'s section of ``path`` (``section`` includes its markers), or append it."""
    start_marker, end_marker = section_markers(script)
    text = path.read_text(encoding="utf-8") if path.exists() else RESULTS_HEADER
    start, end = text.find(start_marker), text.find(end_marker)
    if start != -1 and end > start:
        rest = text[end + len(end_marker) :].lstrip("\n")
        text = text[:start] + section + ("\n" + rest if rest else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def cpu_ticks() -> tuple[int, int, int]:
    """(machine busy ticks, machine total ticks, this process's ticks) from /proc."""
    with open("/proc/stat", encoding="ascii") as handle:
        fields = [int(x) for x in handle.readline().split()[1:9]]
    with open("/proc/self/stat", encoding="ascii") as handle:
        own = handle.read().rsplit(")", 1)[1].split()
    total = sum(fields)
    return total - fields[3] - fields[4], total, int(own[11]) + int(own[12])


def others_share(start: tuple[int, int, int], end: tuple[int, int, int]) -> float:
    """Share of the machine's CPU time other processes used between two :func:`cpu_ticks` readings."""
    busy, total, own = (b - a for a, b in zip(start, end))
    return max(busy - own, 0) / total if total > 0 else 0.0


class PeakRSS:
    """Peak resident memory growth (bytes) while the ``with`` block runs."""

    interval = 0.005  # seconds between samples

    def __enter__(self):
        self.page = os.sysconf("SC_PAGE_SIZE")
        self.start = self._rss()
        self.peak = self.start
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _rss(self) -> int:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * self.page

    def _sample(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self._rss())
            self._stop.wait(self.interval)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss())

    @property
    def growth_mib(self) -> float:
        return (self.peak - self.start) / 2**20


def set_offline_environment() -> None:
    """:data:`OFFLINE_ENVIRONMENT` where not set already (before the libraries are imported)."""
    for name, value in OFFLINE_ENVIRONMENT.items():
        os.environ.setdefault(name, value)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def dailydialog_records(names=DAILYDIALOG_FILES) -> list[dict]:
    records = []
    for name in names:
        with open(DAILYDIALOG / name, encoding="utf-8") as handle:
            records += [json.loads(line) for line in handle if line.strip()]
    return records


# ---------------------------------------------------------------- timing


def cpu_seconds() -> float:
    """CPU time of this process (all threads) plus that of its reaped children (tokenizing workers)."""
    times = os.times()
    return time.process_time() + times.children_user + times.children_system


@dataclass
class Timing:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    value: object = None  # the last run's
    values: list = field(default_factory=list)  # every run's, in run order

    @property
    def wall_median(self) -> float:
        return statistics.median(self.wall)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)


def interleaved(
    contenders: dict[str, Callable[[], object]],
    repeats: int,
    warmups: dict[str, Callable[[], object]] | None = None,
) -> dict[str, Timing]:
    """Run every contender ``repeats`` times, round by round in a rotated order; keep the values."""
    for name, warmup in (warmups or {}).items():
        log(f"  warm-up {name}")
        warmup()
    names = list(contenders)
    timings = {name: Timing() for name in names}
    for round_index in range(repeats):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            gc.collect()
            wall, cpu = time.perf_counter(), cpu_seconds()
            value = contenders[name]()
            cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
            timings[name].wall.append(wall)
            timings[name].cpu.append(cpu)
            timings[name].value = value
            timings[name].values.append(value)
            log(f"  round {round_index + 1}/{repeats} {name}: {wall:.3f} s wall, {cpu:.3f} s CPU")
    return timings


class Contention:
    """Other processes' share of the machine's CPU during a ``with`` block; this process's reaped
    children (ours tokenizes in worker processes; bench_job's jobs are children) count as this
    process, not as others."""

    def __enter__(self):
        self.start, self.children = cpu_ticks(), children_ticks()
        return self

    def __exit__(self, *exc):
        busy, total, own = cpu_ticks()
        own += children_ticks() - self.children
        self.share = others_share(self.start, (busy, total, own))


def children_ticks() -> int:
    times = os.times()
    return round((times.children_user + times.children_system) * os.sysconf("SC_CLK_TCK"))


# ---------------------------------------------------------------- a whole process tree

#: How often :func:`run_process_tree` sums the tree's resident memory.
TREE_POLL_S = 0.1


@dataclass
class TreeRun:
    """One run of a command and every process it started."""

    command: list[str]
    returncode: int
    wall: float  # seconds, start to reaped
    cpu: float  # user + system seconds of the process and its reaped descendants (wait4)
    peak_tree_rss: (
        int  # bytes: the largest sum of RSS over the process and its live descendants (polled)
    )
    max_rss: int  # bytes: wait4's ru_maxrss, the largest single process of the tree (exact)
    log_tail: str  # the end of its stdout + stderr
    spawn_floor: int = (
        0  # bytes: the spawning process's own high-water RSS when it started the command
    )

    @property
    def max_rss_is_its_own(self) -> bool:
        """False when ``max_rss`` may be the spawner's: Linux carries the parent's high-water RSS into a
        forked child across ``exec`` (a 2 GiB parent's ``/bin/true`` reports 2 GiB), so a child's
        ``ru_maxrss`` at or under the parent's own tells nothing about the child."""
        return self.max_rss > self.spawn_floor

    @property
    def peak_rss(self) -> int:
        """Both figures are lower bounds of the tree's true peak; the larger one (the polled sum alone
        when ``max_rss`` may be the spawner's)."""
        return (
            max(self.peak_tree_rss, self.max_rss) if self.max_rss_is_its_own else self.peak_tree_rss
        )


class TreePeakRSS(PeakRSS):
    """Peak of the summed RSS of ``process`` (a ``psutil.Process``) and its live descendants while
    the ``with`` block runs, sampled every :data:`TREE_POLL_S` seconds (listing the descendants
    scans ``/proc``: ~2 ms of CPU a sample)."""

    interval = TREE_POLL_S

    def __init__(self, process):
        self.process = process

    def _rss(self) -> int:
        import psutil

        try:
            members = [self.process, *self.process.children(recursive=True)]
        except psutil.Error:  # reaped
            return 0
        total = 0
        for member in members:
            try:
                total += member.memory_info().rss
            except psutil.Error:  # ended between the listing and the reading
                pass
        return total


def run_process_tree(
    command: Sequence[str],
    env: dict[str, str] | None = None,
    log_path: Path | None = None,
    cwd: Path | None = None,
) -> TreeRun:
    """Run ``command`` to its end; its wall and CPU time and peak resident memory, children included.

    The wall time runs from the start to ``os.wait4`` returning; CPU time and ``max_rss`` come from
    ``wait4`` (the kernel's accounting of the process and the descendants it reaped); the tree's
    summed RSS is sampled by :class:`TreePeakRSS` in a thread meanwhile (a peak shorter than
    :data:`TREE_POLL_S` can be missed; ``max_rss`` cannot miss the largest single process).
    Output goes to ``log_path`` (default: discarded).
    """
    import resource

    import psutil

    spawn_floor = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    log_path = Path(log_path) if log_path is not None else None
    with open(log_path if log_path is not None else os.devnull, "wb") as sink:
        start = time.perf_counter()
        process = subprocess.Popen(
            list(command), env=env, cwd=cwd, stdout=sink, stderr=subprocess.STDOUT
        )
    with TreePeakRSS(psutil.Process(process.pid)) as memory:
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    tail = ""
    if log_path is not None:
        with open(log_path, "rb") as handle:
            handle.seek(max(log_path.stat().st_size - 4000, 0))
            tail = handle.read().decode("utf-8", "replace")
    return TreeRun(
        list(command),
        process.returncode,
        wall,
        usage.ru_utime + usage.ru_stime,
        memory.peak,
        usage.ru_maxrss * 1024,
        tail,
        spawn_floor,
    )
