"""The same float bits from the same forward pass, in every process and every run.

On x86 CPUs torch's matrix products run in oneMKL, which by default picks its kernel at run time
by, among other things, the inputs' memory alignment: the same product of the same tensors can
then round differently in the last bits from one process to another. With its conditional
numerical reproducibility on (``MKL_CBWR=AUTO``: the CPU's own code path, run reproducibly) a
product gives the same bits for the same inputs and thread count wherever its buffers lie.
Measured on this project's 2-core AMD EPYC (torch 2.13, oneMKL 2024.2), 6 small float32 product
shapes with each operand moved by 1 to 15 floats (90 cases): 12 cases changed bits at 1 thread,
36 at 2; none with ``MKL_CBWR=AUTO``.

That is what lets the processes of ``accelerate launch`` write the report one process writes:
they run the same batches, and each batch must give the same bits wherever it runs. The thread
count is another matter: with more threads oneMKL may split a product differently, so a process
with N threads and one with 1 thread can differ in the last bits (README, "Several processes,
one report"). oneMKL reads the variable once, at its first call, so the command line sets it
before any model runs; a value already in the environment is kept.
"""

from __future__ import annotations

import os

#: oneMKL's conditional numerical reproducibility, on the CPU's own code path.
MKL_CONDITIONAL_REPRODUCIBILITY = "AUTO"


def request_reproducible_math() -> None:
    """Turn on oneMKL's conditional numerical reproducibility unless ``MKL_CBWR`` is set (it has
    no effect once oneMKL has run in this process)."""
    os.environ.setdefault("MKL_CBWR", MKL_CONDITIONAL_REPRODUCIBILITY)
