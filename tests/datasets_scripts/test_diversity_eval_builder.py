"""The diversity_eval builder (Tevet & Berant's test sets), ``load`` and ``export_dataset`` on the shared data."""

import fnmatch
import shutil

import datasets
import pytest

from dialeval.datasets_scripts import config_names, export_dataset, load
from dialeval.datasets_scripts._sources import SourceNotAvailableError
from dialeval.datasets_scripts.diversity_eval.diversity_eval import FAMILIES, source_file
from dialeval.io import read_tevet_csv

# SOURCE.md's row counts (story, resp, prompt).
ROWS = {
    "dec_test_1000": (985, 994, 1000),
    "dec_test_200": (203, 203, 203),
    "con_test_200": (250, 220, 200),
    "mcdiv_all": (2000, 2002, 2000),
    "mcdiv_nuggets": (1012, 1049, 1008),
    "mcdiv_nuggets_200": (200, 200, 200),
}
HAS_HDS = {"dec_test_200", "con_test_200", "mcdiv_nuggets_200"}


@pytest.fixture(scope="module")
def tevet_dir(shared_data):
    return str(shared_data / "tevet-diversity-eval")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("hf_cache"))


def test_one_config_per_file_and_task():
    names = config_names("diversity_eval")
    assert len(names) == 18 == len(set(names))
    assert {name.rsplit("_", 2)[0] for name in names} == set(FAMILIES)


@pytest.mark.parametrize("family", sorted(ROWS))
def test_every_config_loads_with_the_released_row_counts(tevet_dir, cache, family):
    for task, rows in zip(("story_gen", "resp_gen", "prompt_gen"), ROWS[family]):
        dataset = load(
            "diversity_eval", f"{family}_{task}", data_dir=tevet_dir, split="test", cache_dir=cache
        )
        assert isinstance(dataset, datasets.Dataset)
        assert dataset.num_rows == rows
        responses_per_set = {len(r) for r in dataset["responses"]}
        assert responses_per_set == ({10} if family.startswith("dec_test") else {5})
        hds = dataset["abs_hds_mean"]
        assert (None not in hds) if family in HAS_HDS else set(hds) == {None}
        assert None not in [s["distinct_n"] for s in dataset["released_scores"]]


def test_rows_equal_the_csv_in_file_order(shared_data, tevet_dir, cache):
    dataset = load(
        "diversity_eval",
        "con_test_200_story_gen",
        data_dir=tevet_dir,
        split="test",
        cache_dir=cache,
    )
    expected = read_tevet_csv(
        shared_data
        / "tevet-diversity-eval"
        / "with_metrics"
        / "conTest"
        / "con_test_200_with_hds_story_gen.csv"
    )
    assert dataset["responses"] == [s.responses for s in expected]
    assert dataset["context"] == [s.context for s in expected]
    assert dataset["sample_id"] == [s.metadata["sample_id"] for s in expected]
    assert dataset["diversity_parameter"] == [float(s.metadata["label_value"]) for s in expected]
    assert set(dataset["parameter_name"]) == {"content_diversity"}
    assert dataset["abs_hds_std"] == [float(s.metadata["metric_abs_hds_std"]) for s in expected]
    assert [r["sent_bert"] for r in dataset["released_scores"]] == [
        float(s.metadata["metric_SentBert"]) for s in expected
    ]


def test_dectest_parameter_is_the_temperature(tevet_dir, cache):
    dataset = load(
        "diversity_eval",
        "dec_test_1000_resp_gen",
        data_dir=tevet_dir,
        split="test",
        cache_dir=cache,
    )
    assert set(dataset["parameter_name"]) == {"temp"}
    assert 0.09 < min(dataset["diversity_parameter"]) < max(dataset["diversity_parameter"]) < 1.25


def test_raw_files_load_without_released_scores(shared_data, tmp_path, cache):
    # A folder with only the raw/ tree of an unzipped data.zip.
    shutil.copytree(
        shared_data / "tevet-diversity-eval" / "raw" / "conTest", tmp_path / "raw" / "conTest"
    )
    dataset = load(
        "diversity_eval",
        "con_test_200_resp_gen",
        data_dir=str(tmp_path),
        split="test",
        cache_dir=cache,
    )
    assert dataset.num_rows == 220
    assert {r["distinct_n"] for r in dataset["released_scores"]} == {None}
    assert None not in dataset["abs_hds_mean"]


def test_bare_csv_in_data_dir_and_utf8(shared_data, tmp_path, cache):
    name = "con_test_200_with_hds_resp_gen.csv"
    shutil.copy(
        shared_data / "tevet-diversity-eval" / "with_metrics" / "conTest" / name, tmp_path / name
    )
    dataset = load(
        "diversity_eval",
        "con_test_200_resp_gen",
        data_dir=str(tmp_path),
        split="test",
        cache_dir=cache,
    )
    text = (tmp_path / name).read_text(encoding="utf-8")
    non_ascii = [r for rs in dataset["responses"] for r in rs if not r.isascii()]
    assert non_ascii and all(r in text for r in non_ascii)  # decoded as UTF-8, not a code page


def test_edited_file_fails_the_checksum_unless_verification_is_off(shared_data, tmp_path, cache):
    name = "con_test_200_with_hds_prompt_gen.csv"
    text = (shared_data / "tevet-diversity-eval" / "with_metrics" / "conTest" / name).read_text(
        encoding="utf-8"
    )
    (tmp_path / name).write_text(
        text.replace("content_diversity", "content_diversitY", 1), encoding="utf-8"
    )
    with pytest.raises(ValueError, match="sha256"):
        load(
            "diversity_eval",
            "con_test_200_prompt_gen",
            data_dir=str(tmp_path),
            split="test",
            cache_dir=cache,
        )
    dataset = load(
        "diversity_eval",
        "con_test_200_prompt_gen",
        data_dir=str(tmp_path),
        split="test",
        cache_dir=cache,
        verify_checksums=False,
    )
    assert dataset["parameter_name"][0] == "content_diversitY"


