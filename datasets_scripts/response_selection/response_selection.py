"""Sato et al.'s (2020) response-selection test set with well-chosen false candidates, as a
``datasets`` builder.

Sato, Akama, Ouchi, Suzuki & Inui, "Evaluating Dialogue Generation Systems via Response
Selection", ACL 2020: §3 (construction: false candidates retrieved from OpenSubtitles2018 by
similarity to the ground truth, App. A; acceptable or ungrammatical ones removed by five crowd
workers, §3.1), §3.2 (1,019 questions: 3 context turns from the beginning of a DailyDialog
dialogue, the ground truth, 3 false candidates; questions with 6+ usable false candidates gave a
further question on the same context whose ground truth is a removed, acceptable retrieved
utterance), §4 (its use: argmin-loss selection accuracy, RANDOM vs CHOSEN).

The release (``cl-tohoku/eval-via-selection``) holds no text, only line numbers into two public
corpora, and the crowd scores. This builder rebuilds the questions from them:

- ``indice/dailydialog.txt``: per question, a 0-based line of DailyDialog's ``dialogues_text.txt``;
  the dialogue's utterances are split on ``" __eou__ "`` and the first four kept.
- ``indice/opensubtitles.txt``: per question, 3 (876 questions) or 4 (143) tab-separated 0-based
  lines of OpenSubtitles2018's English ``OpenSubtitles.raw.en``. With 3, they are the false
  candidates and the ground truth is the dialogue's 4th utterance; with 4, the first is the
  ground truth (a reused context) and the other three the false candidates.
- ``human_scores.jsonl``: per question, 4 candidates (ground truth first) x 5 scores (0-5).

Lines are counted as the authors' scripts count them (Python text mode: ``\\n``, ``\\r\\n`` and
``\\r`` each end a line) and each utterance is stripped of surrounding whitespace.

Configs:

- ``default`` ("CHOSEN"): the released questions with their scores, split ``test`` (1,019 rows).
- ``random`` ("RANDOM", §4.2, §4.3 Fig. 2): the same contexts and ground truths with 3 false
  candidates drawn uniformly from a repository (default: the OpenSubtitles file; or
  ``repository_file``), ``num_trials`` trials; trial t draws with
  ``numpy.random.default_rng([seed, t])``, so a trial is reproducible on its own. §3.2: the
  repository "does not contain the utterances in the dialogue data used to train response
  generation systems": ``exclude_file`` (one utterance per line, e.g. the systems' training
  turns) removes them from the draws. ``dialeval.metrics.response_selection.random_trial``
  draws the same trials from an in-memory repository.

Sources: the three release files are downloaded from raw URLs pinned to commit
``1476b354ab650365cbc7166c1f34dd31aa15ba16`` and sha256-checked; DailyDialog from
``ijcnlp_dailydialog.zip`` (sha256 checked); OpenSubtitles from OPUS (no published checksum: see
README.md). ``data_dir`` may hold any of them; ``dailydialog_file`` / ``opensubtitles_file`` /
``repository_file`` name files anywhere.
"""

from __future__ import annotations

import gzip
import io
import json
import logging
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TextIO

import datasets
import numpy as np

from dialeval.datasets_scripts._release_builder import ReleaseBuilder
from dialeval.datasets_scripts._sources import SourceFile, resolve_source, sha256_of
from dialeval.datasets_scripts._text_files import checked_lines, open_release_text
from dialeval.datasets_scripts.response_selection.released_scores import (
    filtering_violations,
    scores_array,
)
from dialeval.validation import ArgumentError

logger = logging.getLogger(__name__)

