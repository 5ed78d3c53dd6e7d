"""THE reader of input files, with errors that name ``FILE:LINE`` (or the argument / flag).

:func:`iter_lines` / :func:`iter_jsonl` / :func:`iter_json_array` are the one way every job and
metric reads a record-per-line or record-per-element file (response sets, DTG contexts,
response-selection questions). On top of them, the response-set inputs of ``dialeval evaluate``,
read one set at a time by :func:`iter_response_sets` (:func:`read_response_sets` is its list):

- ``jsonl``: one object per line, ``{"context": ..., "responses": [...]}``; other keys are metadata;
- ``json``: one JSON array of the same objects (a ``.json`` file is never read as JSON lines
  unless ``file_format="jsonl"`` says so);
- ``csv``: Tevet & Berant's layout, one row per set with ``context``, ``resp_0 .. resp_{k-1}`` and
  optional ``sample_id``, ``label_value``, ``label_name`` and metric columns (kept as metadata);
- ``parquet``: a Parquet file with the JSON objects' columns, read in record batches;
- ``dataset``: a ``datasets`` folder (``save_to_disk``), a folder of data files (e.g. Parquet, as
  the Hub lays them out) or a Hub dataset id (from the ``datasets`` cache when offline).

The record formats name their responses and context ``responses_column`` / ``context_column``.
``lines`` (``.txt``) is a corpus, one response per line and no sets: :func:`iter_corpus_lines`;
:func:`input_scope` says which kind an input is, and :func:`open_input` opens either kind (the
command line reads every input through it). :func:`as_response_sets` turns a pandas
DataFrame into sets for the Python API. Files are read as UTF-8 explicitly (the released CSVs
broke Windows' default codec); a byte order mark at the start of a file is skipped.
"""

from __future__ import annotations

import csv
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from dialeval.validation import SURROGATE_ADVICE, ArgumentError, check_path, lone_surrogate

if TYPE_CHECKING:
    import datasets
    import pandas
    import pyarrow.parquet
    from typing_extensions import Self

#: What a record-per-line reader yields: ``("FILE:LINE", the decoded record)``.
Located = tuple[str, Any]
_Result = TypeVar("_Result")

_RESPONSE_COLUMN = re.compile(r"^resp_(\d+)$")
_JSON_SPACE = re.compile(r"[ \t\r\n]*")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")
#: Python's JSON decoder recurses once per nesting level and stops at the interpreter's recursion
#: limit.
_TOO_DEEP = "JSON nested too deeply to decode (a record is objects and lists a few levels deep)"
#: A decoded JSON string holds a lone surrogate only through a \uD800-\uDFFF escape (text read as
#: UTF-8 holds none), so records are searched only when their text has such an escape.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
#: The most csv can take as its field size limit (a C long: 32 bits on Windows).
_CSV_LIMIT_CEILING = 2**31 - 1

#: What ``file_format`` (``dialeval evaluate --format``) may name besides ``"auto"``.
INPUT_FORMATS = ("jsonl", "json", "csv", "parquet", "dataset", "lines")
_FORMAT_OF_SUFFIX = {
    ".jsonl": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".txt": "lines",
}
#: Rows per Parquet record batch: a batch's Python objects are all that is held at once.
PARQUET_BATCH_ROWS = 1024


@dataclass
class ResponseSet:
    """The responses generated for one context, plus whatever the file said about them.

    ``context`` is a string or, for a dialogue, its turns (a list of strings); ``where`` is the
    ``"FILE:LINE"`` the set was read from, for error messages (None for sets built in code).
    """

    context: str | list[str] | None
    responses: list[str]
    metadata: dict[str, Any] = field(default_factory=dict)
    where: str | None = None


def iter_lines(path: str | Path, file_format: str = "lines") -> Iterator[tuple[str, str]]:
    """``(where, line)`` for every non-blank line of a UTF-8 file, ``where`` being ``"FILE:LINE"``
    for error messages; the line without its line break. ``file_format``: what the caller reads the
    file as, which an error for bytes that are not UTF-8 names."""
    with _Utf8File(path, file_format=file_format) as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield f"{path}:{number}", line.rstrip("\r\n")


def iter_jsonl(path: str | Path) -> Iterator[Located]:
    """``(where, record)`` for every non-blank line of a JSONL file; bad JSON is a ValueError naming
    ``FILE:LINE``."""
    for where, line in iter_lines(path, "jsonl"):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{where}: not valid JSON ({error.msg})") from None
        except RecursionError:
            raise ValueError(f"{where}: {_TOO_DEEP}") from None
        except ValueError as error:
            raise ValueError(f"{where}: {_unconvertible(error)}") from None
        if _SURROGATE_ESCAPE.search(line):
            _refuse_lone_surrogates(where, record)
        yield where, record


