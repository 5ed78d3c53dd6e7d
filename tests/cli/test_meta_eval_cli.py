"""`dialeval meta-eval` and `dialeval export-dataset`: the paper's tables through the command line, plots, errors.

The printed tables must reproduce ../shared/data/tevet-diversity-eval/SOURCE.md (decTest,
conTest: +-0.005) with our own lexical metrics and with the release's stored columns, and the
paper's Tables 8-10 (McDiv, McDiv_nuggets, two decimals).
"""

import json
import re
import shutil
from typing import ClassVar

import datasets
import pytest
from matplotlib.image import imread
from tevet_reference import (
    CONTEST,
    DECTEST,
    MCDIV,
    MCDIV_NUGGETS,
    MCDIV_NUGGETS_200,
    PAPER_TOLERANCE,
    TOLERANCE,
    paper_oca,
)

from dialeval.atomic_files import MANIFEST_NAME
from dialeval.cli import main

# reference name -> the --metric names that must reproduce it (ours and the release's column).
METRICS = {
    "distinct-n": ["averaged_distinct_n", "released:averaged_distinct_n"],
    "cos-sim": ["ngram_cosine", "released:ngram_cosine"],
    "sent-BERT": ["released:sent_bert"],
    "BERT-score": ["released:bertscore"],
    "absHDS": ["absHDS"],
}
ALL_METRICS = [
    "averaged_distinct_n",
    "ngram_cosine",
    "released:averaged_distinct_n",
    "released:ngram_cosine",
    "released:sent_bert",
    "released:bertscore",
]


@pytest.fixture(scope="module")
def tevet_dir(shared_data):
    return str(shared_data / "tevet-diversity-eval")


@pytest.fixture(scope="module")
def run_cli(tevet_dir, tmp_path_factory):
    cache = str(tmp_path_factory.mktemp("hf_cache"))

    def run(*argv, rated=False):
        out = tmp_path_factory.mktemp("meta") / "figures.json"
        args = [
            "meta-eval",
            *argv,
            "--data-dir",
            tevet_dir,
            "--cache-dir",
            cache,
            "--output",
            str(out),
        ]
        args += [item for metric in ALL_METRICS for item in ("--metric", metric)]
        assert main(args + (["--rated"] if rated else [])) == 0
        return json.loads(out.read_text(encoding="utf-8"))

    return run


def _table_rows(printed: str) -> dict[str, list[str]]:
    """metric label -> the cells of its printed row."""
    rows = {}
    for line in printed.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) >= 3 and re.fullmatch(r"-?\d\.\d{3}", cells[1]):
            rows[cells[0]] = cells
    return rows


def _check(figures, expected, tolerance):
    for reference_name, (rho, oca) in expected.items():
        for label in METRICS[reference_name]:
            if label not in figures:
                continue
            if rho is not None:
                assert figures[label]["spearman"] == pytest.approx(rho, abs=tolerance), (
                    reference_name,
                    label,
                )
            if oca is not None:
                assert figures[label]["oca"] == pytest.approx(paper_oca(oca), abs=tolerance), (
                    reference_name,
                    label,
                )


@pytest.mark.parametrize("task", ["story", "resp", "prompt"])
def test_contest_table_reproduces_source_values(run_cli, capsys, task):
    capsys.readouterr()
    [report] = run_cli("--test", "contest", "--task", task, "--round-scores", "3")
    printed = _table_rows(capsys.readouterr().out)
    assert report["config"] == f"con_test_200_{task}_gen"
    assert set(printed) == set(ALL_METRICS) | {"absHDS"} == set(report["rows"])
    _check(report["rows"], CONTEST[f"{task}_gen"], TOLERANCE)
    # The printed table says the same as the JSON.
    for label, cells in printed.items():
        assert float(cells[1]) == pytest.approx(report["rows"][label]["spearman"], abs=5e-4)
        assert float(cells[2]) == pytest.approx(report["rows"][label]["oca"], abs=5e-4)


