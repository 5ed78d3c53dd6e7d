"""No data loss, and the pieces of interrupt-and-resume that need no signal:
outputs that are inputs, whole-or-nothing reports, the output lock, evaluate's checkpoints and a
damaged ``dtg`` resume file. The signals themselves are in test_interrupt_resume.py."""

import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys

import pytest
from conftest import REPO_ROOT

from dialeval.atomic_files import MANIFEST_NAME
from dialeval.cli import main
from dialeval.cli.checkpoints import checkpoint_folder, open_checkpoints, run_identity
from dialeval.cli.dtg_options import DTGOptions
from dialeval.cli.dtg_writer import ResumableJsonl
from dialeval.cli.safe_output import (
    OutputLock,
    lock_path,
    refuse_outputs_over_inputs,
    write_atomically,
)
from dialeval.metrics.engines.job_steps import StepOutcome

DEMO = REPO_ROOT / "examples" / "demo_response_sets.jsonl"
LEXICAL_ONLY = [
    "--no-sentence-model",
    "--nli-model",
    "none",
    "--bertscore-model",
    "none",
    "--cross-encoder-model",
    "none",
    "--no-progress",
]
#: No process has this pid: Linux's pid_max is at most 2**22.
DEAD_PID = 2**31 - 1


@pytest.fixture()
def sets_file(tmp_path):
    path = tmp_path / "sets.jsonl"
    path.write_bytes(DEMO.read_bytes())
    return path


# -- an output that is an input ------------------------------------------------------------------


def test_an_output_that_is_an_input_is_refused_through_links(tmp_path):
    source = tmp_path / "sets.jsonl"
    source.write_text("{}\n", encoding="utf-8")
    (tmp_path / "symlink.jsonl").symlink_to(source)
    os.link(source, tmp_path / "hardlink.jsonl")
    (tmp_path / "folder-link").symlink_to(tmp_path, target_is_directory=True)
    for output in (
        "sets.jsonl",
        "symlink.jsonl",
        "hardlink.jsonl",
        "folder-link/sets.jsonl",
        "sub/../sets.jsonl",
    ):
        with pytest.raises(
            ValueError, match=r"--output .* is the same file as --input .*sets\.jsonl"
        ):
            refuse_outputs_over_inputs([("--input", source)], [("--output", tmp_path / output)])
    clusters = tmp_path / "clusters"
    clusters.mkdir()
    with pytest.raises(
        ValueError, match="--save-sem-ent-clusters .* is inside the folder --sem-ent-clusters"
    ):
        refuse_outputs_over_inputs(
            [("--sem-ent-clusters", clusters)], [("--save-sem-ent-clusters", clusters / "x.json")]
        )
    # other files, a file beside a folder's name, and options not given pass
    refuse_outputs_over_inputs(
        [("--input", source), ("--sem-ent-clusters", clusters), ("--x", None)],
        [
            ("--output", tmp_path / "report.json"),
            ("--plot", tmp_path / "clusters2" / "a.png"),
            ("--y", None),
        ],
    )


@pytest.mark.parametrize(
    "flags",
    [
        ["-o", "{input}"],
        ["-o", "{dir}/./sets.jsonl"],
        ["--reference-corpus", "{dir}/reference.txt", "-o", "{dir}/reference.txt"],
        ["--reference-corpus", "{dir}/plots/sem_ent_clusters.png", "--plot", "{dir}/plots"],
        ["--sem-ent-clusters", "{dir}/clusters", "--save-sem-ent-clusters", "{dir}/clusters"],
        ["--bertscore-baseline", "{dir}/baseline.tsv", "-o", "{dir}/baseline.tsv"],
    ],
)
def test_evaluate_refuses_to_write_over_its_inputs_before_anything_runs(
    flags, sets_file, tmp_path, capsys, monkeypatch
):
    from dialeval.cli import evaluate_job

    monkeypatch.setattr(
        evaluate_job, "evaluate_response_sets", lambda *args, **kwargs: pytest.fail("the job ran")
    )
    (tmp_path / "reference.txt").write_text("one\ntwo\n", encoding="utf-8")
    (tmp_path / "baseline.tsv").write_text("LAYER,P,R,F\n", encoding="utf-8")
    (tmp_path / "clusters").mkdir()
    (tmp_path / "plots").mkdir()
    (tmp_path / "plots" / "sem_ent_clusters.png").write_bytes(b"png")
    before = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    argv = [
        "evaluate",
        str(sets_file),
        *[flag.format(input=sets_file, dir=tmp_path) for flag in flags],
        *LEXICAL_ONLY,
    ]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert "dialeval does not write over its inputs" in error and error.count("\n") == 1
    assert {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()} == before


