"""Reading a release's text files: bytes that are not UTF-8 are a ValueError naming the file and
line.

Every released source is UTF-8. A copy that is not (damaged, re-encoded to Latin-1 or UTF-16, or
another file under the released name) is normally caught by its sha256; with verification off
(``verify_checksums=False``, ``dialeval export-dataset --no-verify``) it reaches the readers, whose
decoder would raise a bare ``UnicodeDecodeError`` with a byte offset into an 8 KiB buffer.

Files are decoded with ``errors="surrogateescape"`` so that a bad byte cannot change where Python's
text mode splits lines (each undecodable byte becomes one code point in U+DC80..U+DCFF, which
strict UTF-8 decoding never produces), and each line read is checked for such a code point: the
first one found is reported with its line and byte value, before the line is used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TextIO

from dialeval.type_aliases import StrPath

#: The code points ``surrogateescape`` gives undecodable bytes 0x80..0xFF.
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def open_release_text(path: StrPath, newline: str | None = None) -> TextIO:
    """``open(path)`` for reading UTF-8 text whose bad bytes :func:`checked_lines` reports."""
    return open(path, encoding="utf-8", errors="surrogateescape", newline=newline)


def check_decoded_line(line: str, source: str, line_number: int) -> str:
    """``line`` unchanged, or a ValueError naming ``source``, the line and the first byte that is
    not UTF-8."""
    escaped = _ESCAPED_BYTE.search(line)
    if escaped is not None:
        byte = ord(escaped.group()) - 0xDC00
        raise ValueError(
            f"{source}, line {line_number}: byte 0x{byte:02x} (character {escaped.start() + 1} of "
            "the line) is not UTF-8; the release is UTF-8 text, so this file is damaged, "
            "re-encoded or not the released one"
        )
    return line


def checked_lines(lines: Iterable[str], source: str, first_line: int = 1) -> Iterator[str]:
    """The lines of a file opened with :func:`open_release_text`, each checked by
    :func:`check_decoded_line`."""
    for line_number, line in enumerate(lines, start=first_line):
        yield check_decoded_line(line, source, line_number)


def decoded_lines(raw_lines: Iterable[bytes], source: str) -> Iterator[str]:
    """Byte lines (e.g. an archive member's) decoded as UTF-8; a bad byte is a ValueError naming its
    line."""
    for line_number, raw in enumerate(raw_lines, start=1):
        yield check_decoded_line(raw.decode("utf-8", errors="surrogateescape"), source, line_number)
