"""The readers on inputs that are empty, damaged, oddly encoded or no path at all: each is a
ValueError naming the input, the file or FILE:LINE, never a traceback from datasets, pyarrow,
pathlib or the int-conversion limit."""

import json
import os
import re

import pyarrow
import pyarrow.parquet
import pytest

from dialeval.io import iter_corpus_lines, open_input, read_response_sets, read_text_lines

ROWS = {"context": ["hi", "hello"], "responses": [["a", "b"], ["c", "d"]]}


def _saved(folder, rows=ROWS):
    import datasets

    datasets.Dataset.from_dict(rows).save_to_disk(str(folder))
    return folder


def _empty_dataset():
    import datasets

    features = datasets.Features(
        {"context": datasets.Value("string"), "responses": datasets.List(datasets.Value("string"))}
    )
    return datasets.Dataset.from_dict({"context": [], "responses": []}, features=features)


def test_a_save_to_disk_folder_with_no_rows_is_an_empty_input(tmp_path):
    folder = tmp_path / "zero_rows"
    _empty_dataset().save_to_disk(str(folder))
    with pytest.raises(ValueError, match=rf"^{re.escape(str(folder))}: an empty input"):
        read_response_sets(folder)


def test_an_empty_split_of_a_saved_dataset_dict_is_named_and_the_others_still_read(tmp_path):
    import datasets

    folder = tmp_path / "splits"
    full = datasets.Dataset.from_dict(ROWS)
    datasets.DatasetDict({"train": full, "test": _empty_dataset()}).save_to_disk(str(folder))
    assert [s.responses for s in read_response_sets(folder, split="train")] == ROWS["responses"]
    for split in ("test", None):
        with pytest.raises(ValueError, match=rf"{re.escape(str(folder / 'test'))}: an empty input"):
            read_response_sets(folder, split=split)


def test_a_folder_without_data_files_is_an_empty_input(tmp_path):
    folder = tmp_path / "nothing"
    folder.mkdir()
    with pytest.raises(ValueError, match=rf"^{re.escape(str(folder))}: an empty input"):
        read_response_sets(folder)


@pytest.mark.parametrize("damage", ["random bytes", "cut in half"])
def test_a_damaged_arrow_file_of_a_saved_dataset_is_named(tmp_path, damage):
    folder = _saved(tmp_path / "saved", {"context": ["c"] * 3000, "responses": [["r" * 40]] * 3000})
    (arrow,) = folder.glob("*.arrow")
    if damage == "random bytes":
        arrow.write_bytes(os.urandom(100))
    else:
        os.truncate(arrow, arrow.stat().st_size // 2)
    with pytest.raises(
        ValueError, match=rf"^{re.escape(str(arrow))}: not a readable Arrow file of a save_to_disk"
    ):
        read_response_sets(folder)


@pytest.mark.parametrize("suffix", [".arrow", ".parquet"])
def test_a_damaged_file_of_a_data_files_folder_is_named(tmp_path, suffix):
    folder = tmp_path / "files"
    folder.mkdir()
    damaged = folder / f"data{suffix}"
    damaged.write_bytes(b"PAR1" + os.urandom(200) + b"PAR1")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(damaged))}: a data file that cannot"):
        read_response_sets(folder)


@pytest.mark.parametrize("path", [None, 5, 2.5, b"s.jsonl", ["s.jsonl"], ""])
def test_an_input_that_is_no_path_names_the_argument(path):
    with pytest.raises(ValueError, match=r"^`input` (must be a path|is an empty path)"):
        read_response_sets(path)
    with pytest.raises(ValueError, match=r"^`input` "):
        open_input(path)
    with pytest.raises(ValueError, match=r"^`input` "):
        iter_corpus_lines(path)
    with pytest.raises(ValueError, match=r"^`reference_corpus` "):
        read_text_lines(path)


BOM = "\ufeff"


def test_a_csv_with_a_byte_order_mark_keeps_its_context_column(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_text(BOM + "context,resp_0,resp_1\nc,a,b\n", encoding="utf-8")
    (only,) = read_response_sets(path)
    assert (only.context, only.responses, only.metadata) == ("c", ["a", "b"], {})


@pytest.mark.parametrize(
    "name, text",
    [
        ("s.jsonl", json.dumps({"context": "c", "responses": ["a", "b"]}) + "\n"),
        ("s.json", json.dumps([{"context": "c", "responses": ["a", "b"]}])),
    ],
)
def test_json_with_a_byte_order_mark_is_read(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(BOM + text, encoding="utf-8")
    (only,) = read_response_sets(path)
    assert (only.context, only.responses, only.where) == ("c", ["a", "b"], f"{path}:1")


def test_a_corpus_with_a_byte_order_mark_has_no_mark_in_its_first_response(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text(BOM + "first\nsecond\n", encoding="utf-8")
    assert [text for _, text in iter_corpus_lines(path)] == ["first", "second"]
    assert read_text_lines(path) == ["first", "second"]


def test_a_mark_inside_the_text_is_kept(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"responses": [BOM + "a", "b"]}) + "\n", encoding="utf-8")
    assert read_response_sets(path)[0].responses == [BOM + "a", "b"]


@pytest.mark.parametrize(
    "name, text",
    [
        ("s.jsonl", '{"responses": ["a", "b"]}\n{"responses": ["a"], "n": ' + "7" * 5000 + "}\n"),
        ("s.json", '[{"responses": ["a", "b"]},\n{"responses": ["a"], "n": ' + "7" * 5000 + "}]"),
    ],
)
def test_an_integer_of_thousands_of_digits_names_file_and_line(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(
        ValueError, match=rf"^{re.escape(str(path))}:2: a JSON value Python cannot convert"
    ):
        read_response_sets(path)


def test_a_parquet_file_with_no_rows_is_an_empty_input(tmp_path):
    path = tmp_path / "empty.parquet"
    pyarrow.parquet.write_table(
        pyarrow.table({"responses": pyarrow.array([], pyarrow.list_(pyarrow.string()))}), path
    )
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: no response sets found"):
        read_response_sets(path)
