"""The process state that every multi-process code path shares (Accelerate's ``PartialState``).

``PartialState()`` only sets up a CPU process group when asked for ``cpu=True``; without it, a
job started by ``torchrun`` / ``accelerate launch --multi_gpu`` on a machine without an
accelerator would run every process as if it were alone, each doing all the work. So CPU mode
is asked for when ``ACCELERATE_USE_CPU`` is set or when torch sees no accelerator.
"""
from __future__ import annotations


def process_state():
    """Accelerate's ``PartialState``, created in CPU mode where there is no accelerator."""
    import torch
    from accelerate import PartialState
    from accelerate.utils import parse_flag_from_env

    if PartialState._shared_state:
        return PartialState()
    accelerator = getattr(torch, "accelerator", None)
    has_accelerator = accelerator.is_available() if accelerator is not None else torch.cuda.is_available()
    return PartialState(cpu=parse_flag_from_env("ACCELERATE_USE_CPU") or not has_accelerator)


def end_processes() -> None:
    """Wait for every process, then tear the process group down; a no-op in a single process.

    Call it last, once the functions that ran collectives have returned. A gloo group left alive
    until interpreter exit can have its worker thread release a collective's tensors while Python
    finalizes, which aborts that process at random ("terminate called without an active
    exception", exit code -6) after all its work is done and fails the whole launch. Destroying
    the group while tensors of its collectives are still referenced can instead deadlock, so the
    garbage left by those functions is collected first.
    """
    import gc

    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        gc.collect()
        dist.barrier()
        dist.destroy_process_group()