def test_dtg_refuses_its_input_as_output_even_with_overwrite(tmp_path, capsys):
    text = '{"context": "hi"}\n'
    contexts = tmp_path / "c.jsonl"
    contexts.write_text(text, encoding="utf-8")
    # the settings file beside the output is an output too
    settings_named = tmp_path / "out.jsonl.run.json"
    settings_named.write_text(text, encoding="utf-8")
    for source, output in ((contexts, contexts), (settings_named, tmp_path / "out.jsonl")):
        code = main(
            [
                "dtg",
                "--model",
                "M",
                "--input",
                str(source),
                "-o",
                str(output),
                "--overwrite",
                "--no-progress",
            ]
        )
        assert code == 2
        assert "is the same file as --input" in capsys.readouterr().err
        assert source.read_text(encoding="utf-8") == text
    assert sorted(path.name for path in tmp_path.iterdir()) == ["c.jsonl", "out.jsonl.run.json"]


def test_dtg_summary_refuses_a_run_as_its_output(tmp_path, capsys):
    run = tmp_path / "run.jsonl"
    run.write_text("{}\n", encoding="utf-8")
    assert main(["dtg-summary", str(run), "-o", str(run)]) == 2
    assert "--output" in capsys.readouterr().err and run.read_text(encoding="utf-8") == "{}\n"
    settings = tmp_path / "run.jsonl.run.json"  # read beside the run
    settings.write_text('{"format": 2}\n', encoding="utf-8")
    assert main(["dtg-summary", str(run), "-o", str(settings)]) == 2
    assert "is the same file as RUN's settings" in capsys.readouterr().err
    assert settings.read_text(encoding="utf-8") == '{"format": 2}\n'


# -- whole files or nothing ------------------------------------------------------------------------


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    report = tmp_path / "report.json"
    report.write_text("old\n", encoding="utf-8")
    report.chmod(0o640)

    def full_disk(descriptor):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", full_disk)
        with pytest.raises(OSError, match="No space left"):
            write_atomically(report, "new\n" * 1000)
    assert report.read_text(encoding="utf-8") == "old\n" and sorted(tmp_path.iterdir()) == [report]
    write_atomically(report, "new\n")
    assert (
        report.read_text(encoding="utf-8") == "new\n" and (report.stat().st_mode & 0o777) == 0o640
    )
    # the report and the manifest that records it as dialeval's
    assert sorted(tmp_path.iterdir()) == [tmp_path / MANIFEST_NAME, report]


def _limit_file_size(limit: int):
    def limit_in_child():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_in_child


def test_a_report_that_does_not_fit_on_disk_leaves_the_old_report_whole(tmp_path):
    """A disk that fills up in the middle of the report (RLIMIT_FSIZE: writes past the limit fail
    with EFBIG): the report is the largest file the job writes, so the job fails there."""
    sets = tmp_path / "sets.jsonl"
    # long contexts: the report holds them, the checkpoints (figures only) do not
    rows = [
        {"context": f"{index} " + "words " * 400, "responses": ["a b c", "a b d", "x y z"]}
        for index in range(8)
    ]
    sets.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    report = tmp_path / "report.json"
    old = json.dumps({"an": "earlier report"}) + "\n"
    write_atomically(report, old)  # dialeval's own: the run may replace it
    finished = subprocess.run(
        [
            sys.executable,
            "-m",
            "dialeval.cli",
            "evaluate",
            str(sets),
            "-o",
            str(report),
            *LEXICAL_ONLY,
        ],
        preexec_fn=_limit_file_size(12_000),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert finished.returncode == 2, finished.stderr[-2000:]
    assert "File too large" in finished.stderr
    assert report.read_text(encoding="utf-8") == old
    assert not lock_path(report).exists()
    assert checkpoint_folder(report).is_dir()  # the finished metrics are kept for --resume
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        MANIFEST_NAME,
        "report.json",
        "report.json.partial",
        "sets.jsonl",
    ]


