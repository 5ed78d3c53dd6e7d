"""Hostile source files under ``verify_checksums=False`` (``--no-verify``): every builder reports
bytes that are not UTF-8 as a ValueError naming the file and line, a bad EmpatheticDialogues
archive as one naming the archive and what is wrong with it, never a bare
UnicodeDecodeError or DatasetGenerationError."""

from __future__ import annotations

import io
import re
import shutil
import tarfile

import pytest

from dialeval.datasets_scripts import BUILDERS, builder_class, export_dataset, load, make_builder
from dialeval.datasets_scripts._text_files import checked_lines, decoded_lines, open_release_text

#: Latin-1 "café", and a lone UTF-8 continuation byte.
NOT_UTF8 = "café au lait\n".encode("latin-1")


def insert_after_line(path, line_number: int, data: bytes = NOT_UTF8) -> int:
    """Put ``data`` on its own line after line ``line_number``; the bad line's number."""
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:line_number]) + data + b"".join(lines[line_number:]))
    return line_number + 1


def expect_bad_line(path, line_number: int):
    return pytest.raises(
        ValueError, match=rf"{re.escape(str(path))}, line {line_number}: byte 0xe9 .* is not UTF-8"
    )


def test_circa(tmp_path):
    from test_circa import write_tsv

    path = tmp_path / "circa-data.tsv"
    write_tsv(path)
    bad = insert_after_line(path, 2)
    with expect_bad_line(path, bad):
        load(
            "circa",
            "strict",
            data_dir=str(tmp_path),
            cache_dir=str(tmp_path / "cache"),
            verify_checksums=False,
        )


def test_dailydialog_pp(shared_data, tmp_path):
    release = shared_data / "dailydialog-plusplus"
    for name in ("dev.json", "test.json"):
        shutil.copy(release / name, tmp_path / name)
    bad = insert_after_line(tmp_path / "test.json", 3)
    with expect_bad_line(tmp_path / "test.json", bad):
        load(
            "dailydialog_pp",
            data_dir=str(tmp_path),
            cache_dir=str(tmp_path / "cache"),
            verify_checksums=False,
        )


def test_diversity_eval(shared_data, tmp_path):
    name = "con_test_200_with_hds_resp_gen.csv"
    shutil.copy(
        shared_data / "tevet-diversity-eval" / "with_metrics" / "conTest" / name, tmp_path / name
    )
    bad = insert_after_line(tmp_path / name, 1)
    with expect_bad_line(tmp_path / name, bad):
        load(
            "diversity_eval",
            "con_test_200_resp_gen",
            data_dir=str(tmp_path),
            cache_dir=str(tmp_path / "cache"),
            verify_checksums=False,
        )


def test_polar_questions(tmp_path):
    from test_polar_questions import lexicon_tagger, mnli_lines

    mnli_dir = tmp_path / "release"
    path = mnli_dir / "multinli_1.0" / "multinli_1.0_train.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(mnli_lines()) + "\n", encoding="utf-8")
    bad = insert_after_line(path, 4)
    with expect_bad_line(path, bad):
        load(
            "polar_questions",
            "entq",
            data_dir=str(mnli_dir),
            cache_dir=str(tmp_path / "cache"),
            verify_checksums=False,
            tagger=lexicon_tagger,
            num_inputs=2,
        )


@pytest.mark.parametrize(
    "name", ["human_scores.jsonl", "indice/dailydialog.txt", "indice/opensubtitles.txt"]
)
def test_response_selection(tmp_path, name):
    from test_response_selection_builder import write_release

    release = write_release(tmp_path / "release")
    bad = insert_after_line(release / name, 0)
    with expect_bad_line(release / name, bad):
        load(
            "response_selection",
            data_dir=str(release),
            cache_dir=str(tmp_path / "cache"),
            verify_checksums=False,
        )


