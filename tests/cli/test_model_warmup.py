"""``dialeval evaluate`` loads its sentence model in a background thread while it reads and runs
the model-free steps: with the arguments the encoding uses (the same cached model), the same
figures as without the thread, and a loading error raised where the encoding waits for it, as
the user sees it without the thread."""

import contextlib
import json
import threading

import pytest

from dialeval import hub
from dialeval.cli import evaluate_command, main, model_warmup
from dialeval.cli.evaluate_job import EvaluationOptions, planned_steps
from dialeval.hub import EMBEDDED_SENTENCE_MODEL
from dialeval.metrics.engines import embedders

SETS = [
    {"responses": ["I went hiking.", "I fixed the sink.", "Nothing much."]},
    {"responses": ["Not much.", "Not much, you?", "We ate seafood on the coast."]},
]
METRICS = ["--metric", "lexical_diversity", "--metric", "sent_bert", "--metric", "vendi"]


def _sets_file(tmp_path):
    path = tmp_path / "sets.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in SETS), encoding="utf-8")
    return path


def _without_warm_up(monkeypatch):
    monkeypatch.setattr(
        evaluate_command, "warming_up", lambda plan, options: contextlib.nullcontext()
    )


def _figures(path):
    report = json.loads(path.read_text(encoding="utf-8"))
    return report["metrics"], report["per_set"]


def test_the_sentence_model_loads_in_the_background_as_the_encoding_loads_it(tmp_path, monkeypatch):
    background, foreground = [], []
    real_load = model_warmup._load

    def loading_in_thread(arguments):
        background.append((threading.current_thread().name, dict(arguments)))
        real_load(arguments)

    def loading_in_step(model, kind, **keywords):
        foreground.append({"model": model, "kind": kind, **keywords})
        return hub.load_model(model, kind, **keywords)

    monkeypatch.setattr(model_warmup, "_load", loading_in_thread)
    monkeypatch.setattr(embedders, "load_model", loading_in_step)
    sets = _sets_file(tmp_path)
    assert (
        main(["evaluate", str(sets), "-o", str(tmp_path / "warm.json"), "--no-progress", *METRICS])
        == 0
    )
    assert [name.startswith("dialeval-warm-up") for name, _ in background] == [True]
    # the very call the encoding makes: load_model's cache hands the step the thread's model
    assert foreground and all(call == background[0][1] for call in foreground)
    assert foreground[0]["model"] == EMBEDDED_SENTENCE_MODEL

    _without_warm_up(monkeypatch)
    assert (
        main(["evaluate", str(sets), "-o", str(tmp_path / "cold.json"), "--no-progress", *METRICS])
        == 0
    )
    assert len(background) == 1
    assert _figures(tmp_path / "warm.json") == _figures(tmp_path / "cold.json")


@pytest.mark.parametrize("warm", [True, False], ids=["with the thread", "without"])
def test_a_model_that_fails_to_load_is_the_error_it_is_without_the_thread(
    tmp_path, monkeypatch, capsys, warm
):
    raised_in = []

    def failing(*args, **kwargs):
        raised_in.append(threading.current_thread().name)
        raise OSError("no weights in this folder")

    monkeypatch.setattr(hub, "load_model", failing)  # the thread's loader
    monkeypatch.setattr(embedders, "load_model", failing)  # the encoding's
    if not warm:
        _without_warm_up(monkeypatch)
    sets = _sets_file(tmp_path)
    assert (
        main(["evaluate", str(sets), "-o", str(tmp_path / "out.json"), "--no-progress", *METRICS])
        == 2
    )
    error = capsys.readouterr().err
    message = next(line for line in error.splitlines() if line.startswith("dialeval evaluate:"))
    assert message == (
        f"dialeval evaluate: error: --sentence-model {EMBEDDED_SENTENCE_MODEL}: "
        "no weights in this folder"
    )
    # with the thread, its exception is the one raised: the encoding did not load again
    assert [name.startswith("dialeval-warm-up") for name in raised_in] == [warm]


def test_a_plan_without_a_model_starts_no_thread(monkeypatch):
    started = []
    monkeypatch.setattr(model_warmup, "ModelWarmUp", lambda *args: started.append(args))
    lexical = EvaluationOptions(metrics=["lexical_diversity", "corpus_lexical_diversity"])
    with model_warmup.warming_up(planned_steps("response_set", lexical), lexical):
        pass
    assert started == []
    embedding = EvaluationOptions(metrics=["lexical_diversity", "vendi"])
    assert model_warmup.uses_models(planned_steps("response_set", embedding)) == (True, True)
