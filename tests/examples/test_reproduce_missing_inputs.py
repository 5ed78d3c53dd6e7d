"""A reproduction script run without its inputs (a model, a data folder, a file) exits 2
with one line naming the flag and saying how to get the input, never a traceback."""

from __future__ import annotations

import pytest
from test_reproduce import load_script

NO_MODEL = "models/no-such-model"  # neither a folder here nor a Hub id in any cache


def _one_line_error(script: str, argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as stopped:
        load_script(script).main(argv)
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith(f"{script}.py: error: ") and error.count("\n") == 1, error
    assert "Traceback" not in error
    return error


@pytest.mark.parametrize(
    "script, argv, says",
    [
        (
            "stasaski2022_table3",
            ["--nli-model", NO_MODEL],
            "--nli-model models/no-such-model: neither a model folder here",
        ),
        (
            "stasaski2022_table3",
            ["--nli-model", "{nli}", "--data-dir", "{tmp}/nowhere"],
            "--data-dir {tmp}/nowhere: no such folder",
        ),
        (
            "sato2022_fig2",
            [
                "--model",
                f"A={NO_MODEL}",
                "--classifier",
                "prefix",
                "--inputs",
                "{tmp}/inputs.jsonl",
            ],
            "--model models/no-such-model: neither a model folder here",
        ),
        (
            "sato2022_fig2",
            ["--model", "A={nli}", "--classifier", "{tmp}/yes-no", "--multinli-dir", "{tmp}"],
            "--classifier {tmp}/yes-no: no such folder; it should be the yes/no classifier",
        ),
        (
            "sato2022_fig2",
            ["--model", "A={nli}", "--classifier", "prefix", "--multinli-dir", "{tmp}/nowhere"],
            "--multinli-dir {tmp}/nowhere: no such folder",
        ),
        (
            "han2022_table1",
            ["--rated", "{tmp}/rated.jsonl", "--reference", "{tmp}/reference.txt"],
            "--rated {tmp}/rated.jsonl: no such file",
        ),
        (
            "han2022_tables3_5",
            ["--scale", "paper", "--model", NO_MODEL, "--data-dir", "{tmp}"],
            "hf download facebook/blenderbot_small-90M --local-dir DIR",
        ),
        (
            "han2022_tables3_5",
            ["--scale", "paper", "--model", "{nli}", "--data-dir", "{tmp}/nowhere"],
            "--data-dir {tmp}/nowhere: no such folder",
        ),
    ],
)
def test_a_missing_input_is_one_line_naming_its_flag(
    script, argv, says, tmp_path, tiny_roberta_nli_path, capsys
):
    """Only the existence of a model folder is checked up front: the tiny NLI model stands in for any model."""
    fill = {"nli": tiny_roberta_nli_path, "tmp": tmp_path}
    argv = [arg.format(**fill) for arg in argv] + ["--out-dir", str(tmp_path / "out")]
    assert says.format(**fill) in _one_line_error(script, argv, capsys)
    assert not (tmp_path / "out").exists()


def test_a_source_missing_from_the_data_folder_names_the_scripts_flag(
    tmp_path, tiny_roberta_nli_path, capsys
):
    """Past the up-front checks, a library error (here: the data folder lacks a file) is one line too."""
    error = _one_line_error(
        "stasaski2022_table3",
        [
            "--nli-model",
            tiny_roberta_nli_path,
            "--data-dir",
            str(tmp_path),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--out-dir",
            str(tmp_path / "out"),
        ],
        capsys,
    )
    assert (
        f"not found under --data-dir {str(tmp_path)!r}" in error
        and "Download it from https://" in error
    )
