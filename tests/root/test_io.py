import pytest

from dialeval.io import read_response_sets


def test_csv_response_columns_in_numeric_order(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("context,resp_10,resp_2,resp_0,resp_1,resp_3,resp_4,resp_5,resp_6,resp_7,resp_8,resp_9\n"
                    "c,k,c2,a,b,d,e,f,g,h,i,j\n", encoding="utf-8")
    assert read_response_sets(path)[0].responses == ["a", "b", "c2", "d", "e", "f", "g", "h", "i", "j", "k"]


def test_csv_gap_in_response_columns(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("context,resp_0,resp_2\nc,a,b\n", encoding="utf-8")
    with pytest.raises(ValueError, match="without gaps"):
        read_response_sets(path)


@pytest.mark.parametrize(
    "line, match",
    [('{"context": "c"}', "responses"), ('{"responses": "abc"}', "list of strings"), ('{"responses": ["a"], "context": 3}', "context")],
)
def test_jsonl_errors_name_the_line(tmp_path, line, match):
    path = tmp_path / "s.jsonl"
    path.write_text('{"responses": ["ok"]}\n\n' + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"\\.jsonl:3: .*{match}"):
        read_response_sets(path)


def test_unknown_suffix(tmp_path):
    path = tmp_path / "s.txt"
    path.write_text("x", encoding="utf-8")
    with pytest.raises(ValueError, match="--format"):
        read_response_sets(path)
    with pytest.raises(ValueError, match="format"):
        read_response_sets(path, "parquet")


def test_reads_released_tevet_csv(shared_data):
    sets = read_response_sets(shared_data / "tevet-diversity-eval/raw/conTest/con_test_200_with_hds_resp_gen.csv")
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
    path.write_text('{"responses": ["a", "b"]}\n\n{"responses": ["c"], "id": 7}\n', encoding="utf-8")
    assert [s.where for s in read_response_sets(path)] == [f"{path}:1", f"{path}:3"]
    csv_path = tmp_path / "s.csv"
    csv_path.write_text('context,resp_0,resp_1\nc,"two\nlines",b\nd,e,f\n', encoding="utf-8")
    assert [s.where for s in read_response_sets(csv_path)] == [f"{csv_path}:2", f"{csv_path}:4"]


def test_contexts_may_be_lists_of_turns(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"context": ["hi", "hello, how are you?"], "responses": ["a", "b"]}\n', encoding="utf-8")
    assert read_response_sets(path)[0].context == ["hi", "hello, how are you?"]
    for bad in ('[]', '["hi", 3]', '{"turn": "hi"}'):
        path.write_text('{"context": %s, "responses": ["a", "b"]}\n' % bad, encoding="utf-8")
        with pytest.raises(ValueError, match=r"s\.jsonl:1: .*context.*list of strings"):
            read_response_sets(path)