# -- stop signals ----------------------------------------------------------------------------------


def test_a_stop_signal_after_the_first_is_absorbed_not_handed_to_the_previous_handler():
    """After a stop signal the process is ending: a second one (50 ms later, while the line is
    printed or the interpreter exits) must not reach the previous handler (Python's default one
    would end the process by the signal instead of exit 130)."""
    from dialeval.cli.safe_output import Interrupted, _on_stop_signal, stop_signals_raise

    reached = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: reached.append(signum))
    try:
        with pytest.raises(Interrupted), stop_signals_raise():
            signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGINT)
        assert reached == []
        assert signal.getsignal(signal.SIGINT) is _on_stop_signal  # a third would end it at once
        signal.signal(signal.SIGINT, lambda signum, frame: reached.append(signum))
        with stop_signals_raise():  # a run without a stop signal hands the previous one back
            pass
        signal.raise_signal(signal.SIGINT)
        assert reached == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, previous)


# -- the lock --------------------------------------------------------------------------------------


def test_a_lock_admits_one_run_and_goes_with_it(tmp_path):
    output = tmp_path / "out.jsonl"
    first = OutputLock(output, "dialeval dtg")
    first.acquire()
    holder = json.loads(lock_path(output).read_text(encoding="utf-8"))
    assert (holder["pid"], holder["host"], holder["command"]) == (
        os.getpid(),
        socket.gethostname(),
        "dialeval dtg",
    )
    with pytest.raises(
        ValueError,
        match=rf"out\.jsonl is being written by another run, `dialeval dtg` \(pid {os.getpid()}",
    ):
        OutputLock(output, "dialeval dtg").acquire()
    first.release()
    assert not lock_path(output).exists()


def test_a_stale_lock_is_taken_over_and_a_foreign_one_is_not(tmp_path, capsys):
    output = tmp_path / "out.jsonl"
    stale = {"pid": DEAD_PID, "host": socket.gethostname(), "command": "dialeval dtg"}
    lock_path(output).write_text(json.dumps(stale), encoding="utf-8")
    lock = OutputLock(output, "dialeval evaluate")
    lock.acquire()
    assert (
        f"took over the lock {lock_path(output)} of a run that is gone (pid {DEAD_PID}"
        in capsys.readouterr().err
    )
    assert json.loads(lock_path(output).read_text(encoding="utf-8"))["pid"] == os.getpid()
    lock.release()
    # a dead pid on another host cannot be checked from here: refused
    lock_path(output).write_text(json.dumps({**stale, "host": "elsewhere"}), encoding="utf-8")
    with pytest.raises(
        ValueError, match=f"pid {DEAD_PID} on elsewhere.*delete {lock_path(output)}"
    ):
        OutputLock(output, "dialeval dtg").acquire()
    # a lock that is not ours any more (replaced by hand) is left alone on release
    lock_path(output).unlink()
    mine = OutputLock(output, "dialeval dtg")
    mine.acquire()
    lock_path(output).write_text(json.dumps({**stale, "host": "elsewhere"}), encoding="utf-8")
    mine.release()
    assert lock_path(output).exists()


