"""Hostile data for the trainers' data preparation and the dataset builders' readers.

Trainers: tokenized rows with random label lengths, random token ids (negative, out of the
vocabulary, -100), mask values and an extra NaN column; raw text with lone surrogates. A row set is
prepared or refused with a ValueError naming the argument, never another exception; what is
accepted is what the model can read (every id in the vocabulary, causal labels as long as the
input ids); the ``datasets.Dataset`` path (whole columns, pyarrow) and the lazy path (row by row)
accept and refuse the same rows; an extra column changes nothing but is named when dropped.

Builders: random bytes inside a released file's text, and truncated or junk archives, give records
or a ValueError naming the file, never a bare UnicodeDecodeError or DatasetGenerationError.
"""

from __future__ import annotations

import io
import math
import tarfile
import warnings

import datasets
from hypothesis import given
from hypothesis import strategies as st
from property_support import fewer, outcome, refused

from dialeval.datasets_scripts import load
from dialeval.trainers.dataset_types import map_style_training_set, prepare_any_dataset
from dialeval.trainers.dropped_columns import TEXT_COLUMNS, warn_dropped_columns
from dialeval.trainers.text_checks import lone_surrogate

VOCABULARY = 50
IGNORE = -100
token_ids = st.one_of(
    st.integers(0, VOCABULARY - 1),
    st.integers(-3, -1),
    st.integers(VOCABULARY, VOCABULARY + 3),
    st.just(IGNORE),
    st.integers(-(2**40), 2**40),
)


@st.composite
def tokenized_rows(draw):
    """Rows that are mostly well formed (a context of -100 labels, then targets), each broken at random."""
    rows = []
    for _ in range(draw(st.integers(1, 5))):
        context = draw(st.integers(1, 5))
        response = draw(st.integers(1, 5))
        ids = draw(
            st.lists(
                st.integers(0, VOCABULARY - 1),
                min_size=context + response,
                max_size=context + response,
            )
        )
        labels = [IGNORE] * context + ids[context:]
        mask = [1] * len(ids)
        breakage = draw(
            st.sampled_from(["none", "label_length", "id", "label", "mask_length", "mask_value"])
        )
        if breakage == "label_length":
            labels = (
                labels[: draw(st.integers(0, len(labels) - 1))]
                if draw(st.booleans())
                else labels + draw(st.lists(token_ids, min_size=1, max_size=3))
            )
        elif breakage in ("id", "label"):
            target = ids if breakage == "id" else labels
            target[draw(st.integers(0, len(target) - 1))] = draw(token_ids)
        elif breakage == "mask_length":
            mask = mask[:-1]
        elif breakage == "mask_value":
            mask[draw(st.integers(0, len(mask) - 1))] = draw(st.sampled_from([2, -1]))
        rows.append({"input_ids": ids, "attention_mask": mask, "labels": labels})
    return rows


def model_can_read(rows, causal: bool) -> bool:
    """The oracle: what a model with VOCABULARY token ids reads without an IndexError or a shape error."""
    for row in rows:
        ids, labels, mask = row["input_ids"], row["labels"], row["attention_mask"]
        if not ids or len(mask) != len(ids) or any(value not in (0, 1) for value in mask):
            return False
        if causal and len(labels) != len(ids):
            return False
        if any(not 0 <= token < VOCABULARY for token in ids):
            return False
        if any(label != IGNORE and not 0 <= label < VOCABULARY for label in labels):
            return False
    return True


def prepare(data, causal: bool):
    return prepare_any_dataset(
        data,
        "train_dataset",
        None,
        is_encoder_decoder=not causal,
        max_length=64,
        raw_columns=("context", "response"),
        label_columns=("labels",),
        vocabulary_size=VOCABULARY,
    )


def prepare_lazily(rows, causal: bool):
    prepared = prepare(list(rows), causal)  # a list is a map-style dataset: prepared row by row
    return [prepared[index] for index in range(len(prepared))]


