"""Circa builder on a small synthetic TSV in the released format: both label sets, NA kept as -1,
row validation, checksum and the offline error."""

from __future__ import annotations

import pytest

from dialeval.datasets_scripts import prepare
from dialeval.datasets_scripts._sources import SourceNotAvailableError
from dialeval.datasets_scripts.circa import Circa
from dialeval.datasets_scripts.circa.circa import COLUMNS, SOURCE_FILE, SOURCE_SHA256

ROWS = [
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
        "X wants to know about Y's food preferences.",
        "Do you like spicy food?",
        "I like spicy food.",
        "I put hot sauce on everything.",
        "Yes#Yes#Yes#Probably yes / sometimes yes#Yes",
        "Yes",
        "Yes",
    ),
    (
        "3",
        "X wants to know about Y's music preferences.",
        "Would you like to go see live music?",
        "I would like to go see live music.",
        "If it's not too crowded.",
        "Yes, subject to some conditions#Yes, subject to some conditions#Yes, subject to some conditions#Yes#Other",
        "Yes, subject to some conditions",
        "Yes, subject to some conditions",
    ),
    (
        "4",
        "Y has just moved into a neighbourhood and meets his/her new neighbour X.",
        "Do you have kids?",
        "I have kids.",
        "Not yet, maybe someday.",
        "Probably no#Probably no#No#In the middle, neither yes nor no#I am not sure how X will interpret Y\u2019s answer",
        "NA",
        "No",
    ),
    (
        "5",
        "X wants to know what sorts of books Y likes to read.",
        "Do you read novels?",
        "I read novels.",
        "Sometimes.",
        (
            "I am not sure how X will interpret Y\u2019s answer#I am not sure how X will interpret Y\u2019s answer"
            "#I am not sure how X will interpret Y\u2019s answer#In the middle, neither yes nor no#Yes"
        ),
        "I am not sure how X will interpret Y\u2019s answer",
        "In the middle, neither yes nor no",
    ),
]


def write_tsv(path, rows=ROWS, header=COLUMNS):
    lines = ["\t".join(header)] + ["\t".join(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def build(cache_dir, **kwargs):
    builder = Circa(cache_dir=str(cache_dir), **kwargs)
    prepare(builder)
    return builder.as_dataset()["train"]


def test_source_is_pinned_to_the_commit():
    assert SOURCE_FILE.url.endswith("/02ad965518ab2fbd8bb24463d312ebb03bac5368/circa-data.tsv")
    assert SOURCE_FILE.sha256 == (SOURCE_SHA256,)


@pytest.mark.parametrize("config", ["strict", "relaxed"])
def test_every_row_with_its_label_set(tmp_path, config):
    write_tsv(tmp_path / "circa-data.tsv")
    data = build(
        tmp_path / "cache", config_name=config, data_dir=str(tmp_path), verify_checksums=False
    )
    assert data["id"] == [1, 2, 3, 4, 5]
    assert (
        data[0]["question"] == "Are you vegan?" and data[0]["answer"] == "I love burgers too much."
    )
    assert data[1]["judgements"] == ["Yes", "Yes", "Yes", "Probably yes / sometimes yes", "Yes"]
    names = data.features["label"].names
    labels = [None if index == -1 else names[index] for index in data["label"]]
    if config == "strict":
        assert labels == ["No", "Yes", "Yes, subject to some conditions", None, ROWS[4][6]]
        assert data["polarity"] == ["no", "yes", "yes", None, "ambiguous"]
    else:
        assert labels == [
            "No",
            "Yes",
            "Yes, subject to some conditions",
            "No",
            "In the middle, neither yes nor no",
        ]
        assert data["polarity"] == ["no", "yes", "yes", "no", "ambiguous"]


def test_apostrophe_and_case_of_labels_do_not_matter(tmp_path):
    rows = [ROWS[0][:6] + ("i am not sure how x will interpret y's answer", "yes")]
    write_tsv(tmp_path / "circa-data.tsv", rows)
    data = build(
        tmp_path / "cache", config_name="strict", data_dir=str(tmp_path), verify_checksums=False
    )
    assert data.features["label"].names[data[0]["label"]].startswith("I am not sure")


@pytest.mark.parametrize(
    ("rows", "header", "message"),
    [
        ([ROWS[0][:7]], COLUMNS, "line 2: expected 8 tab-separated columns, got 7"),
        ([("x",) + ROWS[0][1:]], COLUMNS, "line 2: `id` must be an integer"),
        ([ROWS[0][:6] + ("Maybe", "No")], COLUMNS, "line 2, goldstandard1: label 'Maybe'"),
        (ROWS, COLUMNS[:-1], "expected the Circa header"),
    ],
)
def test_malformed_rows_name_the_line(tmp_path, rows, header, message):
    write_tsv(tmp_path / "circa-data.tsv", rows, header)
    with pytest.raises(ValueError, match=message):
        build(
            tmp_path / "cache",
            config_name="relaxed",
            data_dir=str(tmp_path),
            verify_checksums=False,
        )


def test_checksum_is_verified_by_default(tmp_path):
    path = write_tsv(tmp_path / "circa-data.tsv")
    with pytest.raises(ValueError, match="is not the released circa-data.tsv"):
        build(tmp_path / "cache", config_name="relaxed", data_dir=str(tmp_path))
    with pytest.raises(ValueError, match="is not the released circa-data.tsv"):
        build(tmp_path / "cache2", config_name="relaxed", source_path=str(path))
    assert (
        len(
            build(
                tmp_path / "cache3",
                config_name="relaxed",
                source_path=str(path),
                verify_checksums=False,
            )
        )
        == 5
    )


def test_offline_without_data_dir_says_where_to_get_it(tmp_path):
    with pytest.raises(SourceNotAvailableError, match="circa-data.tsv"):
        build(tmp_path / "cache", config_name="relaxed")
