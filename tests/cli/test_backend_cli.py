"""`dialeval evaluate --backend`: every model of the job on ONNX Runtime or OpenVINO, torch's figures.

The job with every model-backed step on (the embedded all-MiniLM-L6-v2 for sent-BERT, Vendi and
the embedding distances; tiny classifiers for NLI Diversity and the STS cross-encoder; a tiny
encoder for BERTScore) gives, on ``--backend onnx`` and ``--backend openvino``, the figures of
``--backend torch`` within 1e-5; the report's provenance names the backend and precision of every
model; a backend that cannot run is an error naming ``--backend`` before any work.
"""

from __future__ import annotations

import json

import pytest

from dialeval import runtimes
from dialeval.cli import main

SETS = [
    ["I went hiking.", "I fixed the sink.", "Nothing much.", "I went hiking."],
    ["Nothing much.", "Not much, you?", "We ate seafood on the coast."],
    ["Sure!", "Maybe tomorrow?", "I fixed the sink.", "It is raining today."],
]
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def sets_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("backend_cli") / "sets.jsonl"
    path.write_text(
        "".join(json.dumps({"responses": responses}) + "\n" for responses in SETS),
        encoding="utf-8",
    )
    return path


def _report(path, out, models, backend):
    argv = ["evaluate", str(path), "-o", str(out), "--no-progress", *models]
    argv += ["--homogenization-model", "none", "--ead-vocab-size", "30522"]
    assert main([*argv, "--backend", backend]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def _numbers(value, where="report"):
    """Every number of a report by its path."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _numbers(item, f"{where}[{index}]")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield where, value


@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_every_model_of_the_job_gives_torch_figures_on_the_backend(
    backend, sets_file, tmp_path, tiny_roberta_nli_path, tiny_cross_encoder_path
):
    models = [
        "--nli-model",
        tiny_roberta_nli_path,
        "--cross-encoder-model",
        tiny_cross_encoder_path,
        "--bertscore-model",
        tiny_roberta_nli_path,
        "--bertscore-rescale",
        "off",
    ]
    torch_report = _report(sets_file, tmp_path / "torch.json", models, "torch")
    other = _report(sets_file, tmp_path / f"{backend}.json", models, backend)
    assert other["skipped"] == torch_report["skipped"]
    assert set(other["metrics"]) == set(torch_report["metrics"])
    # the model-backed figures are here, so the comparison below covers them
    names = " ".join(torch_report["metrics"])
    for metric in ("nli_diversity", "cross_encoder", "bertscore", "sent_bert", "vendi"):
        assert metric in names
    expected = dict(_numbers({"metrics": torch_report["metrics"], "sets": torch_report["per_set"]}))
    actual = dict(_numbers({"metrics": other["metrics"], "sets": other["per_set"]}))
    assert actual.keys() == expected.keys()
    differing = {
        where: (actual[where], value)
        for where, value in expected.items()
        if abs(actual[where] - value) > TOLERANCE * max(1.0, abs(value))
    }
    assert differing == {}
    entries = other["provenance"]["models"]
    assert entries and all(
        entry["backend"] == backend and entry["precision"] == "float32"
        for entry in entries.values()
    )
    assert all(
        entry["backend"] == "torch" for entry in torch_report["provenance"]["models"].values()
    )


def test_an_unknown_backend_names_the_flag(sets_file, tmp_path, capsys):
    out = tmp_path / "r.json"
    with pytest.raises(SystemExit) as exited:  # argparse's refusal of a choice it does not list
        main(["evaluate", str(sets_file), "-o", str(out), "--backend", "tensorrt"])
    assert exited.value.code == 2
    assert "--backend" in capsys.readouterr().err
    assert not out.exists()


def test_a_backend_whose_package_is_missing_names_the_flag_and_the_extra(
    sets_file, tmp_path, capsys, monkeypatch
):
    installed = runtimes._installed
    monkeypatch.setattr(
        runtimes, "_installed", lambda package: package != "openvino" and installed(package)
    )
    out = tmp_path / "r.json"
    argv = ["evaluate", str(sets_file), "-o", str(out), "--no-progress"]
    assert main([*argv, "--backend", "openvino"]) == 2
    error = capsys.readouterr().err
    assert "--backend" in error and "dialeval[openvino]" in error
    assert not out.exists()
