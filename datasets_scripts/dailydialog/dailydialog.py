"""DailyDialog (Li et al., IJCNLP 2017), the official splits, as a ``datasets`` builder.

Li, Su, Shen, Li, Cao & Niu, "DailyDialog: A Manually Labelled Multi-turn Dialogue Dataset",
IJCNLP 2017. 13,118 two-person dialogues about daily life, each turn labelled with a dialogue act
(inform, question, directive, commissive) and an emotion (no emotion and Ekman's six).

==============  ==========================================================================
config          one record per
==============  ==========================================================================
``dialogues``   (default) dialogue: ``dialog`` (its turns), ``act`` and ``emotion`` per turn
                (ClassLabels whose ids are the release's numbers)
``pairs``       context-response pair: each turn after the first is the ``response`` to the
                turns before it (``context``); 6,740 in the official test split
==============  ==========================================================================

Splits: the release's own ``train`` / ``validation`` / ``test`` (11,118 / 1,000 / 1,000
dialogues), as ParlAI's DailyDialog task (which Han et al. 2022 used, ParlAI 1.3.0) reads them.
ParlAI also changes characters of every turn (curly quotes, dashes, ...; :func:`parlai_cleanup`):
``parlai_normalization=True`` does the same, the default keeps the release's text.

Source: the official archive ``ijcnlp_dailydialog.zip``, read from ``data_dir`` or downloaded from
its URL, sha256-checked unless ``verify_checksums=False``. It holds one zip per split,
``ijcnlp_dailydialog/<split>.zip``, each holding ``<split>/dialogues_<split>.txt`` (one dialogue
a line, every turn ended by ``__eou__``), ``dialogues_act_<split>.txt`` and
``dialogues_emotion_<split>.txt`` (one number per turn, space-separated), line for line. An
unzipped folder under ``data_dir`` (the split zips, or their extracted text files) is read too,
but only the outer archive's digest is published, so that needs ``verify_checksums=False``.

Reading (the release's quirks): a line is split on ``__eou__`` and each turn's surrounding
whitespace is stripped; the text after the last ``__eou__`` (a newline, sometimes spaces) is no
turn; labels are split on any whitespace (the lines end with a space). The three files must agree
line for line: a dialogue whose act or emotion count differs from its turn count, an empty turn,
an unknown label or files of different lengths is a ``ValueError`` naming the file and line
(huggingface/datasets' script stops on an ``assert`` without saying where). Blank lines at the end
are skipped. Archive members are read a line at a time; one that unpacks to more than
:data:`MAX_MEMBER_BYTES` is refused, naming it. Tokenization (``" . "``, ``" ’ "``) is kept
verbatim.
"""

from __future__ import annotations

import contextlib
import io
import re
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import IO, Any, ClassVar, cast

import datasets

from dialeval.datasets_scripts._release_builder import ReleaseBuilder
from dialeval.datasets_scripts._sources import SourceFile, SourceNotAvailableError, resolve_source
from dialeval.datasets_scripts._text_files import checked_lines, decoded_lines, open_release_text
from dialeval.validation import check_flag

_CITATION = """\
@inproceedings{li-etal-2017-dailydialog,
    title = "{D}aily{D}ialog: A Manually Labelled Multi-turn Dialogue Dataset",
    author = "Li, Yanran and Su, Hui and Shen, Xiaoyu and Li, Wenjie and Cao, Ziqiang and Niu, Shuzi",
    booktitle = "Proceedings of the Eighth International Joint Conference on Natural Language Processing (Volume 1: Long Papers)",
    year = "2017",
    publisher = "Asian Federation of Natural Language Processing",
    url = "https://aclanthology.org/I17-1099",
    pages = "986--995",
}
"""  # noqa: E501
_DESCRIPTION = (
    "DailyDialog: human-written two-person dialogues about daily life, each turn labelled with a "
    "dialogue act and an emotion; the official train/validation/test splits. The pairs config "
    "makes each turn after the first a response to the turns before it (Han et al. 2022's "
    "context-response pairs)."
)
_HOMEPAGE = "http://yanran.li/dailydialog"
_LICENSE = "CC BY-NC-SA 4.0"

