"""The response-selection test-set builder (Sato et al. 2020) on small synthetic corpora.

DailyDialog and OpenSubtitles2018 are not on the test machines, so each test writes a tiny
``dialogues_text.txt`` and ``OpenSubtitles.raw.en.gz`` plus index and score files in the
released formats, and checks the questions the builder rebuilds against the texts it wrote.
"""

from __future__ import annotations

import gzip
import json
import zipfile

import datasets
import numpy as np
import pytest

from dialeval.datasets_scripts import export_dataset, load
from dialeval.datasets_scripts._sources import SourceNotAvailableError
from dialeval.datasets_scripts.response_selection.response_selection import (
    RANDOM_DRAWS_PER_QUESTION,
    read_candidate_indices,
    read_lines,
)

NUM_DIALOGUES = 12
NUM_SUBTITLES = 40
# Question 2 reuses dialogue 3 with a new ground truth (4 OpenSubtitles lines, §3.2).
DIALOGUE_INDICES = [3, 7, 3, 0, 11]
SUBTITLE_INDICES = [[5, 17, 2], [39, 0, 21], [8, 9, 10, 11], [30, 31, 32], [1, 2, 3]]
GOOD_SCORES = [[5, 5, 4, 5, 5], [1, 2, 1, 1, 3], [1, 1, 1, 0, 2], [2, 2, 1, 1, 1]]


def utterance(dialogue: int, turn: int) -> str:
    return f"speaker {'AB'[turn % 2]} dialogue {dialogue} turn {turn} ."


def subtitle(line: int) -> str:
    return f"subtitle number {line} !"