def test_of_two_runs_that_found_the_same_stale_lock_the_second_leaves_the_first_ones_lock(
    tmp_path, monkeypatch
):
    """The race, made deterministic: this run read the stale lock, but before it moved the file
    another run took it over; what this run moves aside is that live lock, which it puts back."""
    output = tmp_path / "out.jsonl"
    stale = {"pid": DEAD_PID, "host": socket.gethostname(), "command": "dialeval dtg"}
    winner = _hold(output)
    late = OutputLock(output, "dialeval dtg")
    # the first read saw the stale lock; later reads see the files as they are
    reads = iter([stale])
    real_read = OutputLock._read
    monkeypatch.setattr(
        OutputLock, "_read", lambda self, path: next(reads, None) or real_read(self, path)
    )
    with pytest.raises(
        ValueError, match=rf"being written by another run, `dialeval evaluate` \(pid {os.getppid()}"
    ):
        late.acquire()
    assert json.loads(lock_path(output).read_text(encoding="utf-8")) == winner
    # nothing left aside
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out.jsonl.lock"]


def _hold(output) -> dict:
    """A lock held by a live process that is not this one (the test's parent, say)."""
    holder = {"pid": os.getppid(), "host": socket.gethostname(), "command": "dialeval evaluate"}
    lock_path(output).write_text(json.dumps(holder), encoding="utf-8")
    return holder


def test_evaluate_and_dtg_fail_at_once_on_a_held_output(sets_file, tmp_path, capsys, monkeypatch):
    from dialeval.cli import dtg_contexts, evaluate_job

    monkeypatch.setattr(
        evaluate_job, "evaluate_response_sets", lambda *args, **kwargs: pytest.fail("the job ran")
    )
    monkeypatch.setattr(
        dtg_contexts, "read_contexts", lambda *args, **kwargs: pytest.fail("the job ran")
    )
    report = tmp_path / "report.json"
    _hold(report)
    assert main(["evaluate", str(sets_file), "-o", str(report), *LEXICAL_ONLY]) == 2
    assert (
        f"is being written by another run, `dialeval evaluate` (pid {os.getppid()}"
        in capsys.readouterr().err
    )
    run = tmp_path / "run.jsonl"
    run.write_text("kept\n", encoding="utf-8")
    _hold(run)
    assert (
        main(["dtg", "--model", "M", "--input", str(sets_file), "-o", str(run), "--overwrite"]) == 2
    )
    assert "is being written by another run" in capsys.readouterr().err
    assert run.read_text(encoding="utf-8") == "kept\n" and lock_path(run).exists()


def test_the_lock_goes_on_error(tmp_path, capsys):
    sets = tmp_path / "sets.jsonl"
    sets.write_text(json.dumps({"responses": ["only one"]}) + "\n", encoding="utf-8")
    report = tmp_path / "report.json"
    assert main(["evaluate", str(sets), "-o", str(report), *LEXICAL_ONLY]) == 2
    assert "at least 2 responses" in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["sets.jsonl"]
    assert (
        main(
            [
                "dtg",
                "--model",
                str(tmp_path / "no-model"),
                "--input",
                str(sets),
                "-o",
                str(tmp_path / "o.jsonl"),
            ]
        )
        == 2
    )
    assert not lock_path(tmp_path / "o.jsonl").exists()


# -- evaluate's checkpoints ------------------------------------------------------------------------