SOURCE_URL = "http://yanran.li/files/ijcnlp_dailydialog.zip"
#: Published, not computed here (no network): huggingface/datasets records this digest and 4,475,921
#: bytes for SOURCE_URL (datasets/daily_dialog/dataset_infos.json).
SOURCE_SHA256 = ("c641e88cbf21fd7c1b57289387f9107d33fe8685a2b37fe8066b82776535ea89",)
ARCHIVE = SourceFile(
    "ijcnlp_dailydialog.zip",
    SOURCE_URL,
    ("ijcnlp_dailydialog.zip", "ijcnlp_dailydialog/ijcnlp_dailydialog.zip"),
    SOURCE_SHA256,
)
ROOT = "ijcnlp_dailydialog"
#: split -> the release's name for it (folder, zip and file suffix).
SPLITS = {
    datasets.Split.TRAIN: "train",
    datasets.Split.VALIDATION: "validation",
    datasets.Split.TEST: "test",
}
EOU = "__eou__"
#: Index = the number in dialogues_act_*.txt (1 to 4; 0 is unused, as in huggingface/datasets'
#: features).
ACT_NAMES = ("__dummy__", "inform", "question", "directive", "commissive")
#: Index = the number in dialogues_emotion_*.txt.
EMOTION_NAMES = ("no emotion", "anger", "disgust", "fear", "happiness", "sadness", "surprise")


def split_files(release_name: str) -> dict[str, str]:
    """role -> file name, for one split (``release_name``: train, validation or test)."""
    return {
        "dialog": f"dialogues_{release_name}.txt",
        "act": f"dialogues_act_{release_name}.txt",
        "emotion": f"dialogues_emotion_{release_name}.txt",
    }


@dataclass
class DailyDialogConfig(datasets.BuilderConfig):
    """A DailyDialog config; ``verify_checksums=False`` accepts copies that differ from the
    release; ``parlai_normalization=True`` gives each turn as ParlAI's DailyDialog task (which Han
    et al. 2022 trained and tested on) gives it (:func:`parlai_cleanup`)."""

    verify_checksums: bool = True
    parlai_normalization: bool = False


#: ParlAI's parlai/tasks/dailydialog/parse.py (``cleanup_text``, the script that made the JSON its
#: DailyDialog task downloads): these characters, in this order, then :data:`PARLAI_BROKEN_PERIOD`.
PARLAI_REPLACEMENTS = (
    ("\u2019", "'"),  # right single quotation mark
    ("\u2018", "'"),  # left single quotation mark
    ("\u201d", '"'),  # right double quotation mark
    ("\u201c", '"'),  # left double quotation mark
    ("\u2014", "--"),  # em dash
    ("\u2013", "--"),  # en dash
    ("\u3002", ". "),  # ideographic full stop
    ("\u2032", "'"),  # prime
    ("\u3001", ", "),  # ideographic comma
)
#: A period with a word character right after it ("one.5", "Mr.Smith") gets spaces, as ParlAI's
#: "fix some broken sentence tokenization" does: ``re.sub(r"\.(\w)", r" . \1", text)``.
PARLAI_BROKEN_PERIOD = re.compile(r"\.(\w)")


def parlai_cleanup(turn: str) -> str:
    """``turn`` as ParlAI's DailyDialog JSON holds it: stripped, :data:`PARLAI_REPLACEMENTS`
    applied, a period glued to the next word split off, stripped again."""
    text = turn.strip()
    for before, after in PARLAI_REPLACEMENTS:
        text = text.replace(before, after)
    return PARLAI_BROKEN_PERIOD.sub(r" . \1", text).strip()


def parse_turns(line: str, where: str) -> list[str]:
    """The turns of one line of ``dialogues_<split>.txt``; an empty turn is a ValueError naming
    ``where``."""
    pieces = line.split(EOU)
    turns = [piece.strip() for piece in pieces[:-1]]
    if pieces[-1].strip():  # a last turn without its __eou__: still a turn
        turns.append(pieces[-1].strip())
    empty = [index for index, turn in enumerate(turns) if not turn]
    if empty:
        raise ValueError(
            f"{where}: turn {empty[0] + 1} of {len(turns)} is empty (nothing between two {EOU})"
        )
    return turns


#: role -> (label names, the smallest number the release uses).
LABELS = {"act": (ACT_NAMES, 1), "emotion": (EMOTION_NAMES, 0)}