@pytest.mark.parametrize("task", ["story", "resp", "prompt"])
def test_dectest_table_reproduces_source_values(run_cli, capsys, task):
    capsys.readouterr()
    [report] = run_cli("--test", "dectest", "--task", task)
    printed = _table_rows(capsys.readouterr().out)
    assert report["config"] == f"dec_test_1000_{task}_gen"
    expected = {name: (rho, None) for name, rho in DECTEST[f"{task}_gen"].items()}
    _check(report["rows"], expected, TOLERANCE)
    assert report["rows"]["absHDS"]["num_sets"] == 203  # absHDS comes from the rated file
    assert "oca" not in report["rows"]["averaged_distinct_n"]  # temperature is not a class
    # Table 2 style: mean (std) of rho over 100 subsets of 200 sets, near the file-level rho.
    row = report["rows"]["released:sent_bert"]
    assert (
        row["spearman_subsets_mean"] == pytest.approx(row["spearman"], abs=0.01)
        and 0 < row["spearman_subsets_std"] < 0.05
    )
    assert float(printed["averaged_distinct_n"][1]) == pytest.approx(
        report["rows"]["averaged_distinct_n"]["spearman"], abs=5e-4
    )


@pytest.mark.parametrize("task", ["story", "resp", "prompt"])
def test_mcdiv_tables_reproduce_paper_tables_8_to_10(run_cli, task):
    [mcdiv] = run_cli("--test", "mcdiv", "--task", task, "--round-scores", "3")
    _check(mcdiv["rows"], MCDIV[f"{task}_gen"], PAPER_TOLERANCE)
    assert "absHDS" not in mcdiv["rows"]  # McDiv has no human scores
    [nuggets] = run_cli("--test", "mcdiv_nuggets", "--task", task, "--round-scores", "3")
    _check(nuggets["rows"], MCDIV_NUGGETS[f"{task}_gen"], PAPER_TOLERANCE)
    [rated] = run_cli("--test", "mcdiv_nuggets", "--task", task, "--round-scores", "3", rated=True)
    assert rated["config"] == f"mcdiv_nuggets_200_{task}_gen"
    _check(rated["rows"], MCDIV_NUGGETS_200[f"{task}_gen"], PAPER_TOLERANCE)


def test_bootstrap_interval_brackets_rho(run_cli, capsys):
    capsys.readouterr()
    [report] = run_cli(
        "--test",
        "contest",
        "--task",
        "resp",
        "--bootstrap",
        "--num-resamples",
        "200",
        "--seed",
        "3",
    )
    assert "rho 95% CI" in capsys.readouterr().out
    for row in report["rows"].values():
        low, high = row["spearman_ci"]
        assert low < row["spearman"] < high


def test_plots_render_one_png_per_metric(tevet_dir, tmp_path, capsys):
    plots = tmp_path / "plots"
    for test in ("contest", "dectest"):
        assert (
            main(
                [
                    "meta-eval",
                    "--test",
                    test,
                    "--task",
                    "resp",
                    "--metric",
                    "averaged_distinct_n",
                    "--metric",
                    "released:sent_bert",
                    "--data-dir",
                    tevet_dir,
                    "--cache-dir",
                    str(tmp_path / "cache"),
                    "--plot",
                    str(plots),
                ]
            )
            == 0
        )
    assert (plots / MANIFEST_NAME).is_file()  # the PNGs recorded as dialeval's
    names = sorted(path.name for path in plots.iterdir() if path.name != MANIFEST_NAME)
    assert names == sorted(
        [
            f"contest_resp_{m}_classes.png"
            for m in ("averaged_distinct_n", "released_sent_bert", "absHDS")
        ]
        + [
            f"dectest_resp_{m}_vs_temperature.png"
            for m in ("averaged_distinct_n", "released_sent_bert", "absHDS")
        ]
    )
    for name in names:
        image = imread(plots / name)
        assert image.shape[0] > 300 and image.shape[1] > 500
        assert image[..., :3].std() > 0.05  # something was drawn, not a blank canvas
    assert f"plot: {plots / names[0]}" in capsys.readouterr().out


