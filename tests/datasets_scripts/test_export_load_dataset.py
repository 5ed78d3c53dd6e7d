"""``export_dataset`` (``dialeval export-dataset``) of every builder: each exported config reads back
with plain ``datasets.load_dataset(DIR, config)``, without dialeval, equal to the built dataset.

Every config of every builder is exported from what the tests can build offline: the papers'
released files in ../shared/data (diversity_eval, dailydialog_pp) or the small synthetic files in
the released formats that each builder's own tests write (circa, dailydialog, empathetic_dialogues,
polar_questions, response_selection).
"""

from __future__ import annotations

import datasets
import pytest
import yaml

from dialeval.datasets_scripts import config_names, export_dataset, load
from dialeval.datasets_scripts.registry import BUILDERS, make_builder


def _diversity_eval(request, tmp_path, monkeypatch) -> dict:
    return {"data_dir": str(request.getfixturevalue("shared_data") / "tevet-diversity-eval")}


def _dailydialog_pp(request, tmp_path, monkeypatch) -> dict:
    folder = request.getfixturevalue("shared_data") / "dailydialog-plusplus"
    if not folder.is_dir():
        pytest.skip(f"DailyDialog++ files are not at {folder}")
    return {"data_dir": str(folder)}


def _circa(request, tmp_path, monkeypatch) -> dict:
    from test_circa import write_tsv

    write_tsv(tmp_path / "circa-data.tsv")
    return {"data_dir": str(tmp_path), "verify_checksums": False}


def _response_selection(request, tmp_path, monkeypatch) -> dict:
    from test_response_selection_builder import write_release

    return {"data_dir": str(write_release(tmp_path / "release")), "verify_checksums": False}


def _empathetic_dialogues(request, tmp_path, monkeypatch) -> dict:
    from test_empathetic_dialogues import write_archive

    write_archive(tmp_path)
    return {"data_dir": str(tmp_path), "verify_checksums": False}


def _dailydialog(request, tmp_path, monkeypatch) -> dict:
    from dailydialog_release import write_archive

    write_archive(tmp_path)
    return {"data_dir": str(tmp_path), "verify_checksums": False}


def _polar_questions(request, tmp_path, monkeypatch) -> dict:
    """spaCy and the 2,000 inputs of the real MultiNLI are not here: the builder's test stand-ins
    (a lexicon tagger, a small file in MultiNLI's format) go to every builder export makes."""
    from test_polar_questions import lexicon_tagger

    from dialeval.datasets_scripts import export

    # Ten paired premises: the authors' 90 % / 10 % split leaves one for validation.
    small = {"tagger": lexicon_tagger, "num_inputs": 2, "num_unlikelihood_premises": 10}
    monkeypatch.setattr(export, "make_builder", lambda *args: make_builder(*args, **small))
    return {
        "data_dir": str(request.getfixturevalue("mnli_dir")),
        "verify_checksums": False,
        "config_kwargs": small,
    }


SOURCES = {
    "diversity_eval": _diversity_eval,
    "dailydialog_pp": _dailydialog_pp,
    "circa": _circa,
    "empathetic_dialogues": _empathetic_dialogues,
    "dailydialog": _dailydialog,
    "polar_questions": _polar_questions,
    "response_selection": _response_selection,
}


@pytest.fixture()
def mnli_dir(tmp_path):
    """The polar-question tests' premises, in MultiNLI's release layout."""
    from test_polar_questions import mnli_lines

    folder = tmp_path / "mnli" / "multinli_1.0"
    folder.mkdir(parents=True)
    (folder / "multinli_1.0_train.jsonl").write_text(
        "\n".join(mnli_lines()) + "\n", encoding="utf-8"
    )
    return folder.parent


def test_every_builder_has_a_source():
    assert sorted(SOURCES) == sorted(BUILDERS)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_every_exported_config_reads_back_with_plain_load_dataset(
    name, request, tmp_path, monkeypatch
):
    source = SOURCES[name](request, tmp_path, monkeypatch)
    config_kwargs = source.pop("config_kwargs", {})
    cache_dir = str(tmp_path / "cache")
    out = export_dataset(name, tmp_path / "export", cache_dir=cache_dir, **source)
    card = (out / "README.md").read_text(encoding="utf-8")
    listed = yaml.safe_load(card[4:].split("\n---\n", 1)[0])["configs"]
    assert [entry["config_name"] for entry in listed] == config_names(name)
    for config in config_names(name):
        built = load(name, config, cache_dir=cache_dir, **source, **config_kwargs)
        reread = datasets.load_dataset(str(out), config, cache_dir=str(tmp_path / "reread"))
        assert sorted(reread) == sorted(built), config
        for split in built:
            assert reread[split].features == built[split].features, (config, split)
            assert reread[split].to_list() == built[split].to_list(), (config, split)
