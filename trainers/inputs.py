"""What the diversity trainers accept as data, and what they refuse.

Both trainers train on the *response* only (Han et al. 2022, Eq. 3-4: ``-log p(r | c)``; Li et
al. 2020 likewise), so every example needs a context that is not a target:

* tokenized examples: ``input_ids`` + ``labels`` with ``-100`` on the context
  (:func:`~dialeval.trainers.encode_dialogue` builds them); for a causal LM, labels equal to
  ``input_ids`` (the usual causal-LM preparation, or ``DataCollatorForLanguageModeling``) would
  train on, and for DRESS cluster, whole dialogues: refused with a ValueError that says how to
  mask the context;
* raw text: ``context`` (a string or a list of turns) and ``response`` columns (and
  ``negative_response`` for unlikelihood, with an optional ``negative_context`` when the negative
  answers another context), tokenized by the trainer itself as TRL's trainers accept raw text;
* TRL's dataset formats (``prompt`` / ``completion``, conversational ``messages``, preference
  ``prompt`` / ``chosen`` / ``rejected`` for unlikelihood): :mod:`dialeval.trainers.chat_formats`.

Every check names the user's argument; nothing is silently changed or dropped. Malformed rows (ids
outside the vocabulary, lengths that disagree, lone surrogates) are refused naming the row and
column (:mod:`dialeval.trainers.example_checks`, :mod:`dialeval.trainers.text_checks`). Kept for
training: the model's ``forward`` arguments and the method's columns (``dress_weight``,
``negative_*``); read and then dropped: the text columns of
:data:`dialeval.trainers.dropped_columns.TEXT_COLUMNS`; any other column is dropped as ``Trainer``'s
``remove_unused_columns`` drops it, but named in a ``UserWarning``
(:mod:`dialeval.trainers.dropped_columns`), or refused by the collator when
``remove_unused_columns=False``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TypeAlias

from dialeval.trainers.chat_formats import (
    CHAT_OPTION_COLUMNS,
    dataset_format,
    tokenize_chat_dataset,
)
from dialeval.trainers.data import NEGATIVE_PREFIX, encode_dialogue, encode_unlikelihood_example
from dialeval.trainers.dropped_columns import TEXT_COLUMNS
from dialeval.trainers.example_checks import check_example_columns
from dialeval.trainers.losses import IGNORE_INDEX
from dialeval.trainers.text_checks import check_nonblank_targets
from dialeval.type_aliases import Tokenizer
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    import datasets
    import torch

#: A dataset a trainer takes (``Trainer``'s ``train_dataset`` / ``eval_dataset`` types).
TrainerDataset: TypeAlias = (
    "torch.utils.data.Dataset | torch.utils.data.IterableDataset | datasets.Dataset"
    " | datasets.IterableDataset"
)

MASK_ADVICE = (
    "the diversity trainers train on the response only: set the context's labels to -100 "
    "(dialeval.trainers.encode_dialogue does), or give the trainer raw `context` and `response` "
    "text columns and it tokenizes them itself"
)


#: Raw-text rows' targets that UnlikelihoodTrainer's training set needs non-empty.
UNLIKELIHOOD_TARGETS = ("response", "negative_response")


def consumed_columns(columns: Sequence[str]) -> list[str]:
    """The columns of ``columns`` that tokenizing reads and removes; the others stay, for
    ``remove_unused_columns`` to drop with a warning (trainers.dropped_columns) as it drops a
    tokenized dataset's."""
    return [column for column in columns if column in TEXT_COLUMNS + CHAT_OPTION_COLUMNS]


def check_raw_targets(row: Mapping, index: int, argument: str) -> None:
    """An unlikelihood training row's ``response`` and ``negative_response`` must have text."""
    try:
        check_nonblank_targets({column: row.get(column) for column in UNLIKELIHOOD_TARGETS})
    except ValueError as error:
        raise ArgumentError(argument, f"row {index}: {error}") from None


def encode_raw_row(
    row: dict, tokenizer: Tokenizer, is_encoder_decoder: bool, max_length: int, with_negative: bool
) -> dict:
    """One raw-text row -> a tokenized example (``datasets.Dataset.map`` function)."""
    if with_negative:
        # Negative Training's rows carry the negative's own context (trainers.frequent_negatives)
        return encode_unlikelihood_example(
            tokenizer,
            row["context"],
            row["response"],
            row["negative_response"],
            is_encoder_decoder,
            max_length,
            negative_context=row.get("negative_context"),
        )
    return encode_dialogue(
        tokenizer, row["context"], row["response"], is_encoder_decoder, max_length
    )