def iter_json_array(path: str | Path) -> Iterator[Located]:
    """``(where, element)`` for every element of a file holding one JSON array, ``where`` naming the
    line the element starts on. Elements are decoded one at a time (the text is read whole); a file
    that holds JSON lines or anything but one array is a ValueError naming ``FILE:LINE``."""
    with _Utf8File(path, file_format="json") as handle:
        text = handle.read()
    decoder = json.JSONDecoder()
    line, counted = 1, 0

    def where(position: int) -> str:
        nonlocal line, counted
        line += text.count("\n", counted, position)
        counted = position
        return f"{path}:{line}"

    position = _after_space(text, 0)
    if not text.startswith("[", position):
        lines = (
            "; it holds JSON lines: read it with `file_format` jsonl"
            if text.startswith("{", position)
            else ""
        )
        raise ValueError(
            f"{where(position)}: a .json input must hold one JSON array of objects{lines}"
        )
    position = _after_space(text, position + 1)
    if text.startswith("]", position):
        position += 1
    else:
        while True:
            try:
                element, end = decoder.raw_decode(text, position)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{error.lineno}: not valid JSON ({error.msg})") from None
            except RecursionError:
                raise ValueError(f"{where(position)}: {_TOO_DEEP}") from None
            except ValueError as error:
                raise ValueError(f"{where(position)}: {_unconvertible(error)}") from None
            if _SURROGATE_ESCAPE.search(text, position, end):
                _refuse_lone_surrogates(where(position), element)
            yield where(position), element
            position = _after_space(text, end)
            if text.startswith(",", position):
                position = _after_space(text, position + 1)
            elif text.startswith("]", position):
                position += 1
                break
            else:
                raise ValueError(
                    f"{where(position)}: expected ',' or ']' after an element of the JSON array"
                )
    trailing = _after_space(text, position)
    if trailing != len(text):
        raise ValueError(f"{where(trailing)}: text after the JSON array's closing ']'")


def _unconvertible(error: ValueError) -> str:
    """What a JSON decoder's ValueError other than a syntax error says: Python refuses to convert an
    integer literal of more digits than ``sys.get_int_max_str_digits()``."""
    return (
        f"a JSON value Python cannot convert ({error}); no field of a record needs an integer of "
        "thousands of digits"
    )


def _after_space(text: str, position: int) -> int:
    """Where the JSON whitespace starting at ``position`` ends (its pattern also matches none)."""
    space = _JSON_SPACE.match(text, position)
    return space.end() if space is not None else position


def response_set_from_record(
    where: str, record: object, responses_key: str = "responses", context_key: str = "context"
) -> ResponseSet:
    """A set from one record (a JSON object, a Parquet or dataset row): ``responses_key`` holds a
    list of strings, ``context_key`` (optional) a string or a dialogue's turns (a non-empty list of
    strings); the other keys are metadata. Errors name ``where``."""
    if not isinstance(record, dict) or responses_key not in record:
        raise ValueError(f'{where}: expected an object with a "{responses_key}" list')
    record = dict(record)
    responses = record.pop(responses_key)
    if not isinstance(responses, list) or not all(isinstance(r, str) for r in responses):
        raise ValueError(f'{where}: "{responses_key}" must be a list of strings')
    context = record.pop(context_key, None)
    is_turns = (
        isinstance(context, list) and context and all(isinstance(turn, str) for turn in context)
    )
    if context is not None and not isinstance(context, str) and not is_turns:
        raise ValueError(
            f'{where}: "{context_key}" must be a string or a non-empty list of strings (the turns)'
        )
    _check_unicode(where, responses_key, responses)
    _check_unicode(where, context_key, [context] if isinstance(context, str) else context or [])
    return ResponseSet(context, responses, record, where)


def _refuse_lone_surrogates(where: str, record: object) -> None:
    """A ValueError naming ``where`` and the key path of the first string in ``record`` (decoded
    JSON) holding a lone surrogate; a valid escaped pair ("\\ud83d\\ude00") decodes to one
    character. Iterative: a record may be nested as deep as the decoder allows."""
    pending: list[tuple[object, str]] = [(record, "")]
    while pending:
        value, path = pending.pop()
        if isinstance(value, str):
            found = lone_surrogate(value)
            if found is not None:
                raise ValueError(
                    f"{where}: {path or 'the record'} holds {found}: {SURROGATE_ADVICE}"
                )
        elif isinstance(value, dict):
            for key, item in reversed(value.items()):
                pending.append((item, f"{path}[{json.dumps(key)}]" if path else json.dumps(key)))
                pending.append((key, f"a key of {path or 'the record'}"))
        elif isinstance(value, list):
            pending.extend(
                (item, f"{path}[{index}]") for index, item in reversed(list(enumerate(value)))
            )


