"""DailyDialog builder on a synthetic archive in the release's nested layout (``ijcnlp_dailydialog.zip``
holding ``ijcnlp_dailydialog/<split>.zip``, each holding ``<split>/dialogues_<split>.txt`` and its act
and emotion files): dialogues with ClassLabels, the context-response pairs of Han et al. 2022, the
release's quirks, line checks naming FILE:LINE, checksums, the offline error, the Parquet export."""

from __future__ import annotations

import io
import re
import zipfile

import pytest
from dailydialog_release import RELEASE, split_zip, write_archive

from dialeval.datasets_scripts import export_dataset, load
from dialeval.datasets_scripts._sources import SourceNotAvailableError
from dialeval.datasets_scripts.dailydialog import context_response_pairs, read_dialogues
from dialeval.datasets_scripts.dailydialog.dailydialog import ARCHIVE, SOURCE_URL


def build(tmp_path, config=None, **kwargs):
    kwargs.setdefault("data_dir", str(tmp_path))
    kwargs.setdefault("verify_checksums", False)
    kwargs.setdefault("cache_dir", str(tmp_path / "cache"))
    return load("dailydialog", config, **kwargs)


def test_dialogues_config_reads_the_nested_archive(tmp_path):
    write_archive(tmp_path)
    data = build(tmp_path)
    assert {split: data[split].num_rows for split in data} == {
        "train": 2,
        "validation": 1,
        "test": 2,
    }
    first = data["test"][0]
    assert first["id"] == "test-0"
    assert first["dialog"] == ["Hey man , you wanna buy some weed ?", "Some what ?", "Weed !"]
    # ClassLabel ids are the release's numbers: act 1..4 (0 unused), emotion 0..6
    assert first["act"] == [3, 2, 3] and first["emotion"] == [0, 6, 1]
    features = data["test"].features
    assert features["act"].feature.int2str([3, 2]) == ["directive", "question"]
    assert features["emotion"].feature.int2str([0, 6, 1]) == ["no emotion", "surprise", "anger"]
    assert data["train"][1]["dialog"] == ["Can you do push-ups ?", "Of course I can ."]


def test_pairs_config_makes_each_later_turn_a_response_to_the_turns_before(tmp_path):
    write_archive(tmp_path)
    test = build(tmp_path, "pairs", split="test")
    # 3 + 2 turns: 2 + 1 pairs (the official test split's 7,740 turns of 1,000 dialogues give 6,740)
    assert test.to_list() == [
        {
            "id": "test-0-1",
            "dialogue_id": "test-0",
            "turn": 1,
            "context": ["Hey man , you wanna buy some weed ?"],
            "response": "Some what ?",
            "response_act": 2,
            "response_emotion": 6,
        },
        {
            "id": "test-0-2",
            "dialogue_id": "test-0",
            "turn": 2,
            "context": ["Hey man , you wanna buy some weed ?", "Some what ?"],
            "response": "Weed !",
            "response_act": 3,
            "response_emotion": 1,
        },
        {
            "id": "test-1-1",
            "dialogue_id": "test-1",
            "turn": 1,
            "context": ["The taxi drivers are on strike again ."],
            "response": "What for ?",
            "response_act": 2,
            "response_emotion": 0,
        },
    ]
    assert context_response_pairs(["a", "b", "c"]) == [(1, ["a"], "b"), (2, ["a", "b"], "c")]
    assert context_response_pairs(["a"]) == []


def test_the_unzipped_release_is_read_only_unchecked(tmp_path):
    folder = tmp_path / "ijcnlp_dailydialog"
    folder.mkdir()
    (folder / "train.zip").write_bytes(split_zip("train", RELEASE["train"]))
    (folder / "validation.zip").write_bytes(split_zip("validation", RELEASE["validation"]))
    with zipfile.ZipFile(io.BytesIO(split_zip("test", RELEASE["test"]))) as inner:
        inner.extractall(folder)  # ijcnlp_dailydialog/test/dialogues_test.txt ...
    with pytest.raises(ValueError, match="verify_checksums=False"):
        build(tmp_path, verify_checksums=True)
    data = build(tmp_path)
    assert data["test"][0]["dialog"][1] == "Some what ?" and data["train"].num_rows == 2
    (folder / "validation.zip").unlink()
    with pytest.raises(SourceNotAvailableError, match=r"lacks the \['validation'\] split"):
        build(tmp_path, cache_dir=str(tmp_path / "other-cache"))