def parse_labels(line: str, role: str, where: str) -> list[int]:
    """The numbers of one line of ``dialogues_<role>_<split>.txt``; one the release does not use is
    a ValueError."""
    names, lowest = LABELS[role]
    labels = []
    for token in line.split():
        if not (token.isascii() and token.isdigit()) or not lowest <= int(token) < len(names):
            raise ValueError(
                f"{where}: {role} label {token!r} is not one of the release's numbers "
                f"({lowest} to {len(names) - 1})"
            )
        labels.append(int(token))
    return labels


def read_dialogues(
    dialog_lines: Iterable[str],
    act_lines: Iterable[str],
    emotion_lines: Iterable[str],
    sources: dict[str, str],
) -> list[dict]:
    """The dialogues of one split from its three files' lines, checked line for line.

    ``sources``: role (dialog / act / emotion) -> the file's name in messages. Each dialogue:
    ``dialog`` (turns), ``act`` and ``emotion`` (the release's numbers, one per turn).
    """
    dialogues = []
    for line_number, (dialog, act, emotion) in enumerate(
        zip_longest(dialog_lines, act_lines, emotion_lines), start=1
    ):
        lines = {"dialog": dialog, "act": act, "emotion": emotion}
        if all(line is None or not line.strip() for line in lines.values()):
            continue  # blank lines (the files end with one) hold no dialogue
        blank = [role for role, line in lines.items() if line is None or not line.strip()]
        if blank:
            holding = next(role for role in lines if role not in blank)
            state = "the file has ended" if lines[blank[0]] is None else "the line is blank"
            raise ValueError(
                f"{sources[blank[0]]}, line {line_number}: {state} where {sources[holding]}, line "
                f"{line_number} holds a dialogue; the three files of a split must agree "
                "line for line"
            )
        turns = parse_turns(dialog, f"{sources['dialog']}, line {line_number}")
        labels = {
            role: parse_labels(lines[role], role, f"{sources[role]}, line {line_number}")
            for role in LABELS
        }
        for role, values in labels.items():
            if len(values) != len(turns):
                raise ValueError(
                    f"{sources[role]}, line {line_number}: {len(values)} {role} label(s) for the "
                    f"{len(turns)} turn(s) of {sources['dialog']}, line {line_number}"
                )
        dialogues.append({"dialog": turns, **labels})
    return dialogues


def context_response_pairs(turns: list[str]) -> list[tuple[int, list[str], str]]:
    """(turn index, context, response) for each turn after the first: the turns before it are its
    context."""
    return [(index, turns[:index], turns[index]) for index in range(1, len(turns))]


# ------------------------------------------------ where the three files of a split are read from

ARCHIVE_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, KeyError)
#: The most bytes a member of the archive may unpack to. huggingface/datasets' card gives 8.23 MB
#: for the whole generated DailyDialog (every split, as Arrow), so no real member comes near;
#: a larger one (a zip bomb under ``verify_checksums=False``) is refused before it fills memory.
MAX_MEMBER_BYTES = 64 * 2**20


def _too_large(source: str, limit: int) -> str:
    return (
        f"{source}: unpacks to more than {limit // 2**20} MiB, far more than any file of the "
        f"DailyDialog release; the archive is not the release ({ARCHIVE.name} from {SOURCE_URL})"
    )


def open_member(archive: zipfile.ZipFile, member: str, source: str) -> IO[bytes]:
    """A stream over ``member`` of ``archive`` (named ``source`` in messages); a member whose header
    says it unpacks to more than :data:`MAX_MEMBER_BYTES` is a ValueError. zipfile yields no more
    than the header says (a header that understates fails the member's CRC), so a member read a
    line at a time holds at most that much memory whatever it holds."""
    if archive.getinfo(member).file_size > MAX_MEMBER_BYTES:
        raise ValueError(_too_large(source, MAX_MEMBER_BYTES))
    return archive.open(member)


def _unreadable(path: str, error: Exception) -> str:
    return (
        f"{path}: not a readable zip archive ({type(error).__name__}: {error}); the release is "
        f"{ARCHIVE.name} from {SOURCE_URL}: the file is truncated, damaged or another file, "
        "download it again"
    )


