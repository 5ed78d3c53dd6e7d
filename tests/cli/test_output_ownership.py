"""dialeval replaces only files it wrote: every output is planned and checked before any work.

A file at an output path that dialeval did not write (no entry with its current sha256 in the
folder's ``.dialeval-outputs.json``, and not a JSON report carrying dialeval's provenance) is
refused, naming the file and the flag that put it there, unless ``--overwrite``; ``-`` is standard
output, and a device, a FIFO or ``/dev/stdout`` is written through, never renamed over.
"""

import json
import os
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from dialeval.atomic_files import MANIFEST_NAME, write_atomically, written_by_dialeval
from dialeval.cli import main
from dialeval.cli.checkpoints import checkpoint_folder
from dialeval.cli.safe_output import OutputLock, json_text

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
USERS = b"the user's own notes\n"
OFFLINE = {
    **os.environ,
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_EVALUATE_OFFLINE": "1",
}


@pytest.fixture()
def sets_file(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_bytes(DEMO.read_bytes())
    return path


def _evaluate(*arguments) -> list[str]:
    return ["evaluate", *map(str, arguments), *LEXICAL_ONLY]


def _refused(capsys, *names: str) -> str:
    error = capsys.readouterr().err
    assert "dialeval did not write" in error or "did not make" in error, error
    for name in names:
        assert name in error, error
    return error


# -- the cases of data loss ---------------------------------------------------------------------


@pytest.mark.parametrize("table", ["report.md", "table.csv"])
def test_a_table_output_keeps_a_users_file_at_its_json_twin(sets_file, tmp_path, capsys, table):
    twin = (tmp_path / table).with_suffix(".json")
    twin.write_bytes(USERS)
    assert main(_evaluate(sets_file, "-o", tmp_path / table)) == 2
    _refused(capsys, str(twin), "--output (the JSON report beside the table)", "--overwrite")
    assert twin.read_bytes() == USERS and not (tmp_path / table).exists()

    assert main(_evaluate(sets_file, "-o", tmp_path / table, "--overwrite")) == 0
    assert json.loads(twin.read_text(encoding="utf-8"))["num_sets"] > 0
    capsys.readouterr()
    # dialeval's own outputs are replaced by a rerun without --overwrite
    assert main(_evaluate(sets_file, "-o", tmp_path / table)) == 0
    assert written_by_dialeval(twin) and written_by_dialeval(tmp_path / table)


def test_the_default_report_keeps_a_users_file(sets_file, tmp_path, capsys):
    default = tmp_path / "in.diversity.json"
    default.write_bytes(USERS)
    assert main(_evaluate(sets_file)) == 2
    _refused(capsys, str(default), "by default")
    assert default.read_bytes() == USERS


def test_a_comparison_keeps_a_users_file_at_a_systems_report(sets_file, tmp_path, capsys):
    other = tmp_path / "b.jsonl"
    other.write_bytes(DEMO.read_bytes())
    system_report = tmp_path / "cmp.a.json"
    system_report.write_bytes(USERS)
    assert main(_evaluate(f"a={sets_file}", f"b={other}", "-o", tmp_path / "cmp.md")) == 2
    _refused(capsys, str(system_report), "system a")
    assert system_report.read_bytes() == USERS
    assert not (tmp_path / "cmp.b.json").exists()


def test_an_edited_output_counts_as_the_users(sets_file, tmp_path, capsys):
    report = tmp_path / "report.csv"
    assert main(_evaluate(sets_file, "-o", report)) == 0
    report.write_text(report.read_text(encoding="utf-8") + "my note\n", encoding="utf-8")
    edited = report.read_bytes()
    capsys.readouterr()
    assert main(_evaluate(sets_file, "-o", report)) == 2
    _refused(capsys, str(report))
    assert report.read_bytes() == edited


def test_a_report_written_before_the_manifest_is_recognised_by_its_provenance(
    sets_file, tmp_path, capsys
):
    report = tmp_path / "report.json"
    assert main(_evaluate(sets_file, "-o", report)) == 0
    (tmp_path / MANIFEST_NAME).unlink()
    assert main(_evaluate(sets_file, "-o", report)) == 0


def test_meta_eval_refuses_an_output_inside_its_data_dir(tmp_path, capsys):
    data = tmp_path / "released"
    data.mkdir()
    released = data / "con_test_200_resp_gen.csv"
    released.write_bytes(b"a,b\n1,2\n")
    code = main(
        [
            "meta-eval",
            "--test",
            "contest",
            "--data-dir",
            str(data),
            "-o",
            str(released),
            "--overwrite",
        ]
    )
    assert code == 2
    error = capsys.readouterr().err
    assert "--data-dir" in error and "--output" in error and "not even with --overwrite" in error
    assert released.read_bytes() == b"a,b\n1,2\n"


def test_dev_stdout_appended_to_a_log_keeps_the_log(sets_file, tmp_path):
    log = tmp_path / "run.log"
    log.write_text("earlier line\n", encoding="utf-8")
    with open(log, "a", encoding="utf-8") as appended:
        code = subprocess.run(
            [
                sys.executable,
                "-m",
                "dialeval.cli",
                *_evaluate(sets_file, "--output-format", "json", "-o", "/dev/stdout"),
            ],
            stdout=appended,
            check=False,
            stderr=subprocess.PIPE,
            env=OFFLINE,
            cwd=tmp_path,
        ).returncode
    assert code == 0
    text = log.read_text(encoding="utf-8")
    assert text.startswith("earlier line\n")
    assert json.loads(text[len("earlier line\n") :])["num_sets"] > 0  # the report alone follows


def test_dash_is_standard_output_and_the_tables_go_to_standard_error(sets_file, tmp_path, capsys):
    assert main(_evaluate(sets_file, "-o", "-")) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["num_sets"] > 0
    assert "averaged_distinct_n" in captured.err
    assert not (tmp_path / "-").exists() and not (tmp_path / "in.diversity.json").exists()


def test_a_character_device_is_written_through_not_replaced(sets_file, tmp_path):
    before = os.stat("/dev/null")
    assert main(_evaluate(sets_file, "--output-format", "json", "-o", "/dev/null")) == 0
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_a_link_to_a_fifo_is_written_through_not_replaced(sets_file, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "report.json"
    link.symlink_to(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    try:
        assert main(_evaluate(sets_file, "-o", link)) == 0
    finally:
        if reader.is_alive():  # never opened for writing: let the reader go
            with open(fifo, "wb"):
                pass
        reader.join()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and link.is_symlink()
    assert json.loads(received[0])["num_sets"] > 0


def test_a_users_folder_at_the_checkpoint_path_is_kept_even_with_overwrite(
    sets_file, tmp_path, capsys
):
    report = tmp_path / "out.json"
    folder = checkpoint_folder(report)
    folder.mkdir()
    (folder / "mine.txt").write_bytes(USERS)
    assert main(_evaluate(sets_file, "-o", report, "--overwrite")) == 2
    _refused(capsys, str(folder), "checkpoint folder of --output")
    assert (folder / "mine.txt").read_bytes() == USERS and not report.exists()


def test_plot_keeps_a_users_png(sets_file, tmp_path, capsys):
    other = tmp_path / "b.jsonl"
    other.write_bytes(DEMO.read_bytes())
    plots = tmp_path / "plots"
    plots.mkdir()
    (plots / "per_set_distributions.png").write_bytes(USERS)
    assert main(_evaluate(sets_file, other, "--plot", plots)) == 2
    _refused(capsys, "per_set_distributions.png", "--plot")
    assert (plots / "per_set_distributions.png").read_bytes() == USERS


def test_save_sem_ent_clusters_over_a_file_is_refused_before_any_work(sets_file, capsys):
    arguments = _evaluate(sets_file, "--save-sem-ent-clusters", sets_file)
    assert main([*arguments, "--reference-corpus", str(sets_file)]) == 2
    error = capsys.readouterr().err
    assert "--save-sem-ent-clusters" in error and "is a file, not a folder" in error
    assert "--sem-ent-embedder" not in error


# -- what is written -----------------------------------------------------------------------------


def _strict(text: str):
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_metadata_that_is_not_a_finite_number_is_written_as_null(tmp_path, capsys, value):
    sets = tmp_path / "sets.jsonl"
    lines = DEMO.read_text(encoding="utf-8").splitlines()
    first = lines[0][:-1] + f', "score": {value}}}'
    sets.write_text("\n".join([first, *lines[1:]]) + "\n", encoding="utf-8")
    report = tmp_path / "report.json"
    assert main(_evaluate(sets, "-o", report)) == 0
    written = _strict(report.read_text(encoding="utf-8"))
    assert written["per_set"][0]["fields"]["score"] is None
    assert "per_set[0].fields.score" in capsys.readouterr().err


def test_json_text_is_strict_json_and_says_what_it_replaced(capsys):
    text = json_text({"a": [1.0, float("nan")], "b": {"c": float("inf")}}, "x.json")
    assert _strict(text) == {"a": [1.0, None], "b": {"c": None}}
    error = capsys.readouterr().err
    assert "x.json" in error and "a[1]" in error and "b.c" in error


def test_a_lock_with_an_impossible_pid_is_refused_with_a_message(tmp_path):
    output = tmp_path / "report.json"
    lock = tmp_path / "report.json.lock"
    lock.write_text(json.dumps({"pid": 10**30, "host": socket.gethostname()}), encoding="utf-8")
    with pytest.raises(ValueError, match="cannot be read .*delete .*report.json.lock"):
        OutputLock(output, "dialeval evaluate").acquire()
    assert lock.exists()


def test_empty_output_and_absurd_decimals_name_their_flags(sets_file, capsys):
    assert main(_evaluate(sets_file, "-o", "")) == 2
    assert "`--output` (-o) is an empty path" in capsys.readouterr().err
    assert main(_evaluate(sets_file, "--decimals", "100000")) == 2
    assert "`--decimals` must be an integer from 0 to 20" in capsys.readouterr().err


def test_temporaries_have_unique_names_and_only_they_are_cleaned_up(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    bystander = tmp_path / ".report.json.tmp"
    bystander.write_bytes(USERS)

    def full_disk(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError):
        write_atomically(target, "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".report.json.tmp"]
    assert bystander.read_bytes() == USERS


# -- every command, against a folder full of the user's files -----------------------------------


def _commands(tmp_path: Path, sets: Path) -> dict[str, tuple[list[str], list[Path]]]:
    """Each writing command and the user's files at every path it would write."""
    other = tmp_path / "b.jsonl"
    other.write_bytes(DEMO.read_bytes())
    runs = tmp_path / "run.jsonl"
    runs.write_text("", encoding="utf-8")
    contexts = tmp_path / "contexts.jsonl"
    contexts.write_text('{"context": "Hi"}\n', encoding="utf-8")
    out = tmp_path / "out"
    return {
        "evaluate json": (
            _evaluate(sets, "-o", out / "r.json"),
            [out / "r.json", out / "r.json.partial" / "x"],
        ),
        "evaluate table": (
            _evaluate(sets, "-o", out / "r.md", "--per-set-csv", out / "rows.csv"),
            [out / "r.md", out / "r.json", out / "rows.csv"],
        ),
        "evaluate default": (_evaluate(sets), [tmp_path / "in.diversity.json"]),
        "evaluate systems": (
            _evaluate(f"a={sets}", f"b={other}", "-o", out / "cmp.md", "--plot", out / "plots"),
            [
                out / "cmp.md",
                out / "cmp.a.json",
                out / "cmp.b.json",
                out / "plots" / "per_set_distributions.png",
            ],
        ),
        "evaluate clusters": (
            [
                *_evaluate(sets, "-o", out / "r2.json"),
                "--reference-corpus",
                str(sets),
                "--save-sem-ent-clusters",
                str(out / "clusters"),
                "--plot",
                str(out / "plots2"),
            ],
            [
                out / "clusters" / "semantic_clusters.json",
                out / "clusters" / "semantic_clusters.safetensors",
                out / "plots2" / "sem_ent_clusters.png",
            ],
        ),
        "meta-eval": (
            ["meta-eval", "--test", "contest", "-o", str(out / "m.json"), "--plot", str(out)],
            [out / "m.json", out / "contest_resp_x_classes.png"],
        ),
        "dtg": (
            ["dtg", "--model", "none", "--input", str(contexts), "-o", str(out / "g.jsonl")],
            [out / "g.jsonl", out / "g.jsonl.run.json"],
        ),
        "dtg-summary": (["dtg-summary", str(runs), "-o", str(out / "s.json")], [out / "s.json"]),
        "export-dataset": (
            ["export-dataset", "dailydialog_pp", "--to", str(out / "export")],
            [
                out / "export" / "README.md",
                out / "export" / "default" / "test-00000-of-00001.parquet",
            ],
        ),
        "push-metrics": (
            ["push-metrics", "--to", str(out / "spaces")],
            [out / "spaces" / "vendi_score" / "README.md"],
        ),
    }


@pytest.mark.parametrize(
    "name",
    [
        "evaluate json",
        "evaluate table",
        "evaluate default",
        "evaluate systems",
        "evaluate clusters",
        "meta-eval",
        "dtg",
        "dtg-summary",
        "export-dataset",
        "push-metrics",
    ],
)
def test_no_command_changes_a_users_file(tmp_path, sets_file, capsys, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    arguments, users = _commands(tmp_path, sets_file)[name]
    for path in users:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(USERS)
    assert main(arguments) == 2
    error = capsys.readouterr().err
    assert "dialeval did not write" in error or "did not make" in error, error
    for path in users:
        assert path.read_bytes() == USERS, path
    assert not any(p.name.startswith(".") and "tmp" in p.name for p in tmp_path.rglob("*"))
