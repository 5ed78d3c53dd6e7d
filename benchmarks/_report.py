"""What every benchmark script shares: the machine line and its own section of RESULTS.md."""
from __future__ import annotations

import os
import platform
import threading
import time
from pathlib import Path

RESULTS_PATH = Path(__file__).resolve().parent / "RESULTS.md"
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


def machine_line() -> str:
    return (
        f"- Machine: {platform.platform()} ({platform.machine()}), {cpu_model()}, "
        f"`os.cpu_count()` = {os.cpu_count()}, RAM {total_ram_gib()}"
    )


def section_markers(script: str) -> tuple[str, str]:
    return f"<!-- {script}:start -->", f"<!-- {script}:end -->"


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
            time.sleep(0.005)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss())

    @property
    def growth_mib(self) -> float:
        return (self.peak - self.start) / 2**20