@pytest.mark.parametrize(
    ("override", "file", "message"),
    [
        (
            {"act_text": "3 2 3 \n1 \n"},
            "dialogues_act_test.txt",
            "line 2: 1 act label(s) for the 2 turn(s)",
        ),
        ({"act_text": "3 2 3 \n"}, "dialogues_act_test.txt", "line 2: the file has ended where"),
        (
            {"act_text": "3 2 9 \n1 2 \n"},
            "dialogues_act_test.txt",
            "line 1: act label '9' is not one of the release's numbers",
        ),
        ({"act_text": "3 2 3 \n0 2 \n"}, "dialogues_act_test.txt", "line 2: act label '0'"),
        (
            {"dialog_text": "a __eou__  __eou__ b __eou__\nc __eou__ d __eou__\n"},
            "dialogues_test.txt",
            "line 1: turn 2 of 3 is empty",
        ),
    ],
)
def test_lines_that_disagree_are_an_error_naming_the_file_and_line(
    tmp_path, override, file, message
):
    write_archive(tmp_path, **override)
    archive = tmp_path / "ijcnlp_dailydialog.zip"
    where = f"{archive}:ijcnlp_dailydialog/test.zip:test/{file}, "
    with pytest.raises(ValueError, match=re.escape(where + message)):
        build(tmp_path, split="test")


def test_read_dialogues_tolerates_the_release_quirks_and_trailing_blank_lines():
    sources = {"dialog": "d.txt", "act": "a.txt", "emotion": "e.txt"}
    dialogues = read_dialogues(
        [" Hi . __eou__Hello ! __eou__ \n", "Last turn without eou\n", "\n"],
        ["1 1\n", "1\n", "\n"],
        ["0 0 \n", " 4\n"],
        sources,
    )
    assert dialogues == [
        {"dialog": ["Hi .", "Hello !"], "act": [1, 1], "emotion": [0, 0]},
        {"dialog": ["Last turn without eou"], "act": [1], "emotion": [4]},
    ]
    with pytest.raises(
        ValueError,
        match=r"e.txt, line 1: 1 emotion label\(s\) for the 2 turn\(s\) of d.txt, line 1",
    ):
        read_dialogues(["a __eou__ b __eou__\n"], ["1 1\n"], ["0\n"], sources)


def test_a_bad_archive_is_named_with_what_is_wrong(tmp_path):
    archive = tmp_path / "ijcnlp_dailydialog.zip"
    archive.write_bytes(b"<html>404 Not Found</html>")
    with pytest.raises(
        ValueError,
        match=rf"{re.escape(str(archive))}: not a readable zip archive .*download it again",
    ):
        build(tmp_path)
    with zipfile.ZipFile(archive, "w") as outer:
        outer.writestr("ijcnlp_dailydialog/train.zip", split_zip("train", RELEASE["train"]))
    with pytest.raises(ValueError, match="no ijcnlp_dailydialog/validation.zip in the archive"):
        build(tmp_path, cache_dir=str(tmp_path / "other-cache"))


def test_archive_checksum_is_verified_by_default(tmp_path):
    assert SOURCE_URL == "http://yanran.li/files/ijcnlp_dailydialog.zip"
    assert ARCHIVE.sha256 == ("c641e88cbf21fd7c1b57289387f9107d33fe8685a2b37fe8066b82776535ea89",)
    write_archive(tmp_path)
    with pytest.raises(
        ValueError, match="is not the released ijcnlp_dailydialog.zip.*verify_checksums=False"
    ):
        build(tmp_path, verify_checksums=True)


def test_offline_without_data_says_where_to_get_it(tmp_path):
    with pytest.raises(SourceNotAvailableError, match=re.escape(SOURCE_URL)):
        build(tmp_path, data_dir=None, verify_checksums=True)
    (tmp_path / "empty").mkdir()
    with pytest.raises(
        SourceNotAvailableError,
        match=rf"not found under `data_dir` .*Download it from {re.escape(SOURCE_URL)}",
    ):
        build(tmp_path, data_dir=str(tmp_path / "empty"), verify_checksums=True)