_CITATION = """\
@inproceedings{sato-etal-2020-evaluating,
    title = "Evaluating Dialogue Generation Systems via Response Selection",
    author = "Sato, Shiki and Akama, Reina and Ouchi, Hiroki and Suzuki, Jun and Inui, Kentaro",
    booktitle = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics",
    year = "2020",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2020.acl-main.55",
    pages = "593--599",
}
"""  # noqa: E501
_DESCRIPTION = (
    "Response selection test set for evaluating dialogue generation systems (Sato et al., ACL "
    "2020): 1,019 questions of 3 DailyDialog context turns, the ground truth and 3 false "
    "candidates retrieved from OpenSubtitles2018 to be related to the ground truth, with "
    "acceptable ones removed by five crowd workers, whose scores come with every candidate. The "
    "`random` config replaces the false candidates with uniformly sampled utterances (seeded "
    "trials)."
)
_HOMEPAGE = "https://github.com/cl-tohoku/eval-via-selection"
_LICENSE = (
    "No license stated for the release (indices and scores). The text comes from DailyDialog "
    "(CC BY-NC-SA 4.0) and OpenSubtitles2018 (OPUS; no license specified)."
)

SOURCE_COMMIT = "1476b354ab650365cbc7166c1f34dd31aa15ba16"
_RAW_URL = (
    f"https://raw.githubusercontent.com/cl-tohoku/eval-via-selection/{SOURCE_COMMIT}/{{path}}"
)
# Taken from the files of that commit (the copies in ../shared/data/eval-via-selection).
RELEASE_FILES = {
    "dialogue_indices": SourceFile(
        "indice/dailydialog.txt",
        _RAW_URL.format(path="indice/dailydialog.txt"),
        ("indice/dailydialog.txt", "dailydialog.txt"),
        ("27a115e974d1d8af55dd2c9dee24cbcfc49c62a83cdecef65606ab599aa5183d",),
    ),
    "candidate_indices": SourceFile(
        "indice/opensubtitles.txt",
        _RAW_URL.format(path="indice/opensubtitles.txt"),
        ("indice/opensubtitles.txt", "opensubtitles.txt"),
        ("70a22188318fb9e12d3bbe7c9113dfef350fc7fd529cba3a7d14bf1eff0b0001",),
    ),
    "scores": SourceFile(
        "human_scores.jsonl",
        _RAW_URL.format(path="human_scores.jsonl"),
        ("human_scores.jsonl",),
        ("5e8e4b537ca743ba37922e4536b43f1377803a9af5a47c1fcdb6a48c285fc361",),
    ),
}
#: DailyDialog's archive; the digest is the one recorded for this URL in the ``daily_dialog``
#: builder of huggingface/datasets (dataset_infos.json, 4,475,921 bytes).
DAILYDIALOG_ARCHIVE = SourceFile(
    "ijcnlp_dailydialog.zip",
    "http://yanran.li/files/ijcnlp_dailydialog.zip",
    ("ijcnlp_dailydialog.zip",),
    ("c641e88cbf21fd7c1b57289387f9107d33fe8685a2b37fe8066b82776535ea89",),
)
DAILYDIALOG_MEMBER = "ijcnlp_dailydialog/dialogues_text.txt"
#: The unzipped text has no published digest; its line count is what can be checked.
DAILYDIALOG_TEXT = SourceFile(
    "dialogues_text.txt", DAILYDIALOG_ARCHIVE.url, (DAILYDIALOG_MEMBER, "dialogues_text.txt"), ()
)
DAILYDIALOG_NUM_LINES = 13118
#: The URL of the authors' README. OPUS publishes no checksum for it, so none is pinned.
OPENSUBTITLES = SourceFile(
    "OpenSubtitles.raw.en.gz",
    "http://opus.nlpl.eu/download.php?f=OpenSubtitles/v2018/mono/OpenSubtitles.raw.en.gz",
    ("OpenSubtitles.raw.en.gz", "en.txt.gz", "OpenSubtitles.raw.en", "en.txt"),
    (),
)

NUM_QUESTIONS = 1019
CONTEXT_TURNS = 3
NUM_FALSE_CANDIDATES = 3
EOU = " __eou__ "
#: Draws per question and trial in the `random` config; the first 3 usable ones are kept.
RANDOM_DRAWS_PER_QUESTION = 10


