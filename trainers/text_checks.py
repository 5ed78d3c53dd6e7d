"""Text a tokenizer and Arrow can encode: a lone surrogate (``"\\ud800"``) is refused, naming where
it is.

A lone surrogate is not Unicode text: it comes from decoding bytes with ``errors="surrogateescape"``
or from a broken JSON escape. Arrow raises ``UnicodeEncodeError`` on it and a fast tokenizer a
``TypeError`` naming nothing, so the trainers look for it first (raw text rows, chat messages,
:func:`~dialeval.trainers.encode_dialogue`'s turns and response). The search of one string is
:func:`dialeval.validation.lone_surrogate`, shared with the metrics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dialeval.validation import SURROGATE_ADVICE, ArgumentError
from dialeval.validation import lone_surrogate as surrogate_in_text


def lone_surrogate(value: object) -> tuple[str, str] | None:
    """``(where inside value, what)`` for the first lone surrogate of a string, or of the strings of
    a list / dict (chat messages) nested in ``value``
    (``("[1]['content']", "a lone surrogate (U+D800) at character 3")``); None when there is none.
    """
    if isinstance(value, str):
        found = surrogate_in_text(value)
        return ("", found) if found else None
    items: Iterable[tuple[object, object]]
    if isinstance(value, Mapping):
        items = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        nested = lone_surrogate(item)
        if nested is not None:
            return (f"[{key!r}]{nested[0]}", nested[1])
    return None


def check_row_text(row: Mapping, index: int, argument: str) -> None:
    """Refuse a row whose text holds a lone surrogate, naming the row, the column
    and the character."""
    for column, value in row.items():
        found = lone_surrogate(value)
        if found is not None:
            where, what = found
            raise ArgumentError(
                argument,
                f"row {index}: `{column}`{where} holds {what}: {SURROGATE_ADVICE}; or drop the row",
            )


def check_nonblank_targets(texts: Mapping) -> None:
    """Refuse an empty or whitespace-only text among ``texts`` (column -> text), naming its column:
    a target without tokens trains the end-of-sequence token alone, and a negative without tokens
    pushes that token down, neither of which is what the row meant."""
    for column, text in texts.items():
        if isinstance(text, str) and not text.strip():
            raise ArgumentError(
                column,
                f"is empty ({text!r}): it has no token to train on or against (only the "
                "end-of-sequence token would be a target); filter the row out",
            )


def check_text(text: str, argument: str) -> None:
    """Refuse a string holding a lone surrogate, naming ``argument`` and the character."""
    found = surrogate_in_text(text)
    if found is not None:
        raise ArgumentError(argument, f"holds {found}: {SURROGATE_ADVICE}")