def _archive(path, members: dict[str, bytes]):
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _release_members(valid: bytes | None = None) -> dict[str, bytes]:
    from test_empathetic_dialogues import TEST_ROWS, TRAIN_ROWS, VALID_ROWS, csv_text

    members = {
        f"empatheticdialogues/{name}": csv_text(rows).encode("utf-8")
        for name, rows in (
            ("train.csv", TRAIN_ROWS),
            ("valid.csv", VALID_ROWS),
            ("test.csv", TEST_ROWS),
        )
    }
    if valid is not None:
        members["empatheticdialogues/valid.csv"] = valid
    return members


def load_ed(tmp_path, **kwargs):
    return load(
        "empathetic_dialogues",
        data_dir=str(tmp_path),
        cache_dir=str(tmp_path / "cache"),
        verify_checksums=False,
        **kwargs,
    )


def test_empathetic_dialogues_bad_bytes_in_the_archive_and_the_extracted_csv(tmp_path):
    valid = _release_members()["empatheticdialogues/valid.csv"]
    lines = valid.splitlines(keepends=True)
    archive = _archive(
        tmp_path / "empatheticdialogues.tar.gz",
        _release_members(b"".join(lines[:3]) + NOT_UTF8 + b"".join(lines[3:])),
    )
    with pytest.raises(
        ValueError,
        match=rf"{re.escape(str(archive))}:empatheticdialogues/valid.csv, line 4: byte 0xe9",
    ):
        load_ed(tmp_path, split="validation")
    archive.unlink()
    folder = tmp_path / "empatheticdialogues"
    folder.mkdir()
    for member, data in _release_members(
        b"".join(lines[:3]) + NOT_UTF8 + b"".join(lines[3:])
    ).items():
        (tmp_path / member).write_bytes(data)
    with expect_bad_line(folder / "valid.csv", 4):
        load_ed(tmp_path, split="validation")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            lambda whole: whole[: len(whole) // 2],
            r"not a readable gzip-compressed tar archive \((EOFError|ReadError)",
        ),
        (
            lambda whole: b"<html>404 Not Found</html>",
            r"not a readable gzip-compressed tar archive \(ReadError",
        ),
        (lambda whole: b"", r"not a readable gzip-compressed tar archive"),
        (
            lambda whole: whole[:10] + bytes(len(whole) - 10),
            r"not a readable gzip-compressed tar archive",
        ),
    ],
)
def test_a_bad_empathetic_dialogues_archive_is_named_with_what_is_wrong(tmp_path, content, message):
    whole = _archive(tmp_path / "good.tar.gz", _release_members()).read_bytes()
    archive = tmp_path / "empatheticdialogues.tar.gz"
    archive.write_bytes(content(whole))
    with pytest.raises(
        ValueError, match=rf"{re.escape(str(archive))}: {message}.*download it again"
    ):
        load_ed(tmp_path)


def test_an_archive_without_the_split_files_names_what_it_lacks(tmp_path):
    _archive(tmp_path / "empatheticdialogues.tar.gz", {"other/readme.txt": b"hello"})
    with pytest.raises(
        ValueError,
        match=r"empatheticdialogues.tar.gz: no empatheticdialogues/train.csv, .*valid.csv, "
        r".*test.csv in the archive \(it holds \['other/readme.txt'\]\)",
    ):
        load_ed(tmp_path)


def test_line_splitting_is_text_modes_and_good_text_passes(tmp_path):
    path = tmp_path / "file.txt"
    path.write_bytes("α\r\nβ\rγ\n".encode())
    with open_release_text(path) as handle:
        assert list(checked_lines(handle, str(path))) == ["α\n", "β\n", "γ\n"]
    assert list(decoded_lines([b"ok\n", "é\n".encode()], "member")) == ["ok\n", "é\n"]
    with pytest.raises(ValueError, match=r"member, line 2: byte 0xff \(character 3 of the line\)"):
        list(decoded_lines([b"ok\n", b"ab\xffc\n"], "member"))


