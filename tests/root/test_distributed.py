"""dialeval.distributed.end_processes: tears a process group down, and is a no-op without one;
broadcast_int gives one process its own value (tests/root/test_split_work.py launches two).

The two-process training test (dress_ddp_worker.py) also asserts the group is gone after it.
"""

import torch
import torch.distributed as dist

from dialeval.distributed import broadcast_int, end_processes


def test_broadcast_int_in_one_process_is_the_value():
    assert broadcast_int(12) == 12


def test_end_processes_without_a_group_is_a_no_op():
    assert not dist.is_initialized()
    end_processes()
    assert not dist.is_initialized()


def test_end_processes_destroys_the_group(tmp_path):
    dist.init_process_group(
        "gloo", init_method=f"file://{tmp_path / 'rendezvous'}", rank=0, world_size=1
    )
    try:
        dist.all_reduce(torch.ones(2))
        end_processes()
        assert not dist.is_initialized()
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
