"""Issue 27, advice that misleads: what an error tells a new user to do names the flag of the command
they ran (not a Python argument, nor another command's flag), and a flag they gave is never what
the error asks them to pass."""
import pytest

from dialeval.cli import main


@pytest.fixture()
def fresh_datasets_cache(tmp_path, monkeypatch):
    """No builder's files in the cache: an offline load must download and fails."""
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets-cache")
    return str(tmp_path / "datasets-cache")


@pytest.mark.parametrize("argv", [
    ["meta-eval", "--test", "dectest", "--task", "resp", "--metric", "distinct_n", "--no-progress", "--cache-dir", "{cache}"],
    ["dtg", "--model", "unused", "--dataset", "dailydialog_pp", "--output", "{tmp}/run.jsonl", "--no-progress"],
    ["export-dataset", "dailydialog_pp", "--to", "{tmp}/out", "--cache-dir", "{cache}"],
])
def test_an_offline_download_failure_says_to_pass_data_dir_as_its_flag(argv, tmp_path, fresh_datasets_cache, capsys):
    argv = [arg.format(cache=fresh_datasets_cache, tmp=tmp_path) for arg in argv]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert "could not download" in error and "`--data-dir`" in error, error
    assert "data_dir" not in error
