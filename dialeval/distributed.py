"""The process state that every multi-process code path shares (Accelerate's ``PartialState``).

``PartialState()`` only sets up a CPU process group when asked for ``cpu=True``; without it, a
job started by ``torchrun`` / ``accelerate launch --multi_gpu`` on a machine without an
accelerator would run every process as if it were alone, each doing all the work. So CPU mode
is asked for when ``ACCELERATE_USE_CPU`` is set or when torch sees no accelerator.
"""

from __future__ import annotations

import contextlib
import contextvars
import gc
import os
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from dialeval.host_adapters import process_state_exists

if TYPE_CHECKING:
    import numpy as np
    import torch
    from accelerate import PartialState

#: The result rows :func:`gather_shares` joins: a list, or an array (concatenated).
Rows = TypeVar("Rows", "list[Any]", "np.ndarray")
_Value = TypeVar("_Value")


#: What a launcher (``accelerate launch``, ``torchrun``, ``mpirun``) sets in each of several
#: processes; Accelerate's ``PartialState`` reads the same variables to find the others.
_LAUNCH_VARIABLES = (
    "LOCAL_RANK",
    "WORLD_SIZE",
    "PMI_SIZE",
    "OMPI_COMM_WORLD_SIZE",
    "MV2_COMM_WORLD_SIZE",
)


class SingleProcess:
    """The state of a process that no launcher started and that has no ``PartialState``: the
    main and only one. It answers without importing torch (seconds on a small machine), so a job
    checks its outputs and reads its input before any model stack loads; anything else
    (``device``) comes from Accelerate's ``PartialState``, created on first use."""

    is_main_process = True
    num_processes = 1
    process_index = 0

    @property
    def device(self) -> torch.device:
        return _accelerate_state().device

    def wait_for_everyone(self) -> None:
        """Nothing to wait for: no other process."""


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def is_launched() -> bool:
    """Whether a launcher started this process as one of several (its variables are set)."""
    return any(os.environ.get(name, "").strip() not in ("", "-1") for name in _LAUNCH_VARIABLES)


def process_state() -> PartialState | SingleProcess:
    """Accelerate's ``PartialState``, created in CPU mode where there is no accelerator; a
    :class:`SingleProcess` in a process that no launcher started, until a ``PartialState``
    exists."""
    # accelerate in sys.modules: a PartialState can exist only once it is imported
    if is_launched() or ("accelerate" in sys.modules and process_state_exists()):
        return _accelerate_state()
    return SingleProcess()


def _accelerate_state() -> PartialState:
    # torch, accelerate: deferred so importing this module loads no model stack
    import torch
    from accelerate import PartialState
    from accelerate.utils import parse_flag_from_env

    if process_state_exists():
        return PartialState()
    accelerator = getattr(torch, "accelerator", None)
    has_accelerator = (
        accelerator.is_available() if accelerator is not None else torch.cuda.is_available()
    )
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
    # a process group needs torch.distributed imported: without it there is none to end, and
    # importing torch here would cost a job that never needed it seconds at its end
    dist = sys.modules.get("torch.distributed")
    if dist is None:
        return
    if dist.is_available() and dist.is_initialized():
        gc.collect()
        dist.barrier()
        dist.destroy_process_group()


def broadcast_int(value: int) -> int:
    """The main process's ``value``, on every process of a launch (``value`` itself in one process).

    For a count that only the main process can know, such as the records a resumed output already
    holds, which every process needs to skip the same work. Every process must call it.
    """
    if process_state().num_processes == 1:
        return value
    from accelerate.utils import broadcast_object_list  # torch: this module imports it lazily

    holder = [value]
    broadcast_object_list(holder, from_process=0)
    return int(holder[0])


# -- sharing one computation among the processes of a launch ------------------------------------

_SPLIT_WORK = contextvars.ContextVar("dialeval_split_work", default=False)


@contextlib.contextmanager
def split_work() -> Iterator[None]:
    """Inside this block the model-backed engines share their work among the processes of an
    ``accelerate launch`` / ``torchrun``: each runs a strided share of the distinct items (pairs,
    texts, sentences; length-sorted first, so the shares cost alike) and the results are gathered,
    in order, on every process. Every process must make the same calls on the same inputs, as
    ``dialeval evaluate`` does; outside the block (the default) each process computes all of its
    own inputs, which is what a training loop or DTG, whose processes hold different data, needs.
    """
    token = _SPLIT_WORK.set(True)
    try:
        yield
    finally:
        _SPLIT_WORK.reset(token)


def _sharing() -> tuple[int, int] | None:
    if not _SPLIT_WORK.get():
        return None
    state = process_state()
    return (state.process_index, state.num_processes) if state.num_processes > 1 else None


def is_sharing_work() -> bool:
    """True inside :func:`split_work` when several processes share the work."""
    return _sharing() is not None


def work_share(order: list[int], batch_size: int = 1) -> list[int]:
    """The items of ``order`` this process computes: inside :func:`split_work` with several
    processes, every ``num_processes``-th batch of ``batch_size`` consecutive items (so each
    batch holds what it holds in one process, and gives the same numbers), else all of them."""
    sharing = _sharing()
    if sharing is None:
        return order
    index, count = sharing
    batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    return [item for batch in batches[index::count] for item in batch]


def gather_shares(members: list[int], rows: Rows) -> tuple[list[int], Rows]:
    """Every process's ``(members, rows)`` joined, as :func:`work_share` split them: the item
    indices and their result rows (an array or a list, one row per member). Outside
    :func:`split_work` or in one process it returns its arguments."""
    if _sharing() is None:
        return members, rows
    # accelerate (torch): deferred so importing this module loads no model stack
    from accelerate.utils import gather_object

    parts = gather_object([(list(members), rows)])
    all_members = [member for part_members, _ in parts for member in part_members]
    if isinstance(rows, list):
        return all_members, [row for _, part_rows in parts for row in part_rows]
    # numpy: deferred so importing this module (the CLI's parser does) loads no numpy
    import numpy as np

    return all_members, np.concatenate(
        [np.asarray(part_rows) for _, part_rows in parts if len(part_rows)]
    )


def computed_on_main(compute: Callable[[], _Value]) -> _Value:
    """``compute()``, run once and given to every process: inside :func:`split_work` with several
    processes, the main process runs it and broadcasts the result (which must pickle); else it is
    simply ``compute()``.

    For a step after the gather that every process would otherwise repeat on the same data, such
    as Sem-Ent's PCA + k-means: the other processes would only wait for the main one anyway, N
    copies of a multithreaded CPU step on one node would fight for its cores, and a result that
    depends on the thread count or BLAS (k-means' parallel sums) is then the same everywhere. If
    ``compute`` raises on the main process, the others raise a ``RuntimeError`` quoting it,
    rather than waiting forever for the broadcast.
    """
    if _sharing() is None:
        return compute()
    # accelerate (torch): deferred so importing this module loads no model stack
    from accelerate.utils import broadcast_object_list

    failure = None
    # broadcast_object_list fills it in place: (succeeded, value or message)
    payload: list[Any] = [None]
    if process_state().is_main_process:
        try:
            payload = [(True, compute())]
        except Exception as error:  # noqa: BLE001 - any failure: sent to the other processes, re-raised here
            failure = error
            payload = [(False, f"{type(error).__name__}: {error}")]
    broadcast_object_list(payload, from_process=0)
    if failure is not None:
        raise failure
    succeeded, value = payload[0]
    if not succeeded:
        raise RuntimeError(
            f"the main process failed in a step it computes for every process: {value}"
        )
    return value