@dataclass
class ResponseSelectionConfig(datasets.BuilderConfig):
    """A config of the test set.

    ``verify_checksums=False`` accepts files that differ from the release. ``dailydialog_file``
    (the zip or ``dialogues_text.txt``), ``opensubtitles_file`` (``.gz`` or plain) and
    ``repository_file`` (``random`` only: one utterance per line, default the OpenSubtitles
    file) name local files directly. ``seed`` and ``num_trials``: the ``random`` config's draws;
    ``exclude_file``: utterances never drawn (the systems' training data, §3.2).
    """

    verify_checksums: bool = True
    dailydialog_file: str | None = None
    opensubtitles_file: str | None = None
    repository_file: str | None = None
    seed: int = 0
    num_trials: int = 1
    exclude_file: str | None = None


# --------------------------------------------------------------------------------------------
# Reading the release
# --------------------------------------------------------------------------------------------


def _int_fields(text: str, where: str) -> list[int]:
    try:
        values = [int(field) for field in text.split("\t")]
    except ValueError:
        raise ValueError(
            f"{where}: expected tab-separated non-negative integers, got {text!r}"
        ) from None
    if any(value < 0 for value in values):
        raise ValueError(f"{where}: line numbers must be >= 0, got {text!r}")
    return values


def read_dialogue_indices(path: str) -> list[int]:
    """``indice/dailydialog.txt``: one 0-based DailyDialog line per question."""
    out = []
    with open_release_text(path) as handle:
        for number, line in enumerate(checked_lines(handle, path), start=1):
            values = _int_fields(line.strip(), f"{path}, line {number}")
            if len(values) != 1:
                raise ValueError(
                    f"{path}, line {number}: expected one line number, got {line.strip()!r}"
                )
            out.append(values[0])
    return out


def read_candidate_indices(path: str) -> list[list[int]]:
    """``indice/opensubtitles.txt``: 3 (false candidates) or 4 (ground truth first) 0-based lines
    per question."""
    out = []
    with open_release_text(path) as handle:
        for number, line in enumerate(checked_lines(handle, path), start=1):
            values = _int_fields(line.strip(), f"{path}, line {number}")
            if len(values) not in {NUM_FALSE_CANDIDATES, NUM_FALSE_CANDIDATES + 1}:
                raise ValueError(
                    f"{path}, line {number}: expected 3 or 4 line numbers, got {len(values)}"
                )
            out.append(values)
    return out


def read_scores(path: str) -> list[list[list[int]]]:
    """``human_scores.jsonl``: per question, 4 x 5 crowd scores; the §3.1 filtering rules must
    hold."""
    out = []
    with open_release_text(path) as handle:
        for number, line in enumerate(checked_lines(handle, path), start=1):
            where = f"{path}, line {number}"
            try:
                scores = scores_array([json.loads(line)])
            except (json.JSONDecodeError, ValueError) as error:
                raise ValueError(f"{where}: {error}") from None
            broken = filtering_violations(scores)
            if broken:  # the released scores are the filtered ones: a breach means a wrong file
                raise ValueError(
                    f"{where}: breaks the filtering rules of §3.1 ({'; '.join(broken)})"
                )
            out.append(scores[0].tolist())
    return out


# --------------------------------------------------------------------------------------------
# Reading the corpora
# --------------------------------------------------------------------------------------------


def _open_text(path: str) -> TextIO:
    """A text stream over a plain, gzip or DailyDialog zip file, with the line ends of Python's text
    mode."""
    with open(path, "rb") as probe:
        magic = probe.read(4)
    # surrogateescape: an undecodable byte cannot shift the line count; kept lines are checked
    # below.
    options: dict[str, Any] = {"encoding": "utf-8", "errors": "surrogateescape", "newline": None}
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rt", **options)
    if magic == b"PK\x03\x04":
        archive = zipfile.ZipFile(path)
        if DAILYDIALOG_MEMBER not in archive.namelist():
            raise ValueError(
                f"{path}: a zip without {DAILYDIALOG_MEMBER} (expected DailyDialog's "
                "ijcnlp_dailydialog.zip)"
            )
        return io.TextIOWrapper(archive.open(DAILYDIALOG_MEMBER), **options)
    return open(path, **options)


