"""The columns the diversity trainers drop, said aloud: Trainer's ``remove_unused_columns``, never
silent.

``Trainer`` (``remove_unused_columns=True``, the default) keeps the columns its model's ``forward``
takes and drops the rest, logging them at *info* level, which is hidden by default. The diversity
trainers keep the same columns plus their own (``dress_weight``; the ``negative_*`` columns), and
drop the rest at the same place, but a dropped column that is not one of dialeval's documented text
columns (:data:`TEXT_COLUMNS`, which the trainers read: tokenize, cluster) is named in a
``UserWarning``, once per dataset argument and set of columns: e.g. a ``score`` column holding NaN
is dropped, not used, and the warning says so. With ``remove_unused_columns=False`` nothing is
dropped: the default :class:`~dialeval.trainers.DialogueCollator` refuses a column it cannot
collate, naming it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

#: Text columns the trainers read (raw text, TRL's formats) and then drop without a word: documented
#: inputs.
TEXT_COLUMNS = (
    "context",
    "response",
    "negative_response",
    "negative_context",
    "prompt",
    "completion",
    "messages",
    "chosen",
    "rejected",
)
#: Trainer's dataloader descriptions -> the user's argument.
ARGUMENTS = {"training": "train_dataset", "evaluation": "eval_dataset", "test": "test_dataset"}


def warn_dropped_columns(
    columns: Iterable[str],
    kept: Iterable[str],
    description: str | None,
    said: set[tuple[str, tuple[str, ...]]],
    read_columns: Iterable[str | None] = (),
) -> None:
    """Warn (once per ``said`` key) about the columns of ``columns`` outside ``kept`` and the text
    columns."""
    dropped = sorted(
        set(columns) - set(kept) - set(TEXT_COLUMNS) - {column for column in read_columns if column}
    )
    argument = ARGUMENTS.get((description or "").lower(), description or "dataset")
    key = (argument, tuple(dropped))
    if not dropped or key in said:
        return
    said.add(key)
    warnings.warn(
        f"`{argument}` has columns {dropped} that neither the model's forward nor the trainer "
        "reads: they are dropped (remove_unused_columns=True drops the columns the model does "
        "not take, as Trainer does). Remove them from the dataset to silence this, or set "
        "remove_unused_columns=False to have the collator refuse them",
        UserWarning,
        stacklevel=3,
    )


class ColumnsSaidCollator:
    """Wraps Trainer's column-removing collator (torch and iterable datasets): the first rows'
    dropped columns are said."""

    def __init__(
        self,
        collator: Callable[[list], dict[str, Any]],
        kept: Iterable[str],
        description: str | None,
        said: set[tuple[str, tuple[str, ...]]],
        read_columns: Iterable[str | None] = (),
    ) -> None:
        self.collator, self.kept, self.description = collator, list(kept), description
        self.said, self.read_columns = said, tuple(read_columns)

    def __call__(self, features: list) -> dict[str, Any]:
        if features and isinstance(features[0], dict):
            warn_dropped_columns(
                features[0], self.kept, self.description, self.said, self.read_columns
            )
        return self.collator(features)