def _check_unicode(where: str, key: str, texts: list[str]) -> None:
    """A lone surrogate (JSON's "\\ud800" escape) is refused here, naming FILE:LINE, the key and the
    item: no tokenizer or writer downstream could encode it."""
    for index, text in enumerate(texts):
        found = lone_surrogate(text)
        if found is not None:
            raise ValueError(f'{where}: "{key}"[{index}] holds {found}: {SURROGATE_ADVICE}')


class _Utf8File:
    """``open(path, encoding="utf-8-sig")`` whose bytes that are not UTF-8 (among them the encoded
    lone surrogates ED A0 80..ED BF BF, which strict UTF-8 refuses) are a ValueError naming
    ``FILE:LINE`` instead of a UnicodeDecodeError; the file is read again in binary to find that
    line."""

    def __init__(
        self, path: str | Path, newline: str | None = None, file_format: str | None = None
    ):
        self.path = path
        self.file_format = (
            file_format  # what the caller reads it as: the error names it and the file's own
        )
        # utf-8-sig: a byte order mark (Excel and Notepad write one) starts the file, and is no
        # part of its first CSV header, JSON record or corpus line
        self.handle = open(path, encoding="utf-8-sig", newline=newline)  # noqa: SIM115 - closed by __exit__

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.handle.close()

    def __iter__(self) -> Iterator[str]:
        try:
            yield from self.handle
        except UnicodeDecodeError as error:
            raise self._refusal(error) from None

    def read(self) -> str:
        try:
            return self.handle.read()
        except UnicodeDecodeError as error:
            raise self._refusal(error) from None

    def _refusal(self, error: UnicodeDecodeError) -> ValueError:
        as_format = "" if self.file_format is None else f", so not readable as {self.file_format}"
        hint = "" if self.file_format is None else _format_hint(self.path, self.file_format)
        with open(self.path, "rb") as binary:
            for number, raw in enumerate(binary, start=1):
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as found:
                    return ValueError(
                        f"{self.path}:{number}: not valid UTF-8 (byte 0x{raw[found.start]:02x} at "
                        f"byte {found.start + 1} of the line: {found.reason}){as_format}"
                        + (hint or "; save the file as UTF-8")
                    )
        return ValueError(
            f"{self.path}: not valid UTF-8 ({error.reason}){as_format}"
            + (hint or "; save the file as UTF-8")
        )


def _content_format(path: str | Path) -> str | None:
    """The format a file's first bytes say (Parquet's magic number), if any."""
    try:
        with open(path, "rb") as handle:
            return "parquet" if handle.read(4) == b"PAR1" else None
    except OSError:
        return None


def _format_hint(path: str | Path, file_format: str) -> str:
    """``; read it with `file_format` X`` when the file's first bytes or its suffix say X, another
    format."""
    by_content = _content_format(path)
    guess = by_content or _FORMAT_OF_SUFFIX.get(Path(path).suffix.lower())
    if guess is None or guess == file_format:
        return ""
    what = "it is a Parquet file" if by_content == "parquet" else f"its suffix says {guess}"
    return f"; {what}: read it with `file_format` {guess}"


def response_columns(fieldnames: list[str], path: str | Path = "<csv>") -> list[str]:
    """``resp_i`` columns in numeric order; they must be ``resp_0 .. resp_{k-1}`` without gaps."""
    indexed = sorted(
        (int(m.group(1)), name) for name in fieldnames if (m := _RESPONSE_COLUMN.match(name))
    )
    if not indexed:
        raise ValueError(f"{path}: no resp_0, resp_1, ... columns (Tevet & Berant's CSV format)")
    if [i for i, _ in indexed] != list(range(len(indexed))):
        raise ValueError(
            f"{path}: response columns must be resp_0..resp_{len(indexed) - 1} without gaps, got "
            f"{[n for _, n in indexed]}"
        )
    return [name for _, name in indexed]