def _member(names: list[str], file_name: str) -> str | None:
    """The member named ``file_name`` in any folder (``train/dialogues_train.txt``), macOS resource
    forks aside."""
    found = [
        name for name in names if name.rsplit("/", 1)[-1] == file_name and "__MACOSX" not in name
    ]
    return found[0] if found else None


def read_split_zip(data: bytes | IO[bytes], release_name: str, source: str) -> list[dict]:
    """The dialogues of one split from its zip (``<split>.zip``: its bytes or a seekable stream),
    named ``source`` in messages; each text file is read a line at a time, bounded by
    :func:`open_member`."""
    try:
        with zipfile.ZipFile(io.BytesIO(data) if isinstance(data, bytes) else data) as inner:
            names = inner.namelist()
            members = {
                role: _member(names, name) for role, name in split_files(release_name).items()
            }
            missing = [
                name for role, name in split_files(release_name).items() if members[role] is None
            ]
            if missing:
                raise ValueError(
                    f"{source}: no {', '.join(missing)} in it (it holds "
                    f"{sorted(names)[:5]}{' ...' if len(names) > 5 else ''}); the release is "
                    f"{ARCHIVE.name} from {SOURCE_URL}"
                )
            sources = {role: f"{source}:{member}" for role, member in members.items()}
            with contextlib.ExitStack() as stack:
                streams = {
                    # every member was found: a missing one was refused above
                    role: stack.enter_context(open_member(inner, cast(str, member), sources[role]))
                    for role, member in members.items()
                }
                dialog_lines, act_lines, emotion_lines = (
                    decoded_lines(_lines(streams[role]), sources[role])
                    for role in ("dialog", "act", "emotion")
                )
                return read_dialogues(dialog_lines, act_lines, emotion_lines, sources)
    except ARCHIVE_ERRORS as error:
        raise ValueError(_unreadable(source, error)) from None


def _lines(stream: IO[bytes]) -> Iterator[bytes]:
    """The lines of a binary stream as ``bytes.splitlines`` splits a whole text (CR, LF or CRLF
    ends a line): split at each LF as read, then at any CR within."""
    for line in stream:
        yield from line.splitlines(keepends=True)


def read_release_archive(archive: str, release_name: str) -> list[dict]:
    """The dialogues of one split from the official archive (its
    ``ijcnlp_dailydialog/<split>.zip``)."""
    inner_name = f"{release_name}.zip"
    try:
        with zipfile.ZipFile(archive) as outer:
            member = _member(outer.namelist(), inner_name)
            if member is None:
                raise ValueError(
                    f"{archive}: no {ROOT}/{inner_name} in the archive; the release is "
                    f"{ARCHIVE.name} from {SOURCE_URL}"
                )
            source = f"{archive}:{member}"
            # the split zip is held in memory (at most MAX_MEMBER_BYTES): a zip is read by seeking
            with open_member(outer, member, source) as stream:
                data = stream.read()
    except ARCHIVE_ERRORS as error:
        raise ValueError(_unreadable(archive, error)) from None
    return read_split_zip(data, release_name, source)


def unzipped_split(data_dir: str, release_name: str) -> Path | None:
    """A split of an unzipped release under ``data_dir``: its folder of text files, or its zip; None
    if neither."""
    root = Path(data_dir).expanduser()
    for base in (root / ROOT, root):
        folder = base / release_name
        if all((folder / name).is_file() for name in split_files(release_name).values()):
            return folder
        if (base / f"{release_name}.zip").is_file():
            return base / f"{release_name}.zip"
    return None


def read_unzipped_split(path: Path, release_name: str) -> list[dict]:
    if path.suffix == ".zip":
        try:
            with open(path, "rb") as handle:
                return read_split_zip(handle, release_name, str(path))
        except OSError as error:
            raise ValueError(_unreadable(str(path), error)) from None
    files = {role: path / name for role, name in split_files(release_name).items()}
    with (
        open_release_text(files["dialog"]) as dialog,
        open_release_text(files["act"]) as act,
        open_release_text(files["emotion"]) as emotion,
    ):
        dialog_lines, act_lines, emotion_lines = (
            checked_lines(handle, str(files[role]))
            for role, handle in (("dialog", dialog), ("act", act), ("emotion", emotion))
        )
        return read_dialogues(
            dialog_lines,
            act_lines,
            emotion_lines,
            {role: str(file) for role, file in files.items()},
        )


