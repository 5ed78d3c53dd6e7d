"""Lone surrogates ("\\ud800": JSON's escape, or bytes decoded with surrogateescape) are not valid
Unicode: no tokenizer, zlib or Arrow can encode them. Every public function of every registered
metric, every evaluate module, the input reader and the command line refuse them up front with
a ValueError naming the argument and the index, instead of a UnicodeEncodeError or a
tokenizers TypeError from deep inside."""

from __future__ import annotations

import re
import uuid

import evaluate
import pytest
from metric_cases import BAD_TEXT, cases_of

from dialeval import io
from dialeval.metrics import registry
from dialeval.validation import check_response_set, check_unicode_text, lone_surrogate

BAD = BAD_TEXT  # the surrogate at character 3
REFUSAL = r"holds a lone surrogate \(U\+D800\) at character 3: not valid Unicode"


def _bad_at(argument: str | tuple[str, ...]) -> str:
    """The refusal naming ``argument`` (with its indices; a tuple: any of them)."""
    names = argument if isinstance(argument, tuple) else (argument,)
    return "(" + "|".join(re.escape(f"`{name}`") for name in names) + ") " + REFUSAL


def test_the_helpers_find_the_first_surrogate_and_name_the_argument():
    assert lone_surrogate("plain ascii") is None and lone_surrogate("caf\u00e9 \U0001f600") is None
    assert lone_surrogate("a\udfffb\ud800") == "a lone surrogate (U+DFFF) at character 1"
    with pytest.raises(ValueError, match=_bad_at("responses[3]")):
        check_unicode_text(BAD, "responses[3]")
    with pytest.raises(ValueError, match=_bad_at("responses[1]")):
        check_response_set(["fine", BAD], allow_empty=True)


@pytest.mark.parametrize("metric", [metric.name for metric in registry.METRICS])
def test_every_public_function_of_every_metric_refuses_a_lone_surrogate_by_argument(
    metric, request
):
    """Each function called as the metric's tests/metric_cases/<name>.py says (``lone_surrogate_calls``)."""
    calls = cases_of(metric).lone_surrogate_calls(request.getfixturevalue, BAD)
    assert sorted(calls) == sorted(registry.get(metric).functions), (
        "every public function needs a case (None: takes no text)"
    )
    for case in calls.values():
        if case is None:
            continue
        call, argument = case
        with pytest.raises(ValueError, match=_bad_at(argument)):
            call()


@pytest.mark.parametrize("metric", [metric.name for metric in registry.METRICS])
def test_every_evaluate_module_refuses_a_lone_surrogate_when_the_batch_is_added(
    metric, request, tmp_path
):
    """The module's inputs with ``BAD`` in one text (``LONE_SURROGATE_MODULE`` of its case module;
    None: it takes no text), and the module argument its error names."""
    case = cases_of(metric).LONE_SURROGATE_MODULE
    if case is None:
        return
    inputs, options, argument = case
    options = {
        key: request.getfixturevalue(value)
        if isinstance(value, str) and value.endswith("_path")
        else value
        for key, value in options.items()
    }
    module = evaluate.load(
        str(registry.get(metric).module_dir),
        cache_dir=str(tmp_path),
        experiment_id=uuid.uuid4().hex,
    )
    with pytest.raises(ValueError, match=_bad_at(argument)):
        module.add_batch(**inputs)
    with pytest.raises(ValueError, match=_bad_at(argument)):
        module.compute(**inputs, **options)


@pytest.mark.parametrize(
    "file_format, body, where",
    [
        ("jsonl", '{"responses": ["a"]}\n{"responses": ["b", "ok \\ud800 x"]}\n', ":2"),
        ("jsonl", '{"responses": ["a"], "context": ["hi", "ok \\ud800 x"]}\n', ":1"),
        ("json", '[{"responses": ["a"]},\n {"responses": ["ok \\ud800 x"]}]\n', ":2"),
    ],
)
def test_the_reader_names_file_and_line_of_a_lone_surrogate(tmp_path, file_format, body, where):
    path = tmp_path / f"sets.{file_format}"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}{where}: ") + ".*" + REFUSAL):
        io.read_response_sets(path)