def iter_tevet_csv(path: str | Path, context_column: str = "context") -> Iterator[ResponseSet]:
    """Tevet & Berant's decTest / conTest / McDiv CSV layout (see module docstring), a row at a
    time."""
    with _Utf8File(path, newline="", file_format="csv") as handle:
        # sentinel objects, which no CSV text equals (typeshed wants the fields' own type, strings)
        reader = csv.DictReader(iter(handle), restkey=_EXTRA_FIELDS, restval=_MISSING_FIELD)  # type: ignore[call-overload]
        # No field is longer than the file: that bound replaces csv's default of 131,072 characters.
        field_limit = min(max(Path(path).stat().st_size, 1), _CSV_LIMIT_CEILING)
        fieldnames = _csv_step(lambda: reader.fieldnames, field_limit, f"{path}:1") or []
        columns = response_columns(fieldnames, path)
        if context_column != "context" and context_column not in fieldnames:
            raise ValueError(
                f"{path}: no column {context_column!r} (`context_column`); "
                f"its columns: {', '.join(fieldnames)}"
            )
        first_line = reader.line_num + 1
        while (
            row := _csv_step(lambda: next(reader, None), field_limit, f"{path}:{first_line}")
        ) is not None:
            if _EXTRA_FIELDS in row:
                raise ValueError(
                    f"{path}:{first_line}: the row has more fields than the header "
                    f"({len(fieldnames)})"
                )
            if _MISSING_FIELD in row.values():
                raise ValueError(
                    f"{path}:{first_line}: the row has fewer fields than the header "
                    f"({len(fieldnames)})"
                )
            responses = [row.pop(name) for name in columns]
            context = row.pop(context_column, None)
            yield ResponseSet(context, responses, dict(row), f"{path}:{first_line}")
            first_line = reader.line_num + 1  # a quoted field may span lines


_EXTRA_FIELDS = object()  # DictReader's key for a row's fields beyond the header
_MISSING_FIELD = object()  # DictReader's value for a header column the row lacks


def _csv_step(step: Callable[[], _Result], field_limit: int, where: str) -> _Result:
    """``step()`` (a read from a csv reader) under ``field_limit``, the process-wide csv limit
    restored after it; csv's own errors become a ValueError naming ``where`` (the row's
    ``FILE:LINE``)."""
    previous = csv.field_size_limit(field_limit)
    try:
        return step()
    except csv.Error as error:
        raise ValueError(f"{where}: not valid CSV ({error})") from None
    finally:
        csv.field_size_limit(previous)


def read_tevet_csv(path: str | Path) -> list[ResponseSet]:
    """Tevet & Berant's decTest / conTest / McDiv CSV layout (see module docstring)."""
    sets = list(iter_tevet_csv(path))
    if not sets:
        raise ValueError(f"{path}: no rows")
    return sets


def input_format(path: str | Path, file_format: str = "auto") -> str:
    """The format ``path`` is read as (one of :data:`INPUT_FORMATS`): ``file_format`` itself, or
    for ``"auto"`` the file's suffix; a folder is a ``dataset``, and so is a name without a file
    suffix that is no path here but could be a Hub dataset id (``owner/name``). Any format but
    ``dataset`` needs ``path`` to be a file."""
    path = _input_path(path)
    chosen: str | None = file_format
    if file_format == "auto":
        if path.is_dir() or (
            not path.exists()
            and path.suffix.lower() not in _FORMAT_OF_SUFFIX
            and _HUB_ID.match(str(path))
        ):
            return "dataset"
        chosen = _FORMAT_OF_SUFFIX.get(path.suffix.lower())
        if chosen is None and _is_readable_file(path):
            raise ArgumentError(
                "file_format",
                f"='auto' cannot tell the format of {path.name!r} from its suffix; pass one of "
                f"{', '.join(INPUT_FORMATS)}",
            )
    elif file_format not in INPUT_FORMATS:
        raise ArgumentError(
            "file_format",
            f"must be 'auto' or one of {', '.join(INPUT_FORMATS)}, got {file_format!r}",
        )
    # no format (an unknown suffix) is left only for a path that is not a file
    if chosen is None or (chosen != "dataset" and not _is_readable_file(path)):
        raise ArgumentError(
            "input",
            f"{str(path)!r} is not a file" + ("" if chosen else ", a folder or a Hub dataset id"),
        )
    if chosen == "parquet" and path.is_fifo():
        raise ArgumentError(
            "input",
            f"{str(path)!r} is a named pipe: Parquet is read from its footer back, so it needs a "
            "file; pass the file itself",
        )
    return chosen