def test_dailydialog_bad_bytes_in_a_split_zip_and_in_the_unzipped_files(tmp_path):
    import zipfile

    from dailydialog_release import RELEASE, split_zip, write_archive

    dialog_text = "".join(row[0] + "\n" for row in RELEASE["test"]).encode()
    lines = dialog_text.splitlines(keepends=True)
    archive = write_archive(
        tmp_path, dialog_text=(lines[0] + NOT_UTF8 + lines[1]).decode("utf-8", "surrogateescape")
    )
    member = f"{archive}:ijcnlp_dailydialog/test.zip:test/dialogues_test.txt"
    with pytest.raises(ValueError, match=rf"{re.escape(member)}, line 2: byte 0xe9"):
        load(
            "dailydialog",
            data_dir=str(tmp_path),
            cache_dir=str(tmp_path / "cache"),
            verify_checksums=False,
        )
    archive.unlink()
    folder = tmp_path / "ijcnlp_dailydialog"
    for split, rows in RELEASE.items():
        with zipfile.ZipFile(io.BytesIO(split_zip(split, rows))) as inner:
            inner.extractall(folder)
    bad = insert_after_line(folder / "test" / "dialogues_act_test.txt", 1)
    with expect_bad_line(folder / "test" / "dialogues_act_test.txt", bad):
        load(
            "dailydialog",
            data_dir=str(tmp_path),
            cache_dir=str(tmp_path / "cache2"),
            verify_checksums=False,
        )


# ------------------------------------------------ the source options every builder and loader takes


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.parametrize(
    "options, argument",
    [
        ({"verify_checksums": "no"}, "verify_checksums"),
        ({"verify_checksums": 1}, "verify_checksums"),
        ({"verify_checksums": None}, "verify_checksums"),
        ({"data_dir": 5}, "data_dir"),
        ({"data_dir": ""}, "data_dir"),
        ({"cache_dir": 5}, "cache_dir"),
    ],
)
def test_source_options_of_another_type_are_refused_by_name_everywhere(
    name, options, argument, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # a cache_dir taken as a path would be made here
    given = {"cache_dir": str(tmp_path / "cache"), **options}
    calls = {
        "load": lambda: load(name, **given),
        "make_builder": lambda: make_builder(name, **given),
        "the builder": lambda: builder_class(name)(**given),
        "export_dataset": lambda: export_dataset(name, tmp_path / "out", **given),
    }
    for call in calls.values():
        with pytest.raises(ValueError, match=rf"^`{argument}` (must be|is an empty path)"):
            call()
    assert not (tmp_path / "5").exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "options, argument",
    [
        ({"to": None}, "to"),
        ({"configs": "strict"}, "configs"),
        ({"private": "yes"}, "private"),
        ({"push_to_hub": 5}, "push_to_hub"),
        ({"token": 5}, "token"),
    ],
)
def test_export_dataset_checks_its_own_arguments_first(options, argument, tmp_path):
    given = {"to": tmp_path / "out", "data_dir": str(tmp_path / "absent"), **options}
    with pytest.raises(ValueError, match=rf"^`{argument}` must be"):
        export_dataset("circa", **given)


def test_a_dataset_name_that_is_no_string_is_refused_by_name():
    with pytest.raises(ValueError, match=r"^`name` must be one of"):
        load(["circa"])


HUGE_INTEGER_LINE = '{"id": ' + "7" * 5000 + "}\n"


def test_a_release_jsonl_integer_of_thousands_of_digits_names_file_and_line(tmp_path):
    from dialeval.datasets_scripts.dailydialog_pp.dailydialog_pp import read_records
    from dialeval.datasets_scripts.polar_questions.polar_questions import read_multinli

    path = tmp_path / "release.jsonl"
    path.write_text("\n" + HUGE_INTEGER_LINE, encoding="utf-8")
    for read in (lambda: read_multinli(str(path)), lambda: read_records(str(path), "id", ())):
        with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}, line 2: not valid JSON"):
            read()
