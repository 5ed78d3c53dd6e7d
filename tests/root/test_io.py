import csv
import json
import os
import re
import threading

import pyarrow
import pyarrow.parquet
import pytest

from dialeval import io as dialeval_io
from dialeval.io import (
    as_response_sets,
    input_scope,
    iter_corpus_lines,
    iter_response_sets,
    open_input,
    read_response_sets,
    response_sets_from_dataframe,
)


def test_csv_response_columns_in_numeric_order(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text(
        "context,resp_10,resp_2,resp_0,resp_1,resp_3,resp_4,resp_5,resp_6,resp_7,resp_8,resp_9\n"
        "c,k,c2,a,b,d,e,f,g,h,i,j\n",
        encoding="utf-8",
    )
    assert read_response_sets(path)[0].responses == [
        "a",
        "b",
        "c2",
        "d",
        "e",
        "f",
        "g",
        "h",
        "i",
        "j",
        "k",
    ]


def test_csv_gap_in_response_columns(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("context,resp_0,resp_2\nc,a,b\n", encoding="utf-8")
    with pytest.raises(ValueError, match="without gaps"):
        read_response_sets(path)


@pytest.mark.parametrize(
    "line, match",
    [
        ('{"context": "c"}', "responses"),
        ('{"responses": "abc"}', "list of strings"),
        ('{"responses": ["a"], "context": 3}', "context"),
    ],
)
def test_jsonl_errors_name_the_line(tmp_path, line, match):
    path = tmp_path / "s.jsonl"
    path.write_text('{"responses": ["ok"]}\n\n' + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"\\.jsonl:3: .*{match}"):
        read_response_sets(path)


def test_unknown_suffix(tmp_path):
    path = tmp_path / "s.dat"
    path.write_text("x", encoding="utf-8")
    with pytest.raises(ValueError, match="`file_format`"):
        read_response_sets(path)
    with pytest.raises(ValueError, match="`file_format` must be"):
        read_response_sets(path, "xml")


def test_reads_released_tevet_csv(shared_data):
    sets = read_response_sets(
        shared_data / "tevet-diversity-eval/raw/conTest/con_test_200_with_hds_resp_gen.csv"
    )
    assert len(sets) == 220 and all(len(s.responses) == 5 for s in sets)
    labels = [s.metadata["label_value"] for s in sets]
    assert labels.count("1.0") == labels.count("0.0") == 110  # balanced classes, as SOURCE.md says


def test_every_line_reader_names_file_and_line(tmp_path):
    from dialeval.io import iter_jsonl, iter_lines

    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n  \n{"a": 2}\r\n{oops\n', encoding="utf-8")
    assert list(iter_lines(path))[:2] == [(f"{path}:1", '{"a": 1}'), (f"{path}:4", '{"a": 2}')]
    records = iter_jsonl(path)
    assert next(records) == (f"{path}:1", {"a": 1})
    assert next(records) == (f"{path}:4", {"a": 2})
    with pytest.raises(ValueError, match=r"x\.jsonl:5: not valid JSON"):
        next(records)


def test_each_set_keeps_its_file_and_line(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"responses": ["a", "b"]}\n\n{"responses": ["c"], "id": 7}\n', encoding="utf-8"
    )
    assert [s.where for s in read_response_sets(path)] == [f"{path}:1", f"{path}:3"]
    csv_path = tmp_path / "s.csv"
    csv_path.write_text('context,resp_0,resp_1\nc,"two\nlines",b\nd,e,f\n', encoding="utf-8")
    assert [s.where for s in read_response_sets(csv_path)] == [f"{csv_path}:2", f"{csv_path}:4"]


def test_contexts_may_be_lists_of_turns(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"context": ["hi", "hello, how are you?"], "responses": ["a", "b"]}\n', encoding="utf-8"
    )
    assert read_response_sets(path)[0].context == ["hi", "hello, how are you?"]
    for bad in ("[]", '["hi", 3]', '{"turn": "hi"}'):
        path.write_text(f'{{"context": {bad}, "responses": ["a", "b"]}}\n', encoding="utf-8")
        with pytest.raises(ValueError, match=r"s\.jsonl:1: .*context.*list of strings"):
            read_response_sets(path)


# --- inputs as users hold them ---------------------------------------------------------------

RECORDS = [
    {"context": "Hi there", "responses": ["a", "b"], "id": 1},
    {"context": ["Hi", "How are you?"], "responses": ["c", "d", "e"], "style": "dull"},
]


def _as_read(sets):
    return [(s.context, s.responses, s.metadata) for s in sets]


EXPECTED = [
    ("Hi there", ["a", "b"], {"id": 1}),
    (["Hi", "How are you?"], ["c", "d", "e"], {"style": "dull"}),
]


def test_json_array_gives_the_jsonl_sets_with_each_elements_line(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(RECORDS, indent=2), encoding="utf-8")
    sets = read_response_sets(path)
    assert _as_read(sets) == EXPECTED
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [lines[int(s.where.rsplit(":", 1)[1]) - 1].strip() for s in sets] == ["{", "{"]
    assert [s.where for s in sets] == [f"{path}:2", f"{path}:10"]


@pytest.mark.parametrize(
    "text, match",
    [
        ('[\n{"responses": ["a", "b"]},\n{"responses": ["c"]\n]', r"s\.json:4: not valid JSON"),
        (
            '[\n{"responses": ["a", "b"]}\n{"responses": ["c", "d"]}]',
            r"s\.json:3: expected ',' or ']'",
        ),
        ('[{"responses": ["a", "b"]}]\n[]', r"s\.json:2: text after the JSON array"),
        ('{"responses": ["a", "b"]}', r"s\.json:1: .*one JSON array"),
        (
            '[\n{"responses": ["a", "b"]},\n{"context": "c"}\n]',
            r's\.json:3: expected an object with a "responses" list',
        ),
        ("[]", r"s\.json: no response sets found"),
    ],
)
def test_json_array_errors_name_the_line(tmp_path, text, match):
    path = tmp_path / "s.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=match):
        read_response_sets(path)


def test_a_json_file_of_json_lines_is_refused_unless_format_says_jsonl(tmp_path):
    path = tmp_path / "s.json"
    path.write_text("".join(json.dumps(record) + "\n" for record in RECORDS), encoding="utf-8")
    with pytest.raises(
        ValueError, match=r"s\.json:1: .*holds JSON lines: read it with `file_format` jsonl"
    ):
        read_response_sets(path)
    assert _as_read(read_response_sets(path, "jsonl")) == EXPECTED


def test_parquet_is_read_in_record_batches(tmp_path, monkeypatch):
    path = tmp_path / "s.parquet"
    table = pyarrow.table(
        {
            "context": ["c1", "c2", "c3"],
            "responses": [["a", "b"], ["c", "d"], ["e", "f"]],
            "id": [7, 8, 9],
        }
    )
    pyarrow.parquet.write_table(table, path, row_group_size=2)
    monkeypatch.setattr(dialeval_io, "PARQUET_BATCH_ROWS", 2)
    sets = read_response_sets(path)
    assert [(s.context, s.responses, s.metadata, s.where) for s in sets] == [
        ("c1", ["a", "b"], {"id": 7}, f"{path}:row 1"),
        ("c2", ["c", "d"], {"id": 8}, f"{path}:row 2"),
        ("c3", ["e", "f"], {"id": 9}, f"{path}:row 3"),
    ]


def test_parquet_errors_name_the_row_and_the_column_option(tmp_path):
    path = tmp_path / "s.parquet"
    pyarrow.parquet.write_table(pyarrow.table({"prompt": ["c"], "outs": [["a", "b"]]}), path)
    with pytest.raises(
        ValueError,
        match=r"s\.parquet: no column 'responses' \(`responses_column`\); its columns: prompt, outs",
    ):
        read_response_sets(path)
    with pytest.raises(ValueError, match=r"no column 'ctx' \(`context_column`\)"):
        read_response_sets(path, responses_column="outs", context_column="ctx")
    assert _as_read(read_response_sets(path, responses_column="outs", context_column="prompt")) == [
        ("c", ["a", "b"], {})
    ]
    pyarrow.parquet.write_table(
        pyarrow.table({"responses": [["a", "b"], ["c"]], "context": ["x", None]}), path
    )
    assert read_response_sets(path)[1].context is None  # a null context: no context
    pyarrow.parquet.write_table(pyarrow.table({"responses": ["a single string"]}), path)
    with pytest.raises(
        ValueError, match=r's\.parquet:row 1: "responses" must be a list of strings'
    ):
        read_response_sets(path)
    path.write_text("not parquet", encoding="utf-8")
    with pytest.raises(ValueError, match=r"s\.parquet: not a Parquet file"):
        read_response_sets(path)


def test_datasets_folders_with_their_split_and_columns(tmp_path):
    import datasets

    train = datasets.Dataset.from_list(
        [
            {
                "prompt": r["context"] if isinstance(r["context"], str) else " ".join(r["context"]),
                "outs": r["responses"],
            }
            for r in RECORDS
        ]
    )
    single, splits = tmp_path / "single", tmp_path / "splits"
    train.save_to_disk(str(single))
    datasets.DatasetDict({"train": train, "test": train.select([1])}).save_to_disk(str(splits))
    columns = {"responses_column": "outs", "context_column": "prompt"}
    sets = read_response_sets(single, **columns)
    assert [(s.context, s.responses, s.where) for s in sets] == [
        ("Hi there", ["a", "b"], f"{single}:row 1"),
        ("Hi How are you?", ["c", "d", "e"], f"{single}:row 2"),
    ]
    with pytest.raises(ValueError, match=r"has the splits train, test: pick one with `split`"):
        read_response_sets(splits, **columns)
    with pytest.raises(ValueError, match=r"'dev' is not one of them"):
        read_response_sets(splits, split="dev", **columns)
    assert [s.where for s in read_response_sets(splits, split="test", **columns)] == [
        f"{splits}[test]:row 1"
    ]
    with pytest.raises(ValueError, match=r"no column 'responses' \(`responses_column`\)"):
        read_response_sets(single)


def test_a_folder_of_parquet_files_as_the_hub_lays_them_out(tmp_path):
    folder = tmp_path / "export" / "data"
    folder.mkdir(parents=True)
    pyarrow.parquet.write_table(
        pyarrow.table({"responses": [["a", "b"]], "context": ["x"]}),
        folder / "train-00000-of-00001.parquet",
    )
    pyarrow.parquet.write_table(
        pyarrow.table({"responses": [["c", "d"]], "context": ["y"]}),
        folder / "test-00000-of-00001.parquet",
    )
    assert [
        (s.context, s.where) for s in read_response_sets(tmp_path / "export", split="test")
    ] == [("y", f"{tmp_path / 'export'}[test]:row 1")]


def test_a_hub_dataset_that_is_not_cached_fails_clearly_offline(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # "nobody/no-such-dataset" is no path here
    with pytest.raises(
        ValueError,
        match=r"'nobody/no-such-dataset' is not a file or folder here.*read from the caches only.*hf download nobody/no-such-dataset --repo-type dataset",
    ):
        iter_response_sets("nobody/no-such-dataset", split="train")
    assert dialeval_io.input_format("nobody/no-such-dataset") == "dataset"
    with pytest.raises(ValueError, match=r"`input` 'missing\.jsonl' is not a file"):
        iter_response_sets("missing.jsonl")


def test_options_a_format_would_ignore_are_refused(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(RECORDS[0]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"`split` does not apply to a jsonl input"):
        iter_response_sets(path, split="train")
    csv_path = tmp_path / "s.csv"
    csv_path.write_text("context,resp_0,resp_1\nc,a,b\n", encoding="utf-8")
    with pytest.raises(
        ValueError,
        match=r"`responses_column` does not apply to a csv input \(its responses are the resp_0",
    ):
        iter_response_sets(csv_path, responses_column="outs")
    with pytest.raises(
        ValueError,
        match=r"s\.csv: no column 'prompt' \(`context_column`\); its columns: context, resp_0, resp_1",
    ):
        # a misspelt column is not read as "no contexts"
        read_response_sets(csv_path, context_column="prompt")


def test_jsonl_and_json_take_the_column_names_too(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"prompt": "c", "outs": ["a", "b"], "id": 3}\n{"prompt": "d", "responses": ["x"]}\n',
        encoding="utf-8",
    )
    sets = iter_response_sets(path, responses_column="outs", context_column="prompt")
    assert _as_read([next(sets)]) == [("c", ["a", "b"], {"id": 3})]
    with pytest.raises(ValueError, match=r's\.jsonl:2: expected an object with a "outs" list'):
        next(sets)  # one set at a time: the bad second line fails only when it is read


def test_a_named_context_key_missing_from_a_json_record_is_an_error_not_no_context(tmp_path):
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text(
        '{"prompt": "c", "responses": ["a", "b"]}\n{"promt": "d", "responses": ["x", "y"]}\n',
        encoding="utf-8",
    )
    with pytest.raises(
        ValueError,
        match=r"s\.jsonl:2: no key 'prompt' \(`context_column`\); its keys: promt, responses",
    ):
        read_response_sets(jsonl, context_column="prompt")
    array = tmp_path / "s.json"
    array.write_text('[{"responses": ["a", "b"]}]', encoding="utf-8")
    with pytest.raises(ValueError, match=r"no key 'prompt' \(`context_column`\)"):
        read_response_sets(array, context_column="prompt")
    assert read_response_sets(array)[0].context is None  # the default key stays optional


def test_corpus_scope_one_response_per_line(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("first response\n\n  second one  \r\nthird\n", encoding="utf-8")
    assert input_scope(path) == "corpus"
    assert list(iter_corpus_lines(path)) == [
        (f"{path}:1", "first response"),
        (f"{path}:2", ""),
        (f"{path}:3", "  second one  "),
        (f"{path}:4", "third"),
    ]  # nothing dropped
    other = tmp_path / "r.jsonl"
    other.write_text(json.dumps(RECORDS[0]) + "\n", encoding="utf-8")
    assert input_scope(other) == "response_set" and input_scope(other, "lines") == "corpus"
    with pytest.raises(
        ValueError, match=r"holds one response per line \(a corpus\), not response sets"
    ):
        iter_response_sets(path)
    with pytest.raises(ValueError, match=r"`input` .*nothing\.txt' is not a file"):
        iter_corpus_lines(tmp_path / "nothing.txt")


def test_dataframe_rows_become_sets_with_plain_python_metadata():
    import numpy as np
    import pandas as pd

    frame = pd.DataFrame(
        {
            "responses": [np.array(["a", "b"]), ["c", "d"]],
            "context": ["x", np.nan],
            "score": [np.float32(0.5), np.nan],
            "n": [1, 2],
            "when": pd.to_datetime(["2024-01-02", None]),
        },
        index=["first", "second"],
    )
    sets = response_sets_from_dataframe(frame)
    assert [(s.context, s.responses, s.metadata, s.where) for s in sets] == [
        (
            "x",
            ["a", "b"],
            {"score": 0.5, "n": 1, "when": "2024-01-02 00:00:00"},
            "DataFrame row first",
        ),
        (None, ["c", "d"], {"score": None, "n": 2, "when": None}, "DataFrame row second"),
    ]
    assert type(sets[0].metadata["n"]) is int and json.dumps(sets[1].metadata)  # JSON-ready
    assert [s.responses for s in as_response_sets(frame)] == [["a", "b"], ["c", "d"]]
    assert as_response_sets(sets) is sets
    with pytest.raises(
        ValueError, match=r"`sets`: the DataFrame has no 'outs' column \(`responses_column`\)"
    ):
        response_sets_from_dataframe(frame, responses_column="outs")
    with pytest.raises(ValueError, match=r'DataFrame row 0: "responses" must be a list of strings'):
        response_sets_from_dataframe(pd.DataFrame({"responses": ["one string per row"]}))


# hostile files end in a ValueError naming FILE:LINE, never a traceback from json / csv
def test_json_nested_too_deeply_names_the_line(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    jsonl = tmp_path / "deep.jsonl"
    jsonl.write_text('{"responses": ["a", "b"]}\n' + deep + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(jsonl))}:2: JSON nested too deeply"):
        read_response_sets(jsonl)
    array = tmp_path / "deep.json"
    array.write_text('[{"responses": ["a", "b"]},\n' + deep + "]", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(array))}:2: JSON nested too deeply"):
        read_response_sets(array)


@pytest.mark.parametrize("row", ["c,a b,c d", "a b,c d", "c,a b,c d,1,extra"])
def test_a_csv_row_of_another_length_than_its_header_names_the_line(tmp_path, row):
    path = tmp_path / "s.csv"
    # the short row lacks a metadata or the context column, not a response: it was read with None there
    header = "context,resp_0,resp_1,label_value" if row != "a b,c d" else "resp_0,resp_1,context"
    good = "c,e f,g h,1" if row != "a b,c d" else "e f,g h,c"
    path.write_text(f"{header}\n{good}\n{row}\n", encoding="utf-8")
    with pytest.raises(
        ValueError,
        match=rf"^{re.escape(str(path))}:3: the row has (fewer|more) fields than the header",
    ):
        read_response_sets(path)


def test_a_csv_field_longer_than_csvs_default_limit_is_read_and_the_limit_restored(tmp_path):
    path = tmp_path / "s.csv"
    long_response = "word " * 40_000  # 200,000 characters: csv's default limit is 131,072
    path.write_text(f"context,resp_0,resp_1\nc,{long_response},b\n", encoding="utf-8")
    limit = csv.field_size_limit()
    assert read_response_sets(path)[0].responses == [long_response, "b"]
    assert csv.field_size_limit() == limit  # the process-wide setting is the caller's again


def test_a_csv_field_over_the_limit_names_the_line(tmp_path, monkeypatch):
    # a field over 2**31 - 1 characters (csv's ceiling on Windows) is refused with its line; shown on a small ceiling
    monkeypatch.setattr(dialeval_io, "_CSV_LIMIT_CEILING", 100)
    path = tmp_path / "s.csv"
    path.write_text(f"context,resp_0,resp_1\nc,a,b\nc,{'x' * 200},b\n", encoding="utf-8")
    with pytest.raises(
        ValueError,
        match=rf"^{re.escape(str(path))}:3: not valid CSV \(field larger than field limit",
    ):
        read_response_sets(path)


def _fed_fifo(tmp_path, name, text):
    """A named pipe at ``tmp_path/name`` that a thread writes ``text`` into once a reader opens it."""
    fifo = tmp_path / name
    os.mkfifo(fifo)

    def write():
        with open(fifo, "w", encoding="utf-8") as pipe:
            pipe.write(text)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return fifo, writer


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_read_once_front_to_back(tmp_path):
    records = [
        {"context": "Hi", "responses": ["a", "b"]},
        {"context": "Yo", "responses": ["c", "d"]},
    ]
    fifo, writer = _fed_fifo(tmp_path, "sets.jsonl", "".join(json.dumps(r) + "\n" for r in records))
    scope, items = open_input(fifo)
    sets = list(items)
    writer.join(timeout=10)
    assert scope == "response_set"
    assert [s.responses for s in sets] == [["a", "b"], ["c", "d"]]
    assert [s.where for s in sets] == [f"{fifo}:1", f"{fifo}:2"]

    corpus, writer = _fed_fifo(tmp_path, "corpus.txt", "one\ntwo\n")
    scope, items = open_input(corpus)
    assert (scope, list(items)) == ("corpus", [(f"{corpus}:1", "one"), (f"{corpus}:2", "two")])
    writer.join(timeout=10)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_refused_as_parquet_before_it_is_opened(tmp_path):
    fifo = tmp_path / "sets.parquet"
    os.mkfifo(fifo)  # nobody writes: opening it would block, so the refusal must come first
    with pytest.raises(ValueError, match="named pipe: Parquet is read from its footer"):
        open_input(fifo)
