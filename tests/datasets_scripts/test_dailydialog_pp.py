"""DailyDialog++ builder: record counts and values against the released files, checksum and record
validation, and the errors that tell a user where to get the files."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from dialeval.datasets_scripts import prepare
from dialeval.datasets_scripts._sources import SourceNotAvailableError
from dialeval.datasets_scripts.dailydialog_pp import DailyDialogPlusPlus
from dialeval.datasets_scripts.dailydialog_pp.dailydialog_pp import SOURCE_FILES, read_records

EXPECTED_COUNTS = {
    "default": {"validation": 1028, "test": 1142},
    "positives": {"train": 7641},
}
RESPONSE_FIELDS = (
    "positive_responses",
    "adversarial_negative_responses",
    "random_negative_responses",
)


@pytest.fixture(scope="module")
def release_dir(shared_data):
    folder = shared_data / "dailydialog-plusplus"
    if not folder.is_dir():
        pytest.skip(f"DailyDialog++ files are not at {folder}")
    return folder


def build(cache_dir, **kwargs):
    builder = DailyDialogPlusPlus(cache_dir=str(cache_dir), **kwargs)
    prepare(builder)  # as load() does: a bad record surfaces as the builder's ValueError
    return builder


@pytest.fixture(scope="module")
def default_splits(release_dir, tmp_path_factory):
    # Built once: several tests read the same dev/test splits.
    return build(
        tmp_path_factory.mktemp("cache"), config_name="default", data_dir=str(release_dir)
    ).as_dataset()


def test_source_files_are_pinned_to_the_commit():
    assert set(SOURCE_FILES) == {"dev.json", "test.json", "data_positives.json"}
    for name, source in SOURCE_FILES.items():
        assert source.url.endswith(f"/4b02f9ff671e7e27d8e6b8a1925158bd5729abda/dataset/{name}")
        assert source.local_paths == (name, f"dataset/{name}")


def test_default_config_has_every_dev_and_test_record(default_splits):
    assert {split: len(dataset) for split, dataset in default_splits.items()} == EXPECTED_COUNTS[
        "default"
    ]
    assert default_splits["validation"]["id"] == list(range(1028))
    assert default_splits["validation"].features["id"].dtype == "int32"


def test_positives_config_has_every_record(release_dir, tmp_path):
    splits = build(tmp_path, config_name="positives", data_dir=str(release_dir)).as_dataset()
    assert {split: len(dataset) for split, dataset in splits.items()} == EXPECTED_COUNTS[
        "positives"
    ]
    train = splits["train"]
    assert set(train.column_names) == {"dialog_id", "context", "positive_responses"}
    assert train["dialog_id"] == list(range(7641))
    assert all(len(responses) == 5 for responses in train["positive_responses"])


def test_first_dev_record_equals_the_raw_line(release_dir, default_splits):
    with open(release_dir / "dev.json", encoding="utf-8") as handle:
        raw = json.loads(handle.readline())
    assert default_splits["validation"][0] == raw


def test_contexts_are_strings_and_responses_come_in_fives(default_splits):
    for split in ("validation", "test"):
        for record in default_splits[split]:
            assert record["context"] and all(isinstance(turn, str) for turn in record["context"])
            for field in RESPONSE_FIELDS:
                assert len(record[field]) == 5 and all(
                    isinstance(text, str) for text in record[field]
                )


def copy_default_files(release_dir, destination):
    for name in ("dev.json", "test.json"):
        shutil.copyfile(release_dir / name, destination / name)


def test_edited_copy_fails_the_checksum_unless_verification_is_off(release_dir, tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    copy_default_files(release_dir, data_dir)
    dev = data_dir / "dev.json"
    original = dev.read_bytes()
    # One byte inside a response string: still valid JSON, so only the checksum can catch it.
    dev.write_bytes(original.replace(b"So nice of you.", b"So nice of yoU.", 1))
    assert dev.read_bytes() != original

    with pytest.raises(ValueError, match="sha256"):
        build(tmp_path / "cache-verified", data_dir=str(data_dir))

    splits = build(
        tmp_path / "cache-unverified", data_dir=str(data_dir), verify_checksums=False
    ).as_dataset()
    assert len(splits["validation"]) == 1028
    assert splits["validation"][0]["positive_responses"][0] == "So nice of yoU."


def test_malformed_record_is_an_error_naming_file_and_line(release_dir, tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    copy_default_files(release_dir, data_dir)
    lines = (release_dir / "dev.json").read_text(encoding="utf-8").splitlines()
    second = json.loads(lines[1])
    second["positive_responses"] = second["positive_responses"][:4]
    lines[1] = json.dumps(second)
    (data_dir / "dev.json").write_text("\n".join(lines), encoding="utf-8")

    with pytest.raises(ValueError, match=r"dev\.json, line 2: `positive_responses`"):
        build(tmp_path / "cache", data_dir=str(data_dir), verify_checksums=False)


def test_without_data_dir_offline_the_error_says_to_pass_data_dir(tmp_path):
    started = time.monotonic()
    with pytest.raises(SourceNotAvailableError, match="data_dir"):
        build(tmp_path)
    assert time.monotonic() - started < 5


def test_data_dir_missing_a_file_names_it(release_dir, tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    shutil.copyfile(release_dir / "dev.json", data_dir / "dev.json")
    with pytest.raises(SourceNotAvailableError, match=r"test\.json"):
        build(tmp_path / "cache", data_dir=str(data_dir))


POSITIVE_ONLY_LAYOUT = ("dialog_id", ("positive_responses",))


@pytest.mark.parametrize(
    ("second_line", "message"),
    [
        (
            '{"dialog_id": 1, "context": ["Hi"], "positive_responses": ["a", "b", "c", "d", "e"]',
            "not valid JSON",
        ),
        (
            '{"dialog_id": 1, "context": [], "positive_responses": ["a", "b", "c", "d", "e"]}',
            "`context`",
        ),
        (
            '{"dialog_id": 1, "context": ["Hi", 2], "positive_responses": ["a", "b", "c", "d", "e"]}',
            "`context`",
        ),
        ('{"dialog_id": 1, "context": ["Hi"]}', "missing key"),
        (
            '{"dialog_id": 1, "context": ["Hi"], "positive_responses": ["a", "b", "c", "d", "e"], "topic": "x"}',
            "unexpected key",
        ),
        (
            '{"dialog_id": "1", "context": ["Hi"], "positive_responses": ["a", "b", "c", "d", "e"]}',
            "`dialog_id`",
        ),
        ('["Hi"]', "JSON object"),
    ],
)
def test_read_records_rejects_each_kind_of_malformed_line(tmp_path, second_line, message):
    path = tmp_path / "data_positives.json"
    first_line = (
        '{"dialog_id": 0, "context": ["Hi"], "positive_responses": ["a", "b", "c", "d", "e"]}'
    )
    path.write_text(f"{first_line}\n{second_line}", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"data_positives\.json, line 2: .*{message}"):
        read_records(str(path), *POSITIVE_ONLY_LAYOUT)


def test_load_takes_the_split_names_the_cli_takes(release_dir, tmp_path):
    """`dialeval dtg --split dev` worked where `load(..., split="dev")` failed: one set of names."""
    from dialeval.cli.dtg_contexts import read_contexts
    from dialeval.datasets_scripts import SPLIT_ALIASES, load

    assert SPLIT_ALIASES == {"dev": "validation"}
    dev = load("dailydialog_pp", data_dir=str(release_dir), split="dev", cache_dir=str(tmp_path))
    validation = load(
        "dailydialog_pp", data_dir=str(release_dir), split="validation", cache_dir=str(tmp_path)
    )
    assert dev.split == "validation" and dev["id"] == validation["id"]
    contexts = read_contexts("dailydialog_pp", "dev", None, data_dir=str(release_dir), limit=None)
    assert [context.id for context in contexts] == validation["id"]
    with pytest.raises(
        ValueError,
        match=r"`split` must be one of \['validation', 'test'\] \(or 'dev' for 'validation'\) "
        r"for 'dailydialog_pp' config 'default', got 'valid'",
    ):
        load("dailydialog_pp", data_dir=str(release_dir), split="valid", cache_dir=str(tmp_path))
    with pytest.raises(
        ValueError,
        match=r"`split` must be one of \['train'\] for 'dailydialog_pp' config 'positives', got 'dev'",
    ):
        load(
            "dailydialog_pp",
            "positives",
            data_dir=str(release_dir),
            split="dev",
            cache_dir=str(tmp_path),
        )
    with pytest.raises(ValueError, match="`split` must be a split name"):
        read_contexts("dailydialog_pp", None, None, data_dir=str(release_dir))