def read_lines(path: str, wanted: set[int], count_all: bool = False) -> tuple[dict[int, str], int]:
    """The lines numbered ``wanted`` (0-based) of ``path``, and the number of lines read.

    Reading stops after the last wanted line unless ``count_all`` (then the count is the file's
    line count). ``ValueError`` when the file has fewer lines than a wanted number, or a wanted
    line is not valid UTF-8.
    """
    last = max(wanted) if wanted else -1
    found: dict[int, str] = {}
    count = 0
    with _open_text(path) as handle:
        for number, line in enumerate(handle):
            count = number + 1
            if number in wanted:
                try:
                    line.encode("utf-8")
                except UnicodeEncodeError:
                    raise ValueError(
                        f"{path}: line {number} (0-based) is not valid UTF-8"
                    ) from None
                found[number] = line.rstrip("\r\n")
            if number >= last and not count_all:
                break
    if last >= count:
        raise ValueError(
            f"{path}: has {count} lines but the indices ask for line {last} (0-based); is it the "
            "right file?"
        )
    return found, count


def dialogue_utterances(line: str) -> list[str]:
    """DailyDialog's utterances of one ``dialogues_text.txt`` line (``" __eou__ "``-separated),
    stripped."""
    return [utterance.replace(" __eou__", "").strip() for utterance in line.strip().split(EOU)]


# --------------------------------------------------------------------------------------------
# Building the questions
# --------------------------------------------------------------------------------------------


def build_questions(
    dialogue_indices: Sequence[int],
    candidate_indices: Sequence[Sequence[int]],
    dialogues: dict[int, str],
    subtitles: dict[int, str],
) -> list[dict]:
    """Question rows (no scores) from the index lists and the looked-up corpus lines (§3.2)."""
    if len(dialogue_indices) != len(candidate_indices):
        raise ValueError(
            f"the index files disagree: {len(dialogue_indices)} DailyDialog and "
            f"{len(candidate_indices)} OpenSubtitles rows"
        )
    questions = []
    for question_id, (dialogue_line, lines) in enumerate(zip(dialogue_indices, candidate_indices)):
        utterances = dialogue_utterances(dialogues[dialogue_line])
        reused = len(lines) == NUM_FALSE_CANDIDATES + 1
        needed = CONTEXT_TURNS if reused else CONTEXT_TURNS + 1
        if len(utterances) < needed:
            raise ValueError(
                f"question {question_id}: DailyDialog line {dialogue_line} has {len(utterances)} "
                f"utterances, {needed} needed"
            )
        texts = [subtitles[line].strip() for line in lines]
        ground_truth = texts[0] if reused else utterances[CONTEXT_TURNS]
        candidates = [ground_truth, *texts[1:]] if reused else [ground_truth, *texts]
        row: dict[str, Any] = {
            "question_id": question_id,
            "dialogue_line": dialogue_line,
            "context": utterances[:CONTEXT_TURNS],
            "candidates": candidates,
            "label": 0,
            "ground_truth_source": "opensubtitles" if reused else "dailydialog",
            "ground_truth_line": lines[0] if reused else None,
            "false_candidate_lines": lines[1:] if reused else lines,
        }
        for name, texts_to_check in (("context", row["context"]), ("candidates", candidates)):
            for position, text in enumerate(texts_to_check):
                if not text:
                    raise ValueError(
                        f"question {question_id}: {name}[{position}] is empty after stripping; is "
                        "it the right file?"
                    )
        questions.append(row)
    return questions


def sample_false_candidates(
    questions: list[dict], num_lines: int, seed: int, trial: int
) -> list[list[int]]:
    """Repository lines drawn for every question of one trial, ``RANDOM_DRAWS_PER_QUESTION`` each,
    in draw order.

    Uniform over ``0..num_lines-1`` with ``numpy.random.default_rng([seed, trial])``.
    """
    rng = np.random.default_rng([seed, trial])
    return rng.integers(0, num_lines, size=(len(questions), RANDOM_DRAWS_PER_QUESTION)).tolist()


def utterance_key(text: str) -> str:
    """Case- and whitespace-insensitive identity of an utterance (as the metric's
    ``normalize_utterance``)."""
    return " ".join(text.lower().split())


def read_excluded(path: str) -> set[str]:
    """The utterances of ``exclude_file`` (one per line), as :func:`utterance_key` keys."""
    with open_release_text(path) as handle:
        return {key for key in map(utterance_key, checked_lines(handle, path)) if key}


