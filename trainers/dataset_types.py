"""Every kind of dataset ``Trainer`` accepts, prepared as the diversity trainers prepare a
``datasets.Dataset``.

``Trainer`` takes a ``datasets.Dataset``, a ``datasets.IterableDataset`` or a torch ``Dataset`` /
``IterableDataset`` wherever it takes a dataset (train, eval, ``evaluate(eval_dataset=)``,
``predict``). :func:`prepare_any_dataset` gives each the preparation of
:func:`dialeval.trainers.inputs.prepare_dataset`: raw text rows are tokenized
(:func:`~dialeval.trainers.inputs.encode_raw_row`) and tokenized rows checked
(:func:`~dialeval.trainers.inputs.check_label_rows`), the ``datasets.Dataset`` at once, the others
row by row as they are read (lazily: a stream is never read ahead, a torch dataset never copied).

DRESS is the exception (:func:`map_style_training_set`): Eq. 5 weights each training example by its
cluster's share of the *whole* training set, and each cycle samples training contexts, so its
``train_dataset`` must be map-style; a torch map-style dataset is read into a ``datasets.Dataset``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import pyarrow as pa
import torch

from dialeval.trainers.chat_formats import (
    check_chat_format,
    check_chat_template,
    dataset_format,
    encode_chat_row,
)
from dialeval.trainers.example_checks import check_example_row
from dialeval.trainers.inputs import (
    MASK_ADVICE,
    TrainerDataset,
    check_label_rows,
    check_raw_targets,
    consumed_columns,
    encode_raw_row,
    prepare_dataset,
)
from dialeval.trainers.text_checks import check_row_text
from dialeval.type_aliases import Tokenizer
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    import datasets


def _as_list(values: Any) -> list:  # a list, tensor or array of ids
    return values.tolist() if hasattr(values, "tolist") else list(values)


class RowPreparer:
    """One row of a dataset read lazily -> the row the trainer trains on (tokenized and checked)."""

    def __init__(
        self,
        argument: str,
        tokenizer: Tokenizer | None,
        *,
        is_encoder_decoder: bool,
        max_length: int,
        raw_columns: tuple[str, ...],
        label_columns: tuple[str, ...],
        vocabulary_size: int | None = None,
    ) -> None:
        self.argument, self.tokenizer = argument, tokenizer
        self.is_encoder_decoder, self.max_length = is_encoder_decoder, max_length
        self.raw_columns, self.label_columns = raw_columns, label_columns
        self.vocabulary_size = vocabulary_size

    def __call__(self, row: object, index: int) -> dict:
        if not isinstance(row, Mapping):
            raise ArgumentError(
                f"{self.argument}",
                f"row {index} is a {type(row).__name__}, not a dict of columns (tokenized "
                f"`input_ids` / `labels`, or the raw text columns {list(self.raw_columns)})",
            )
        if "input_ids" not in row:
            check_row_text(row, index, self.argument)
            # the other columns stay, for the collator to name them as it drops them
            kept = {key: row[key] for key in row if key not in consumed_columns(list(row))}
            row = {**kept, **self.encode(row, index)}
        check_example_row(
            row,
            index,
            self.argument,
            causal=not self.is_encoder_decoder,
            vocabulary_size=self.vocabulary_size,
        )
        for column in self.label_columns:
            ids_column = column.replace("labels", "input_ids")
            if column not in row:
                raise ArgumentError(
                    f"{self.argument}",
                    f"row {index} has `{ids_column}` but no `{column}`: {MASK_ADVICE}",
                )
            check_label_rows(
                [_as_list(row[ids_column])],
                [_as_list(row[column])],
                self.argument,
                column,
                causal=not self.is_encoder_decoder,
                first_row=index,
            )
        return dict(row)

    def encode(self, row: Mapping, index: int) -> dict:
        data_format = dataset_format(list(row))
        if data_format is not None:  # TRL's prompt / completion, messages or preference rows
            with_negative = "negative_response" in self.raw_columns
            check_chat_format(
                data_format, self.argument, self.tokenizer, with_negative=with_negative
            )
            check_chat_template(row, self.argument, self.tokenizer)
            assert self.tokenizer is not None  # check_chat_format refused a missing tokenizer
            return encode_chat_row(
                dict(row),
                index,
                self.tokenizer,
                is_encoder_decoder=self.is_encoder_decoder,
                max_length=self.max_length,
                argument=self.argument,
                with_negative=with_negative,
            )
        missing = [column for column in self.raw_columns if column not in row]
        if missing:
            raise ArgumentError(
                f"{self.argument}",
                "needs tokenized `input_ids` and `labels` (dialeval.trainers."
                f"encode_dialogue builds them) or the raw text columns {list(self.raw_columns)}; "
                f"row {index} has {list(row)}",
            )
        tokenizer = self.tokenizer
        if tokenizer is None or not callable(tokenizer) or not hasattr(tokenizer, "decode"):
            raise ArgumentError(
                "processing_class",
                f"must be a tokenizer to tokenize `{self.argument}`'s raw text columns",
            )
        if "negative_response" in self.raw_columns:  # trained against a negative
            check_raw_targets(row, index, self.argument)
        return encode_raw_row(
            dict(row),
            tokenizer,
            self.is_encoder_decoder,
            self.max_length,
            with_negative="negative_response" in row,
        )


class PreparedRows(torch.utils.data.Dataset):
    """A torch map-style dataset whose rows are prepared when read."""

    # rows: a map-style dataset of dict rows (anything with __getitem__ and __len__)
    def __init__(self, rows: Any, prepare: RowPreparer) -> None:
        self.rows, self.prepare = rows, prepare

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> dict:
        return self.prepare(self.rows[index], index)


class PreparedStream(torch.utils.data.IterableDataset):
    """A torch iterable dataset whose rows are prepared as they stream."""

    # rows: an iterable dataset of dict rows (a torch IterableDataset, perhaps with set_epoch)
    def __init__(self, rows: Any, prepare: RowPreparer) -> None:
        self.rows, self.prepare = rows, prepare

    def __iter__(self) -> Iterator[dict]:
        for index, row in enumerate(self.rows):
            yield self.prepare(row, index)

    def set_epoch(self, epoch: int) -> None:  # Trainer reshuffles a stream that can be reshuffled
        if hasattr(self.rows, "set_epoch"):
            self.rows.set_epoch(epoch)


def _prepare_streamed(
    dataset: datasets.IterableDataset, prepare: RowPreparer
) -> datasets.IterableDataset:
    """A ``datasets.IterableDataset``: ``map`` it (lazily), dropping the raw text columns it
    tokenizes."""
    columns = dataset.column_names
    if columns is None:  # features unknown until read: the first row names the columns
        first = next(iter(dataset), None)
        if first is None:
            return dataset
        columns = list(first)
    removed = [] if "input_ids" in columns else consumed_columns(columns)
    return dataset.map(prepare, with_indices=True, remove_columns=removed or None)


def prepare_any_dataset(
    dataset: TrainerDataset,
    argument: str,
    tokenizer: Tokenizer | None,
    *,
    is_encoder_decoder: bool,
    max_length: int,
    raw_columns: tuple[str, ...],
    label_columns: tuple[str, ...],
    vocabulary_size: int | None = None,
) -> TrainerDataset:
    """The dataset the trainer reads, whatever its type; see the module docstring.
    ``vocabulary_size``: the model's
    (:func:`~dialeval.trainers.example_checks.model_vocabulary_size`), which every id must fit."""
    # datasets: deferred to the one path that needs it
    import datasets

    settings: dict[str, Any] = dict(
        is_encoder_decoder=is_encoder_decoder,
        max_length=max_length,
        raw_columns=raw_columns,
        label_columns=label_columns,
        vocabulary_size=vocabulary_size,
    )
    if isinstance(dataset, datasets.Dataset):
        return prepare_dataset(dataset, argument, tokenizer, **settings)
    prepare = RowPreparer(argument, tokenizer, **settings)
    if isinstance(dataset, datasets.IterableDataset):
        return _prepare_streamed(dataset, prepare)
    if isinstance(dataset, torch.utils.data.IterableDataset):
        return PreparedStream(dataset, prepare)
    if hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__"):
        return PreparedRows(dataset, prepare)
    raise ArgumentError(
        argument,
        "must be a datasets.Dataset, a datasets.IterableDataset or a torch Dataset / "
        f"IterableDataset of dict rows, got {type(dataset).__name__}",
    )


def _python_row(row: object) -> dict:
    if not isinstance(row, Mapping):
        raise ArgumentError(
            "train_dataset", f"rows must be dicts of columns, got {type(row).__name__}"
        )
    return {
        key: value.tolist() if isinstance(value, torch.Tensor) else value
        for key, value in row.items()
    }


def map_style_training_set(dataset: TrainerDataset | None) -> datasets.Dataset:
    """DRESS's ``train_dataset`` as a ``datasets.Dataset``, or a ValueError saying what to pass."""
    # datasets: deferred to the one path that needs it
    import datasets

    if isinstance(dataset, datasets.Dataset):
        return dataset
    if isinstance(dataset, (datasets.IterableDataset, torch.utils.data.IterableDataset)):
        raise ArgumentError(
            "train_dataset",
            f"is a {type(dataset).__name__}, but DRESS weights every training example by its "
            "cluster's share of the whole training set (Eq. 5) and samples training contexts for "
            "each negative cycle, so it needs a map-style dataset: pass a datasets.Dataset (e.g. "
            "`datasets.Dataset.from_generator(...)`, or "
            "`datasets.Dataset.from_list(list(stream.take(n)))`) or a torch map-style Dataset; "
            "evaluation and prediction take iterable datasets",
        )
    if isinstance(dataset, torch.utils.data.Dataset) or (
        hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")
    ):
        # a map-style dataset: indexable, with a length (which torch's Dataset does not declare)
        map_style = cast(Sequence[Any], dataset)
        rows = [_python_row(map_style[index]) for index in range(len(map_style))]
        if not rows:
            raise ArgumentError("train_dataset", "is empty")
        # Arrow cannot encode a lone surrogate: name its row first
        for index, row in enumerate(rows):
            check_row_text(row, index, "train_dataset")
        try:
            return datasets.Dataset.from_list(rows)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as error:
            raise ArgumentError(
                "train_dataset",
                "rows do not make one table (each column one type in every row; "
                f"tokenized ids as lists of ints): {error}",
            ) from None
    raise ArgumentError(
        "train_dataset",
        "must be a datasets.Dataset or a torch map-style Dataset of dict rows "
        f"(tokenized examples or raw `context` / `response` text), got {type(dataset).__name__}",
    )
