"""DailyDialog++ (dev, test and positives-only contexts) as a ``datasets`` builder.

Sai, Mohankumar, Arora & Khapra, "Improving Dialog Evaluation with a Multi-reference
Adversarial Dataset and Large Scale Pretraining", TACL 8 (2020), 810-827. Each DailyDialog
context comes with five human-written relevant responses and, in dev/test, five adversarial
irrelevant responses (written to reuse the context's words) and five random negatives
(responses of other dialogues).

==============  ==========  =================================  =======
config          split       released file                      records
==============  ==========  =================================  =======
``default``     validation  ``dataset/dev.json``               1028
``default``     test        ``dataset/test.json``              1142
``positives``   train       ``dataset/data_positives.json``    7641
==============  ==========  =================================  =======

The files are JSON Lines despite their suffix. They are downloaded from raw URLs pinned to
commit ``4b02f9ff671e7e27d8e6b8a1925158bd5729abda`` of ``iitmnlp/DailyDialog-plusplus``, or read
from ``data_dir`` (the bare files, or a checkout holding ``dataset/``), and checked against
their sha256 unless ``verify_checksums=False``. ``dataset/train.json`` is not offered: its blob
is missing from the snapshot the digests were taken from, so it could not be pinned.

Every record is validated as it is generated (keys exactly as released, ``context`` a non-empty
list of strings, each response list exactly five strings); a malformed line is a ``ValueError``
naming the file and line, never a dropped record. (``datasets`` wraps it in a
``DatasetGenerationError``; ``dialeval.datasets_scripts.load`` unwraps it.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import datasets

from dialeval.datasets_scripts._release_builder import ReleaseBuilder
from dialeval.datasets_scripts._sources import SourceFile, resolve_source
from dialeval.datasets_scripts._text_files import checked_lines, open_release_text

_CITATION = """\
@article{sai-etal-2020-improving,
    title = "Improving Dialog Evaluation with a Multi-reference Adversarial Dataset and Large Scale Pretraining",
    author = "Sai, Ananya B. and Mohankumar, Akash Kumar and Arora, Siddhartha and Khapra, Mitesh M.",
    journal = "Transactions of the Association for Computational Linguistics",
    volume = "8",
    year = "2020",
    publisher = "MIT Press",
    url = "https://aclanthology.org/2020.tacl-1.52",
    doi = "10.1162/tacl_a_00347",
    pages = "810--827",
}
"""  # noqa: E501
_DESCRIPTION = (
    "DailyDialog++: DailyDialog contexts, each with five human-written relevant responses (a "
    "multi-reference set) and, in dev/test, five adversarial irrelevant responses that reuse the "
    "context's words and five random negatives. The `positives` config holds further contexts "
    "with their five relevant responses only."
)
_HOMEPAGE = "https://github.com/iitmnlp/DailyDialog-plusplus"
_LICENSE = (
    "MIT (as stated in the repository; the contexts come from DailyDialog, licensed "
    "CC BY-NC-SA 4.0)"
)

SOURCE_COMMIT = "4b02f9ff671e7e27d8e6b8a1925158bd5729abda"
_RAW_URL = f"https://raw.githubusercontent.com/iitmnlp/DailyDialog-plusplus/{SOURCE_COMMIT}/dataset/{{name}}"
_SHA256 = {
    "dev.json": "afbdee92c9ab372f599c605609676fceba517f83286d58555f0404f4364b5bfa",
    "test.json": "e8202c3d4b11008a13061b15c4d8ce1f6d05baa9104a9c1f5caa5450134522fa",
    "data_positives.json": "36ae33206b536161816dbbb611843c0dc5172612bc94f604a8484f812ebdc0a9",
}

#: file name -> where it comes from (pinned URL, paths under ``data_dir``, sha256).
SOURCE_FILES = {
    name: SourceFile(name, _RAW_URL.format(name=name), (name, f"dataset/{name}"), (digest,))
    for name, digest in _SHA256.items()
}

RESPONSES_PER_CONTEXT = 5
NEGATIVE_FIELDS = ("adversarial_negative_responses", "random_negative_responses")

#: config name -> (split -> source file name).
SPLIT_FILES = {
    "default": {datasets.Split.VALIDATION: "dev.json", datasets.Split.TEST: "test.json"},
    "positives": {datasets.Split.TRAIN: "data_positives.json"},
}
#: config name -> (id field, response fields), matching the released records' keys.
RECORD_LAYOUTS = {
    "default": ("id", ("positive_responses", *NEGATIVE_FIELDS)),
    "positives": ("dialog_id", ("positive_responses",)),
}


@dataclass
class DailyDialogPlusPlusConfig(datasets.BuilderConfig):
    """A DailyDialog++ config; ``verify_checksums=False`` accepts copies that differ from the
    release."""

    verify_checksums: bool = True


def _is_list_of_strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _validated(record: object, id_field: str, response_fields: tuple[str, ...], where: str) -> dict:
    if not isinstance(record, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(record).__name__}")
    expected = {id_field, "context", *response_fields}
    missing = sorted(expected - record.keys())
    if missing:
        raise ValueError(f"{where}: missing key(s) {missing}")
    # An unknown key would be dropped by the fixed features; refuse it instead of losing data
    # quietly.
    unexpected = sorted(record.keys() - expected)
    if unexpected:
        raise ValueError(f"{where}: unexpected key(s) {unexpected}")
    record_id = record[id_field]
    if not isinstance(record_id, int) or isinstance(record_id, bool):
        raise ValueError(f"{where}: `{id_field}` must be an integer, got {record_id!r}")
    if not _is_list_of_strings(record["context"]) or not record["context"]:
        raise ValueError(f"{where}: `context` must be a non-empty list of strings")
    for field in response_fields:
        responses = record[field]
        if not _is_list_of_strings(responses) or len(responses) != RESPONSES_PER_CONTEXT:
            raise ValueError(
                f"{where}: `{field}` must be a list of exactly {RESPONSES_PER_CONTEXT} strings"
            )
    return record


def read_records(path: str, id_field: str, response_fields: tuple[str, ...]) -> list[dict]:
    """Every record of a DailyDialog++ JSON Lines file, validated; ``ValueError`` names the bad
    line."""
    records = []
    # utf-8 explicitly: the responses hold curly quotes, which the Windows default code page
    # mangles.
    with open_release_text(path) as handle:
        for line_number, line in enumerate(checked_lines(handle, path), start=1):
            if not line.strip():  # a blank line holds no record, so skipping it loses nothing
                continue
            where = f"{path}, line {line_number}"
            try:
                record = json.loads(line)
            # ValueError: also an integer past Python's int-conversion limit (thousands of digits)
            except ValueError as error:
                raise ValueError(f"{where}: not valid JSON ({error})") from None
            records.append(_validated(record, id_field, response_fields, where))
    return records


class DailyDialogPlusPlus(ReleaseBuilder):
    """DailyDialog++ (Sai et al., TACL 2020); see the module docstring."""

    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIG_CLASS = DailyDialogPlusPlusConfig
    BUILDER_CONFIGS: ClassVar[list[DailyDialogPlusPlusConfig]] = [
        DailyDialogPlusPlusConfig(
            name="default",
            version=VERSION,
            description=(
                "dev (validation) and test: five positive, adversarial and random negative "
                "responses per context"
            ),
        ),
        DailyDialogPlusPlusConfig(
            name="positives",
            version=VERSION,
            description=(
                "data_positives.json (train): contexts with their five positive responses only"
            ),
        ),
    ]
    DEFAULT_CONFIG_NAME = "default"

    def _info(self) -> datasets.DatasetInfo:
        strings = datasets.List(datasets.Value("string"))
        id_field, response_fields = RECORD_LAYOUTS[self.config.name]
        features = datasets.Features(
            {
                id_field: datasets.Value("int32"),
                "context": strings,
                **{field: strings for field in response_fields},
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
        generators = []
        for split, file_name in SPLIT_FILES[self.config.name].items():
            path = resolve_source(
                SOURCE_FILES[file_name],
                dl_manager,
                self.config.data_dir,
                verify=self.config.verify_checksums,
            )
            generators.append(datasets.SplitGenerator(name=split, gen_kwargs={"path": path}))
        return generators

    def _generate_examples(self, path: str) -> Iterator[tuple[int, dict[str, Any]]]:
        id_field, response_fields = RECORD_LAYOUTS[self.config.name]
        yield from enumerate(read_records(path, id_field, response_fields))