def test_the_corpus_reader_names_file_and_line_of_undecodable_text(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes(b"fine\nbad \xed\xa0\x80 bytes\n")
    with pytest.raises(
        ValueError, match=re.escape(f"{path}:2: not valid UTF-8 (byte 0xed at byte 5")
    ):
        list(io.iter_corpus_lines(path))


def test_dialeval_evaluate_exits_2_naming_file_and_line(tmp_path, capsys):
    from dialeval.cli import main

    path = tmp_path / "sets.jsonl"
    path.write_text(
        '{"responses": ["a b", "c d"]}\n{"responses": ["a b", "ok \\ud800 x"]}\n', encoding="utf-8"
    )
    assert (
        main(
            [
                "evaluate",
                str(path),
                "--metric",
                "lexical_diversity",
                "--no-progress",
                "--output",
                str(tmp_path / "out.json"),
            ]
        )
        == 2
    )
    error = capsys.readouterr().err
    assert (
        f'{path}:2: "responses"[1] holds a lone surrogate (U+D800)' in error
        and "Traceback" not in error
    )


def test_a_csv_with_bytes_that_are_not_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "sets.csv"
    path.write_bytes(b"context,resp_0,resp_1\nhi,a,b\nhi,a,\xed\xa0\x80\n")
    with pytest.raises(ValueError, match=re.escape(f"{path}:3: not valid UTF-8")):
        io.read_response_sets(path)


def test_a_dataframe_row_with_a_lone_surrogate_is_named_by_row_and_key():
    import pandas as pd

    frame = pd.DataFrame({"responses": [["a"], ["b", BAD]], "context": ["hi", "there"]})
    with pytest.raises(ValueError, match=re.escape('DataFrame row 1: "responses"[1] ') + REFUSAL):
        io.response_sets_from_dataframe(frame)


def test_every_json_reader_refuses_a_lone_surrogate_anywhere_in_a_record_but_reads_an_escaped_pair(
    tmp_path,
):
    from dialeval.cli.dtg_contexts import read_contexts
    from dialeval.metrics.response_selection import read_selection_questions

    path = tmp_path / "contexts.jsonl"
    path.write_text(
        '{"context": ["\\ud83d\\ude00 hi"], "references": ["a"]}\n{"context": ["hi", "ok \\ud800 x"]}\n',
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=re.escape(f'{path}:2: "context"[1] ') + REFUSAL):
        read_contexts(None, None, str(path))
    path.write_text('{"context": ["\\ud83d\\ude00 hi"], "references": ["a"]}\n', encoding="utf-8")
    assert [context.turns for context in read_contexts(None, None, str(path))] == [
        ["\U0001f600 hi"]
    ]
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        '{"context": ["hi"], "candidates": ["a", "ok \\ud800 x"], "label": 0}\n', encoding="utf-8"
    )
    with pytest.raises(ValueError, match=re.escape(f'{questions}:1: "candidates"[1] ') + REFUSAL):
        read_selection_questions(questions)


def test_the_evaluate_job_refuses_a_lone_surrogate_before_its_shared_sentence_encoding():
    # --metric sent_bert / vendi alone: the job's one encoding pass would meet the text first
    from dialeval.cli.evaluate_job import EvaluationOptions, evaluate_corpus, evaluate_response_sets

    sets = [io.ResponseSet(None, ["a b", "c d"]), io.ResponseSet(None, ["a b", BAD])]
    with pytest.raises(ValueError, match=_bad_at("sets[1].responses[1]")):
        evaluate_response_sets(sets, EvaluationOptions(progress=False, metrics=["sent_bert"]))
    with pytest.raises(ValueError, match=_bad_at("responses[1]")):
        evaluate_corpus(["a b", BAD], EvaluationOptions(progress=False, metrics=["vendi"]))


def test_the_public_engines_refuse_a_lone_surrogate_by_argument(tiny_roberta_nli_path):
    from dialeval.metrics import NLIScorer, load_embedder

    for kind, model in (("mean_pooling", tiny_roberta_nli_path), ("sentence_transformers", None)):
        with pytest.raises(ValueError, match=_bad_at("texts[1]")):
            load_embedder(kind, model, device="cpu", **({"max_length": 64} if model else {})).embed(
                ["a b", BAD]
            )
    with pytest.raises(ValueError, match=_bad_at("hypotheses[0]")):
        NLIScorer(tiny_roberta_nli_path, device="cpu").pair_probabilities(["a b"], [BAD])


def test_dtg_refuses_a_context_string_holding_a_lone_surrogate(tiny_gpt2_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from dialeval.generation import diversity_threshold_generate

    model, tokenizer = (
        AutoModelForCausalLM.from_pretrained(tiny_gpt2_path),
        AutoTokenizer.from_pretrained(tiny_gpt2_path),
    )
    with pytest.raises(ValueError, match=_bad_at("inputs[1]")):
        diversity_threshold_generate(
            model, tokenizer, ["hello", BAD], metric="distinct_n", num_responses=2, max_new_tokens=3
        )