def write_release(root, scores=None, dialogue_line_end="\n"):
    """Synthetic corpora and release files under ``root`` (the layout a data_dir may have)."""
    (root / "indice").mkdir(parents=True)
    (root / "indice" / "dailydialog.txt").write_text("".join(f"{i}\n" for i in DIALOGUE_INDICES))
    (root / "indice" / "opensubtitles.txt").write_text(
        "".join("\t".join(map(str, row)) + "\n" for row in SUBTITLE_INDICES)
    )
    rows = scores if scores is not None else [GOOD_SCORES] * len(DIALOGUE_INDICES)
    (root / "human_scores.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    # dialogues_text.txt: five utterances per dialogue, " __eou__ "-separated, ending in " __eou__".
    lines = [
        " __eou__ ".join(utterance(d, t) for t in range(5)) + " __eou__"
        for d in range(NUM_DIALOGUES)
    ]
    with open(root / "dialogues_text.txt", "w", encoding="utf-8", newline="") as handle:
        handle.write("".join(line + dialogue_line_end for line in lines))
    with gzip.open(root / "OpenSubtitles.raw.en.gz", "wt", encoding="utf-8") as handle:
        handle.write("".join(f"  {subtitle(n)}\n" for n in range(NUM_SUBTITLES)))
    return root


@pytest.fixture
def release(tmp_path):
    return write_release(tmp_path / "release")


def build(data_dir, config="default", tmp=None, **kwargs):
    return load(
        "response_selection",
        config,
        data_dir=str(data_dir),
        split="test",
        verify_checksums=False,
        cache_dir=str(tmp or data_dir) + "/cache",
        **kwargs,
    )


def test_questions_are_rebuilt_from_the_indices(release):
    rows = build(release)
    assert len(rows) == len(DIALOGUE_INDICES)
    for question_id, (dialogue, lines) in enumerate(zip(DIALOGUE_INDICES, SUBTITLE_INDICES)):
        row = rows[question_id]
        assert row["question_id"] == question_id and row["dialogue_line"] == dialogue
        assert row["context"] == [utterance(dialogue, t) for t in range(3)]
        assert row["label"] == 0 and len(row["candidates"]) == 4
        if len(lines) == 3:  # ground truth: the dialogue's 4th utterance
            assert row["candidates"] == [utterance(dialogue, 3)] + [subtitle(n) for n in lines]
            assert row["ground_truth_source"] == "dailydialog" and row["ground_truth_line"] is None
            assert row["false_candidate_lines"] == lines
        else:  # a reused context: the first OpenSubtitles line is the ground truth
            assert row["candidates"] == [subtitle(n) for n in lines]
            assert (
                row["ground_truth_source"] == "opensubtitles"
                and row["ground_truth_line"] == lines[0]
            )
            assert row["false_candidate_lines"] == lines[1:]
        assert row["scores"] == GOOD_SCORES


def test_lines_are_counted_as_python_text_mode_counts_them(tmp_path):
    # The authors' scripts iterate a text-mode file: "\r\n" and a bare "\r" each end one line.
    path = tmp_path / "corpus.txt"
    path.write_bytes(b"zero\r\none\rtwo\nthree\n")
    found, count = read_lines(str(path), {1, 2, 3}, count_all=True)
    assert found == {1: "one", 2: "two", 3: "three"} and count == 4
    release = write_release(tmp_path / "crlf", dialogue_line_end="\r\n")
    assert build(release)[1]["context"][0] == utterance(7, 0)


def test_dailydialog_zip_and_explicit_files(release, tmp_path):
    archive = tmp_path / "ijcnlp_dailydialog.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.write(release / "dialogues_text.txt", "ijcnlp_dailydialog/dialogues_text.txt")
    elsewhere = tmp_path / "subs.txt.gz"
    elsewhere.write_bytes((release / "OpenSubtitles.raw.en.gz").read_bytes())
    (release / "dialogues_text.txt").unlink()
    (release / "OpenSubtitles.raw.en.gz").unlink()
    rows = build(
        release, dailydialog_file=str(archive), opensubtitles_file=str(elsewhere), tmp=tmp_path
    )
    assert rows[0]["context"][0] == utterance(3, 0)
    assert rows[1]["candidates"][1] == subtitle(39)
    with pytest.raises(ValueError, match="opensubtitles_file"):
        build(
            release,
            dailydialog_file=str(archive),
            opensubtitles_file=str(tmp_path / "missing.gz"),
            tmp=tmp_path / "x",
        )


def test_released_digests_are_checked(release):
    with pytest.raises(ValueError, match="sha256"):
        load(
            "response_selection",
            data_dir=str(release),
            split="test",
            cache_dir=str(release / "cache"),
        )


def test_missing_sources_fail_fast_offline(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceNotAvailableError, match="dailydialog.txt"):
        load(
            "response_selection",
            data_dir=str(tmp_path / "empty"),
            split="test",
            cache_dir=str(tmp_path / "cache"),
        )
    with pytest.raises(SourceNotAvailableError, match="raw.githubusercontent.com"):
        load("response_selection", split="test", cache_dir=str(tmp_path / "cache2"))


def test_bad_release_files_are_errors_naming_the_line(tmp_path):
    too_few = write_release(tmp_path / "short")
    (too_few / "indice" / "opensubtitles.txt").write_text("1\t2\n")
    with pytest.raises(ValueError, match=r"opensubtitles.txt, line 1: expected 3 or 4"):
        read_candidate_indices(str(too_few / "indice" / "opensubtitles.txt"))
    beyond = write_release(tmp_path / "beyond")
    (beyond / "indice" / "opensubtitles.txt").write_text(
        "".join("\t".join(map(str, r)) + "\n" for r in [[1, 2, 400]] * 5)
    )
    with pytest.raises(ValueError, match="has 40 lines but the indices ask for line 400"):
        build(beyond)
    acceptable_false = [
        GOOD_SCORES[0],
        [4, 4, 3, 1, 1],
        *GOOD_SCORES[2:],
    ]  # three scores >= 3: §3.1 removes it
    broken = write_release(
        tmp_path / "scores", scores=[GOOD_SCORES, acceptable_false, *[GOOD_SCORES] * 3]
    )
    with pytest.raises(
        ValueError, match=r"human_scores.jsonl, line 2: .*false candidate 1: 3 scores >= 3"
    ):
        build(broken)


def expected_random_lines(questions, num_lines, seed, trial, repository):
    """The card's rule, written out: the first 3 usable of 10 uniform draws from default_rng([seed, trial])."""
    draws = np.random.default_rng([seed, trial]).integers(
        0, num_lines, size=(len(questions), RANDOM_DRAWS_PER_QUESTION)
    )
    out = []
    for question, row in zip(questions, draws):
        picked = []
        for line in row:
            text = repository[line].strip()
            if (
                text
                and text != question["candidates"][0]
                and text not in [repository[p].strip() for p in picked]
            ):
                picked.append(int(line))
        out.append(picked[:3])
    return out


def test_random_config_samples_seeded_trials_from_a_repository(release, tmp_path):
    # Empty lines and a copy of a ground truth must never be drawn as false candidates.
    repository = [f"random utterance {i}" if i % 4 else "" for i in range(30)]
    repository[5] = utterance(3, 3)
    (tmp_path / "repository.txt").write_text("\n".join(repository) + "\n")
    chosen = build(release, tmp=tmp_path / "c")
    rows = build(
        release,
        "random",
        tmp=tmp_path / "r",
        repository_file=str(tmp_path / "repository.txt"),
        seed=7,
        num_trials=3,
    )
    assert len(rows) == 3 * len(DIALOGUE_INDICES)
    for trial in range(3):
        trial_rows = rows.filter(lambda r, t=trial: r["trial"] == t)
        expected = expected_random_lines(chosen, len(repository), 7, trial, repository)
        for row, question, lines in zip(trial_rows, chosen, expected):
            assert row["seed"] == 7 and row["context"] == question["context"]
            assert row["candidates"][0] == question["candidates"][0]  # the same ground truth
            assert row["false_candidate_lines"] == lines
            assert row["candidates"][1:] == [repository[line] for line in lines]
    assert rows[0]["false_candidate_lines"] != rows[len(DIALOGUE_INDICES)]["false_candidate_lines"]
    again = build(
        release,
        "random",
        tmp=tmp_path / "r2",
        repository_file=str(tmp_path / "repository.txt"),
        seed=7,
        num_trials=1,
    )
    assert again["candidates"] == rows.select(range(len(DIALOGUE_INDICES)))["candidates"]


def test_random_config_leaves_out_the_systems_training_utterances(release, tmp_path):
    """§3.2: the repository holds no utterance of the systems' training data; the metric's
    random_trial draws the same trial from the same lines."""
    from dialeval.metrics.response_selection import random_trial

    repository = [f"random utterance {i}" for i in range(40)]
    (tmp_path / "repository.txt").write_text("\n".join(repository) + "\n")
    training = [f"Random utterance {i}" for i in range(0, 40, 4)]  # every 4th line, in other case
    (tmp_path / "training.txt").write_text("\n".join(training) + "\n")
    kwargs = {"repository_file": str(tmp_path / "repository.txt"), "seed": 5, "num_trials": 4}
    plain = build(release, "random", tmp=tmp_path / "p", **kwargs)
    rows = build(
        release, "random", tmp=tmp_path / "x", exclude_file=str(tmp_path / "training.txt"), **kwargs
    )
    # drawn without the exclusion
    assert any(line % 4 == 0 for row in plain for line in row["false_candidate_lines"])
    assert all(line % 4 != 0 for row in rows for line in row["false_candidate_lines"])
    chosen = build(release, tmp=tmp_path / "c")
    questions = [
        {"context": q["context"], "candidates": q["candidates"], "label": 0} for q in chosen
    ]
    for trial in range(4):
        helper = random_trial(questions, repository, seed=5, trial=trial, exclude=training)
        built = rows.filter(lambda r, t=trial: r["trial"] == t)
        assert [h["false_candidate_lines"] for h in helper] == built["false_candidate_lines"]
        assert [h["candidates"] for h in helper] == built["candidates"]


def test_random_config_defaults_to_the_opensubtitles_repository(release, tmp_path):
    rows = build(release, "random", tmp=tmp_path)
    assert all(line < NUM_SUBTITLES for row in rows for line in row["false_candidate_lines"])
    assert all(text.startswith("subtitle number") for row in rows for text in row["candidates"][1:])
    with pytest.raises(ValueError, match="num_trials"):
        build(release, "random", tmp=tmp_path / "bad", num_trials=0)


def test_export_writes_parquet_and_the_card(release, tmp_path):
    out = export_dataset(
        "response_selection",
        tmp_path / "export",
        configs=["default"],
        data_dir=str(release),
        cache_dir=str(tmp_path / "cache"),
        verify_checksums=False,
    )
    card = (out / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n") and "config_name: default" in card and "Sato" in card
    exported = datasets.load_dataset(
        "parquet",
        data_files=str(out / "default" / "test-*.parquet"),
        split="train",
        cache_dir=str(tmp_path / "cache2"),
    )
    assert exported["candidates"] == build(release, tmp=tmp_path / "again")["candidates"]