def pick_false_candidates(
    question: dict,
    draws: list[int],
    repository: dict[int, str],
    excluded: frozenset[str] | set[str] = frozenset(),
) -> tuple[list[int], list[str]]:
    """The first 3 drawn lines that are non-empty, differ from the ground truth and from each other
    (compared by :func:`utterance_key`) and are not ``excluded``."""
    lines, texts = [], []
    seen = {utterance_key(question["candidates"][0])}
    for line in draws:
        text = repository[line].strip()
        key = utterance_key(text)
        if key and key not in seen and key not in excluded:
            seen.add(key)
            lines.append(line)
            texts.append(text)
            if len(texts) == NUM_FALSE_CANDIDATES:
                return lines, texts
    raise ValueError(
        f"question {question['question_id']}: only {len(texts)} of {RANDOM_DRAWS_PER_QUESTION} "
        "drawn repository lines are usable (non-empty, not the ground truth, distinct, not "
        "excluded); is the repository mostly empty or excluded lines?"
    )


# --------------------------------------------------------------------------------------------
# The builder
# --------------------------------------------------------------------------------------------


class ResponseSelection(ReleaseBuilder):
    """Sato et al. (2020) response-selection test set; see the module docstring."""

    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIG_CLASS = ResponseSelectionConfig
    BUILDER_CONFIGS: ClassVar[list[ResponseSelectionConfig]] = [
        ResponseSelectionConfig(
            name="default",
            version=VERSION,
            description=(
                "the released questions (CHOSEN false candidates) with five crowd scores per "
                "candidate"
            ),
        ),
        ResponseSelectionConfig(
            name="random",
            version=VERSION,
            description=(
                "the same contexts and ground truths, false candidates sampled uniformly from a "
                "repository (RANDOM)"
            ),
        ),
    ]
    DEFAULT_CONFIG_NAME = "default"

    def _info(self) -> datasets.DatasetInfo:
        strings = datasets.List(datasets.Value("string"))
        features = {
            "question_id": datasets.Value("int32"),
            "dialogue_line": datasets.Value("int32"),
            "context": strings,
            "candidates": strings,
            "label": datasets.Value("int32"),
            "ground_truth_source": datasets.Value("string"),
            "ground_truth_line": datasets.Value("int64"),
            "false_candidate_lines": datasets.List(datasets.Value("int64")),
        }
        if self.config.name == "default":
            features["scores"] = datasets.List(datasets.List(datasets.Value("int8")))
        else:
            features = {
                "trial": datasets.Value("int32"),
                "seed": datasets.Value("int64"),
                **features,
            }
        return datasets.DatasetInfo(
            description=_DESCRIPTION,
            features=datasets.Features(features),
            homepage=_HOMEPAGE,
            license=_LICENSE,
            citation=_CITATION,
        )

    # -- sources -------------------------------------------------------------------------------

    def _explicit(self, attribute: str) -> str | None:
        path = getattr(self.config, attribute)
        if path is None:
            return None
        if not Path(path).expanduser().is_file():
            raise ArgumentError(attribute, f"{path!r} is not a file")
        return str(Path(path).expanduser())

    def _dailydialog_path(self, dl_manager: datasets.DownloadManager) -> str:
        verify = self.config.verify_checksums
        path = self._explicit("dailydialog_file")
        if path is None and self.config.data_dir is not None:
            try:
                path = resolve_source(
                    DAILYDIALOG_TEXT, dl_manager, self.config.data_dir, verify=False
                )
            except OSError:  # no unzipped text there: look for the archive (or download it) below
                path = None
        if path is None:
            return resolve_source(
                DAILYDIALOG_ARCHIVE, dl_manager, self.config.data_dir, verify=verify
            )
        if verify:
            with open(path, "rb") as probe:
                is_zip = probe.read(4) == b"PK\x03\x04"
            if is_zip and sha256_of(path) not in DAILYDIALOG_ARCHIVE.sha256:
                raise ValueError(
                    f"{path}: sha256 {sha256_of(path)} is not the released "
                    f"{DAILYDIALOG_ARCHIVE.name}; pass verify_checksums=False to use it anyway"
                )
            if not is_zip:
                _, count = read_lines(path, set(), count_all=True)
                if count != DAILYDIALOG_NUM_LINES:
                    raise ValueError(
                        f"{path}: {count} lines, but DailyDialog's dialogues_text.txt has "
                        f"{DAILYDIALOG_NUM_LINES}; pass verify_checksums=False to use it anyway"
                    )
        return path

    def _opensubtitles_path(self, dl_manager: datasets.DownloadManager) -> str:
        path = self._explicit("opensubtitles_file") or resolve_source(
            OPENSUBTITLES, dl_manager, self.config.data_dir, verify=False
        )
        if self.config.verify_checksums:
            logger.warning(
                "%s: OPUS publishes no checksum for OpenSubtitles.raw.en.gz, so it is not verified",
                path,
            )
        return path

    def _split_generators(
        self, dl_manager: datasets.DownloadManager
    ) -> list[datasets.SplitGenerator]:
        if self.config.name == "random":
            seed, trials = self.config.seed, self.config.num_trials
            if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
                raise ArgumentError("seed", f"must be a non-negative int, got {seed!r}")
            if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
                raise ArgumentError("num_trials", f"must be a positive int, got {trials!r}")
        release = {
            key: resolve_source(
                source, dl_manager, self.config.data_dir, verify=self.config.verify_checksums
            )
            for key, source in RELEASE_FILES.items()
        }
        paths = {
            **release,
            "dailydialog": self._dailydialog_path(dl_manager),
            "opensubtitles": self._opensubtitles_path(dl_manager),
            "repository": self._explicit("repository_file"),
            "exclude": self._explicit("exclude_file"),
        }
        return [datasets.SplitGenerator(name=datasets.Split.TEST, gen_kwargs={"paths": paths})]

    # -- generation ----------------------------------------------------------------------------

    def _questions(self, paths: dict, count_subtitles: bool) -> tuple[list[dict], int]:
        dialogue_indices = read_dialogue_indices(paths["dialogue_indices"])
        candidate_indices = read_candidate_indices(paths["candidate_indices"])
        dialogues, _ = read_lines(paths["dailydialog"], set(dialogue_indices))
        subtitles, num_subtitle_lines = read_lines(
            paths["opensubtitles"],
            {line for lines in candidate_indices for line in lines},
            count_all=count_subtitles,
        )
        return build_questions(
            dialogue_indices, candidate_indices, dialogues, subtitles
        ), num_subtitle_lines

    def _generate_examples(self, paths: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
        if self.config.name == "default":
            questions, _ = self._questions(paths, count_subtitles=False)
            scores = read_scores(paths["scores"])
            if len(scores) != len(questions):
                raise ValueError(
                    f"{paths['scores']}: {len(scores)} rows of scores for {len(questions)} "
                    "questions"
                )
            for question, question_scores in zip(questions, scores):
                yield question["question_id"], {**question, "scores": question_scores}
            return
        yield from self._random_examples(paths)

    def _random_examples(self, paths: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
        repository_path = paths["repository"] or paths["opensubtitles"]
        # One pass over OpenSubtitles both finds the reused ground truths and, when it is the
        # repository, counts its lines; a separate repository is counted on its own.
        questions, num_lines = self._questions(paths, count_subtitles=paths["repository"] is None)
        if paths["repository"] is not None:
            _, num_lines = read_lines(repository_path, set(), count_all=True)
        seed = self.config.seed
        draws = [
            sample_false_candidates(questions, num_lines, seed, trial)
            for trial in range(self.config.num_trials)
        ]
        repository, _ = read_lines(
            repository_path, {line for trial in draws for row in trial for line in row}
        )
        excluded = read_excluded(paths["exclude"]) if paths["exclude"] else set()
        for trial, trial_draws in enumerate(draws):
            for question, question_draws in zip(questions, trial_draws):
                lines, texts = pick_false_candidates(question, question_draws, repository, excluded)
                row = {
                    **question,
                    "trial": trial,
                    "seed": seed,
                    "candidates": [question["candidates"][0], *texts],
                    "false_candidate_lines": lines,
                }
                yield trial * len(questions) + question["question_id"], row