def test_malformed_label_names_the_record(shared_data, tmp_path, cache):
    name = "con_test_200_with_hds_prompt_gen.csv"
    lines = (
        (shared_data / "tevet-diversity-eval" / "raw" / "conTest" / name)
        .read_text(encoding="utf-8")
        .split("\n")
    )
    header = lines[0].split(",")
    row = lines[1].split(",")
    row[header.index("label_value")] = "high"
    (tmp_path / name).write_text("\n".join([lines[0], ",".join(row)] + lines[2:]), encoding="utf-8")
    with pytest.raises(ValueError, match=r"record 0: column 'label_value' must be a number"):
        load(
            "diversity_eval",
            "con_test_200_prompt_gen",
            data_dir=str(tmp_path),
            split="test",
            cache_dir=cache,
            verify_checksums=False,
        )


def test_missing_files_say_where_to_get_them(tmp_path, cache):
    with pytest.raises(SourceNotAvailableError, match="raw.githubusercontent.com/fabriceyhc"):
        load("diversity_eval", "mcdiv_all_resp_gen", data_dir=str(tmp_path), cache_dir=cache)
    # Offline (conftest sets HF_DATASETS_OFFLINE=1): no hang, an error that says to pass data_dir.
    with pytest.raises(SourceNotAvailableError, match="data_dir"):
        load("diversity_eval", "mcdiv_all_resp_gen", cache_dir=str(tmp_path / "fresh_cache"))


def test_bad_arguments_are_named(tevet_dir, cache, tmp_path):
    with pytest.raises(ValueError, match="`name`"):
        load("dectest")
    with pytest.raises(ValueError, match="`config`"):
        load("diversity_eval", "con_test_resp_gen", data_dir=tevet_dir, cache_dir=cache)
    with pytest.raises(ValueError, match="`split`"):
        load(
            "diversity_eval",
            "con_test_200_resp_gen",
            data_dir=tevet_dir,
            split="validation",
            cache_dir=cache,
        )
    with pytest.raises(ValueError, match="`data_dir`"):
        load(
            "diversity_eval",
            "con_test_200_resp_gen",
            data_dir=str(tmp_path / "nowhere"),
            cache_dir=cache,
        )


def test_source_urls_are_pinned():
    source = source_file("dec_test_1000", "story_gen")
    assert "/de683e4d13095c29e940ac82eda5e577673b0b53/" in source.url and source.url.endswith(
        "dec_test_1000_no_hds_story_gen.csv"
    )
    assert len(source.sha256) == 2 and all(len(d) == 64 for d in source.sha256)


def test_export_reads_back_with_plain_load_dataset(tevet_dir, cache, tmp_path):
    configs = ["con_test_200_resp_gen", "dec_test_200_prompt_gen"]
    out = export_dataset(
        "diversity_eval", tmp_path / "export", configs=configs, data_dir=tevet_dir, cache_dir=cache
    )
    card = (out / "README.md").read_text(encoding="utf-8")
    assert (
        card.startswith("---\n")
        and "config_name: dec_test_200_prompt_gen" in card
        and "## Citation" in card
    )
    # configs lists only what was written
    assert "mcdiv_all_resp_gen" not in card.split("\n---\n")[0]
    for config in configs:
        built = load("diversity_eval", config, data_dir=tevet_dir, split="test", cache_dir=cache)
        reread = datasets.load_dataset(
            str(out), config, split="test", cache_dir=str(tmp_path / "reread")
        )
        assert reread.to_list() == built.to_list()


def test_export_pushes_the_folder_to_the_hub(tevet_dir, cache, tmp_path, monkeypatch):
    calls = []

    class RecordingApi:
        def __init__(self, token=None):
            calls.append(("init", token))

        def create_repo(self, repo_id, **kwargs):
            calls.append(("create_repo", repo_id, kwargs["repo_type"], kwargs["private"]))

        def upload_folder(self, **kwargs):
            calls.append(
                (
                    "upload_folder",
                    kwargs["repo_id"],
                    kwargs["repo_type"],
                    sorted(  # what the Hub receives: the folder less the ignored patterns
                        p.name
                        for p in (tmp_path / "x").iterdir()
                        if not any(
                            fnmatch.fnmatch(p.name, pattern)
                            for pattern in kwargs.get("ignore_patterns") or []
                        )
                    ),
                )
            )

    monkeypatch.setattr("huggingface_hub.HfApi", RecordingApi)
    export_dataset(
        "diversity_eval",
        tmp_path / "x",
        configs=["con_test_200_resp_gen"],
        data_dir=tevet_dir,
        cache_dir=cache,
        push_to_hub="someone/diversity-eval",
        token="t",
    )
    assert calls == [
        ("init", "t"),
        ("create_repo", "someone/diversity-eval", "dataset", False),
        (
            "upload_folder",
            "someone/diversity-eval",
            "dataset",
            ["README.md", "con_test_200_resp_gen"],
        ),
    ]


def test_export_rejects_unknown_configs(tmp_path):
    with pytest.raises(ValueError, match="`configs`"):
        export_dataset("diversity_eval", tmp_path, configs=["contest"])