@given(rows=tokenized_rows(), causal=st.booleans(), nan_column=st.booleans())
def test_malformed_rows_are_refused_naming_the_argument_and_the_accepted_are_readable(
    rows, causal, nan_column
):
    table = {key: [row[key] for row in rows] for key in rows[0]}
    if nan_column:
        table["score"] = [math.nan] * len(rows)
    data = datasets.Dataset.from_dict(table)
    whole = outcome(prepare, data, causal)
    lazy = outcome(prepare_lazily, rows, causal)
    assert refused(whole) == refused(lazy), (whole, lazy)
    if refused(whole):
        assert str(whole.error).startswith("`train_dataset` "), whole
        assert isinstance(whole.error, ValueError) and isinstance(lazy.error, ValueError)
        # A refusal may also be a label rule (no context / no target): only an unreadable set must be refused.
    else:
        assert model_can_read(rows, causal)
        assert whole["input_ids"] == [row["input_ids"] for row in rows]
    if not model_can_read(rows, causal):
        assert refused(whole)


text = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
surrogate_text = st.builds(
    lambda before, surrogate, after: before + surrogate + after,
    text,
    st.sampled_from(["\ud800", "\udfff", "\udc80", "\ud83d"]),
    text,
)


@given(
    rows=st.lists(
        st.fixed_dictionaries(
            {
                "context": st.one_of(
                    text,
                    surrogate_text,
                    st.lists(st.one_of(text, surrogate_text), min_size=1, max_size=3),
                ),
                "response": st.one_of(text, surrogate_text),
            }
        ),
        min_size=1,
        max_size=4,
    )
)
def test_text_with_lone_surrogates_is_refused_naming_the_row_never_a_codec_error(rows):
    result = outcome(map_style_training_set, rows)
    with_surrogate = [index for index, row in enumerate(rows) if lone_surrogate(row) is not None]
    if with_surrogate:
        assert refused(result) and str(result.error).startswith(
            f"`train_dataset` row {with_surrogate[0]}: "
        ), result
        assert "lone surrogate" in str(result.error)
    elif refused(result):  # a column of strings in some rows and lists in others
        assert str(result.error).startswith("`train_dataset` rows do not make one table"), result
    else:
        assert result["response"] == [row["response"] for row in rows]


@given(
    columns=st.lists(
        st.sampled_from(
            [
                "input_ids",
                "labels",
                "score",
                "note",
                "context",
                "response",
                "prompt",
                "dress_weight",
                "text",
            ]
        ),
        unique=True,
        max_size=6,
    )
)
def test_a_dropped_column_is_said_unless_it_is_a_documented_text_column(columns):
    kept = ["input_ids", "labels", "attention_mask", "dress_weight"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_dropped_columns(columns, kept, "Training", set())
    unexpected = sorted(set(columns) - set(kept) - set(TEXT_COLUMNS))
    assert bool(caught) == bool(unexpected)
    if unexpected:
        assert f"`train_dataset` has columns {unexpected}" in str(caught[0].message)


# -- builders -------------------------------------------------------------------------------------------------------


def splice(good: bytes, junk: bytes, at: float) -> bytes:
    position = int(len(good) * at)
    return good[:position] + junk + good[position:]


junk_bytes = st.binary(min_size=1, max_size=8)
CIRCA_ROWS = [
    (
        "1",
        "X wants to know about Y's food preferences.",
        "Are you vegan?",
        "I am vegan.",
        "I love burgers too much.",
        "No#No#No#No#No",
        "No",
        "No",
    ),
    (
        "2",
        "X wants to know about Y's music.",
        "Do you like jazz?",
        "I like jazz.",
        "All day, every day \u2019.",
        "Yes#Yes#Yes#Probably yes / sometimes yes#Yes",
        "Yes",
        "Yes",
    ),
]
MNLI_RECORDS = [
    {
        "pairID": f"{n}e",
        "promptID": str(n),
        "genre": "telephone",
        "gold_label": "entailment",
        "sentence1": f"i lived in town {n} for years \u00e9",
        "sentence2": f"I lived in town {n}.",
    }
    for n in range(4)
]
ED_HEADER = "conv_id,utterance_idx,context,prompt,speaker_idx,utterance,selfeval,tags"
ED_ROWS = [
    "hit:0_conv:1,1,sentimental,Fireworks with my friend_comma_ caf\u00e9.,1,I remember the fireworks.,5|5|5_2|2|5,",
    "hit:0_conv:1,2,sentimental,Fireworks with my friend_comma_ caf\u00e9.,0,Was it fun?,5|5|5_2|2|5,",
    "hit:1_conv:2,1,afraid,A noise at night.,2,I heard a noise downstairs.,,",
    "hit:1_conv:2,2,afraid,A noise at night.,3,Oh no_comma_ what was it?,,",
]


def ed_csv(rows=ED_ROWS) -> bytes:
    return ("\n".join([ED_HEADER, *rows]) + "\n").encode("utf-8")


@fewer(3)
@given(junk=junk_bytes, at=st.floats(0, 1))
def test_circa_with_random_bytes_gives_rows_or_a_valueerror_naming_the_file(
    tmp_path_factory, junk, at
):
    from dialeval.datasets_scripts.circa.circa import COLUMNS

    folder = tmp_path_factory.mktemp("circa")
    path = folder / "circa-data.tsv"
    good = "\n".join("\t".join(row) for row in [COLUMNS, *CIRCA_ROWS]) + "\n"
    path.write_bytes(splice(good.encode("utf-8"), junk, at))
    result = outcome(
        load,
        "circa",
        "strict",
        data_dir=str(folder),
        cache_dir=str(folder / "cache"),
        verify_checksums=False,
    )
    if refused(result):
        assert str(path) in str(result.error), result


@fewer(3)
@given(junk=junk_bytes, at=st.floats(0, 1))
def test_multinli_with_random_bytes_gives_records_or_a_valueerror_naming_the_file(
    tmp_path_factory, junk, at
):
    import json

    from dialeval.datasets_scripts.polar_questions import read_multinli

    path = tmp_path_factory.mktemp("mnli") / "multinli_1.0_train.jsonl"
    good = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in MNLI_RECORDS)
    path.write_bytes(splice(good.encode("utf-8"), junk, at))
    result = outcome(read_multinli, str(path))
    if refused(result):
        assert str(result.error).startswith(f"{path}, line "), result


