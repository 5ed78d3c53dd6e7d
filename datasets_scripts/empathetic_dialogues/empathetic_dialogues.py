"""EmpatheticDialogues, with the DTG paper's random turn split, as a ``datasets`` builder.

Rashkin, Smith, Li & Boureau, "Towards Empathetic Open-domain Conversation Models: a New
Benchmark and Dataset", ACL 2019. ~25k conversations grounded in an emotional situation; one
row per utterance in ``train.csv`` / ``valid.csv`` / ``test.csv`` of the release archive.

Stasaski & Hearst (2022, §6.1) run Diversity Threshold Generation on its development set:
"We split each EmpatheticDialogues conversation at a random turn (consistent for all
experiments) for generation." Two configs:

================  ===========================================================================
config            one record per conversation
================  ===========================================================================
``random_turn``   (default) split at turn k: ``context`` = turns 0..k-1, ``positive_responses``
                  = [turn k], the human reply (Table 5's reference); ``split_turn`` = k
``conversations`` every turn in ``turns``
================  ===========================================================================

The paper leaves the split's law and seed open (its split is not released). Our reading: k is
uniform over 1..n-1 for a conversation of n turns (at least one context turn and one turn to
respond with), drawn from ``sha256(f"{split_seed}:{conv_id}")`` so each conversation's split
depends only on its id and the seed (default 0): "consistent for all experiments" whatever the
file order or the subset loaded. A one-turn conversation has no split and is not in
``random_turn`` (it is in ``conversations``).

The release is not standard CSV: commas inside text are written ``_comma_``, fields are split
on every comma (as the authors' and ParlAI's readers do), and a row has 8 fields (some test
rows a 9th, ParlAI's inline retrieval candidates, which we do not carry). ``_comma_`` becomes
",". A row with another field count, a non-integer ``utterance_idx`` / ``speaker_idx`` or a
repeated ``utterance_idx`` in a conversation is a ``ValueError`` naming the file and line.

Sources: the archive ``empatheticdialogues.tar.gz`` (read from ``data_dir``, or downloaded from
the official URL), checked against its published sha256 unless ``verify_checksums=False``; an
already extracted ``empatheticdialogues/{train,valid,test}.csv`` under ``data_dir`` is read too,
but no digest of the CSVs is published, so that needs ``verify_checksums=False``. An archive that
cannot be read to its end (truncated, not gzip) or lacks a split's CSV is a ``ValueError`` naming it
and what is wrong, before any split is built; bytes that are not UTF-8 one naming the file and line
(:mod:`dialeval.datasets_scripts._text_files`, as in every builder).
"""

from __future__ import annotations

import hashlib
import tarfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import datasets

from dialeval.datasets_scripts._release_builder import ReleaseBuilder
from dialeval.datasets_scripts._sources import SourceFile, SourceNotAvailableError, resolve_source
from dialeval.datasets_scripts._text_files import checked_lines, decoded_lines, open_release_text

_CITATION = """\
@inproceedings{rashkin-etal-2019-towards,
    title = "Towards Empathetic Open-domain Conversation Models: A New Benchmark and Dataset",
    author = "Rashkin, Hannah and Smith, Eric Michael and Li, Margaret and Boureau, Y-Lan",
    booktitle = "Proceedings of the 57th Annual Meeting of the Association for Computational Linguistics",
    year = "2019",
    pages = "5370--5381",
    url = "https://aclanthology.org/P19-1534",
}
"""  # noqa: E501
_DESCRIPTION = (
    "EmpatheticDialogues: conversations grounded in emotional situations. The random_turn config "
    "splits each conversation at a seeded random turn into a context and the human reply, as "
    "Stasaski & Hearst (2022, §6.1) do for Diversity Threshold Generation; the conversations "
    "config keeps every turn."
)
_HOMEPAGE = "https://github.com/facebookresearch/EmpatheticDialogues"
_LICENSE = "CC BY-NC 4.0"

SOURCE_URL = "https://dl.fbaipublicfiles.com/parlai/empatheticdialogues/empatheticdialogues.tar.gz"
#: Published, not computed here (no network): huggingface/datasets records this digest and
#: 28,022,709 bytes for SOURCE_URL (datasets/empathetic_dialogues/dataset_infos.json); ParlAI's
#: build.py records the second for its own copy at
#: http://parl.ai/downloads/empatheticdialogues/empatheticdialogues.tar.gz.
SOURCE_SHA256 = (
    "56f234d77b7dd1f005fd365bb17769cfe346c3c84295b69bc069c8ccb83be03d",
    "240c492cb6199a315722f716bfcc14f13ea6605f1cec67349153b606be92f6f2",
)
ARCHIVE = SourceFile(
    "empatheticdialogues.tar.gz",
    SOURCE_URL,
    ("empatheticdialogues.tar.gz", "empatheticdialogues/empatheticdialogues.tar.gz"),
    SOURCE_SHA256,
)
#: split -> file name in the archive's ``empatheticdialogues/`` folder.
SPLIT_FILES = {
    datasets.Split.TRAIN: "train.csv",
    datasets.Split.VALIDATION: "valid.csv",
    datasets.Split.TEST: "test.csv",
}
COLUMNS = (
    "conv_id",
    "utterance_idx",
    "context",
    "prompt",
    "speaker_idx",
    "utterance",
    "selfeval",
    "tags",
)
COMMA = "_comma_"