def test_checkpoints_keep_outcomes_as_json_and_check_the_run(tmp_path, capsys):
    source = tmp_path / "sets.jsonl"
    source.write_text("one\n", encoding="utf-8")
    output = tmp_path / "report.json"
    identity = run_identity(
        {
            "--max-n": 5,
            "--no-progress": True,
            "--output": "x",
            "--decimals": 2,
            "--output-format": "md",
            "--per-set-csv": "s.csv",
        },
        [("the input file", source)],
    )
    assert identity["options"] == {"--max-n": 5}  # what changes no figure is not compared
    checkpoints = open_checkpoints(output, identity)
    assert checkpoints.get("lexical_diversity") is None
    outcome = StepOutcome(
        {"averaged_distinct_n": 0.5, "model": "m/x"},
        [{"distinct_1": 1.0}, {"distinct_1": float("nan")}],
    )
    checkpoints.put("nli_diversity[m/x]", outcome)
    folder = checkpoint_folder(output)
    assert sorted(path.suffix for path in folder.iterdir()) == [
        ".json",
        ".json",
    ]  # manifest + the step: JSON only

    with pytest.raises(
        ValueError,
        match=r"holds 1 finished metric of an interrupted run of this command "
        r"\(nli_diversity\[m/x\]\): pass --resume to reuse them, or delete "
        r".*report\.json\.partial",
    ):
        open_checkpoints(output, identity)
    resumed = open_checkpoints(output, identity, resume=True)
    assert "resuming: 1 finished metric" in capsys.readouterr().err
    again = resumed.get("nli_diversity[m/x]")
    assert again.summary == outcome.summary and again.per_set[0] == {"distinct_1": 1.0}
    assert again.per_set[1]["distinct_1"] is None  # strict JSON: NaN is kept as null
    step_file = next(path for path in folder.iterdir() if path.name != "manifest.json")
    assert "NaN" not in step_file.read_text(encoding="utf-8")

    source.write_text("two\n", encoding="utf-8")
    changed = run_identity({"--max-n": 4}, [("the input file", source)])
    with pytest.raises(
        ValueError,
        match=r"differs \(--max-n: 5 -> 4; the input file: sha256 [0-9a-f]{64} -> sha256 [0-9a-f]{64}\)",
    ):
        open_checkpoints(output, changed, resume=True)
    # without --resume, another run's metrics (which this command could never reuse) are replaced
    assert open_checkpoints(output, changed).get("nli_diversity[m/x]") is None
    assert "note: replacing" in capsys.readouterr().err and not folder.exists()
    open_checkpoints(output, identity).put("nli_diversity[m/x]", outcome)
    open_checkpoints(output, identity, resume=True).remove()
    assert not folder.exists()
    open_checkpoints(output, changed, resume=True)
    assert "nothing to resume" in capsys.readouterr().err


def test_a_checkpoint_whose_per_set_rows_were_cut_short_is_computed_again(
    sets_file, tmp_path, capsys, monkeypatch
):
    from dialeval.cli.checkpoints import MetricCheckpoints
    from dialeval.cli.safe_output import Interrupted

    report = tmp_path / "report.json"
    arguments = ["evaluate", str(sets_file), "-o", str(report), *LEXICAL_ONLY]
    put = MetricCheckpoints.put

    def put_then_stop(self, step, outcome):  # as a Ctrl-C right after the first metric finished
        put(self, step, outcome)
        raise Interrupted(signal.SIGINT)

    with monkeypatch.context() as patch:
        patch.setattr(MetricCheckpoints, "put", put_then_stop)
        assert main(arguments) == 130
    folder = checkpoint_folder(report)
    (step_file,) = [path for path in folder.iterdir() if path.name != "manifest.json"]
    record = json.loads(step_file.read_text(encoding="utf-8"))
    record["per_set"] = record["per_set"][:1]
    step_file.write_text(json.dumps(record), encoding="utf-8")
    capsys.readouterr()

    assert main([*arguments, "--resume"]) == 0
    error = capsys.readouterr().err
    assert f"holds 1 per-set rows for {len(DEMO.read_text().splitlines())} response sets" in error
    written = json.loads(report.read_text(encoding="utf-8"))
    expected = tmp_path / "expected.json"
    assert main(["evaluate", str(sets_file), "-o", str(expected), *LEXICAL_ONLY]) == 0
    assert written["per_set"] == json.loads(expected.read_text(encoding="utf-8"))["per_set"]


def test_resume_refuses_checkpoints_of_a_hub_dataset_whose_cached_revision_changed(
    tmp_path, monkeypatch
):
    from dialeval.cli import provenance

    snapshot = {"path": tmp_path / "datasets--org--data" / "snapshots" / ("a" * 40)}
    monkeypatch.setattr(provenance, "hub_dataset_snapshot", lambda source: str(snapshot["path"]))
    output = tmp_path / "report.json"
    identity = run_identity({}, [("input", "org/data")])
    assert identity["inputs"] == {"input": "revision " + "a" * 40}
    open_checkpoints(output, identity).put(
        "lexical_diversity", StepOutcome({"averaged_distinct_n": 0.5}, [{}])
    )
    snapshot["path"] = snapshot["path"].with_name("b" * 40)  # the cache was updated since
    with pytest.raises(ValueError, match=r"differs \(input: revision a{40} -> revision b{40}\)"):
        open_checkpoints(output, run_identity({}, [("input", "org/data")]), resume=True)


