"""The one loader refuses what would run silently wrong: a classifier checkpoint asked
for as a causal / seq2seq LM (its LM head would be random), and a path that is not there read as
a Hub id (a mistyped ``--nli-model ./dir`` must not be skipped with exit 0)."""

from __future__ import annotations

import json
import os

import pytest
import torch
from transformers import (
    AutoTokenizer,
    BartForSequenceClassification,
    GPT2ForSequenceClassification,
    MistralConfig,
    MistralModel,
)

from dialeval.cli import main
from dialeval.hub import ModelNotAvailableError, load_model, path_like, resolve_model_path


def _save(model, tokenizer_path, path) -> str:
    model.save_pretrained(str(path))
    AutoTokenizer.from_pretrained(tokenizer_path).save_pretrained(str(path))
    return str(path)


@pytest.fixture(scope="module")
def gpt2_classifier(tiny_gpt2_path, tmp_path_factory) -> str:
    """GPT-2's LM head is tied to its embeddings: loading says nothing is missing."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(tiny_gpt2_path, num_labels=3)
    torch.manual_seed(0)
    return _save(
        GPT2ForSequenceClassification(config),
        tiny_gpt2_path,
        tmp_path_factory.mktemp("gpt2-classifier"),
    )


@pytest.fixture(scope="module")
def bart_classifier(tiny_bart_path, tmp_path_factory) -> str:
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(tiny_bart_path, num_labels=3)
    torch.manual_seed(0)
    return _save(
        BartForSequenceClassification(config),
        tiny_bart_path,
        tmp_path_factory.mktemp("bart-classifier"),
    )


@pytest.fixture(scope="module")
def headless_mistral(tiny_mistral_path, tmp_path_factory) -> str:
    """A bare decoder saved without its (untied) LM head: config.architectures says MistralModel."""
    config = MistralConfig.from_pretrained(tiny_mistral_path)
    torch.manual_seed(0)
    return _save(
        MistralModel(config), tiny_mistral_path, tmp_path_factory.mktemp("headless-mistral")
    )


@pytest.mark.parametrize(
    "fixture, found",
    [
        (
            "gpt2_classifier",
            "is a classifier (config.architectures: GPT2ForSequenceClassification)",
        ),
        (
            "bart_classifier",
            "is a classifier (config.architectures: BartForSequenceClassification)",
        ),
        ("headless_mistral", "has no language-model head: its checkpoint lacks lm_head.weight"),
    ],
)
def test_a_checkpoint_without_a_trained_lm_head_is_refused_as_a_language_model(
    fixture, found, request
):
    path = request.getfixturevalue(fixture)
    with pytest.raises(
        ValueError, match=r"^`model` .*" + found.replace("(", r"\(").replace(")", r"\)")
    ):
        load_model(path, "language_model", device="cpu")
    load_model(path, "encoder", device="cpu")  # still fine as what it is


def test_language_models_still_load(tiny_gpt2_path, tiny_bart_path, tiny_mistral_path):
    for path in (tiny_gpt2_path, tiny_bart_path, tiny_mistral_path):
        assert load_model(path, "language_model", device="cpu").model is not None


def test_response_selection_refuses_a_classifier_as_its_model(gpt2_classifier):
    from dialeval.metrics.response_selection import response_selection

    with pytest.raises(ValueError, match=r"^`model` .*is a classifier"):
        response_selection(["hi"], [["a b", "c d"]], [0], model=gpt2_classifier, device="cpu")


def test_dtg_cli_exits_2_naming_the_model_flag_for_a_classifier(
    gpt2_classifier, tiny_roberta_nli_path, tmp_path, capsys
):
    contexts = tmp_path / "contexts.jsonl"
    contexts.write_text(json.dumps({"context": ["hello there"]}) + "\n", encoding="utf-8")
    code = main(
        [
            "dtg",
            "--model",
            gpt2_classifier,
            "--input",
            str(contexts),
            "--metric",
            "nli",
            "--metric-model",
            tiny_roberta_nli_path,
            "--num-responses",
            "2",
            "--max-samples",
            "2",
            "--max-new-tokens",
            "3",
            "--output",
            str(tmp_path / "run.jsonl"),
            "--no-progress",
        ]
    )
    assert code == 2
    error = capsys.readouterr().err
    assert "--model" in error and "is a classifier" in error and "Traceback" not in error


@pytest.mark.parametrize(
    "model",
    [
        "./nonexistent_dir",
        "../nonexistent_dir",
        "/no/such/folder",
        "~/no-such-folder-x",
        "nonexistent_dir/",
        "a/b/c",
        "models/roberta-large-mnli",
    ],
)
def test_a_path_that_is_not_there_is_no_such_folder_not_a_hub_id(model, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()  # so "models/roberta-large-mnli" is a path under it
    assert path_like(model) is not None
    with pytest.raises(
        ValueError, match=r"^`model` " + repr(model).replace(".", r"\.") + ": no such folder"
    ):
        resolve_model_path(model)


def test_hub_ids_are_still_hub_ids(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for model in (
        "roberta-large-mnli",
        "FacebookAI/roberta-large-mnli",
        "models/roberta-large-mnli",
    ):
        assert path_like(model) is None  # no ./models folder here
        with pytest.raises(ModelNotAvailableError, match="hf download"):
            resolve_model_path(model)
    with pytest.raises(
        ModelNotAvailableError,
        match=r"No folder 'models/roberta-large-mnli' here either, so it was read as a Hub id",
    ):
        # the README's download folder, not made yet
        resolve_model_path("models/roberta-large-mnli")
    (tmp_path / "here").mkdir()
    assert (
        resolve_model_path("here") == "here"
        and resolve_model_path(f".{os.sep}here") == f".{os.sep}here"
    )


@pytest.mark.parametrize("flag", ["--nli-model", "--sentence-model"])
def test_dialeval_evaluate_exits_2_naming_the_flag_of_a_mistyped_model_path(flag, tmp_path, capsys):
    sets = tmp_path / "sets.jsonl"
    sets.write_text(json.dumps({"responses": ["a b", "c d"]}) + "\n", encoding="utf-8")
    code = main(
        [
            "evaluate",
            str(sets),
            "-o",
            str(tmp_path / "r.json"),
            "--no-progress",
            flag,
            "./nonexistent_dir",
        ]
    )
    assert code == 2
    error = capsys.readouterr().err
    assert (
        f"{flag} ./nonexistent_dir" in error
        and "no such folder" in error
        and "Traceback" not in error
    )
    assert not (tmp_path / "r.json").exists()


def test_a_default_hub_model_not_downloaded_is_skipped_and_refused_when_named(tmp_path, capsys):
    sets = tmp_path / "sets.jsonl"
    sets.write_text(json.dumps({"responses": ["a b", "c d"]}) + "\n", encoding="utf-8")
    argv = ["evaluate", str(sets), "-o", str(tmp_path / "r.json"), "--no-progress"]
    off = ["--no-sentence-model", "--bertscore-model", "none", "--cross-encoder-model", "none"]
    assert main([*argv, *off, "--homogenization-model", "none"]) == 0
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert "nli_diversity[FacebookAI/roberta-large-mnli]" in [
        entry["metric"] for entry in report["skipped"]
    ]
    # asked for by name, a model that is not here is an error: no report without its figures
    (tmp_path / "r.json").unlink()
    assert main([*argv, "--metric", "nli"]) == 2
    error = capsys.readouterr().err
    assert (
        "`--metric`: nli was asked for but cannot run: Model 'FacebookAI/roberta-large-mnli'"
        in (error)
    )
    assert "`--nli-model`" in error and not (tmp_path / "r.json").exists()
