"""Interrupt and resume with real processes and real signals.

Each run to interrupt is ``paused_dialeval.py``: dialeval itself, paused at a known point (after
the first checkpointed metric, after the N-th batch) until a signal comes, so no test depends on
how fast anything runs. While it is paused it holds its output, and a second run on that output
must fail at once.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from registry_steps import expected_figures
from test_dtg_cli import CONTEXTS
from test_dtg_cli import _args as _dtg_args

from dialeval.atomic_files import MANIFEST_NAME, write_atomically
from dialeval.cli import main
from dialeval.cli.checkpoints import checkpoint_folder
from dialeval.cli.evaluate_job import EvaluationOptions
from dialeval.cli.safe_output import lock_path
from dialeval.metrics.lexical_diversity import by_scope as lexical_module

PAUSED = str(Path(__file__).with_name("paused_dialeval.py"))
#: Only a guard against a hung test: every wait below ends on an event, long before this.
PATIENCE_S = 600

SETS = [
    {
        "context": "How was your weekend?",
        "responses": ["I went hiking.", "I fixed the sink.", "Nothing much."],
    },
    {
        "context": "Any plans?",
        "responses": ["Not much.", "Not much, you?", "We ate seafood on the coast."],
    },
    {"context": "Coffee?", "responses": ["Sure!", "Maybe tomorrow?", "I don't know."]},
]


class Paused:
    """A dialeval process started paused at a known point; its output goes to files (a pipe that
    nobody reads could fill up and block it)."""

    def __init__(
        self, tmp_path: Path, command: list[str], cwd: Path | None = None, new_session: bool = False
    ):
        self.ready = tmp_path / "ready.json"
        self.stdout, self.stderr = tmp_path / "paused.out", tmp_path / "paused.err"
        self.new_session = new_session
        with open(self.stdout, "w") as out, open(self.stderr, "w") as err:
            self.process = subprocess.Popen(
                command,
                cwd=cwd,
                stdout=out,
                stderr=err,
                start_new_session=new_session,
                env={**os.environ, "OMP_NUM_THREADS": "1"},
            )

    def wait_until_paused(self) -> int:
        """The pid of the process that paused (a launched worker, under accelerate launch)."""
        deadline = time.monotonic() + PATIENCE_S
        while not self.ready.exists():
            if self.process.poll() is not None:
                pytest.fail(
                    f"exited with {self.process.returncode} before pausing:\n{self.stderr.read_text()[-3000:]}"
                )
            if time.monotonic() > deadline:
                self.process.kill()
                pytest.fail("never paused")
            time.sleep(0.2)
        return json.loads(self.ready.read_text(encoding="utf-8"))["pid"]

    def finish(self) -> tuple[int, str]:
        try:
            code = self.process.wait(timeout=PATIENCE_S)
        except subprocess.TimeoutExpired:
            if self.new_session:
                os.killpg(self.process.pid, signal.SIGKILL)
            else:
                self.process.kill()
            pytest.fail("did not exit after the signal")
        return code, self.stderr.read_text(encoding="utf-8")


# -- evaluate --------------------------------------------------------------------------------------


def _evaluate_args(sets: Path, nli: str, *extra: str) -> list[str]:
    return [
        "evaluate",
        str(sets),
        "-o",
        "report.json",
        "--no-progress",
        "--no-sentence-model",
        "--nli-model",
        nli,
        "--bertscore-model",
        "none",
        "--cross-encoder-model",
        "none",
        "--batch-size",
        "2",
        *extra,
    ]


def _events(log: Path) -> list[dict]:
    return (
        [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        if log.exists()
        else []
    )


def test_evaluate_stopped_by_sigterm_keeps_its_finished_metric_and_resume_skips_it(
    tmp_path, tiny_roberta_nli_path, monkeypatch, capsys
):
    sets = tmp_path / "sets.jsonl"
    sets.write_text("".join(json.dumps(row) + "\n" for row in SETS), encoding="utf-8")
    uninterrupted, interrupted = tmp_path / "uninterrupted", tmp_path / "interrupted"
    uninterrupted.mkdir()
    interrupted.mkdir()
    monkeypatch.chdir(uninterrupted)  # the same relative --output in both runs: the same provenance
    assert main(_evaluate_args(sets, tiny_roberta_nli_path)) == 0
    expected = json.loads((uninterrupted / "report.json").read_text(encoding="utf-8"))
    steps = list(expected["metrics"])
    assert steps == expected_figures(
        "response_set", EvaluationOptions(), {"--nli-model": [tiny_roberta_nli_path]}
    )

    report = interrupted / "report.json"
    write_atomically(report, "an earlier report\n")  # dialeval's own: a rerun may replace it
    log = tmp_path / "events.jsonl"
    paused = Paused(
        tmp_path,
        [
            sys.executable,
            PAUSED,
            "--pause-after-checkpoints",
            "1",
            "--ready",
            str(tmp_path / "ready.json"),
            "--log",
            str(log),
            "--",
            *_evaluate_args(sets, tiny_roberta_nli_path),
        ],
        cwd=interrupted,
    )
    paused.wait_until_paused()
    assert _events(log) == [{"called": "set_lexical_diversity"}, {"ran": "lexical_diversity"}]

    # a second run on the same output fails at once and touches nothing
    monkeypatch.chdir(interrupted)
    capsys.readouterr()
    assert main(_evaluate_args(sets, tiny_roberta_nli_path)) == 2
    assert (
        "report.json is being written by another run, `dialeval evaluate` (pid"
        in capsys.readouterr().err
    )

    paused.process.send_signal(signal.SIGTERM)
    code, stderr = paused.finish()
    assert code == 143, stderr[-3000:]
    assert stderr.splitlines()[-1] == (
        "dialeval evaluate: interrupted by SIGTERM; 1 finished metric is checkpointed in report.json.partial; "
        "rerun the same command with --resume to go on from there"
    )
    assert report.read_text(encoding="utf-8") == "an earlier report\n"
    assert not lock_path(report).exists()
    kept = sorted(path.name for path in checkpoint_folder(report).iterdir())
    assert len(kept) == 2 and "manifest.json" in kept

    # without --resume the kept metric is not thrown away
    assert main(_evaluate_args(sets, tiny_roberta_nli_path)) == 2
    error = capsys.readouterr().err
    assert "pass --resume to reuse them" in error and error.count("--resume") == 1, error
    # other options: a refusal that says what differs
    assert main(_evaluate_args(sets, tiny_roberta_nli_path, "--max-n", "3", "--resume")) == 2
    assert "the interrupted run differs (--max-n: 5 -> 3)" in capsys.readouterr().err

    calls = []
    lexical = lexical_module.set_lexical_diversity
    monkeypatch.setattr(
        lexical_module, "set_lexical_diversity", lambda *a, **k: calls.append(1) or lexical(*a, **k)
    )
    assert main(_evaluate_args(sets, tiny_roberta_nli_path, "--resume")) == 0
    assert calls == []  # the checkpointed metric was not computed again
    assert (
        "resuming: 1 finished metric from report.json.partial (lexical_diversity)"
        in capsys.readouterr().err
    )
    resumed = json.loads(report.read_text(encoding="utf-8"))
    assert resumed["provenance"]["options"].pop("--resume") is True
    assert expected["provenance"]["options"].pop("--resume") is False
    assert resumed == expected
    assert sorted(path.name for path in interrupted.iterdir()) == [MANIFEST_NAME, "report.json"]


def test_two_sigints_in_a_row_end_with_the_one_line_and_exit_130(tmp_path):
    """A second Ctrl-C while the first one's cleanup runs (or after it) must not end the process
    by the signal: both are sent while the run is paused, before it can finish."""
    sets = tmp_path / "sets.jsonl"
    sets.write_text("".join(json.dumps(row) + "\n" for row in SETS), encoding="utf-8")
    paused = Paused(
        tmp_path,
        [
            sys.executable,
            PAUSED,
            "--pause-after-checkpoints",
            "1",
            "--ready",
            str(tmp_path / "ready.json"),
            "--",
            *_evaluate_args(sets, "none"),
        ],
        cwd=tmp_path,
    )
    pid = paused.wait_until_paused()
    os.kill(pid, signal.SIGINT)
    os.kill(pid, signal.SIGINT)
    code, stderr = paused.finish()
    assert code == 130, stderr[-3000:]
    assert stderr.count("interrupted by SIGINT") == 1 and "Traceback" not in stderr


def test_two_accelerate_processes_resume_from_the_same_checkpoints(
    tmp_path, tiny_roberta_nli_path, monkeypatch, free_port
):
    """Under ``accelerate launch`` every process must skip the same steps (the main one reads the
    checkpoints and tells the others), or their collectives would not match."""
    from dialeval.cli.checkpoints import MetricCheckpoints
    from dialeval.cli.safe_output import Interrupted

    sets = tmp_path / "sets.jsonl"
    sets.write_text("".join(json.dumps(row) + "\n" for row in SETS), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(_evaluate_args(sets, tiny_roberta_nli_path)) == 0
    expected = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    (tmp_path / "report.json").unlink()
    put = MetricCheckpoints.put

    def put_then_stop(self, step, outcome):  # as a SIGTERM right after the first metric finished
        put(self, step, outcome)
        raise Interrupted(signal.SIGTERM)

    with monkeypatch.context() as patch:
        patch.setattr(MetricCheckpoints, "put", put_then_stop)
        assert main(_evaluate_args(sets, tiny_roberta_nli_path)) == 143

    log = tmp_path / "events.jsonl"
    launched = subprocess.run(
        _launch(
            free_port,
            PAUSED,
            "--log",
            str(log),
            "--",
            *_evaluate_args(sets, tiny_roberta_nli_path, "--resume"),
        ),
        cwd=tmp_path,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        check=False,
    )
    assert launched.returncode == 0, launched.stderr[-3000:]
    events = _events(log)
    assert {"called": "set_lexical_diversity"} not in events
    # both processes
    assert sorted(event["ran"] for event in events) == sorted(2 * list(expected["metrics"])[1:])
    resumed = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert resumed["metrics"]["lexical_diversity"] == expected["metrics"]["lexical_diversity"]
    for name, summary in expected["metrics"].items():  # N processes match 1 up to float rounding
        assert resumed["metrics"][name].keys() == summary.keys()
        for key, value in summary.items():
            assert resumed["metrics"][name][key] == (
                pytest.approx(value, rel=1e-6) if isinstance(value, float) else value
            )
    assert (
        not checkpoint_folder(tmp_path / "report.json").exists()
        and not lock_path(tmp_path / "report.json").exists()
    )


# -- dtg -------------------------------------------------------------------------------------------


@pytest.fixture()
def contexts_file(tmp_path) -> Path:
    path = tmp_path / "contexts.jsonl"  # test_dtg_cli.py's contexts
    path.write_text(
        "".join(
            json.dumps({"id": f"c{i}", "context": turns}) + "\n" for i, turns in enumerate(CONTEXTS)
        ),
        encoding="utf-8",
    )
    return path


@pytest.fixture()
def complete_run(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, tmp_path) -> str:
    complete = tmp_path / "complete.jsonl"
    assert main(_dtg_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, complete)) == 0
    return complete.read_text(encoding="utf-8")


def test_dtg_stopped_by_ctrl_c_keeps_whole_batches_and_resumes(
    tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, complete_run, tmp_path, capsys
):
    output = tmp_path / "run.jsonl"
    arguments = _dtg_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, output)
    paused = Paused(
        tmp_path,
        [
            sys.executable,
            PAUSED,
            "--pause-after-batches",
            "2",
            "--ready",
            str(tmp_path / "ready.json"),
            "--",
            *arguments,
        ],
    )
    paused.wait_until_paused()
    written = output.read_bytes()

    # a second run fails at once, --overwrite or not, and leaves the held output as it is
    for extra in ([], ["--overwrite"]):
        assert main(arguments + extra) == 2
        assert (
            "run.jsonl is being written by another run, `dialeval dtg`" in capsys.readouterr().err
        )
        assert output.read_bytes() == written

    paused.process.send_signal(signal.SIGINT)
    code, stderr = paused.finish()
    assert code == 130, stderr[-3000:]
    assert stderr.splitlines()[-1] == (
        f"dialeval dtg: interrupted by SIGINT; 4 of 7 contexts are in {output}; rerun the same command to resume"
    )
    assert output.read_text(encoding="utf-8") == "".join(complete_run.splitlines(keepends=True)[:4])
    assert not lock_path(output).exists()

    assert main(arguments) == 0
    assert output.read_text(encoding="utf-8") == complete_run


def _launch(free_port: str, *arguments: str) -> list[str]:
    # `--cpu` would start one process; the torchrun path with no GPU gives a gloo CPU group.
    return [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--multi_gpu",
        "--num_processes",
        "2",
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "--main_process_port",
        free_port,
        *arguments,
    ]


@pytest.mark.parametrize(
    "stop",
    [
        "sigterm_to_the_main_process",
        pytest.param("ctrl_c_to_the_process_group", marks=pytest.mark.slow),
    ],
)
def test_two_accelerate_processes_stopped_mid_run_exit_and_resume(
    stop, tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, complete_run, tmp_path, free_port
):
    """The main process pauses after writing batch 0 while the other waits for it in a collective:
    a signal to the main process alone (a scheduler's SIGTERM) or to the whole group (Ctrl-C) must
    end the launch, not leave the other process waiting."""
    output = tmp_path / "run.jsonl"
    arguments = _dtg_args(tiny_gpt2_path, tiny_roberta_nli_path, contexts_file, output)
    paused = Paused(
        tmp_path,
        _launch(
            free_port,
            PAUSED,
            "--pause-after-batches",
            "1",
            "--ready",
            str(tmp_path / "ready.json"),
            "--",
            *arguments,
        ),
        new_session=True,
    )
    main_process = paused.wait_until_paused()
    if stop == "sigterm_to_the_main_process":
        os.kill(main_process, signal.SIGTERM)
        expected = "dialeval dtg: interrupted by SIGTERM; 2 of 7 contexts are in"
    else:
        os.killpg(paused.process.pid, signal.SIGINT)
        expected = "dialeval dtg: interrupted by SIGINT; 2 of 7 contexts are in"
    code, stderr = paused.finish()
    assert code != 0 and expected in stderr, stderr[-3000:]
    assert output.read_text(encoding="utf-8") == "".join(complete_run.splitlines(keepends=True)[:2])
    assert not lock_path(output).exists()

    assert main(arguments) == 0
    assert output.read_text(encoding="utf-8") == complete_run
