"""ENTQ / CNTQ polar echo questions and the unlikelihood training samples, built from MultiNLI.

Sato, Akama, Ouchi, Tokuhisa, Suzuki & Inui, "N-best Response-based Analysis of
Contradiction-awareness in Neural Response Generation Models", SIGDIAL 2022. Inputs (§3.1,
§4.1, Table 1): the premise of a MultiNLI pair of the TELEPHONE genre is the *history*; its
hypothesis, rewritten into a polar echo question by App. A's rules
(:mod:`.rewriting`), is the *message*.

================  ===========  ==========================================================  =========
config            split        records                                                     default
================  ===========  ==========================================================  =========
``entq``          test         entailment pairs; "Are you ...?"; expected answer "yes"     2,000
``cntq``          test         contradiction pairs; "Aren't you ...?"; expected "no"       2,000
``unlikelihood``  train/valid  per premise with both hypotheses: PositiveQ1/Q2,            2,000
                               NegativeQ1/Q2 with gold and negative responses (Table 7),   premises
                               split 9:1 (App. C; by premise in the authors' selection)    (8,000)
================  ===========  ==========================================================  =========

Selection (``selection``):

- ``"authors"`` (default), the released notebook ``construct_yesno_dataset.ipynb``: the
  telephone-genre entailment and contradiction pairs of the MultiNLI file (``mnli_split``,
  default ``train``) are rewritten **in file order**; a pair is kept when its premise passes the
  premise filters and its hypothesis gives both the positive and the negative question. A
  premise kept with both an entailment and a contradiction pair is *paired*: paired premises go
  to unlikelihood training (the first ``num_unlikelihood_premises``, the first 90 % of them
  train and the next 10 % validation, in file order: ``head -n 1800`` / lines 1801-2000), and
  the first ``num_inputs`` *unpaired* pairs of each label are ENTQ and CNTQ. So ENTQ, CNTQ and
  the unlikelihood data never share a premise (App. C footnote 10).
- ``"shuffled"``: the pairs are shuffled with ``seed`` and the first ``num_inputs`` rewritable
  pairs of each label are ENTQ / CNTQ (a premise may be in both); unlikelihood premises are
  drawn from the premises used by neither and their samples split 9:1 at random (App. C's
  wording).

Too few pairs is a ``ValueError``, never a smaller set.

Source: ``multinli_1.0.zip`` from NYU (pinned URL below) or from ``data_dir``, checked against
its published sha256 (:data:`MULTINLI_SHA256`) unless ``verify_checksums=False``. The unzipped
``multinli_1.0_<split>.jsonl`` (bare or in ``multinli_1.0/`` under ``data_dir``, or named by
``source_path``) is read too, but no digest of the extracted files is published: it needs
``sha256=`` (its digest, checked) or ``verify_checksums=False``, as EmpatheticDialogues' extracted
CSVs do (see README.md).

POS tagging: ``tagger=None`` uses spaCy ``en_core_web_sm`` (App. A) and fails with
:class:`~.rewriting.TaggerNotAvailableError` when it is not installed; pass any callable
``text -> list[TaggedToken]`` instead.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import datasets

from dialeval.datasets_scripts._release_builder import ReleaseBuilder
from dialeval.datasets_scripts._sources import SourceFile, resolve_source, sha256_of
from dialeval.datasets_scripts._text_files import checked_lines, open_release_text
from dialeval.datasets_scripts.polar_questions.rewriting import (
    TaggedToken,
    Tagger,
    Unrewritable,
    answer_sentence,
    history_utterance,
    load_tagger,
    polar_question,
    premise_skip_reason,
)
from dialeval.validation import ArgumentError

_CITATION = """\
@inproceedings{sato-etal-2022-n,
    title = "N-best Response-based Analysis of Contradiction-awareness in Neural Response Generation Models",
    author = "Sato, Shiki and Akama, Reina and Ouchi, Hiroki and Tokuhisa, Ryoko and Suzuki, Jun and Inui, Kentaro",
    booktitle = "Proceedings of the 23rd Annual Meeting of the Special Interest Group on Discourse and Dialogue",
    year = "2022",
    pages = "637--644",
    url = "https://aclanthology.org/2022.sigdial-1.60",
}
@inproceedings{williams-etal-2018-broad,
    title = "A Broad-Coverage Challenge Corpus for Sentence Understanding through Inference",
    author = "Williams, Adina and Nangia, Nikita and Bowman, Samuel",
    booktitle = "Proceedings of NAACL-HLT 2018",
    year = "2018",
    pages = "1112--1122",
    url = "https://aclanthology.org/N18-1101",
}
"""  # noqa: E501
_DESCRIPTION = (
    "Polar echo questions built from MultiNLI telephone-genre pairs (Sato et al. 2022): ENTQ "
    "(entailment, positive question, expected answer yes), CNTQ (contradiction, negative "
    "question, expected answer no), and unlikelihood training samples (PositiveQ1/Q2, "
    "NegativeQ1/Q2 with gold and negative responses)."
)
_HOMEPAGE = "https://github.com/shiki-sato/nbest-contradiction-analysis"
_LICENSE = (
    "Derived from MultiNLI (OANC telephone transcripts: free to use; see the MultiNLI data "
    "description)"
)

MULTINLI_URL = "https://cims.nyu.edu/~sbowman/multinli/multinli_1.0.zip"
#: Published, not computed here (no network, and the archive is not in ../shared/data): the digest
#: huggingface/datasets records for MULTINLI_URL (226,850,426 bytes;
#: datasets/multi_nli/dataset_infos.json), and the one dellison/NLIDatasets.jl pins for the same
#: archive (src/multinli.jl).
MULTINLI_SHA256 = "049f507b9e36b1fcb756cfd5aeb3b7a0cfcb84bf023793652987f7e7e0957822"
MULTINLI_ARCHIVE = SourceFile(
    "multinli_1.0.zip",
    MULTINLI_URL,
    ("multinli_1.0.zip", "multinli_1.0/multinli_1.0.zip"),
    (MULTINLI_SHA256,),
)
MNLI_SPLITS = ("train", "dev_matched")
GENRE = "telephone"
ENTAILMENT, CONTRADICTION = "entailment", "contradiction"
REQUIRED_FIELDS = ("pairID", "promptID", "genre", "gold_label", "sentence1", "sentence2")
QUESTION_TYPES = ("PositiveQ1", "PositiveQ2", "NegativeQ1", "NegativeQ2")
VALIDATION_FRACTION = 0.1  # App. C: train : valid = 9 : 1
SELECTIONS = ("authors", "shuffled")


def multinli_source(split: str) -> SourceFile:
    """The zip (URL) and where the extracted ``multinli_1.0_<split>.jsonl`` may sit under data_dir
    (no digest: only the archive's is published)."""
    name = f"multinli_1.0_{split}.jsonl"
    return SourceFile(name, MULTINLI_URL, (name, f"multinli_1.0/{name}"), ())


def _extracted_member(archive: str, dl_manager: datasets.DownloadManager, name: str) -> str:
    path = os.path.join(dl_manager.extract(archive), "multinli_1.0", name)
    if not os.path.isfile(path):
        raise ValueError(
            f"{archive}: no multinli_1.0/{name} in it (expected the release's "
            f"{MULTINLI_ARCHIVE.name} from {MULTINLI_URL})"
        )
    return path


@dataclass
class PolarQuestionsConfig(datasets.BuilderConfig):
    """``tagger``: None (spaCy en_core_web_sm) or a callable; ``source_path``: an explicit jsonl;
    ``selection``: ``"authors"`` (default) or ``"shuffled"`` (module docstring; ``seed`` is
    used by ``"shuffled"`` only)."""

    num_inputs: int = 2000
    num_unlikelihood_premises: int = 2000
    selection: str = "authors"
    seed: int = 0
    mnli_split: str = "train"
    source_path: str | None = None
    sha256: str | None = None
    tagger: Tagger | None = None
    verify_checksums: bool = True


def read_multinli(path: str) -> list[dict]:
    """Every record of a MultiNLI JSON Lines file; a malformed line is a ValueError naming it."""
    records = []
    with open_release_text(path) as handle:
        for line_number, line in enumerate(checked_lines(handle, path), start=1):
            if not line.strip():
                continue
            where = f"{path}, line {line_number}"
            try:
                record = json.loads(line)
            # ValueError: also an integer past Python's int-conversion limit (thousands of digits)
            except ValueError as error:
                raise ValueError(f"{where}: not valid JSON ({error})") from None
            if not isinstance(record, dict):
                raise ValueError(f"{where}: expected a JSON object")
            missing = [field for field in REQUIRED_FIELDS if field not in record]
            if missing:
                raise ValueError(f"{where}: missing MultiNLI field(s) {missing}")
            for field in REQUIRED_FIELDS:
                if not isinstance(record[field], str):
                    raise ValueError(
                        f"{where}: `{field}` must be a string, got {record[field]!r:.60}"
                    )
            records.append(record)
    return records


def _check_count(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ArgumentError(name, f"must be a positive int, got {value!r}")


class _CachedTagger:
    """Tags each distinct sentence once (a hypothesis is rewritten in up to two forms)."""

    def __init__(self, tagger: Tagger) -> None:
        self.tagger: Tagger = tagger
        self.cache: dict[str, list[TaggedToken]] = {}

    def __call__(self, text: str) -> list[TaggedToken]:
        if text not in self.cache:
            self.cache[text] = self.tagger(text)
        return self.cache[text]


def _premise_ok(record: dict, tag: Tagger) -> bool:
    return premise_skip_reason(tag(record["sentence1"])) is None


def _test_input(record: dict, tag: Tagger, negative: bool) -> dict | None:
    if not _premise_ok(record, tag):
        return None
    try:
        message = polar_question(tag(record["sentence2"]), negative=negative)
        history = history_utterance(record["sentence1"])
    except Unrewritable:
        return None
    return {
        "id": record["pairID"],
        "prompt_id": record["promptID"],
        "input_type": "CNTQ" if negative else "ENTQ",
        "history": history,
        "message": message,
        "expected_answer": "no" if negative else "yes",
        "premise": record["sentence1"],
        "hypothesis": record["sentence2"],
    }


def _select_test_inputs(
    records: list[dict], tag: Tagger, label: str, negative: bool, num_inputs: int
) -> list[dict]:
    selected = []
    for record in records:
        if record["gold_label"] != label:
            continue
        item = _test_input(record, tag, negative)
        if item is not None:
            selected.append(item)
            if len(selected) == num_inputs:
                return selected
    raise ValueError(
        f"only {len(selected)} {label} pairs of the {GENRE} genre can be rewritten into questions; "
        f"`num_inputs` asks for {num_inputs}"
    )


def _unlikelihood_samples(
    prompt_id: str, entailment: dict, contradiction: dict, tag: Tagger
) -> list[dict] | None:
    """Table 7: four questions from one premise with an entailing and a contradicting hypothesis."""
    try:
        entailed, contradicted = tag(entailment["sentence2"]), tag(contradiction["sentence2"])
        history = history_utterance(entailment["sentence1"])
        questions = {
            "PositiveQ1": polar_question(entailed),
            "PositiveQ2": polar_question(contradicted),
            "NegativeQ1": polar_question(entailed, negative=True),
            "NegativeQ2": polar_question(contradicted, negative=True),
        }
    except Unrewritable:
        return None
    samples = []
    for question_type in QUESTION_TYPES:
        asks_entailed = question_type.endswith("Q1")
        # The gold answer restates the entailed hypothesis, the negative one the contradicted
        # (Table 7).
        samples.append(
            {
                "id": f"{prompt_id}-{question_type}",
                "prompt_id": prompt_id,
                "question_type": question_type,
                "history": history,
                "message": questions[question_type],
                "gold_response": answer_sentence(entailed, "Yes" if asks_entailed else "No"),
                "negative_response": answer_sentence(
                    contradicted, "No" if asks_entailed else "Yes"
                ),
            }
        )
    return samples


def _premise_key(record: dict) -> str:
    return " ".join(record["sentence1"].split())


def _authors_selection(
    pool: list[dict],
    tag: Tagger,
    num_inputs: int,
    num_unlikelihood_premises: int,
    configs: Collection[str],
) -> dict:
    """The released notebook's selection, in file order (module docstring)."""
    kept: dict[str, list[tuple[dict, dict, dict]]] = {ENTAILMENT: [], CONTRADICTION: []}
    for record in pool:
        # Both labels go through the negative transformation in the notebook, so both forms must
        # exist.
        positive, negative = (
            _test_input(record, tag, negative=False),
            _test_input(record, tag, negative=True),
        )
        if positive is not None and negative is not None:
            kept[record["gold_label"]].append((record, positive, negative))
    contradictions: dict[str, tuple[dict, dict, dict]] = {}
    for item in kept[CONTRADICTION]:
        contradictions.setdefault(_premise_key(item[0]), item)
    paired, paired_keys = [], set()
    for item in kept[ENTAILMENT]:
        key = _premise_key(item[0])
        if key in contradictions and key not in paired_keys:
            paired.append((item, contradictions[key]))
            paired_keys.add(key)
    result: dict[str, Any] = {}
    for config, label, form in (("entq", ENTAILMENT, 1), ("cntq", CONTRADICTION, 2)):
        if config not in configs:
            continue
        unpaired = [item[form] for item in kept[label] if _premise_key(item[0]) not in paired_keys]
        if len(unpaired) < num_inputs:
            raise ValueError(
                f"only {len(unpaired)} {label} pairs of the {GENRE} genre are rewritable and "
                "unpaired (their premise has no rewritable "
                f"{ENTAILMENT if label == CONTRADICTION else CONTRADICTION} pair); `num_inputs` "
                f"asks for {num_inputs}"
            )
        result[config] = unpaired[:num_inputs]
    if "unlikelihood" in configs:
        if len(paired) < num_unlikelihood_premises:
            raise ValueError(
                f"only {len(paired)} {GENRE} premises have a rewritable entailment and "
                "contradiction hypothesis; `num_unlikelihood_premises` asks for "
                f"{num_unlikelihood_premises}"
            )
        premises = []
        for (entailment, _, _), (contradiction, _, _) in paired[:num_unlikelihood_premises]:
            # never None: both hypotheses were rewritten in both forms when they were kept
            premises.append(
                cast(
                    "list[dict]",
                    _unlikelihood_samples(entailment["promptID"], entailment, contradiction, tag),
                )
            )
        num_validation = round(num_unlikelihood_premises * VALIDATION_FRACTION)
        train_premises = num_unlikelihood_premises - num_validation
        result["unlikelihood"] = {
            "train": [sample for four in premises[:train_premises] for sample in four],
            "validation": [sample for four in premises[train_premises:] for sample in four],
        }
    return result


def build_polar_question_sets(
    records: Iterable[dict],
    tagger: Tagger | None,
    num_inputs: int = 2000,
    num_unlikelihood_premises: int = 2000,
    seed: int = 0,
    configs: Collection[str] = ("entq", "cntq", "unlikelihood"),
    selection: str = "authors",
) -> dict:
    """The records of each requested config (see the module docstring for ``selection``)."""
    _check_count(num_inputs, "num_inputs")
    _check_count(num_unlikelihood_premises, "num_unlikelihood_premises")
    unknown = sorted(set(configs) - {"entq", "cntq", "unlikelihood"})
    if unknown:
        raise ArgumentError(
            "configs", f"must be among 'entq', 'cntq', 'unlikelihood', got {unknown}"
        )
    if selection not in SELECTIONS:
        raise ArgumentError("selection", f"must be one of {SELECTIONS}, got {selection!r}")
    tag = _CachedTagger(load_tagger(tagger))
    pool = [
        record
        for record in records
        if record["genre"] == GENRE and record["gold_label"] in (ENTAILMENT, CONTRADICTION)
    ]
    if selection == "authors":
        return _authors_selection(pool, tag, num_inputs, num_unlikelihood_premises, set(configs))
    random.Random(seed).shuffle(pool)
    result: dict[str, Any] = {}
    # The unlikelihood premises must avoid the ENTQ/CNTQ ones, so those are selected first.
    if {"entq", "unlikelihood"} & set(configs):
        result["entq"] = _select_test_inputs(pool, tag, ENTAILMENT, False, num_inputs)
    if {"cntq", "unlikelihood"} & set(configs):
        result["cntq"] = _select_test_inputs(pool, tag, CONTRADICTION, True, num_inputs)
    if "unlikelihood" in configs:
        used = {item["prompt_id"] for key in ("entq", "cntq") for item in result[key]}
        by_premise: dict[str, dict[str, dict]] = {}
        for record in pool:
            if record["promptID"] not in used:
                by_premise.setdefault(record["promptID"], {}).setdefault(
                    record["gold_label"], record
                )
        samples = []
        premises = 0
        for prompt_id, pair in by_premise.items():
            if (
                ENTAILMENT not in pair
                or CONTRADICTION not in pair
                or not _premise_ok(pair[ENTAILMENT], tag)
            ):
                continue
            four = _unlikelihood_samples(prompt_id, pair[ENTAILMENT], pair[CONTRADICTION], tag)
            if four is not None:
                samples.extend(four)
                premises += 1
                if premises == num_unlikelihood_premises:
                    break
        if premises < num_unlikelihood_premises:
            raise ValueError(
                f"only {premises} {GENRE} premises outside ENTQ/CNTQ have a rewritable entailment "
                "and contradiction hypothesis; `num_unlikelihood_premises` asks for "
                f"{num_unlikelihood_premises}"
            )
        random.Random(seed).shuffle(samples)
        num_validation = round(len(samples) * VALIDATION_FRACTION)
        result["unlikelihood"] = {
            "train": samples[num_validation:],
            "validation": samples[:num_validation],
        }
    return {key: value for key, value in result.items() if key in configs}


def _has_archive(data_dir: str) -> bool:
    root = os.path.expanduser(data_dir)
    return any(
        os.path.isfile(os.path.join(root, relative)) for relative in MULTINLI_ARCHIVE.local_paths
    )


class PolarQuestions(ReleaseBuilder):
    """ENTQ / CNTQ / unlikelihood samples (Sato et al. 2022); see the module docstring."""

    VERSION = datasets.Version("1.0.0")
    BUILDER_CONFIG_CLASS = PolarQuestionsConfig
    BUILDER_CONFIGS: ClassVar[list[PolarQuestionsConfig]] = [
        PolarQuestionsConfig(
            name="entq",
            version=VERSION,
            description=(
                "ENTQ: entailment hypotheses as positive polar questions (expected answer yes)"
            ),
        ),
        PolarQuestionsConfig(
            name="cntq",
            version=VERSION,
            description=(
                "CNTQ: contradiction hypotheses as negative polar questions (expected answer no)"
            ),
        ),
        PolarQuestionsConfig(
            name="unlikelihood",
            version=VERSION,
            description=(
                "Table 7 unlikelihood samples: PositiveQ1/Q2, NegativeQ1/Q2 with gold and "
                "negative responses"
            ),
        ),
    ]
    DEFAULT_CONFIG_NAME = "entq"

    def _info(self) -> datasets.DatasetInfo:
        string = datasets.Value("string")
        fields: tuple[str, ...]
        if self.config.name == "unlikelihood":
            fields = (
                "id",
                "prompt_id",
                "question_type",
                "history",
                "message",
                "gold_response",
                "negative_response",
            )
        else:
            fields = (
                "id",
                "prompt_id",
                "input_type",
                "history",
                "message",
                "expected_answer",
                "premise",
                "hypothesis",
            )
        return datasets.DatasetInfo(
            description=_DESCRIPTION,
            features=datasets.Features({field: string for field in fields}),
            homepage=_HOMEPAGE,
            license=_LICENSE,
            citation=_CITATION,
        )

    def _source_path(self, dl_manager: datasets.DownloadManager) -> str:
        config = self.config
        if config.mnli_split not in MNLI_SPLITS:
            raise ArgumentError(
                "mnli_split", f"must be one of {MNLI_SPLITS}, got {config.mnli_split!r}"
            )
        source = multinli_source(config.mnli_split)
        verify = config.verify_checksums
        if config.source_path is not None:
            if not os.path.isfile(config.source_path):
                raise ArgumentError("source_path", f"{config.source_path!r} is not a file")
            path, extracted = config.source_path, True
        elif config.data_dir is not None and not _has_archive(config.data_dir):
            path, extracted = (
                resolve_source(source, dl_manager, config.data_dir, verify=False),
                True,
            )
        else:  # the archive, under data_dir or downloaded, checked against its published digest
            archive = resolve_source(MULTINLI_ARCHIVE, dl_manager, config.data_dir, verify=verify)
            path, extracted = _extracted_member(archive, dl_manager, source.name), False
        if verify and config.sha256 is not None:
            digest = sha256_of(path)
            if digest != config.sha256:
                raise ValueError(
                    f"{path}: sha256 {digest} is not the given `sha256` {config.sha256}"
                )
        elif verify and extracted:
            raise ValueError(
                f"{path}: an extracted MultiNLI file, but only the sha256 of "
                f"{MULTINLI_ARCHIVE.name} is published; put the archive in `data_dir`, pass "
                "`sha256=` (the file's digest) or verify_checksums=False to read it unchecked"
            )
        return path

    def _split_generators(
        self, dl_manager: datasets.DownloadManager
    ) -> list[datasets.SplitGenerator]:
        path = self._source_path(dl_manager)
        sets = build_polar_question_sets(
            read_multinli(path),
            self.config.tagger,
            self.config.num_inputs,
            self.config.num_unlikelihood_premises,
            self.config.seed,
            configs=(self.config.name,),
            selection=self.config.selection,
        )[self.config.name]
        if self.config.name == "unlikelihood":
            return [
                datasets.SplitGenerator(
                    name=datasets.Split.TRAIN, gen_kwargs={"items": sets["train"]}
                ),
                datasets.SplitGenerator(
                    name=datasets.Split.VALIDATION, gen_kwargs={"items": sets["validation"]}
                ),
            ]
        return [datasets.SplitGenerator(name=datasets.Split.TEST, gen_kwargs={"items": sets})]

    def _generate_examples(self, items: list[dict]) -> Iterator[tuple[int, dict]]:
        yield from enumerate(items)
