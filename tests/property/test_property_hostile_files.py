"""Properties of the input reader on hostile files: random bytes, a file in another format
than its suffix or ``--format`` says, and a valid file cut short, through :mod:`dialeval.io`'s reader
and through ``dialeval evaluate`` (``main([...])`` in process).

The reader gives response sets or a ValueError naming the file (never a codec, csv, Arrow or JSON
error of its own); ``dialeval evaluate`` exits 0 or 2 with a one-message error, never a traceback.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from property_support import covers, fewer, junk, outcome, refused

from dialeval import io as dialeval_io
from dialeval import validation
from dialeval.cli import main

#: The file formats a path can carry (``dataset`` is a folder or a Hub id: not a file).
FILE_FORMATS = ("jsonl", "json", "csv", "parquet", "lines")
SUFFIXES = {
    "jsonl": ".jsonl",
    "json": ".json",
    "csv": ".csv",
    "parquet": ".parquet",
    "lines": ".txt",
}

response = st.text(st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=12)
response_sets = st.lists(st.lists(response, min_size=1, max_size=4), min_size=1, max_size=4)


def _serialized(sets: list[list[str]], file_format: str) -> bytes:
    """``sets`` written as a valid file of ``file_format``."""
    records = [
        {"context": f"context {index}", "responses": responses}
        for index, responses in enumerate(sets)
    ]
    if file_format == "jsonl":
        return "".join(json.dumps(record) + "\n" for record in records).encode("utf-8")
    if file_format == "json":
        return json.dumps(records, indent=1).encode("utf-8")
    if file_format == "lines":
        return "".join(
            text.replace("\n", " ") + "\n" for responses in sets for text in responses
        ).encode("utf-8")
    if file_format == "csv":
        import csv

        width = max(len(responses) for responses in sets)
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(["context", *(f"resp_{i}" for i in range(width))])
        for record in records:
            writer.writerow(
                [
                    record["context"],
                    *record["responses"],
                    *[""] * (width - len(record["responses"])),
                ]
            )
        return buffer.getvalue().encode("utf-8")
    import pyarrow
    import pyarrow.parquet

    buffer = io.BytesIO()
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(records), buffer)
    return buffer.getvalue()


@st.composite
def hostile_files(draw) -> tuple[bytes, str, str | None]:
    """``(content, suffix, --format or None)``: random bytes, a valid file of one format named or read
    as another, or a valid file cut at a random byte."""
    suffix = SUFFIXES[draw(st.sampled_from(FILE_FORMATS))]
    file_format = draw(st.one_of(st.none(), st.sampled_from(FILE_FORMATS)))
    kind = draw(st.sampled_from(("bytes", "other format", "truncated")))
    if kind == "bytes":
        content = draw(
            st.one_of(
                st.binary(max_size=300),
                st.binary(min_size=4, max_size=300).map(lambda b: b"PAR1" + b),
            )
        )
    else:
        written_as = draw(st.sampled_from(FILE_FORMATS))
        content = _serialized(draw(response_sets), written_as)
        if kind == "truncated" and content:
            content = content[: draw(st.integers(0, len(content) - 1))]
    return content, suffix, file_format


def _write(tmp_path: Path, content: bytes, suffix: str) -> Path:
    path = tmp_path / f"hostile{suffix}"
    path.write_bytes(content)
    return path


def _read(path: Path, file_format: str | None):
    selection = {} if file_format is None else {"file_format": file_format}
    scope, items = dialeval_io.open_input(path, **selection)
    return scope, list(items)


@fewer(1)
@given(hostile=hostile_files())
def test_the_reader_gives_sets_or_a_value_error_naming_the_file(tmp_path_factory, hostile):
    content, suffix, file_format = hostile
    path = _write(tmp_path_factory.mktemp("hostile"), content, suffix)
    try:
        _read(path, file_format)
    except UnicodeError as error:  # a ValueError too, but a codec's: it names no file
        raise AssertionError(f"a codec error escaped: {error!r}") from error
    except ValueError as error:
        assert path.name in str(error), f"the error names no file: {error}"


@fewer(2)
@given(hostile=hostile_files())
def test_dialeval_evaluate_exits_2_with_a_message_never_a_traceback(tmp_path_factory, hostile):
    import contextlib

    content, suffix, file_format = hostile
    folder = tmp_path_factory.mktemp("hostile")
    path = _write(folder, content, suffix)
    argv = [
        "evaluate",
        str(path),
        "--metric",
        "lexical_diversity",
        "--no-progress",
        "-o",
        str(folder / "report.json"),
    ]
    argv += ["--format", file_format] if file_format is not None else []
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)  # anything but ValueError / OSError escapes and fails the property
    assert code in (0, 2)
    error = stderr.getvalue()
    if code == 2:
        assert error.startswith("dialeval evaluate: error: ") and "Traceback" not in error, error
        assert "codec can't decode" not in error, error


@covers("check_path")
@given(
    value=st.one_of(junk, st.text(max_size=8), st.text(max_size=8).map(Path)),
    optional=st.booleans(),
)
def test_check_path(value, optional):
    checked = outcome(validation.check_path, value, "x", optional)
    if refused(checked):
        assert str(checked.error).startswith("`x` ")
    elif value is None:
        assert optional and checked is None
    else:
        assert isinstance(value, (str, Path)) and checked == str(value) and checked != ""
