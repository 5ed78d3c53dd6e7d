"""dialeval.distributed.end_processes: tears a process group down, and is a no-op without one;
broadcast_int gives one process its own value (tests/root/test_split_work.py launches two);
process_state in a process no launcher started answers without torch.

The two-process training test (dress_ddp_worker.py) also asserts the group is gone after it.
"""

import os
import subprocess
import sys

import torch
import torch.distributed as dist

from dialeval.distributed import SingleProcess, broadcast_int, end_processes


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


def _without_launch_variables():
    return {
        name: value
        for name, value in os.environ.items()
        if name not in ("LOCAL_RANK", "WORLD_SIZE", "RANK")
        and not name.endswith("_COMM_WORLD_SIZE")
        and name != "PMI_SIZE"
    }


def test_a_process_no_launcher_started_is_the_only_one_without_importing_torch():
    code = (
        "import sys\n"
        "from dialeval.distributed import end_processes, process_state\n"
        "state = process_state()\n"
        "state.wait_for_everyone()\n"
        "end_processes()\n"
        "print(state.is_main_process, state.num_processes, state.process_index,\n"
        "      sorted({'torch', 'accelerate'} & set(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=_without_launch_variables(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split("\n")[0] == "True 1 0 []"


def test_the_single_process_device_is_accelerates():
    from accelerate import PartialState

    assert SingleProcess().device == PartialState().device