def test_resume_refuses_checkpoints_of_a_model_whose_weights_changed_in_the_same_folder(
    tmp_path, capsys
):
    from dialeval.cli.provenance import directory_sha256

    model = tmp_path / "my-model"
    model.mkdir()
    (model / "weights.bin").write_bytes(b"first training run")
    output = tmp_path / "report.json"
    identity = run_identity({"--nli-model": str(model)}, [])
    open_checkpoints(output, identity).put(
        f"nli_diversity[{model}]", StepOutcome({"model": str(model)}, [{}])
    )
    assert (
        open_checkpoints(output, identity, resume=True).get(f"nli_diversity[{model}]") is not None
    )

    (model / "weights.bin").write_bytes(b"retrained into the same folder")
    directory_sha256.cache_clear()  # a resumed run is a new process; this test runs in one
    with pytest.raises(
        ValueError,
        match=rf"differs \(model {re.escape(str(model))}: sha256 [0-9a-f]{{64}} -> sha256 [0-9a-f]{{64}}\)",
    ):
        open_checkpoints(output, identity, resume=True)
    # without --resume they are replaced (they could never be reused), with a note saying why
    assert open_checkpoints(output, identity).get(f"nli_diversity[{model}]") is None
    assert "note: replacing" in capsys.readouterr().err


def test_a_linked_output_is_written_through_and_shares_the_lock_of_its_target(sets_file, tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    write_atomically(store / "real.json", "old\n")
    link = tmp_path / "out.json"
    link.symlink_to(store / "real.json")
    assert main(["evaluate", str(sets_file), "-o", str(link), *LEXICAL_ONLY]) == 0
    assert (
        link.is_symlink()
        and json.loads((store / "real.json").read_text(encoding="utf-8"))["metrics"]
    )
    # another name of the same file is the same output: one lock for both
    assert lock_path(link) == lock_path(store / "real.json") == store / "real.json.lock"
    _hold(store / "real.json")
    assert main(["evaluate", str(sets_file), "-o", str(link), *LEXICAL_ONLY]) == 2
    assert sorted(path.name for path in store.iterdir()) == [
        MANIFEST_NAME,  # real.json recorded as dialeval's, in its own folder
        "real.json",
        "real.json.lock",
    ]


def test_a_successful_evaluate_removes_its_checkpoints_and_lock(sets_file, tmp_path):
    assert (
        main(["evaluate", str(sets_file), "-o", str(tmp_path / "report.json"), *LEXICAL_ONLY]) == 0
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        MANIFEST_NAME,
        "report.json",
        "sets.jsonl",
    ]


# -- dtg's resume file -----------------------------------------------------------------------------


def test_a_damaged_middle_line_of_a_dtg_resume_file_is_an_error_not_a_truncation(tmp_path):
    path = tmp_path / "out.jsonl"
    settings = DTGOptions(model="m", metric="nli", contexts_from="x")
    ResumableJsonl(path, settings, batch_size=2)
    lines = [json.dumps({"trial": 0, "index": index}) + "\n" for index in range(6)]
    lines[2] = lines[2][:-5] + "\n"  # line 3: cut, though a complete line follows
    damaged = "".join(lines)
    path.write_text(damaged, encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{path}:3: not valid JSON .*--overwrite"):
        ResumableJsonl(path, settings, batch_size=2)
    assert path.read_text(encoding="utf-8") == damaged  # nothing after it was dropped
    # a half-written last line (no newline) is what a kill leaves: dropped with its batch
    path.write_text("".join(lines[:2]) + lines[2][:-1], encoding="utf-8")
    assert ResumableJsonl(path, settings, batch_size=2).num_done == 2
    assert path.read_text(encoding="utf-8") == "".join(lines[:2])
