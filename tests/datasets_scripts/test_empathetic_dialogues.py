"""EmpatheticDialogues builder on synthetic files in the release's format (a tar.gz of
``empatheticdialogues/{train,valid,test}.csv``, ``_comma_`` for commas): the random turn split
of Stasaski & Hearst §6.1, the full conversations, row validation, checksums, offline error."""

from __future__ import annotations

import hashlib
import io
import tarfile

import pytest

from dialeval.datasets_scripts import load
from dialeval.datasets_scripts._sources import SourceNotAvailableError
from dialeval.datasets_scripts.empathetic_dialogues import read_conversations, split_turn
from dialeval.datasets_scripts.empathetic_dialogues.empathetic_dialogues import (
    ARCHIVE,
    COLUMNS,
    SOURCE_URL,
)

HEADER = ",".join(COLUMNS)
SITUATION = "I remember going to the fireworks with my best friend. There was a lot of people_comma_ but it only felt like us."
VALID_ROWS = [
    f"hit:0_conv:1,1,sentimental,{SITUATION},1,I remember going to see the fireworks with my best friend.,5|5|5_2|2|5,",
    f"hit:0_conv:1,2,sentimental,{SITUATION},0,Was this a friend you were in love with_comma_ or just a best friend?,5|5|5_2|2|5,",
    f"hit:0_conv:1,3,sentimental,{SITUATION},1,This was a best friend. I miss her.,5|5|5_2|2|5,",
    f"hit:0_conv:1,4,sentimental,{SITUATION},0,Where has she gone?,5|5|5_2|2|5,",
    f"hit:0_conv:1,5,sentimental,{SITUATION},1,We no longer talk.,5|5|5_2|2|5,",
    "hit:1_conv:2,2,afraid,I heard a noise downstairs at night.,3,Oh no_comma_ what was it?,,",
    "hit:1_conv:2,1,afraid,I heard a noise downstairs at night.,2,I heard a noise downstairs last night.,,",
    "hit:2_conv:4,1,proud,My son got into college.,5,My son got into his first-choice college!,,",
]
TEST_ROWS = [
    "hit:9_conv:18,1,joyful,We won the game.,7,We won the big game today!,,,That is great|Congrats_comma_ you earned it",
    "hit:9_conv:18,2,joyful,We won the game.,8,Congratulations! How do you feel?,,,",
]
TRAIN_ROWS = [
    "hit:5_conv:10,1,angry,Someone cut me off.,4,Someone cut me off on the highway.,,",
    "hit:5_conv:10,2,angry,Someone cut me off.,6,That is so dangerous.,,",
]


def csv_text(rows, header=HEADER) -> str:
    return "\n".join([header, *rows]) + "\n"


