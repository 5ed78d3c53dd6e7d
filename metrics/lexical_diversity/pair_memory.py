"""The memory bound of the n-gram cosine diversity's pairwise computation.

:func:`.set_level_batch.score_response_sets` lays out every pair of distinct responses (units)
of a set at once, about :data:`BYTES_PER_PAIR` bytes per pair at its peak (the pair's two unit
indices, its weight, its similarity, its index in the released pair order, and the temporaries
that build and reduce them). A set of ``k`` distinct responses has ``k (k - 1) / 2`` pairs, so
100,000 distinct responses would need ~480 GB. The pairs are counted before any of them is
allocated, and a computation above the memory available at the call is refused with a ValueError
naming the argument (e.g. ``responses``) and both sizes.
"""

from __future__ import annotations

import os

from dialeval.validation import ArgumentError

#: Peak bytes per unit pair of the pairwise layout (int64 / float64 arrays, see the module
#: docstring).
BYTES_PER_PAIR = 96


def available_memory() -> int:
    """Bytes of memory available now (``MemAvailable`` of /proc/meminfo, else the free pages)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def check_pair_memory(num_pairs: int, largest_set: int, argument: str) -> None:
    """Refuse ``num_pairs`` unit pairs whose layout needs more than the available memory."""
    needed = num_pairs * BYTES_PER_PAIR
    available = available_memory()
    if needed > available:
        raise ArgumentError(
            argument,
            ": the n-gram cosine diversity compares every pair of distinct responses of a set; "
            f"{num_pairs:,} pairs (largest set: {largest_set:,} distinct responses) need "
            f"~{needed / 2**30:.1f} GiB ({BYTES_PER_PAIR} bytes a pair), above the "
            f"{available / 2**30:.1f} GiB available: split the set or score averaged_distinct_n "
            "alone",
        )