def test_export_reads_back_with_plain_load_dataset(tmp_path):
    import datasets

    write_archive(tmp_path)
    out = export_dataset(
        "dailydialog",
        tmp_path / "export",
        data_dir=str(tmp_path),
        cache_dir=str(tmp_path / "cache"),
        verify_checksums=False,
    )
    card = (out / "README.md").read_text(encoding="utf-8")
    assert (
        "config_name: dialogues" in card
        and "config_name: pairs" in card
        and "## The splits" in card
    )
    for config in ("dialogues", "pairs"):
        built = build(tmp_path, config, split="test")
        reread = datasets.load_dataset(
            str(out), config, split="test", cache_dir=str(tmp_path / "reread")
        )
        assert reread.features == built.features and reread.to_list() == built.to_list()


@pytest.mark.parametrize("inside", ["dialogues_test.txt", "test.zip"])
def test_a_member_far_larger_than_the_release_is_refused_in_bounded_memory(tmp_path, inside):
    import tracemalloc

    from dailydialog_release import write_archive_with_large_member

    from dialeval.datasets_scripts.dailydialog import dailydialog

    size = dailydialog.MAX_MEMBER_BYTES + (1 << 20)
    archive = write_archive_with_large_member(tmp_path, size, inside)
    assert archive.stat().st_size < size // 100  # small on disk
    tracemalloc.start()
    try:
        with pytest.raises(
            ValueError,
            match=rf"{re.escape(str(archive))}:.*{inside}: unpacks to more than 64 MiB, far more "
            "than any file of the DailyDialog release",
        ):
            dailydialog.read_release_archive(str(archive), "test")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20  # the member is never held whole


def test_a_member_whose_header_understates_its_size_is_refused_not_read_on():
    """The member bound reads the header's size: zipfile yields no more than it says."""
    from dialeval.datasets_scripts.dailydialog import dailydialog

    rows = RELEASE["test"]
    data = split_zip("test", rows)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        info = archive.getinfo("test/dialogues_test.txt")
    # the central directory's size field of the dialogues file says 10 bytes
    forged = bytearray(data)
    central = forged.index(b"PK\x01\x02")  # a central directory entry
    while forged[central + 46 : central + 46 + len(info.filename)] != info.filename.encode():
        central = forged.index(b"PK\x01\x02", central + 4)
    forged[central + 24 : central + 28] = (10).to_bytes(4, "little")
    with pytest.raises(ValueError, match=r"^SRC: not a readable zip archive \(BadZipFile: Bad CRC"):
        dailydialog.read_split_zip(bytes(forged), "test", "SRC")
    assert info.file_size > 10


def test_members_are_split_into_lines_as_the_whole_text_was():
    from dialeval.datasets_scripts.dailydialog.dailydialog import _lines

    text = b"a __eou__\r\nb __eou__\rc __eou__\n\nd"
    assert list(_lines(io.BufferedReader(io.BytesIO(text), 4))) == text.splitlines(keepends=True)


PARLAI_RELEASE = {
    **RELEASE,
    "test": [
        (
            (
                "Let ’ s go now . __eou__ There is one.5 blocks away from here ? __eou__ "
                "He said “ fine ” ‘ ok ’ — well – yes 。 Then、 the 2′ mark . __eou__"
            ),
            "1 2 3 ",
            "0 0 4 ",
        )
    ],
}


def test_parlai_normalization_gives_the_turns_as_parlais_dailydialog_json(tmp_path):
    write_archive(tmp_path, PARLAI_RELEASE)
    released = build(tmp_path, split="test")[0]["dialog"]
    parlai = build(tmp_path, split="test", parlai_normalization=True)[0]["dialog"]
    assert released == [
        "Let ’ s go now .",
        "There is one.5 blocks away from here ?",
        "He said “ fine ” ‘ ok ’ — well – yes 。 Then、 the 2′ mark .",
    ]
    assert parlai == [
        "Let ' s go now .",  # ParlAI's train.yml: "Good . Let ' s go now ."
        "There is one . 5 blocks away from here ?",  # its valid.yml holds this turn
        "He said \" fine \" ' ok ' -- well -- yes .  Then,  the 2' mark .",
    ]
    pairs = build(tmp_path, "pairs", split="test", parlai_normalization=True)
    assert pairs[0]["context"] == parlai[:1] and pairs[1]["response"] == parlai[2]


def test_parlai_normalization_must_be_a_bool(tmp_path):
    write_archive(tmp_path)
    with pytest.raises(ValueError, match=r"^`parlai_normalization` must be True or False"):
        build(tmp_path, parlai_normalization="yes")