def write_archive(folder, valid=VALID_ROWS, test=TEST_ROWS, train=TRAIN_ROWS):
    """The release's layout: one tar.gz holding empatheticdialogues/{train,valid,test}.csv."""
    path = folder / "empatheticdialogues.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, rows in (("train.csv", train), ("valid.csv", valid), ("test.csv", test)):
            data = csv_text(rows).encode("utf-8")
            info = tarfile.TarInfo(f"empatheticdialogues/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def build(tmp_path, config=None, **kwargs):
    return load("empathetic_dialogues", config, cache_dir=str(tmp_path / "cache"), **kwargs)


def test_random_turn_split_of_the_dev_set(tmp_path):
    write_archive(tmp_path)
    dev = build(tmp_path, data_dir=str(tmp_path), verify_checksums=False, split="validation")
    # conv:4 has one turn: nothing to respond to, so it has no split.
    assert dev["id"] == ["hit:0_conv:1", "hit:1_conv:2"]
    first = dev[0]
    turns = [
        "I remember going to see the fireworks with my best friend.",
        "Was this a friend you were in love with, or just a best friend?",
        "This was a best friend. I miss her.",
        "Where has she gone?",
        "We no longer talk.",
    ]
    k = split_turn("hit:0_conv:1", 5)
    assert first["split_turn"] == k and first["num_turns"] == 5
    assert first["context"] == turns[:k] and first["positive_responses"] == [turns[k]]
    assert (
        first["emotion"] == "sentimental"
        and first["prompt"].startswith("I remember")
        and ", but it" in first["prompt"]
    )
    # Rows out of order in the file are put in utterance_idx order; a 2-turn conversation splits at 1.
    assert dev[1]["context"] == ["I heard a noise downstairs last night."]
    assert dev[1]["positive_responses"] == ["Oh no, what was it?"]


def test_split_turn_is_uniform_seeded_and_order_free():
    # By hand: 1 + (first 8 bytes of sha256("0:hit:0_conv:1") as an integer) mod (n - 1).
    digest = hashlib.sha256(b"0:hit:0_conv:1").digest()
    assert split_turn("hit:0_conv:1", 5) == 1 + int.from_bytes(digest[:8], "big") % 4
    draws = [split_turn(f"hit:{i}_conv:{i}", 6) for i in range(2000)]
    assert set(draws) == {1, 2, 3, 4, 5}
    # uniform (5 sd of a binomial is ~90)
    assert all(abs(draws.count(k) - 400) < 80 for k in range(1, 6))
    assert [split_turn(f"c{i}", 6, seed=1) for i in range(50)] != [
        split_turn(f"c{i}", 6, seed=0) for i in range(50)
    ]
    with pytest.raises(ValueError, match="at least 2"):
        split_turn("c", 1)


def test_split_is_the_same_whatever_else_is_in_the_file(tmp_path):
    full = read_conversations(csv_text(VALID_ROWS).splitlines(), "valid.csv")
    alone = read_conversations(csv_text(VALID_ROWS[5:7]).splitlines(), "valid.csv")
    assert [c["conv_id"] for c in full] == ["hit:0_conv:1", "hit:1_conv:2", "hit:2_conv:4"]
    assert full[1] == alone[0]
    write_archive(tmp_path, valid=list(reversed(VALID_ROWS)))
    reversed_dev = build(
        tmp_path, data_dir=str(tmp_path), verify_checksums=False, split="validation"
    )
    assert {row["id"]: row["split_turn"] for row in reversed_dev} == {
        "hit:0_conv:1": split_turn("hit:0_conv:1", 5),
        "hit:1_conv:2": 1,
    }


def test_conversations_config_and_every_split(tmp_path):
    write_archive(tmp_path)
    data = build(tmp_path, "conversations", data_dir=str(tmp_path), verify_checksums=False)
    assert set(data) == {"train", "validation", "test"}
    assert data["validation"]["id"] == ["hit:0_conv:1", "hit:1_conv:2", "hit:2_conv:4"]
    assert data["validation"][1]["speaker_idx"] == [2, 3]
    # A 9th field (ParlAI's inline candidates, some test rows) is accepted and not carried.
    assert data["test"][0]["turns"] == [
        "We won the big game today!",
        "Congratulations! How do you feel?",
    ]
    assert data["train"][0]["emotion"] == "angry"


def test_split_seed_is_a_config_option(tmp_path):
    write_archive(
        tmp_path, valid=[f"c:{i},{t},sad,p,1,turn {t},," for i in range(30) for t in range(1, 7)]
    )
    seeded = {
        seed: build(
            tmp_path,
            data_dir=str(tmp_path),
            verify_checksums=False,
            split="validation",
            split_seed=seed,
        )
        for seed in (0, 1)
    }
    assert seeded[0]["split_turn"] == [split_turn(f"c:{i}", 6, 0) for i in range(30)]
    assert seeded[1]["split_turn"] == [split_turn(f"c:{i}", 6, 1) for i in range(30)]


@pytest.mark.parametrize(
    ("rows", "header", "message"),
    [
        (["hit:0_conv:1,1,sad,p,1,a, b, c,,"], HEADER, "line 2: expected 8 comma-separated fields"),
        (["hit:0_conv:1,one,sad,p,1,a,,"], HEADER, "line 2: `utterance_idx` must be an integer"),
        (
            ["hit:0_conv:1,1,sad,p,1,a,,", "hit:0_conv:1,1,sad,p,2,b,,"],
            HEADER,
            "line 3: conversation 'hit:0_conv:1' already has",
        ),
        (VALID_ROWS, "conv_id,utterance_idx,context", "expected the EmpatheticDialogues header"),
    ],
)
def test_malformed_rows_name_the_file_and_line(tmp_path, rows, header, message):
    path = tmp_path / "valid.csv"
    path.write_text(csv_text(rows, header), encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_conversations(path.read_text(encoding="utf-8").splitlines(), str(path))
    if header == HEADER:  # the builder reports the line inside the archive
        write_archive(tmp_path, valid=rows)
        with pytest.raises(ValueError, match="valid.csv, " + message.split(":")[0]):
            build(tmp_path, data_dir=str(tmp_path), verify_checksums=False, split="validation")


def test_archive_checksum_is_verified_by_default(tmp_path):
    assert (
        SOURCE_URL
        == "https://dl.fbaipublicfiles.com/parlai/empatheticdialogues/empatheticdialogues.tar.gz"
    )
    assert ARCHIVE.sha256[0] == "56f234d77b7dd1f005fd365bb17769cfe346c3c84295b69bc069c8ccb83be03d"
    write_archive(tmp_path)
    with pytest.raises(ValueError, match="is not the released empatheticdialogues.tar.gz"):
        build(tmp_path, data_dir=str(tmp_path))


def test_extracted_csvs_are_read_only_unchecked(tmp_path):
    folder = tmp_path / "empatheticdialogues"
    folder.mkdir()
    for name, rows in (
        ("train.csv", TRAIN_ROWS),
        ("valid.csv", VALID_ROWS),
        ("test.csv", TEST_ROWS),
    ):
        (folder / name).write_text(csv_text(rows), encoding="utf-8")
    with pytest.raises(ValueError, match="verify_checksums=False"):
        build(tmp_path, data_dir=str(tmp_path))
    dev = build(tmp_path, data_dir=str(tmp_path), verify_checksums=False, split="validation")
    assert dev["id"] == ["hit:0_conv:1", "hit:1_conv:2"]


def test_offline_without_data_says_where_to_get_it(tmp_path):
    with pytest.raises(SourceNotAvailableError, match="empatheticdialogues.tar.gz"):
        build(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceNotAvailableError, match=SOURCE_URL):
        build(tmp_path, data_dir=str(tmp_path / "empty"))


def test_export_reads_back_with_plain_load_dataset(tmp_path):
    import datasets

    from dialeval.datasets_scripts import export_dataset

    write_archive(tmp_path)
    out = export_dataset(
        "empathetic_dialogues",
        tmp_path / "export",
        data_dir=str(tmp_path),
        cache_dir=str(tmp_path / "cache"),
        verify_checksums=False,
    )
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "config_name: random_turn" in card and "## The random turn split" in card
    built = build(tmp_path, data_dir=str(tmp_path), verify_checksums=False, split="validation")
    reread = datasets.load_dataset(
        str(out), "random_turn", split="validation", cache_dir=str(tmp_path / "reread")
    )
    assert reread.to_list() == built.to_list()
