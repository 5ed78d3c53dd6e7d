"""What ``dialeval dtg`` generates for: the contexts of a test set or of a JSONL file.

:func:`read_contexts` reads them (with the human responses Table 5 compares with, when the input
has them), :func:`format_context` joins a context's turns as its model was trained, and
:func:`contexts_sha256` is their digest, which ``OUTPUT.run.json`` records so that a rewritten
input is not resumed.
"""

from __future__ import annotations

import hashlib
import json
from typing import NamedTuple

from dialeval.io import iter_jsonl
from dialeval.type_aliases import Tokenizer
from dialeval.validation import ArgumentError

#: A dataset's column of human responses (Table 5's references).
REFERENCE_COLUMNS = ("positive_responses", "references")


class DTGContext(NamedTuple):
    id: object
    turns: list[str]
    references: list[str] | None  # human responses, when the input has them (Table 5)


def read_contexts(
    dataset: str | None,
    split: str | None,
    input_file: str | None,
    data_dir: str | None = None,
    limit: int | None = None,
    verify_checksums: bool = True,
) -> list[DTGContext]:
    """The contexts of a dialeval test set or of a JSONL file of
    ``{"context": ..., "references": [...]}`` lines.

    ``references`` (a dataset's ``positive_responses``) are the human responses Table 5 compares
    with.
    """
    if (dataset is None) == (input_file is None):
        raise ValueError("give exactly one of `--dataset` and `--input`")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ArgumentError("limit", f"must be a positive int, got {limit!r}")
    if dataset is not None:
        # The `datasets` library (pyarrow) is needed for a test set only, not for a JSONL input.
        from dialeval.datasets_scripts import load, split_name

        # the same split names as `load` ("dev" too); split_name refuses a missing split, by name
        split = split_name(split)  # type: ignore[arg-type]
        rows = load(dataset, data_dir=data_dir, split=split, verify_checksums=verify_checksums)
        id_field = next((name for name in ("id", "dialog_id") if name in rows.column_names), None)
        reference_field = next(
            (name for name in REFERENCE_COLUMNS if name in rows.column_names), None
        )
        contexts = [
            DTGContext(
                row[id_field] if id_field else index,
                list(row["context"]),
                list(row[reference_field]) if reference_field else None,
            )
            for index, row in enumerate(rows)
        ]
    else:
        assert input_file is not None  # exactly one of the two, checked above
        contexts = []
        for where, record in iter_jsonl(input_file):
            context = record.get("context") if isinstance(record, dict) else None
            if isinstance(context, str):
                context = [context]
            if not (
                isinstance(context, list)
                and context
                and all(isinstance(turn, str) for turn in context)
            ):
                raise ValueError(
                    f"{where}: `context` must be a string or a non-empty list of strings"
                )
            references = record.get("references")
            if references is not None and not (
                isinstance(references, list)
                and references
                and all(isinstance(text, str) for text in references)
            ):
                raise ValueError(f"{where}: `references` must be a non-empty list of strings")
            contexts.append(DTGContext(record.get("id", len(contexts)), context, references))
    return contexts[:limit] if limit else contexts


def format_context(
    turns: list[str], tokenizer: Tokenizer, is_encoder_decoder: bool, separator: str | None = None
) -> str:
    """Turns joined as the model was trained: DialoGPT ends every turn with EOS; seq2seq default
    ``"\\n"``."""
    if separator is None:
        separator = "\n" if is_encoder_decoder else tokenizer.eos_token
    text = separator.join(turn.strip() for turn in turns)
    return text if is_encoder_decoder else text + separator


def contexts_sha256(contexts: list[DTGContext]) -> str:
    """sha256 over the contexts as read (id, turns, references, in order)."""
    canonical = json.dumps(
        [[context.id, context.turns, context.references] for context in contexts],
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
