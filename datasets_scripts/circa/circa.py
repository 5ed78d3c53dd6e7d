"""Circa: polar questions with indirect answers and their interpretations, as a ``datasets``
builder.

Louis, Roth & Radlinski, "'I'd rather just go to bed': Understanding Indirect Answers", EMNLP
2020. 34,268 (question, answer) pairs in 10 social situations; five annotators each said how
the asker would interpret the answer. Sato et al. (2022, §3.2, App. B) fine-tune their yes/no
classifier on it (``examples/train_yes_no_classifier.py``).

Two configs, one per label set (the released TSV holds both; every record is in both):

===========  =================  ====================================================================
config       label column       labels
===========  =================  ====================================================================
``strict``   ``goldstandard1``  Yes, No, In the middle..., Probably yes / sometimes yes,
                                Probably no, Yes subject to some conditions, Other, I am not sure
                                how X will ...
``relaxed``  ``goldstandard2``  Yes, No, In the middle..., Yes subject to some conditions, Other
===========  =================  ====================================================================

``label`` is a ClassLabel of the config's set; a pair without a majority ("NA" in the file) has
``label = -1`` (kept, not dropped: filter it yourself). ``polarity`` maps the label to
"yes" / "no" / "ambiguous" as the yes/no classifier does (None for NA). One split, ``train``:
the corpus has no official splits (App. B splits it 8:2 at random).

The TSV is downloaded from a raw URL pinned to commit ``02ad965518ab2fbd8bb24463d312ebb03bac5368``
of ``google-research-datasets/circa`` or read from ``data_dir`` / ``source_path``, and checked
against the sha256 below unless ``verify_checksums=False`` (see README.md for where that digest
comes from). A malformed row is a ``ValueError`` naming the line.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import datasets

from dialeval.datasets_scripts._release_builder import ReleaseBuilder
from dialeval.datasets_scripts._sources import SourceFile, resolve_source, sha256_of
from dialeval.datasets_scripts._text_files import checked_lines, open_release_text
from dialeval.labels import answer_of_label
from dialeval.validation import ArgumentError

_CITATION = """\
@inproceedings{louis-etal-2020-id,
    title = "{``}{I}{'}d rather just go to bed{''}: Understanding Indirect Answers",
    author = "Louis, Annie and Roth, Dan and Radlinski, Filip",
    booktitle = "Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)",
    year = "2020",
    pages = "7411--7425",
    url = "https://aclanthology.org/2020.emnlp-main.601",
}
"""  # noqa: E501
_DESCRIPTION = (
    "Circa: polar (yes/no) questions with indirect answers in 10 social situations, each pair "
    "with five interpretation judgements and majority labels under a strict (goldstandard1) and a "
    "relaxed (goldstandard2) label set."
)
_HOMEPAGE = "https://github.com/google-research-datasets/circa"
_LICENSE = "CC BY-SA 4.0 (the README says CC BY 4.0 but links the BY-SA 4.0 license text)"

SOURCE_COMMIT = "02ad965518ab2fbd8bb24463d312ebb03bac5368"
#: As recorded for this commit's file (7,766,077 bytes) in third-party data notes; not recomputed
#: here (README.md).
SOURCE_SHA256 = "98454df6b716dd7ff5f83a3db298849f05414688e81c2ee21b8e5a548ed897aa"
SOURCE_FILE = SourceFile(
    "circa-data.tsv",
    f"https://raw.githubusercontent.com/google-research-datasets/circa/{SOURCE_COMMIT}/circa-data.tsv",
    ("circa-data.tsv", "circa/circa-data.tsv"),
    (SOURCE_SHA256,),
)
COLUMNS = (
    "id",
    "context",
    "question-X",
    "canquestion-X",
    "answer-Y",
    "judgements",
    "goldstandard1",
    "goldstandard2",
)
NO_MAJORITY = "NA"
NOT_SURE = "I am not sure how X will interpret Y\u2019s answer"
STRICT_LABELS = (
    "Yes",
    "No",
    "In the middle, neither yes nor no",
    "Probably yes / sometimes yes",
    "Probably no",
    "Yes, subject to some conditions",
    "Other",
    NOT_SURE,
)
RELAXED_LABELS = (
    "Yes",
    "No",
    "In the middle, neither yes nor no",
    "Yes, subject to some conditions",
    "Other",
)
#: config name -> (label column, label names).
LABEL_SETS = {
    "strict": ("goldstandard1", STRICT_LABELS),
    "relaxed": ("goldstandard2", RELAXED_LABELS),
}


def _normalize(label: str) -> str:
    return " ".join(label.replace("\u2019", "'").lower().split())


def canonical_label(value: str, names: tuple[str, ...], where: str) -> str | None:
    """The label name as in ``names`` (case and apostrophe style are not significant); None for
    NA."""
    if value.strip() == NO_MAJORITY:
        return None
    by_normalized = {_normalize(name): name for name in names}
    normalized = _normalize(value)
    if normalized not in by_normalized:
        raise ValueError(f"{where}: label {value!r} is not one of {list(names)} or {NO_MAJORITY!r}")
    return by_normalized[normalized]


def read_circa(path: str) -> list[dict]:
    """Every row of the Circa TSV, validated (header, column count, id, labels)."""
    rows = []
    with open_release_text(path, newline="") as handle:
        reader = csv.reader(checked_lines(handle, path), delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None or tuple(column.strip() for column in header) != COLUMNS:
            raise ValueError(
                f"{path}, line 1: expected the Circa header {list(COLUMNS)}, got {header!r:.200}"
            )
        for line_number, row in enumerate(reader, start=2):
            if not row or row == [""]:
                continue
            where = f"{path}, line {line_number}"
            if len(row) != len(COLUMNS):
                raise ValueError(
                    f"{where}: expected {len(COLUMNS)} tab-separated columns, got {len(row)}"
                )
            record: dict[str, Any] = dict(zip(COLUMNS, (value.strip() for value in row)))
            try:
                record["id"] = int(record["id"])
            except ValueError:
                raise ValueError(
                    f"{where}: `id` must be an integer, got {record['id']!r}"
                ) from None
            for column, names in (
                ("goldstandard1", STRICT_LABELS),
                ("goldstandard2", RELAXED_LABELS),
            ):
                canonical_label(record[column], names, f"{where}, {column}")
            rows.append(record)
    return rows


@dataclass
class CircaConfig(datasets.BuilderConfig):
    """``source_path``: an explicit local TSV; ``verify_checksums=False`` accepts edited copies."""

    source_path: str | None = None
    verify_checksums: bool = True


class Circa(ReleaseBuilder):
    """Circa (Louis et al., EMNLP 2020); see the module docstring."""

    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIG_CLASS = CircaConfig
    BUILDER_CONFIGS: ClassVar[list[CircaConfig]] = [
        CircaConfig(
            name="strict",
            version=VERSION,
            description="labels: goldstandard1 (strict majority, 8 labels)",
        ),
        CircaConfig(
            name="relaxed",
            version=VERSION,
            description="labels: goldstandard2 (relaxed majority, 5 labels)",
        ),
    ]
    DEFAULT_CONFIG_NAME = "relaxed"

    def _info(self) -> datasets.DatasetInfo:
        string = datasets.Value("string")
        _, names = LABEL_SETS[self.config.name]
        features = datasets.Features(
            {
                "id": datasets.Value("int32"),
                "context": string,
                "question": string,
                "canonical_question": string,
                "answer": string,
                "judgements": datasets.List(string),
                "goldstandard1": string,
                "goldstandard2": string,
                "label": datasets.ClassLabel(names=list(names)),
                "polarity": string,
            }
        )
        return datasets.DatasetInfo(
            description=_DESCRIPTION,
            features=features,
            homepage=_HOMEPAGE,
            license=_LICENSE,
            citation=_CITATION,
        )

    def _split_generators(
        self, dl_manager: datasets.DownloadManager
    ) -> list[datasets.SplitGenerator]:
        config = self.config
        if config.source_path is not None:
            if not os.path.isfile(config.source_path):
                raise ArgumentError("source_path", f"{config.source_path!r} is not a file")
            path = config.source_path
            if config.verify_checksums and sha256_of(path) != SOURCE_SHA256:
                raise ValueError(
                    f"{path}: sha256 {sha256_of(path)} is not the released circa-data.tsv "
                    f"({SOURCE_SHA256}); pass verify_checksums=False to use it anyway"
                )
        else:
            path = resolve_source(
                SOURCE_FILE, dl_manager, config.data_dir, verify=config.verify_checksums
            )
        return [datasets.SplitGenerator(name=datasets.Split.TRAIN, gen_kwargs={"path": path})]

    def _generate_examples(self, path: str) -> Iterator[tuple[int, dict[str, Any]]]:
        column, names = LABEL_SETS[self.config.name]
        for index, record in enumerate(read_circa(path)):
            label = canonical_label(record[column], names, f"{path}, id {record['id']}")
            yield (
                index,
                {
                    "id": record["id"],
                    "context": record["context"],
                    "question": record["question-X"],
                    "canonical_question": record["canquestion-X"],
                    "answer": record["answer-Y"],
                    "judgements": record["judgements"].split("#") if record["judgements"] else [],
                    "goldstandard1": record["goldstandard1"],
                    "goldstandard2": record["goldstandard2"],
                    "label": -1 if label is None else names.index(label),
                    "polarity": None if label is None else answer_of_label(label),
                },
            )
