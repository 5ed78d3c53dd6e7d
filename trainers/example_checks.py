"""What a tokenized example must hold before it reaches the model, and text a tokenizer can read.

Unchecked, a malformed example surfaces deep inside training: an id outside the vocabulary as a raw
``IndexError`` from the embedding or ``cross_entropy``, a negative label as an ``OverflowError``
from the tokenizer's ``decode``, causal ``labels`` shorter or longer than ``input_ids`` as a shape
error of the loss (or, padded within a batch, not at all), a lone surrogate as pyarrow's
``UnicodeEncodeError`` or the tokenizer's ``TypeError``. Here each is a ValueError naming the
dataset argument, the row and the column:

* every ``input_ids`` / ``labels`` / ``attention_mask`` column (and their ``negative_`` twins) holds
  lists of integers; ids are in ``0 .. vocabulary_size - 1`` (the model's embedding rows, and its
  output rows for labels); labels are such ids or ``-100``;
* ``attention_mask`` has the length of ``input_ids``; for a causal LM ``labels`` too (the labels are
  the input ids shifted inside the loss, position by position); an encoder-decoder's labels are the
  decoder's sequence and may have any length (its ``decoder_attention_mask`` has theirs);
* text columns hold no lone surrogate (:mod:`dialeval.trainers.text_checks`).

A ``datasets.Dataset`` is checked once, when the trainer prepares it, column by column with pyarrow
in slices of :data:`ROWS_PER_SLICE` rows; a stream or a torch dataset row by row as it is read.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dialeval.trainers.data import NEGATIVE_PREFIX
from dialeval.trainers.losses import IGNORE_INDEX
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    import datasets
    import pyarrow as pa

#: Rows of a ``datasets.Dataset`` checked at once (memory: one slice of each checked column).
ROWS_PER_SLICE = 8192
_ID_COLUMNS = ("input_ids", "labels", "attention_mask", "decoder_attention_mask")


def model_vocabulary_size(model: Any) -> int | None:  # any torch module: read if it has them
    """How many token ids the model can read and predict: its embedding rows (and output rows), None
    if unknown."""
    sizes = []
    for getter, attribute in (
        ("get_input_embeddings", "num_embeddings"),
        ("get_output_embeddings", "out_features"),
    ):
        module = getattr(model, getter, lambda: None)()
        size = getattr(module, attribute, None) if module is not None else None
        if isinstance(size, int):
            sizes.append(size)
    if not sizes and isinstance(getattr(getattr(model, "config", None), "vocab_size", None), int):
        sizes.append(model.config.vocab_size)
    return min(sizes) if sizes else None


def _checked_columns(columns: Container[str]) -> list[tuple[str, str]]:
    """(prefix, base) of each id / mask column present."""
    return [
        (prefix, base)
        for prefix in ("", NEGATIVE_PREFIX)
        for base in _ID_COLUMNS
        if prefix + base in columns
    ]


def _id_problem(values: Sequence, base: str, vocabulary_size: int | None) -> str | None:
    """What is wrong with one row's ids (None: nothing)."""
    for position, value in enumerate(values):
        if base.endswith("attention_mask") and isinstance(value, bool):
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            return f"holds {value!r} at position {position}, not an integer token id"
        if base.endswith("attention_mask"):
            if value not in (0, 1):
                return f"holds {value} at position {position}; a mask holds 0 and 1"
        elif base == "labels" and value == IGNORE_INDEX:
            continue
        elif value < 0 or (vocabulary_size is not None and value >= vocabulary_size):
            allowed = " or -100 (no target)" if base == "labels" else ""
            bound = (
                f"the model's vocabulary of {vocabulary_size} token ids (0 .. "
                f"{vocabulary_size - 1})"
                if vocabulary_size is not None
                else "token ids (>= 0)"
            )
            return f"holds {value} at position {position}, outside {bound}{allowed}"
    return None


def _length_problem(lengths: dict[str, int], prefix: str, causal: bool) -> str | None:
    ids = lengths.get(prefix + "input_ids")
    pairs = [("attention_mask", "input_ids"), ("decoder_attention_mask", "labels")]
    if causal:
        pairs.append(("labels", "input_ids"))
    for column, reference in pairs:
        length, expected = lengths.get(prefix + column), lengths.get(prefix + reference)
        if length is not None and expected is not None and length != expected:
            why = (
                " (a causal LM's labels are its input ids shifted inside the loss, position by "
                "position)"
                if column == "labels"
                else ""
            )
            return (
                f"`{prefix + column}` has {length} tokens but `{prefix + reference}` has "
                f"{expected}{why}"
            )
    if ids == 0:
        return f"`{prefix}input_ids` is empty"
    return None