def _good_archive() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name in ("train.csv", "valid.csv", "test.csv"):
            data = ed_csv()
            info = tarfile.TarInfo(f"empatheticdialogues/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


GOOD_ARCHIVE = _good_archive()


@fewer(3)
@given(cut=st.floats(0, 1), prefix=st.binary(max_size=4))
def test_a_truncated_or_junk_archive_gives_splits_or_a_valueerror_naming_it(
    tmp_path_factory, cut, prefix
):
    folder = tmp_path_factory.mktemp("ed")
    archive = folder / "empatheticdialogues.tar.gz"
    archive.write_bytes(prefix + GOOD_ARCHIVE[: int(len(GOOD_ARCHIVE) * cut)])
    result = outcome(
        load,
        "empathetic_dialogues",
        data_dir=str(folder),
        cache_dir=str(folder / "cache"),
        verify_checksums=False,
    )
    if refused(result):
        assert str(archive) in str(result.error), result
    else:
        assert set(result) == {"train", "validation", "test"}


@fewer(3)
@given(junk=junk_bytes, at=st.floats(0, 1))
def test_random_bytes_inside_the_archives_csv_are_named_with_the_member_and_line(
    tmp_path_factory, junk, at
):
    folder = tmp_path_factory.mktemp("ed-bytes")
    archive = folder / "empatheticdialogues.tar.gz"
    with tarfile.open(fileobj=io.BytesIO(GOOD_ARCHIVE)) as tar:
        members = {member.name: tar.extractfile(member).read() for member in tar.getmembers()}
    members["empatheticdialogues/valid.csv"] = splice(ed_csv(), junk, at)
    with tarfile.open(archive, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    result = outcome(
        load,
        "empathetic_dialogues",
        data_dir=str(folder),
        cache_dir=str(folder / "cache"),
        verify_checksums=False,
        split="validation",
    )
    if refused(result):
        assert f"{archive}:empatheticdialogues/valid.csv" in str(result.error), result


def test_the_oracle_refuses_the_issues_rows():
    """The reported hostile rows, as the properties above see them."""
    row = {"input_ids": [1, 2, 3], "attention_mask": [1, 1, 1], "labels": [IGNORE, 2, 3]}
    assert model_can_read([row], causal=True)
    assert not model_can_read([{**row, "labels": [IGNORE, 2]}], causal=True)
    assert not model_can_read([{**row, "input_ids": [1, 2, VOCABULARY]}], causal=True)
    assert not model_can_read([{**row, "input_ids": [-1, 2, 3]}], causal=False)
    assert refused(
        outcome(prepare, datasets.Dataset.from_list([{**row, "labels": [IGNORE, 2]}]), True)
    )
