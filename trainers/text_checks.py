"""Text a tokenizer and Arrow can encode: a lone surrogate (``"\\ud800"``) is refused, naming where it is.

A lone surrogate is not Unicode text: it comes from decoding bytes with ``errors="surrogateescape"``
or from a broken JSON escape. Arrow raises ``UnicodeEncodeError`` on it and a fast tokenizer a
``TypeError`` naming nothing, so the trainers look for it first (raw text rows, chat messages,
:func:`~dialeval.trainers.encode_dialogue`'s turns and response).
"""
from __future__ import annotations

import re
from collections.abc import Mapping

_SURROGATE = re.compile("[\ud800-\udfff]")
_WHY = ("which is not Unicode text (Arrow and the tokenizer cannot encode it; it comes from decoding bytes with "
        "errors='surrogateescape' or a broken JSON escape)")


def lone_surrogate(value) -> tuple[str, int, str] | None:
    """``(where inside value, character index, the character)`` of the first lone surrogate in a string,
    or in the strings of a list / dict (chat messages) nested in ``value``; None when there is none."""
    if isinstance(value, str):
        found = _SURROGATE.search(value)
        return ("", found.start(), found.group()) if found else None
    if isinstance(value, Mapping):
        items = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = lone_surrogate(item)
        if found is not None:
            return (f"[{key!r}]{found[0]}", found[1], found[2])
    return None


def check_row_text(row: Mapping, index: int, argument: str) -> None:
    """Refuse a row whose text holds a lone surrogate, naming the row, the column and the character."""
    for column, value in row.items():
        found = lone_surrogate(value)
        if found is not None:
            where, position, character = found
            raise ValueError(f"`{argument}` row {index}: `{column}`{where} holds the lone surrogate "
                             f"U+{ord(character):04X} at character {position}, {_WHY}: clean or drop the row")


def check_text(text: str, argument: str) -> None:
    """Refuse a string holding a lone surrogate, naming ``argument`` and the character."""
    found = lone_surrogate(text)
    if found is not None:
        raise ValueError(f"`{argument}` holds the lone surrogate U+{ord(found[2]):04X} at character {found[1]}, {_WHY}")