def check_example_row(
    row: Mapping, index: int, argument: str, *, causal: bool, vocabulary_size: int | None
) -> None:
    """Refuse one tokenized row (a dict of columns) that the model cannot read; see the module
    docstring."""
    lengths = {}
    for prefix, base in _checked_columns(row):
        column = prefix + base
        values = row[column]
        values = values.tolist() if hasattr(values, "tolist") else values
        if not isinstance(values, (list, tuple)):
            raise ArgumentError(
                argument,
                f"row {index}: `{column}` must be a list of token ids, got {type(values).__name__}",
            )
        problem = _id_problem(values, base, vocabulary_size)
        if problem is not None:
            raise ArgumentError(argument, f"row {index}: `{column}` {problem}")
        lengths[column] = len(values)
    for prefix in ("", NEGATIVE_PREFIX):
        problem = _length_problem(lengths, prefix, causal)
        if problem is not None:
            raise ArgumentError(argument, f"row {index}: {problem}")


def _is_id_list(arrow_type: pa.DataType, base: str) -> bool:
    """A list of integers (a mask: or of booleans)."""
    # pyarrow: deferred to the one path that needs it
    import pyarrow as pa

    if not (
        pa.types.is_list(arrow_type)
        or pa.types.is_large_list(arrow_type)
        or pa.types.is_fixed_size_list(arrow_type)
    ):
        return False
    value_type = arrow_type.value_type
    return pa.types.is_integer(value_type) or (
        base.endswith("attention_mask") and pa.types.is_boolean(value_type)
    )


def _first_bad_row(column: pa.ListArray, base: str, vocabulary_size: int | None) -> int | None:
    """The first row (within this slice) of an integer-list Arrow column whose ids
    are out of range."""
    # pyarrow: deferred to the one path that needs it
    import pyarrow as pa
    import pyarrow.compute as pc

    flat = pc.list_flatten(column)
    if len(flat) == 0:
        return None
    if base.endswith("attention_mask"):
        if pa.types.is_boolean(flat.type):
            return None
        bad = pc.and_(pc.not_equal(flat, 0), pc.not_equal(flat, 1))
    else:
        bad = pc.less(flat, 0)
        if vocabulary_size is not None:
            bad = pc.or_(bad, pc.greater_equal(flat, vocabulary_size))
        if base == "labels":
            bad = pc.and_(bad, pc.not_equal(flat, IGNORE_INDEX))
    bad = pc.fill_null(bad, True)
    if not pc.any(bad).as_py():
        return None
    return pc.list_parent_indices(column)[pc.index(bad, True).as_py()].as_py()


def check_example_columns(
    dataset: datasets.Dataset, argument: str, *, causal: bool, vocabulary_size: int | None
) -> None:
    """:func:`check_example_row` over a whole ``datasets.Dataset``, a slice of columns at a time
    (pyarrow)."""
    # pyarrow: deferred to the one path that needs it
    import pyarrow.compute as pc

    checked = _checked_columns(dataset.column_names)
    if not checked:
        return
    schema = dataset.data.schema
    for prefix, base in checked:
        arrow_type = schema.field(prefix + base).type
        if not _is_id_list(arrow_type, base):
            raise ArgumentError(
                argument,
                f"column `{prefix + base}` must hold lists of integer token ids, "
                f"its type is {arrow_type}",
            )
    names = [prefix + base for prefix, base in checked]
    arrow = dataset.select_columns(names).with_format("arrow")
    for start in range(0, len(dataset), ROWS_PER_SLICE):
        table = arrow[start : start + ROWS_PER_SLICE]
        bad_rows = []
        lengths = {}
        for (prefix, base), name in zip(checked, names):
            column = table.column(name).combine_chunks()
            if column.null_count:
                bad_rows.append(pc.index(pc.is_null(column), True).as_py())
                continue
            row = _first_bad_row(column, base, vocabulary_size)
            if row is not None:
                bad_rows.append(row)
            lengths[name] = pc.list_value_length(column)
        for prefix in ("", NEGATIVE_PREFIX):
            ids = lengths.get(prefix + "input_ids")
            if ids is not None and pc.any(pc.equal(ids, 0)).as_py():
                bad_rows.append(pc.index(pc.equal(ids, 0), True).as_py())
            for column, reference in (
                ("attention_mask", "input_ids"),
                ("decoder_attention_mask", "labels"),
                *((("labels", "input_ids"),) if causal else ()),
            ):
                first, second = lengths.get(prefix + column), lengths.get(prefix + reference)
                if first is not None and second is not None:
                    differ = pc.not_equal(first, second)
                    if pc.any(differ).as_py():
                        bad_rows.append(pc.index(differ, True).as_py())
        if bad_rows:
            row = min(bad_rows)
            check_example_row(
                table.slice(row, 1).to_pylist()[0],
                start + row,
                argument,
                causal=causal,
                vocabulary_size=vocabulary_size,
            )
            raise AssertionError(
                f"row {start + row} failed the column check but not the row check"
            )  # pragma: no cover