def test_meta_eval_errors_are_messages(tevet_dir, tmp_path, capsys):
    base = [
        "meta-eval",
        "--test",
        "contest",
        "--task",
        "resp",
        "--data-dir",
        tevet_dir,
        "--cache-dir",
        str(tmp_path),
    ]
    assert main(base + ["--metric", "distinct-4"]) == 2
    assert "`--metric` must be one of" in capsys.readouterr().err
    assert (
        main(["meta-eval", "--test", "mcdiv", "--task", "resp", "--rated", "--data-dir", tevet_dir])
        == 2
    )
    assert "no human-rated subset" in capsys.readouterr().err
    assert main(base[:-4] + ["--data-dir", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert "`--data-dir`" in err and "data_dir" not in err


def test_released_scores_missing_from_raw_files(shared_data, tmp_path, capsys):
    shutil.copytree(
        shared_data / "tevet-diversity-eval" / "raw" / "conTest", tmp_path / "raw" / "conTest"
    )
    assert (
        main(
            [
                "meta-eval",
                "--test",
                "contest",
                "--task",
                "resp",
                "--metric",
                "released:sent_bert",
                "--data-dir",
                str(tmp_path),
                "--cache-dir",
                str(tmp_path / "cache"),
            ]
        )
        == 2
    )
    assert "no released scores" in capsys.readouterr().err


def test_export_dataset_command(tevet_dir, shared_data, tmp_path, capsys):
    out = tmp_path / "hub"
    assert (
        main(
            [
                "export-dataset",
                "diversity_eval",
                "--to",
                str(out),
                "--config",
                "mcdiv_nuggets_200_story_gen",
                "--data-dir",
                tevet_dir,
                "--cache-dir",
                str(tmp_path / "cache"),
            ]
        )
        == 0
    )
    assert "wrote" in capsys.readouterr().out
    reread = datasets.load_dataset(
        str(out), "mcdiv_nuggets_200_story_gen", split="test", cache_dir=str(tmp_path / "r")
    )
    assert reread.num_rows == 200 and None not in reread["abs_hds_mean"]

    dd = tmp_path / "ddpp"
    assert (
        main(
            [
                "export-dataset",
                "dailydialog_pp",
                "--to",
                str(dd),
                "--data-dir",
                str(shared_data / "dailydialog-plusplus"),
                "--cache-dir",
                str(tmp_path / "cache"),
            ]
        )
        == 0
    )
    validation = datasets.load_dataset(
        str(dd), "default", split="validation", cache_dir=str(tmp_path / "r")
    )
    positives = datasets.load_dataset(
        str(dd), "positives", split="train", cache_dir=str(tmp_path / "r")
    )
    assert (validation.num_rows, positives.num_rows) == (1028, 7641)
    assert main(["export-dataset", "diversity_eval", "--to", str(out), "--config", "nope"]) == 2


def test_model_based_metrics_score_every_set(tevet_dir, tiny_roberta_nli_path, tmp_path):
    from dialeval.metrics.diversity_meta_eval.statistics import diversity_meta_evaluation
    from dialeval.metrics.similarity_diversity.sent_bert import sent_bert_diversity

    out = tmp_path / "figures.json"
    argv = [
        "meta-eval",
        "--test",
        "contest",
        "--task",
        "prompt",
        "--data-dir",
        tevet_dir,
        "--cache-dir",
        str(tmp_path),
        "--metric",
        "sent_bert",
        "--metric",
        f"nli={tiny_roberta_nli_path}",
        "--metric",
        "vendi",
        "--no-human",
        "--output",
        str(out),
    ]
    assert main(argv) == 0
    rows = json.loads(out.read_text(encoding="utf-8"))[0]["rows"]
    assert list(rows) == ["sent_bert", f"nli[{tiny_roberta_nli_path}]", "vendi"]
    from dialeval.datasets_scripts import load

    sets = load(
        "diversity_eval",
        "con_test_200_prompt_gen",
        data_dir=tevet_dir,
        split="test",
        cache_dir=str(tmp_path),
    )
    direct = diversity_meta_evaluation(
        sent_bert_diversity(sets["responses"]), sets["diversity_parameter"]
    )
    assert rows["sent_bert"]["spearman"] == pytest.approx(direct["spearman"], abs=1e-9)
    assert rows["sent_bert"]["oca"] == pytest.approx(direct["oca"], abs=1e-9)
    assert all(row["num_sets"] == 200 and -1 <= row["spearman"] <= 1 for row in rows.values())


def test_a_backend_runs_every_model_based_measure_with_torch_figures(
    tevet_dir, tiny_roberta_nli_path, tmp_path
):
    def rows(backend):
        out = tmp_path / f"{backend}.json"
        argv = ["meta-eval", "--test", "contest", "--task", "prompt", "--data-dir", tevet_dir]
        argv += ["--cache-dir", str(tmp_path), "--no-human", "--output", str(out)]
        argv += ["--metric", "sent_bert", "--metric", f"nli={tiny_roberta_nli_path}"]
        assert main([*argv, "--backend", backend]) == 0
        return json.loads(out.read_text(encoding="utf-8"))[0]["rows"]

    expected, actual = rows("torch"), rows("openvino")
    assert list(actual) == list(expected)
    for name, row in expected.items():
        for key, value in row.items():
            if isinstance(value, float):
                # correlations of per-set figures equal to 1e-5: ranks and so the rho agree
                assert actual[name][key] == pytest.approx(value, abs=1e-4), (name, key)
            else:
                assert actual[name][key] == value, (name, key)


def test_the_nli_figures_come_from_one_pass_of_the_pairs(
    tevet_dir, tmp_path, tiny_roberta_nli_path, scored_pairs
):
    """Baseline, Neutral and Confidence NLI Diversity in one meta-eval score each pair once."""
    rows = scored_pairs
    argv = [
        "meta-eval",
        "--test",
        "contest",
        "--task",
        "resp",
        "--data-dir",
        tevet_dir,
        "--cache-dir",
        str(tmp_path / "c"),
        "--no-human",
        "--no-progress",
    ]
    assert main([*argv, "--metric", f"nli={tiny_roberta_nli_path}"]) == 0
    one_figure = len(rows)
    rows.clear()
    assert (
        main(
            [
                *argv,
                *(
                    f"--metric={name}={tiny_roberta_nli_path}"
                    for name in ("nli", "nli_neutral", "nli_confidence")
                ),
            ]
        )
        == 0
    )
    assert one_figure > 0 and len(rows) == one_figure


def test_a_changed_release_file_is_refused_with_the_flag_that_accepts_it(
    shared_data, tmp_path, capsys
):
    raw = tmp_path / "raw" / "conTest"
    shutil.copytree(shared_data / "tevet-diversity-eval" / "raw" / "conTest", raw)
    with open(raw / "con_test_200_with_hds_resp_gen.csv", "a", encoding="utf-8") as handle:
        handle.write("\n")  # a blank line: the same rows, another sha256
    base = [
        "meta-eval",
        "--test",
        "contest",
        "--task",
        "resp",
        "--metric",
        "averaged_distinct_n",
        "--data-dir",
        str(tmp_path),
    ]
    assert main(base + ["--cache-dir", str(tmp_path / "cache")]) == 2
    err = capsys.readouterr().err
    assert "sha256" in err and "Pass --no-verify" in err and "verify_checksums" not in err
    assert main(base + ["--cache-dir", str(tmp_path / "cache2"), "--no-verify"]) == 0


def _tiny_contest(folder):
    """A conTest respGen file of six sets (two classes), read with --no-verify."""
    path = folder / "conTest" / "con_test_200_with_hds_resp_gen.csv"
    path.parent.mkdir(parents=True)
    rows = ["sample_id,context,resp_0,resp_1,resp_2,label_value"]
    rows += [f"{i},c{i},a b,a b,a c,0" for i in range(3)]
    rows += [f"{i},c{i},a b,c d,e f g,1" for i in range(3, 6)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


TINY_CONTEST = [
    "meta-eval",
    "--test",
    "contest",
    "--task",
    "resp",
    "--metric",
    "averaged_distinct_n",
    "--no-human",
    "--no-verify",
    "--no-progress",
]


def test_meta_eval_reads_the_release_from_the_local_places_before_any_download(
    tmp_path, capsys, monkeypatch
):
    from dialeval.cli import release_data

    monkeypatch.setattr(release_data, "CHECKOUT_DATA", None)
    _tiny_contest(tmp_path / "papers" / release_data.RELEASE_FOLDER)
    monkeypatch.setenv(release_data.DATA_DIR_VARIABLE, str(tmp_path / "papers"))
    assert main([*TINY_CONTEST, "--cache-dir", str(tmp_path / "cache1")]) == 0
    assert "averaged_distinct_n" in capsys.readouterr().out
    # a source checkout's ../shared/data, where the project's tests read it
    monkeypatch.delenv(release_data.DATA_DIR_VARIABLE)
    monkeypatch.setattr(release_data, "CHECKOUT_DATA", tmp_path / "papers")
    assert main([*TINY_CONTEST, "--cache-dir", str(tmp_path / "cache2")]) == 0


def test_meta_eval_offline_without_the_release_says_how_to_get_it_in_one_line(
    tmp_path, capsys, monkeypatch
):
    from dialeval.cli import release_data

    monkeypatch.delenv(release_data.DATA_DIR_VARIABLE, raising=False)
    monkeypatch.setattr(release_data, "CHECKOUT_DATA", tmp_path / "no_papers")
    assert main([*TINY_CONTEST, "--cache-dir", str(tmp_path / "cache")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "Traceback" not in error
    assert "con_test_200_with_hds_resp_gen.csv is not on this machine" in error
    assert "offline" in error and "no download was tried" in error
    assert release_data.RELEASE_URL in error
    assert "`--data-dir`" in error and release_data.DATA_DIR_VARIABLE in error


class _RecordingBar:
    """tqdm's interface as meta-eval uses it; records what each bar was told."""

    bars: ClassVar[dict] = {}

    def __init__(self, iterable=None, total=None, desc=None, unit="it", **_):
        self.iterable, self.total, self.unit, self.n, self.resets = iterable, total, unit, 0, []
        _RecordingBar.bars[desc] = self

    def __iter__(self):
        return iter(self.iterable)

    def update(self, count=1):
        self.n += count

    def reset(self, total=None):
        self.resets.append(total)
        self.total, self.n = total, 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_a_model_backed_figure_counts_its_engine_work_on_its_bar(
    monkeypatch, tiny_cross_encoder_path
):
    """The step's engine reports pairs: the bar switches to them rather than overrunning a total
    counted in sets."""
    import tqdm.auto

    from dialeval.cli.meta_eval_job import MetaEvalOptions, MetricSpec, score_metric

    monkeypatch.setattr(tqdm.auto, "tqdm", _RecordingBar)
    sets = [["a cat sat", "a dog ran", "the sun"], ["one two", "three four", "five six"]]
    score_metric(
        MetricSpec("cross_encoder", tiny_cross_encoder_path),
        {"responses": sets},
        MetaEvalOptions(batch_size=4),
    )
    bar = _RecordingBar.bars[f"cross_encoder[{tiny_cross_encoder_path}]"]
    assert bar.unit == "pair" and bar.resets and bar.n == bar.total > len(sets)