def _is_readable_file(path: Path) -> bool:
    """A regular file, or a named pipe (``mkfifo``, ``/dev/stdin`` fed by a pipe): every text
    format is read front to back once, so a stream serves as well as a file."""
    return path.is_file() or path.is_fifo()


def _input_path(path: object, argument: str = "input") -> Path:
    return Path(check_path(path, argument) or "")


def input_scope(path: str | Path, file_format: str = "auto") -> str:
    """``"corpus"`` for one response per line (no sets), else ``"response_set"``."""
    return "corpus" if input_format(path, file_format) == "lines" else "response_set"


def iter_corpus_lines(path: str | Path) -> Iterator[tuple[str, str]]:
    """``(where, response)`` for every line of a corpus file (one response per line), ``where``
    being ``"FILE:LINE"``. A blank line is an empty response, not a separator: nothing is
    dropped here, and the job refuses it unless empty responses are allowed."""
    if not _is_readable_file(_input_path(path)):
        raise ArgumentError("input", f"{str(path)!r} is not a file")
    return _every_line(path)


def _every_line(path: str | Path) -> Iterator[tuple[str, str]]:
    with _Utf8File(path, file_format="lines") as handle:
        for number, line in enumerate(handle, start=1):
            yield f"{path}:{number}", line.rstrip("\r\n")


def _check_selection(
    file_format: str,
    responses_column: str,
    context_column: str,
    split: str | None,
    dataset_config: str | None,
) -> None:
    """Options that the format would ignore are refused rather than dropped."""
    not_applied = []
    if responses_column != "responses" and file_format in ("csv", "lines"):
        not_applied.append("`responses_column`")
    if context_column != "context" and file_format == "lines":
        not_applied.append("`context_column`")
    if file_format != "dataset":
        not_applied += [
            name
            for name, value in (("`split`", split), ("`dataset_config`", dataset_config))
            if value is not None
        ]
    if not_applied:
        others = f" (nor {' and '.join(not_applied[1:])})" if len(not_applied) > 1 else ""
        raise ArgumentError(
            not_applied[0].strip("`"),
            f"does not apply to a {file_format} input{others}"
            + (
                " (its responses are the resp_0..resp_{k-1} columns)"
                if file_format == "csv"
                else ""
            ),
        )


def _with_key(records: Iterable[Located], key: str, argument: str) -> Iterator[Located]:
    for where, record in records:
        if isinstance(record, dict) and key not in record:
            raise ValueError(
                f"{where}: no key {key!r} (`{argument}`); its keys: {', '.join(map(str, record))}"
            )
        yield where, record


def _check_columns(
    source: str, names: list[str] | None, responses_column: str, context_column: str
) -> None:
    if names is None:  # a streamed folder may not know its columns before the first row
        return
    for column, argument, required in (
        (responses_column, "responses_column", True),
        (context_column, "context_column", context_column != "context"),
    ):
        if required and column not in names:
            raise ValueError(
                f"{source}: no column {column!r} (`{argument}`); its columns: {', '.join(names)}"
            )


def _iter_parquet(path: Path, responses_column: str, context_column: str) -> Iterator[ResponseSet]:
    # pyarrow: deferred to the one path that needs it
    import pyarrow
    import pyarrow.parquet

    try:
        parquet = pyarrow.parquet.ParquetFile(path)
    except (pyarrow.ArrowException, OSError) as error:
        raise ValueError(
            f"{path}: not a Parquet file ({error}){_format_hint(path, 'parquet')}"
        ) from None
    _check_columns(str(path), parquet.schema_arrow.names, responses_column, context_column)
    return _parquet_rows(path, parquet, responses_column, context_column)


def _parquet_rows(
    path: Path, parquet: pyarrow.parquet.ParquetFile, responses_column: str, context_column: str
) -> Iterator[ResponseSet]:
    # pyarrow: deferred to the one path that needs it
    import pyarrow

    row = 0
    batches = parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS)
    while True:
        try:  # a footer can be whole while the data before it is cut or damaged
            batch = next(batches, None)
        except (pyarrow.ArrowException, OSError) as error:
            raise ValueError(
                f"{path}: a damaged Parquet file: rows after row {row} cannot be read ({error})"
            ) from None
        if batch is None:
            return
        for record in batch.to_pylist():
            row += 1
            yield response_set_from_record(
                f"{path}:row {row}", record, responses_column, context_column
            )


def _is_saved_dataset(folder: Path) -> bool:
    return any(
        (folder / name).is_file()
        for name in ("dataset_info.json", "state.json", "dataset_dict.json")
    )


