"""The CLI speaks in its own flags, skips what it cannot run, and says where its numbers come from.

Bad-input CLI examples, each a regression test: errors name flags and FILE:LINE, meta-eval skips
an unavailable model, any BERTScore model works, contexts may be turn lists, the report carries
provenance, and every long step has a progress bar that --no-progress hides.
"""

import csv
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO_ROOT

import dialeval
from dialeval.cli import evaluate_job, main
from dialeval.io import read_response_sets

DEMO = REPO_ROOT / "examples" / "demo_response_sets.jsonl"
NO_MODELS = [
    "--no-sentence-model",
    "--nli-model",
    "none",
    "--bertscore-model",
    "none",
    "--cross-encoder-model",
    "none",
]
ONLY = {  # every model flag off except the one given
    "--nli-model": [
        "--no-sentence-model",
        "--bertscore-model",
        "none",
        "--cross-encoder-model",
        "none",
    ],
    "--bertscore-model": [
        "--no-sentence-model",
        "--nli-model",
        "none",
        "--cross-encoder-model",
        "none",
    ],
}


def _jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def _report(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


# -- errors name flags and FILE:LINE ---------------------------------------------------------


def test_a_set_with_one_response_names_its_file_and_line(tmp_path, capsys):
    data = tmp_path / "sets.jsonl"
    data.write_text(
        '{"responses": ["a b", "c"]}\n\n{"responses": ["only one"]}\n', encoding="utf-8"
    )
    assert main(["evaluate", str(data), "--no-progress", *NO_MODELS]) == 2
    assert f"{data}:3: a response set needs at least 2 responses" in capsys.readouterr().err


def test_white_space_responses_need_allow_empty(tmp_path, capsys):
    data = _jsonl(
        tmp_path / "sets.jsonl", [{"responses": ["a b", " \t"]}, {"responses": ["c d", "e"]}]
    )
    assert main(["evaluate", str(data), "--no-progress", *NO_MODELS]) == 2
    err = capsys.readouterr().err
    assert f"{data}:1: response 1 is white space only; pass --allow-empty" in err
    assert (
        main(
            [
                "evaluate",
                str(data),
                "-o",
                str(tmp_path / "r.json"),
                "--no-progress",
                "--allow-empty",
                *NO_MODELS,
            ]
        )
        == 0
    )


def test_model_errors_name_the_flag_that_gave_the_model(tmp_path, capsys):
    not_a_model = tmp_path / "not-a-model"
    not_a_model.mkdir()
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "evaluate",
                str(DEMO),
                "-o",
                str(out),
                "--no-progress",
                "--nli-model",
                str(not_a_model),
                *ONLY["--nli-model"],
            ]
        )
        == 2
    )
    error = capsys.readouterr().err
    assert f"--nli-model {not_a_model}: " in error
    # the metrics that finished before the error are kept for --resume, and the message says so
    assert (
        "3 finished metrics are checkpointed in" in error and (tmp_path / "r.json.partial").is_dir()
    )  # lexical ones


def test_meta_eval_model_errors_name_the_metric_option(shared_data, tmp_path, capsys):
    not_a_model = tmp_path / "not-a-model"
    not_a_model.mkdir()
    argv = [
        "meta-eval",
        "--test",
        "contest",
        "--task",
        "resp",
        "--data-dir",
        str(shared_data / "tevet-diversity-eval"),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--no-human",
        "--no-progress",
        "--metric",
        f"nli={not_a_model}",
    ]
    assert main(argv) == 2
    assert f"--metric nli={not_a_model}: " in capsys.readouterr().err