class DailyDialog(ReleaseBuilder):
    """DailyDialog (Li et al., IJCNLP 2017); see the module docstring."""

    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIG_CLASS = DailyDialogConfig
    BUILDER_CONFIGS: ClassVar[list[DailyDialogConfig]] = [
        DailyDialogConfig(
            name="dialogues",
            version=VERSION,
            description="one record per dialogue: its turns, and an act and an emotion per turn",
        ),
        DailyDialogConfig(
            name="pairs",
            version=VERSION,
            description=(
                "one record per turn after the first: the turns before it (context) and the turn "
                "(response), as Han et al. 2022's context-response pairs"
            ),
        ),
    ]
    DEFAULT_CONFIG_NAME = "dialogues"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        check_flag(self.config.parlai_normalization, "parlai_normalization")

    def _info(self) -> datasets.DatasetInfo:
        string, strings = datasets.Value("string"), datasets.List(datasets.Value("string"))
        act, emotion = (
            datasets.ClassLabel(names=list(ACT_NAMES)),
            datasets.ClassLabel(names=list(EMOTION_NAMES)),
        )
        if self.config.name == "dialogues":
            features = {
                "id": string,
                "dialog": strings,
                "act": datasets.List(act),
                "emotion": datasets.List(emotion),
            }
        else:
            features = {
                "id": string,
                "dialogue_id": string,
                "turn": datasets.Value("int32"),
                "context": strings,
                "response": string,
                "response_act": act,
                "response_emotion": emotion,
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
        if (
            root is not None
            and root.is_dir()
            and not any((root / relative).is_file() for relative in ARCHIVE.local_paths)
        ):
            unzipped = {
                split: unzipped_split(config.data_dir, name) for split, name in SPLITS.items()
            }
            if all(unzipped.values()):
                if config.verify_checksums:
                    raise ValueError(
                        f"{config.data_dir}: found an unzipped DailyDialog but not "
                        f"{ARCHIVE.name}; only the archive's sha256 is published, so put the "
                        "archive there or pass verify_checksums=False to read the unzipped files "
                        "unchecked"
                    )
                return [
                    datasets.SplitGenerator(
                        name=split,
                        gen_kwargs={
                            "archive": None,
                            "unzipped": str(path),
                            "release_name": SPLITS[split],
                        },
                    )
                    for split, path in unzipped.items()
                ]
            if any(unzipped.values()):
                missing = sorted(SPLITS[split] for split, path in unzipped.items() if path is None)
                raise SourceNotAvailableError(
                    f"{config.data_dir}: the unzipped DailyDialog lacks the {missing} split(s); "
                    f"the release is {ARCHIVE.name} from {SOURCE_URL}"
                )
        archive = resolve_source(
            ARCHIVE, dl_manager, config.data_dir, verify=config.verify_checksums
        )
        return [
            datasets.SplitGenerator(
                name=split, gen_kwargs={"archive": archive, "unzipped": None, "release_name": name}
            )
            for split, name in SPLITS.items()
        ]

    def _generate_examples(
        self, archive: str | None, unzipped: str | None, release_name: str
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        if archive is not None:
            dialogues = read_release_archive(archive, release_name)
        else:
            assert unzipped is not None  # _split_generators gives the archive or the folder
            dialogues = read_unzipped_split(Path(unzipped), release_name)
        if self.config.parlai_normalization:
            for dialogue in dialogues:
                dialogue["dialog"] = [parlai_cleanup(turn) for turn in dialogue["dialog"]]
        for index, dialogue in enumerate(dialogues):
            dialogue_id = f"{release_name}-{index}"
            if self.config.name == "dialogues":
                yield dialogue_id, {"id": dialogue_id, **dialogue}
                continue
            for turn, context, response in context_response_pairs(dialogue["dialog"]):
                pair_id = f"{dialogue_id}-{turn}"
                yield (
                    pair_id,
                    {
                        "id": pair_id,
                        "dialogue_id": dialogue_id,
                        "turn": turn,
                        "context": context,
                        "response": response,
                        "response_act": dialogue["act"][turn],
                        "response_emotion": dialogue["emotion"][turn],
                    },
                )
