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