def _saved_split_names(folder: Path) -> list[str]:
    """The splits ``dataset_dict.json`` lists in a saved DatasetDict's folder (none elsewhere, or
    when it cannot be read: ``datasets`` then says what is wrong)."""
    try:
        splits = json.loads((folder / "dataset_dict.json").read_text(encoding="utf-8"))["splits"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    if not isinstance(splits, list):
        return []
    return [split for split in splits if isinstance(split, str) and (folder / split).is_dir()]


def _saved_parts(folder: Path) -> list[tuple[Path, dict[str, Any]]]:
    """``(folder, its state.json)`` for the dataset a ``save_to_disk`` folder holds, or for each
    split of a saved DatasetDict; a state that cannot be read is left to ``datasets``."""
    splits = _saved_split_names(folder)
    parts = [folder / split for split in splits] if splits else [folder]
    states = []
    for part in parts:
        try:
            state = json.loads((part / "state.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(state, dict) and isinstance(state.get("_data_files"), list):
            states.append((part, state))
    return states


def _damaged_arrow_file(folder: Path) -> Path | None:
    """The first data file of a ``save_to_disk`` folder that pyarrow cannot read through, if any;
    read memory-mapped a record batch at a time, so a large file costs no memory."""
    # pyarrow: deferred to the one path that needs it
    import pyarrow
    import pyarrow.ipc

    for part, state in _saved_parts(folder):
        for entry in state["_data_files"]:
            path = part / str(entry.get("filename", "")) if isinstance(entry, dict) else part
            try:
                with pyarrow.memory_map(str(path)) as mapped:
                    for _ in pyarrow.ipc.open_stream(mapped):
                        pass
            except (pyarrow.ArrowException, OSError):
                return path
    return None


def _load_saved_dataset(folder: Path) -> datasets.Dataset | datasets.DatasetDict:
    """``datasets.load_from_disk(folder)``; a folder saved with no rows (``datasets`` fails on it
    with an IndexError) and a damaged data file are ValueErrors naming the folder / the file."""
    # datasets: deferred to the one path that needs it
    import datasets
    import pyarrow

    for part, state in _saved_parts(folder):
        if not state["_data_files"]:
            raise ValueError(
                f"{part}: an empty input: this save_to_disk folder holds no rows (its state.json "
                "lists no data files)"
            )
    try:
        return datasets.load_from_disk(str(folder))
    except (pyarrow.ArrowException, OSError) as error:
        damaged = _damaged_arrow_file(folder)
        raise ValueError(
            f"{damaged or folder}: not a readable Arrow file of a save_to_disk folder "
            f"({type(error).__name__}: {error}); the file is truncated, damaged or another file: "
            "save the dataset again"
        ) from None


def load_input_dataset(
    source: str, split: str | None = None, dataset_config: str | None = None
) -> tuple[datasets.Dataset | datasets.IterableDataset, str | None]:
    """``(dataset, split)``: a ``save_to_disk`` folder, a folder of data files (streamed) or a Hub
    dataset id (offline: from the datasets cache, else its files in the Hugging Face cache, else a
    clear ValueError). A dataset of several splits needs ``split``."""
    # datasets: deferred to the one path that needs it
    import datasets
    import pyarrow
    from datasets.data_files import EmptyDatasetError

    folder = Path(source)
    if folder.is_dir() and _is_saved_dataset(folder):
        if dataset_config is not None:
            raise ArgumentError(
                "dataset_config", f"does not apply to {source!r}, a folder written by save_to_disk"
            )
        # one split of a saved DatasetDict is read alone: another split may be empty or damaged
        if split is not None and split in _saved_split_names(folder):
            return _load_saved_dataset(folder / split), split
        loaded = _load_saved_dataset(folder)
    elif folder.is_dir():
        try:
            loaded = datasets.load_dataset(
                str(folder), name=dataset_config, split=split, streaming=True
            )
        except pyarrow.ArrowException as error:
            raise _unreadable_data_files(folder, error) from None
        except EmptyDatasetError:
            raise ValueError(
                f"{folder}: an empty input: the folder holds no data files (and is no "
                "save_to_disk folder)"
            ) from None
    else:
        try:
            loaded = datasets.load_dataset(source, name=dataset_config, split=split)
        except (
            OSError,
            ValueError,
        ) as error:  # offline: ConnectionError; unknown id, config or split
            snapshot = hub_dataset_snapshot(source)
            if snapshot is None:
                raise ArgumentError(
                    "input",
                    f"{source!r} is not a file or folder here, and reading it as a Hub dataset "
                    f"failed: {error}. Offline (HF_HUB_OFFLINE=1 / HF_DATASETS_OFFLINE=1) a Hub "
                    "dataset is read from the caches only: load it once with network access "
                    f"(datasets.load_dataset({source!r}), or `hf download {source} --repo-type "
                    "dataset`)",
                ) from None
            # its files are in the Hugging Face cache (`hf download`), not in datasets' own: read
            # them there
            loaded = datasets.load_dataset(
                snapshot, name=dataset_config, split=split, streaming=True
            )
    if isinstance(loaded, (datasets.DatasetDict, datasets.IterableDatasetDict)):
        if split is None and len(loaded) == 1:
            split = next(iter(loaded))
        if split not in loaded:
            raise ArgumentError(
                "input",
                f"{source!r} has the splits {', '.join(loaded)}: pick one with `split`"
                + (f" ({split!r} is not one of them)" if split is not None else ""),
            )
        loaded = loaded[split]
    return loaded, split


def hub_dataset_snapshot(repo_id: str) -> str | None:
    """The folder of a Hub dataset's files in the Hugging Face cache, or None when it is not
    there."""
    # huggingface_hub: deferred to the one path that needs it
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return snapshot_download(repo_id, repo_type="dataset", local_files_only=True)
    except (LocalEntryNotFoundError, OSError, ValueError):
        return None


def _iter_dataset(
    source: str,
    responses_column: str,
    context_column: str,
    split: str | None,
    dataset_config: str | None,
) -> Iterator[ResponseSet]:
    dataset, split = load_input_dataset(source, split, dataset_config)
    label = f"{source}[{split}]" if split is not None else source
    _check_columns(label, dataset.column_names, responses_column, context_column)
    return (
        response_set_from_record(f"{label}:row {row}", record, responses_column, context_column)
        for row, record in enumerate(_rows_of(dataset, Path(source)), start=1)
    )


def _rows_of(
    dataset: datasets.Dataset | datasets.IterableDataset, folder: Path
) -> Iterator[dict[str, Any]]:
    """The rows of ``dataset``; a data file that cannot be read (a streamed folder reads each when
    its rows are reached) is a ValueError naming it."""
    # pyarrow: deferred to the one path that needs it
    import pyarrow

    rows = iter(dataset)
    while True:
        try:
            row = next(rows, None)
        except (pyarrow.ArrowException, OSError) as error:
            raise _unreadable_data_files(folder, error) from None
        if row is None:
            return
        yield row


def _unreadable_data_files(folder: Path, error: Exception) -> ValueError:
    """A ValueError naming the first data file (Arrow or Parquet) under ``folder`` that pyarrow
    cannot read through, else ``folder``, with ``error`` (which names no file)."""
    # pyarrow: deferred to the one path that needs it
    import pyarrow
    import pyarrow.ipc
    import pyarrow.parquet

    damaged: Path | str = folder
    files = sorted(folder.rglob("*")) if folder.is_dir() else []
    for path in files:
        suffix = path.suffix.lower()
        try:
            if suffix == ".arrow":
                with pyarrow.memory_map(str(path)) as mapped:
                    try:
                        for _ in pyarrow.ipc.open_stream(mapped):
                            pass
                    except pyarrow.ArrowInvalid:  # the IPC file format, which datasets reads too
                        mapped.seek(0)
                        pyarrow.ipc.open_file(mapped).read_all()
            elif suffix in (".parquet", ".pq"):
                for _ in pyarrow.parquet.ParquetFile(path).iter_batches():
                    pass
        except (pyarrow.ArrowException, OSError):
            damaged = path
            break
    return ValueError(
        f"{damaged}: a data file that cannot be read ({type(error).__name__}: {error}); it is "
        "truncated, damaged or not the format its suffix says"
    )


def iter_response_sets(
    path: str | Path,
    file_format: str = "auto",
    *,
    responses_column: str = "responses",
    context_column: str = "context",
    split: str | None = None,
    dataset_config: str | None = None,
) -> Iterator[ResponseSet]:
    """The sets of ``path``, one at a time (module docstring: the formats; ``"auto"`` goes by the
    suffix). The format, the file and the options are checked now, each set's record when it is
    read; an input without sets is a ValueError when the iteration ends."""
    file_format = input_format(path, file_format)
    _check_selection(file_format, responses_column, context_column, split, dataset_config)
    if file_format == "lines":
        raise ArgumentError(
            "input",
            f"{str(path)!r} holds one response per line (a corpus), not response sets: "
            "read it with iter_corpus_lines",
        )
    if file_format == "csv":
        sets = iter_tevet_csv(path, context_column)
    elif file_format == "parquet":
        sets = _iter_parquet(Path(path), responses_column, context_column)
    elif file_format == "dataset":
        sets = _iter_dataset(str(path), responses_column, context_column, split, dataset_config)
    else:
        records = iter_jsonl(path) if file_format == "jsonl" else iter_json_array(path)
        # a named context must be there, as a named CSV / Parquet column must
        if context_column != "context":
            records = _with_key(records, context_column, "context_column")
        sets = (
            response_set_from_record(where, record, responses_column, context_column)
            for where, record in records
        )
    return _not_empty(sets, path)


def open_input(
    path: str | Path, file_format: str = "auto", **selection: Any
) -> tuple[str, Iterator[Any]]:
    """The scope of ``path`` and its items, checked now and read as they are iterated:
    ``("response_set", ResponseSet ...)`` (:func:`iter_response_sets`, same options) or, for one
    response per line, ``("corpus", (where, response) ...)`` (:func:`iter_corpus_lines`)."""
    file_format = input_format(path, file_format)
    if file_format != "lines":
        return "response_set", iter_response_sets(path, file_format, **selection)
    _check_selection(
        file_format,
        selection.get("responses_column", "responses"),
        selection.get("context_column", "context"),
        selection.get("split"),
        selection.get("dataset_config"),
    )
    return "corpus", iter_corpus_lines(path)


def _not_empty(sets: Iterator[ResponseSet], path: str | Path) -> Iterator[ResponseSet]:
    found = False
    for response_set in sets:
        found = True
        yield response_set
    if not found:
        raise ValueError(f"{path}: no response sets found")


def read_response_sets(
    path: str | Path, file_format: str = "auto", **selection: Any
) -> list[ResponseSet]:
    """Every set of ``path`` (:func:`iter_response_sets`, same options) as a list."""
    return list(iter_response_sets(path, file_format, **selection))


def _plain(value: object) -> Any:
    """A DataFrame cell as JSON-ready Python: numpy values to Python, pandas' missing markers
    (None, NaN, NA, NaT) to None, anything else that JSON has no type for to its text."""
    if hasattr(value, "tolist"):  # numpy scalars and arrays: pandas hands cells over as numpy
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if (
        value is None
        or (isinstance(value, float) and math.isnan(value))
        or type(value).__name__ in ("NAType", "NaTType")
    ):
        return None
    return value if isinstance(value, (str, int, float, bool)) else str(value)


def response_sets_from_dataframe(
    frame: pandas.DataFrame, responses_column: str = "responses", context_column: str = "context"
) -> list[ResponseSet]:
    """A pandas DataFrame's rows as sets: ``responses_column`` holds each row's responses (a list or
    array of strings), ``context_column`` (optional) its context; the other columns are metadata.
    A set's ``where`` is ``"DataFrame row LABEL"`` (its index label)."""
    columns = [str(column) for column in frame.columns]
    if responses_column not in columns:
        raise ArgumentError(
            "sets",
            f": the DataFrame has no {responses_column!r} column (`responses_column`); "
            f"its columns: {', '.join(columns)}",
        )
    records = frame.to_dict(orient="records")
    return [
        response_set_from_record(
            f"DataFrame row {label}",
            {str(key): _plain(value) for key, value in record.items()},
            responses_column,
            context_column,
        )
        for label, record in zip(frame.index, records)
    ]


def as_response_sets(sets: Iterable[ResponseSet] | pandas.DataFrame) -> Iterable[ResponseSet]:
    """``sets`` as response sets: a pandas DataFrame through :func:`response_sets_from_dataframe`
    (default columns), anything else as it is."""
    pandas = sys.modules.get("pandas")  # a DataFrame means pandas is imported already
    if pandas is not None and isinstance(sets, pandas.DataFrame):
        return response_sets_from_dataframe(sets)
    return sets


def read_text_lines(path: str | Path) -> list[str]:
    """Non-blank lines of a UTF-8 text file (a reference corpus, one response per line)."""
    path = _input_path(path, "reference_corpus")
    if not path.is_file():
        raise ArgumentError("reference_corpus", f"{str(path)!r} is not a file")
    with _Utf8File(path) as handle:
        lines = [line.rstrip("\r\n") for line in handle.read().splitlines()]
    lines = [line for line in lines if line.strip()]
    if not lines:
        raise ArgumentError("reference_corpus", f"{str(path)!r} holds no text")
    return lines