def check_label_rows(
    input_ids: Sequence,
    labels: Sequence,
    argument: str,
    column: str,
    causal: bool,
    first_row: int = 0,
) -> None:
    """Refuse rows whose labels cover the context (causal) or no token at all (rows numbered from
    ``first_row``)."""
    for index, (ids, row) in enumerate(zip(input_ids, labels), start=first_row):
        row = list(row)
        if causal and list(ids) == row:
            raise ArgumentError(
                argument,
                f"row {index}: `{column}` equals the input ids (the usual causal-LM preparation), "
                f"so the loss and DRESS's clusters would cover whole dialogues; {MASK_ADVICE}",
            )
        if all(label == IGNORE_INDEX for label in row):
            raise ArgumentError(
                argument,
                f"row {index}: every `{column}` is -100, the example has no response to train on",
            )
        if causal and row[0] != IGNORE_INDEX:
            raise ArgumentError(
                argument,
                f"row {index}: the first token of `{column}` is a target, so the example has "
                f"no context; {MASK_ADVICE}",
            )


def check_label_batch(batch: dict, causal: bool) -> None:
    """The per-batch twin of :func:`check_label_rows` (catches collators that
    rewrite ``labels``)."""
    if not causal:
        return
    for prefix in ("", NEGATIVE_PREFIX):
        labels = batch.get(prefix + "labels")
        if labels is not None and bool((labels[:, 0] != IGNORE_INDEX).any()):
            raise ValueError(
                f"a training batch's `{prefix}labels` start with a target token: the data "
                "collator (or the data) put labels on the context, e.g. labels = input_ids as "
                f"DataCollatorForLanguageModeling does; {MASK_ADVICE}"
            )


def prepare_dataset(
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
    """Tokenize a raw-text ``datasets.Dataset`` and check a tokenized one; other datasets pass as
    they are (their batches are checked during training)."""
    # datasets: deferred to the one path that needs it
    import datasets

    if not isinstance(dataset, datasets.Dataset):
        return dataset
    columns = dataset.column_names
    # TRL's formats (prompt / completion, messages, preference)
    if dataset_format(columns) is not None:
        dataset = tokenize_chat_dataset(
            dataset,
            argument,
            tokenizer,
            is_encoder_decoder=is_encoder_decoder,
            max_length=max_length,
            with_negative="negative_response" in raw_columns,
        )
        columns = dataset.column_names
    if "input_ids" not in columns:
        missing = [column for column in raw_columns if column not in columns]
        if missing:
            raise ArgumentError(
                argument,
                "needs tokenized `input_ids` and `labels` (dialeval.trainers.encode_dialogue "
                f"builds them) or the raw text columns {list(raw_columns)}; it has {columns}",
            )
        if tokenizer is None or not callable(tokenizer) or not hasattr(tokenizer, "decode"):
            raise ArgumentError(
                "processing_class",
                f"must be a tokenizer to tokenize `{argument}`'s raw text columns",
            )
        if "negative_response" in raw_columns:  # trained against a negative: both need text
            targets = dataset.select_columns(list(UNLIKELIHOOD_TARGETS))
            for index, row in enumerate(targets):
                check_raw_targets(row, index, argument)
        dataset = dataset.map(
            encode_raw_row,
            remove_columns=consumed_columns(columns),
            desc=f"Tokenizing {argument}",
            fn_kwargs={
                "tokenizer": tokenizer,
                "is_encoder_decoder": is_encoder_decoder,
                "max_length": max_length,
                "with_negative": "negative_response" in columns,
            },
        )
        columns = dataset.column_names
    # Ids, lengths and types, once per dataset (trainers.example_checks), before the rows are read
    # below.
    check_example_columns(
        dataset, argument, causal=not is_encoder_decoder, vocabulary_size=vocabulary_size
    )
    for column in label_columns:
        ids_column = column.replace("labels", "input_ids")
        if column not in columns:
            raise ArgumentError(argument, f"has `{ids_column}` but no `{column}`: {MASK_ADVICE}")
        check_label_rows(
            dataset[ids_column], dataset[column], argument, column, causal=not is_encoder_decoder
        )
    return dataset