@dataclass
class EmpatheticDialoguesConfig(datasets.BuilderConfig):
    """``split_seed``: the seed of the random turn split; ``verify_checksums=False`` accepts other
    copies."""

    split_seed: int = 0
    verify_checksums: bool = True


@dataclass
class Utterance:
    index: int
    speaker: int
    text: str


def _int(value: str, column: str, where: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{where}: `{column}` must be an integer, got {value!r}") from None


def read_conversations(lines: Iterable[str], source: str) -> list[dict]:
    """Conversations of one split file (lines of text, header first), in order of first appearance.

    Each: ``conv_id``, ``emotion`` (the release's ``context`` column), ``prompt`` (the
    situation), ``utterances`` (sorted by ``utterance_idx``).
    """
    lines = iter(lines)
    header = next(lines, None)
    if header is None or tuple(header.strip().split(",")) != COLUMNS:
        raise ValueError(
            f"{source}, line 1: expected the EmpatheticDialogues header {','.join(COLUMNS)}, got "
            f"{header!r:.200}"
        )
    conversations: dict[str, dict] = {}
    for line_number, line in enumerate(lines, start=2):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        where = f"{source}, line {line_number}"
        fields = line.split(",")
        if len(fields) not in (len(COLUMNS), len(COLUMNS) + 1):
            raise ValueError(
                f"{where}: expected {len(COLUMNS)} comma-separated fields (commas in text written "
                f"{COMMA}), got {len(fields)}"
            )
        record = dict(zip(COLUMNS, fields))
        conversation = conversations.setdefault(
            record["conv_id"],
            {
                "conv_id": record["conv_id"],
                "emotion": record["context"],
                "prompt": record["prompt"].replace(COMMA, ","),
                "utterances": [],
            },
        )
        index = _int(record["utterance_idx"], "utterance_idx", where)
        if any(utterance.index == index for utterance in conversation["utterances"]):
            raise ValueError(
                f"{where}: conversation {record['conv_id']!r} already has utterance_idx {index}"
            )
        conversation["utterances"].append(
            Utterance(
                index,
                _int(record["speaker_idx"], "speaker_idx", where),
                record["utterance"].replace(COMMA, ","),
            )
        )
    for conversation in conversations.values():
        conversation["utterances"].sort(key=lambda utterance: utterance.index)
    return list(conversations.values())


def split_turn(conv_id: str, num_turns: int, seed: int = 0) -> int:
    """The turn k (1 <= k <= num_turns - 1) at which conversation ``conv_id`` is split (§6.1).

    Uniform over the possible splits, from a hash of (seed, conv_id): the same for every run,
    file order and subset.
    """
    if num_turns < 2:
        raise ValueError(
            f"conversation {conv_id!r} has {num_turns} turn(s): at least 2 are needed to split it"
        )
    digest = hashlib.sha256(f"{seed}:{conv_id}".encode()).digest()
    return 1 + int.from_bytes(digest[:8], "big") % (num_turns - 1)


#: What tarfile / gzip raise on a truncated, corrupted or non-gzip file.
ARCHIVE_ERRORS = (tarfile.TarError, EOFError, OSError, zlib.error)


def unreadable_archive(archive: str, error: Exception, when: str = "") -> str:
    return (
        f"{archive}: not a readable gzip-compressed tar archive{' ' + when if when else ''} "
        f"({type(error).__name__}: {error}); the release is {ARCHIVE.name} from {SOURCE_URL}: the "
        "file is truncated, damaged or another file, download it again"
    )


def open_archive(archive: str) -> tarfile.TarFile:
    try:
        return tarfile.open(archive, "r:gz")
    except ARCHIVE_ERRORS as error:
        raise ValueError(unreadable_archive(archive, error)) from None


def check_archive(archive: str) -> None:
    """Refuse, naming the archive, one that cannot be read to its end or lacks a split's CSV.

    Listing the members reads the whole (28 MB) archive once, so a truncated or corrupted one is
    reported here rather than as ``datasets``' bare DatasetGenerationError while a split is built.
    """
    with open_archive(archive) as tar:
        try:
            names = {member.name for member in tar.getmembers() if member.isfile()}
        except ARCHIVE_ERRORS as error:
            raise ValueError(unreadable_archive(archive, error)) from None
    missing = [
        f"empatheticdialogues/{name}"
        for name in SPLIT_FILES.values()
        if f"empatheticdialogues/{name}" not in names
    ]
    if missing:
        raise ValueError(
            f"{archive}: no {', '.join(missing)} in the archive (it holds {sorted(names)[:5]}"
            f"{' ...' if len(names) > 5 else ''}); the release is {ARCHIVE.name} from {SOURCE_URL}"
        )


def _extracted_csv(data_dir: str, file_name: str) -> Path | None:
    for relative in (f"empatheticdialogues/{file_name}", file_name):
        candidate = Path(data_dir).expanduser() / relative
        if candidate.is_file():
            return candidate
    return None


class EmpatheticDialogues(ReleaseBuilder):
    """EmpatheticDialogues (Rashkin et al., ACL 2019); see the module docstring."""

    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIG_CLASS = EmpatheticDialoguesConfig
    BUILDER_CONFIGS: ClassVar[list[EmpatheticDialoguesConfig]] = [
        EmpatheticDialoguesConfig(
            name="random_turn",
            version=VERSION,
            description=(
                "each conversation split at a seeded random turn: context and the human reply "
                "(DTG paper, §6.1)"
            ),
        ),
        EmpatheticDialoguesConfig(
            name="conversations",
            version=VERSION,
            description="each conversation with all its turns",
        ),
    ]
    DEFAULT_CONFIG_NAME = "random_turn"

    def _info(self) -> datasets.DatasetInfo:
        string, strings = datasets.Value("string"), datasets.List(datasets.Value("string"))
        common = {"id": string, "emotion": string, "prompt": string}
        if self.config.name == "random_turn":
            features = {
                **common,
                "context": strings,
                "positive_responses": strings,
                "split_turn": datasets.Value("int32"),
                "num_turns": datasets.Value("int32"),
            }
        else:
            features = {
                **common,
                "turns": strings,
                "speaker_idx": datasets.List(datasets.Value("int32")),
            }
        return datasets.DatasetInfo(
            description=_DESCRIPTION,
            features=datasets.Features(features),
            homepage=_HOMEPAGE,
            license=_LICENSE,
            citation=_CITATION,
        )

    def _split_generators(
        self, dl_manager: datasets.DownloadManager
    ) -> list[datasets.SplitGenerator]:
        config = self.config
        root = Path(config.data_dir).expanduser() if config.data_dir is not None else None
        if root is not None and not any(
            (root / relative).is_file() for relative in ARCHIVE.local_paths
        ):
            extracted = {
                split: _extracted_csv(config.data_dir, name) for split, name in SPLIT_FILES.items()
            }
            if all(extracted.values()):
                if config.verify_checksums:
                    raise ValueError(
                        f"{config.data_dir}: found the extracted CSVs but not {ARCHIVE.name}; "
                        "only the archive's sha256 is published, so put the archive there or pass "
                        "verify_checksums=False to read the CSVs unchecked"
                    )
                return [
                    datasets.SplitGenerator(
                        name=split,
                        gen_kwargs={"archive": None, "csv_path": str(path), "member": None},
                    )
                    for split, path in extracted.items()
                ]
            if any(extracted.values()):
                missing = sorted(
                    SPLIT_FILES[split] for split, path in extracted.items() if path is None
                )
                raise SourceNotAvailableError(
                    f"{config.data_dir}: extracted EmpatheticDialogues lacks {missing}"
                )
        archive = resolve_source(
            ARCHIVE, dl_manager, config.data_dir, verify=config.verify_checksums
        )
        check_archive(archive)
        return [
            datasets.SplitGenerator(
                name=split,
                gen_kwargs={
                    "archive": archive,
                    "csv_path": None,
                    "member": f"empatheticdialogues/{name}",
                },
            )
            for split, name in SPLIT_FILES.items()
        ]

    def _conversations(
        self, archive: str | None, csv_path: str | None, member: str | None
    ) -> list[dict]:
        if archive is None:
            assert csv_path is not None  # _split_generators gives the archive or the CSV
            with open_release_text(csv_path) as handle:
                return read_conversations(checked_lines(handle, csv_path), csv_path)
        with open_archive(archive) as tar:
            assert member is not None  # _split_generators names the archive's member
            member_file = tar.extractfile(member)
            assert member_file is not None  # check_archive found the member as a regular file
            try:
                return read_conversations(
                    decoded_lines(member_file, f"{archive}:{member}"), f"{archive}:{member}"
                )
            except ARCHIVE_ERRORS as error:
                raise ValueError(
                    unreadable_archive(archive, error, f"while reading {member}")
                ) from None

    def _generate_examples(
        self, archive: str | None, csv_path: str | None, member: str | None
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        for conversation in self._conversations(archive, csv_path, member):
            utterances = conversation["utterances"]
            common = {
                "id": conversation["conv_id"],
                "emotion": conversation["emotion"],
                "prompt": conversation["prompt"],
            }
            if self.config.name == "conversations":
                yield (
                    conversation["conv_id"],
                    {
                        **common,
                        "turns": [u.text for u in utterances],
                        "speaker_idx": [u.speaker for u in utterances],
                    },
                )
            elif len(utterances) >= 2:
                k = split_turn(conversation["conv_id"], len(utterances), self.config.split_seed)
                yield (
                    conversation["conv_id"],
                    {
                        **common,
                        "context": [u.text for u in utterances[:k]],
                        "positive_responses": [utterances[k].text],
                        "split_turn": k,
                        "num_turns": len(utterances),
                    },
                )