def test_meta_eval_skips_a_metric_whose_model_is_unavailable(shared_data, tmp_path, capsys):
    out = tmp_path / "figures.json"
    argv = [
        "meta-eval",
        "--test",
        "contest",
        "--task",
        "resp",
        "--data-dir",
        str(shared_data / "tevet-diversity-eval"),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--no-human",
        "--no-progress",
        "-o",
        str(out),
        "--metric",
        "nli=nobody/no-such-model",
        "--metric",
        "averaged_distinct_n",
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert (
        "skipped nli[nobody/no-such-model]: Model 'nobody/no-such-model' is not available"
        in printed
    )
    assert "`--metric nli=nobody/no-such-model`" in printed
    figures = json.loads(out.read_text(encoding="utf-8"))[0]
    assert list(figures["rows"]) == ["averaged_distinct_n"]
    assert [entry["metric"] for entry in figures["skipped"]] == ["nli[nobody/no-such-model]"]


# -- BERTScore with any model ----------------------------------------------------------------


def _baseline_at(path, layer: int) -> float:
    with open(path, encoding="utf-8", newline="") as handle:
        return next(float(row["F"]) for row in csv.DictReader(handle) if int(row["LAYER"]) == layer)


def _direct_bertscore(model, **options) -> list[float]:
    from dialeval.io import read_response_sets
    from dialeval.metrics.similarity_diversity.bertscore import bertscore_diversity

    return bertscore_diversity(
        [s.responses for s in read_response_sets(DEMO)], model=model, **options
    )


def _bertscore_per_set(report: dict) -> list[float]:
    return [row["bertscore_diversity"] for row in report["per_set"]]


def test_bertscore_model_without_a_baseline_says_which_flags_help(
    tiny_roberta_nli_path, tmp_path, capsys
):
    out = tmp_path / "r.json"
    base = [
        "evaluate",
        str(DEMO),
        "-o",
        str(out),
        "--no-progress",
        "--bertscore-model",
        tiny_roberta_nli_path,
        *ONLY["--bertscore-model"],
    ]
    assert main(base) == 2
    err = capsys.readouterr().err
    assert (
        "`--bertscore-baseline FILE`" in err
        and "`--bertscore-rescale off`" in err
        and "rescale_with_baseline" not in err
    )

    assert main(base + ["--bertscore-rescale", "off"]) == 0
    expected = _direct_bertscore(tiny_roberta_nli_path, rescale_with_baseline=False)
    assert _bertscore_per_set(_report(out)) == pytest.approx(expected, abs=1e-12)

    baseline = tmp_path / "baseline.tsv"
    baseline.write_text(
        "LAYER,P,R,F\n0,0.1,0.1,0.1\n1,0.2,0.2,0.2\n2,0.5,0.5,0.55\n", encoding="utf-8"
    )
    # the tiny model has 2 layers: F = 0.55
    assert main(base + ["--bertscore-baseline", str(baseline)]) == 0
    expected = _direct_bertscore(tiny_roberta_nli_path, baseline=0.55)
    assert _bertscore_per_set(_report(out)) == pytest.approx(expected, abs=1e-12)


@pytest.fixture()
def hub_cache(tmp_path, monkeypatch, tiny_roberta_nli_path):
    """A Hugging Face cache holding the tiny RoBERTa as `FacebookAI/roberta-base` at a fixed commit."""
    import huggingface_hub.constants

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--FacebookAI--roberta-base"
    shutil.copytree(tiny_roberta_nli_path, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit, encoding="utf-8")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    return commit


def test_bertscore_rescales_with_the_published_baseline(hub_cache, tiny_roberta_nli_path, tmp_path):
    import bert_score

    published = Path(bert_score.__file__).parent / "rescale_baseline" / "en" / "roberta-base.tsv"
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "evaluate",
                str(DEMO),
                "-o",
                str(out),
                "--no-progress",
                "--bertscore-model",
                "FacebookAI/roberta-base",
                *ONLY["--bertscore-model"],
            ]
        )
        == 0
    )
    report = _report(out)
    expected = _direct_bertscore(tiny_roberta_nli_path, baseline=_baseline_at(published, 2))
    assert _bertscore_per_set(report) == pytest.approx(expected, abs=1e-12)
    assert report["provenance"]["models"]["FacebookAI/roberta-base"]["revision"] == hub_cache


def test_published_baselines_are_checked_and_optional(monkeypatch, tmp_path):
    import importlib.util

    from dialeval.metrics.similarity_diversity import bertscore, bertscore_baselines

    path = bertscore.published_baseline_file("FacebookAI/roberta-base")
    assert Path(path).parts[-3:] == ("rescale_baseline", "en", "roberta-base.tsv")
    assert bertscore.published_baseline_file("microsoft/deberta-xlarge-mnli").endswith(
        "deberta-xlarge-mnli.tsv"
    )
    assert bertscore.published_baseline_file("nobody/unknown-model") is None
    # a local directory names no model
    assert bertscore.published_baseline_file(str(tmp_path)) is None
    monkeypatch.setitem(bertscore_baselines.EN_BASELINE_SHA256, "roberta-base", "0" * 64)
    with pytest.raises(ValueError, match="sha256"):
        bertscore.published_baseline_file("roberta-base")
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "bert_score" else real_find_spec(name, *a),
    )
    # bert-score not installed
    assert bertscore.published_baseline_file("roberta-large-mnli") is None


# -- contexts as turns, ids and fields, provenance -------------------------------------------


def _directory_sha256(root: Path) -> str:
    digest = hashlib.sha256()
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(
            f"{file.relative_to(root).as_posix()}\0{hashlib.sha256(file.read_bytes()).hexdigest()}\n".encode()
        )
    return digest.hexdigest()


def test_turn_lists_ids_fields_and_provenance(tiny_roberta_nli_path, tmp_path, capsys):
    data = _jsonl(
        tmp_path / "sets.jsonl",
        [
            {
                "id": "d1",
                "context": ["hi", "how are you?"],
                "responses": ["fine", "great thanks"],
                "system": "A",
            },
            {
                "id": "d2",
                "context": ["what now?"],
                "responses": ["sleep", "eat something"],
                "system": "B",
            },
        ],
    )
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "evaluate",
                str(data),
                "-o",
                str(out),
                "--no-progress",
                "--per-set",
                "--max-n",
                "2",
                "--nli-model",
                tiny_roberta_nli_path,
                *ONLY["--nli-model"],
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    report = _report(out)
    first = report["per_set"][0]
    assert (first["where"], first["id"], first["context"], first["fields"]) == (
        f"{data}:1",
        "d1",
        ["hi", "how are you?"],
        {"system": "A"},
    )
    assert "nli_diversity" in first

    provenance = report["provenance"]
    assert (
        provenance["dialeval_version"] == dialeval.__version__
        and provenance["command"] == "evaluate"
    )
    assert provenance["options"]["--max-n"] == 2 and provenance["options"]["--lf-threshold"] == 100
    assert (
        provenance["options"]["--nli-model"] == [tiny_roberta_nli_path]
        and provenance["options"]["--per-set"] is True
    )
    assert provenance["input"] == {
        "path": str(data),
        "sha256": hashlib.sha256(data.read_bytes()).hexdigest(),
    }
    model_hash = _directory_sha256(Path(tiny_roberta_nli_path))
    assert provenance["models"][tiny_roberta_nli_path]["sha256"] == model_hash

    header = printed.splitlines()[0].split()
    assert header[:3] == ["id", "context", "system"]
    row = next(line for line in printed.splitlines() if line.startswith("d1 "))
    assert row.split()[:6] == ["d1", "hi", "|", "how", "are", "you?"] and row.split()[6] == "A"
    assert (
        f"dialeval {dialeval.__version__} evaluate; input {data} (sha256 {provenance['input']['sha256'][:12]})"
        in printed
    )
    assert "options: --output" in printed and "--max-n 2" in printed
    assert f"model {tiny_roberta_nli_path}: sha256 {model_hash[:12]}" in printed


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert (
        exit_info.value.code == 0
        and capsys.readouterr().out == f"dialeval {dialeval.__version__}\n"
    )


# -- progress --------------------------------------------------------------------------------


class _Bars:
    """Stands in for tqdm: records each bar's description, total and updates."""

    def __init__(self):
        self.bars = []

    def __call__(self, *args, total=None, desc=None, disable=False, **kwargs):
        bar = {"desc": desc, "total": total, "updates": [], "disabled": disable}
        self.bars.append(bar)

        class Bar:
            def update(self, n=1):
                bar["updates"].append(n)

            def close(self):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        return Bar()


def test_each_sentence_model_encodes_once_behind_one_bar(tmp_path, monkeypatch):
    """Sem-Ent's reference corpus and the responses are encoded in one job step, a batch per update."""
    bars = _Bars()
    monkeypatch.setattr(evaluate_job, "tqdm", bars)
    reference = tmp_path / "train.txt"
    reference.write_text(
        "".join(f"reference response number {i}\n" for i in range(30)), encoding="utf-8"
    )
    argv = [
        "evaluate",
        str(DEMO),
        "-o",
        str(tmp_path / "r.json"),
        *NO_MODELS,
        "--reference-corpus",
        str(reference),
        "--sem-ent-k",
        "3",
        "--batch-size",
        "8",
    ]  # the embedded MiniLM
    assert main(argv) == 0
    distinct = len(
        {f"reference response number {i}" for i in range(30)}
        | {r for s in read_response_sets(DEMO) for r in s.responses}
    )
    embedding = next(
        bar
        for bar in bars.bars
        if bar["desc"] == "sentence embeddings (sentence-transformers/all-MiniLM-L6-v2)"
    )
    assert (
        embedding["total"] == distinct
        and sum(embedding["updates"]) == distinct
        and not embedding["disabled"]
    )
    # one update per batch
    assert len(embedding["updates"]) == -(-distinct // 8) and max(embedding["updates"]) == 8
    sem_ent = next(bar for bar in bars.bars if bar["desc"] == "sem_ent")
    assert sem_ent["total"] == 2 and sem_ent["updates"] == [
        1,
        1,
    ]  # clusters fitted, responses scored


def test_no_progress_hides_the_libraries_bars_too(tiny_roberta_nli_path, tmp_path, capsys):
    from dialeval.hub import clear_model_cache

    argv = [
        "evaluate",
        str(DEMO),
        "-o",
        str(tmp_path / "r.json"),
        "--nli-model",
        tiny_roberta_nli_path,
        *ONLY["--nli-model"],
        "--backend",
        "torch",  # loads the weights every time (an exported model is read from its cache)
    ]
    clear_model_cache()
    assert main(argv) == 0
    # transformers' bar, shown when progress is on
    assert "Loading weights" in capsys.readouterr().err
    clear_model_cache()
    assert main(argv + ["--no-progress"]) == 0
    assert capsys.readouterr().err == ""


def test_meta_eval_shows_a_bar_per_metric(shared_data, tmp_path, capsys):
    argv = [
        "meta-eval",
        "--test",
        "contest",
        "--task",
        "resp",
        "--data-dir",
        str(shared_data / "tevet-diversity-eval"),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--no-human",
        "--metric",
        "averaged_distinct_n",
    ]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "distinct_n:" in err and "/220 " in err  # one step per set of the test
    assert main(argv + ["--no-progress"]) == 0
    assert "averaged_distinct_n" not in capsys.readouterr().err
