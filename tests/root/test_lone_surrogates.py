"""Lone surrogates ("\\ud800": JSON's escape, or bytes decoded with surrogateescape) are not valid
Unicode: no tokenizer, zlib or Arrow can encode them. Every public function of every registered
metric, every evaluate module, the input reader and the command line refuse them up front with
a ValueError naming the argument and the index, instead of a UnicodeEncodeError or a
tokenizers TypeError from deep inside."""
from __future__ import annotations

import re
import uuid
from types import SimpleNamespace
from importlib import import_module

import evaluate
import pytest
from pos_tagging_fixtures import lexicon_tagger, regex_sentence_splitter

from dialeval import io
from dialeval.metrics import registry
from dialeval.validation import check_response_set, check_unicode_text, lone_surrogate

BAD = "ok \ud800 x"  # the surrogate at character 3
REFUSAL = r"holds a lone surrogate \(U\+D800\) at character 3: not valid Unicode"
POS = {"tagger": lexicon_tagger, "sentence_splitter": regex_sentence_splitter}


def _bad_at(argument: str | tuple[str, ...]) -> str:
    """The refusal naming ``argument`` (with its indices; a tuple: any of them)."""
    names = argument if isinstance(argument, tuple) else (argument,)
    return "(" + "|".join(re.escape(f"`{name}`") for name in names) + ") " + REFUSAL


def _clusters(nli):
    from dialeval.metrics.engines.embedders import load_embedder
    from dialeval.metrics.sem_ent import SemanticClusters

    embedder = load_embedder("mean_pooling", nli, max_length=64, device="cpu")
    return SemanticClusters.fit(["a b", "c d", "e f", "g h"], embedder, num_clusters=2, n_init=1)


def _cases(m):
    """``{metric: {function: (call, argument)}}``: each public function called with ``BAD`` in
    one text argument, and the argument its error must name. ``m`` gives a fixture by name.
    Functions that take no text are listed with None."""
    # the subpackages, by name (dialeval.metrics re-exports functions of the same names)
    p = SimpleNamespace(**{metric.name: import_module(f"dialeval.metrics.{metric.name}") for metric in registry.METRICS})
    lex, sim, ead, pos, hom = p.lexical_diversity, p.similarity_diversity, p.expectation_adjusted_distinct, p.pos_templates, p.homogenization
    sets = [["a b", BAD]]
    corpus = ["a b", BAD]
    return {
        "lexical_diversity": {
            "lexical_diversity": (lambda: lex.lexical_diversity(sets), "predictions[0][1]"),
            "set_lexical_diversity": (lambda: lex.set_lexical_diversity(sets), "response_sets[0][1]"),
            "corpus_lexical_diversity": (lambda: lex.corpus_lexical_diversity(corpus), "responses[1]"),
            "averaged_distinct_n": (lambda: lex.averaged_distinct_n(corpus), "responses[1]"),
            "ngram_cosine_diversity": (lambda: lex.ngram_cosine_diversity(corpus), "responses[1]"),
            "distinct_n": (lambda: lex.distinct_n(corpus), "responses[1]"),
            "entropy_n": (lambda: lex.entropy_n(corpus), "responses[1]"),
            "lf": (lambda: lex.lf(["a b"], reference=corpus), "reference[1]"),
            "self_bleu": (lambda: lex.self_bleu(corpus), "responses[1]"),
        },
        "similarity_diversity": {
            "similarity_diversity": (lambda: sim.similarity_diversity(sets, "sent_bert", m("tiny_roberta_nli_path"), device="cpu"),
                                     "response_sets[0][1]"),
            "sent_bert_diversity": (lambda: sim.sent_bert_diversity(sets, m("tiny_roberta_nli_path"), device="cpu"),
                                    "response_sets[0][1]"),
            "bertscore_diversity": (lambda: sim.bertscore_diversity(sets, m("tiny_roberta_nli_path"), rescale_with_baseline=False,
                                                                    device="cpu"), "response_sets[0][1]"),
            "similarity_matrices": (lambda: sim.similarity_matrices(sets, "cross_encoder", m("tiny_cross_encoder_path"), device="cpu"),
                                    "response_sets[0][1]"),
        },
        "nli_diversity": {
            "nli_diversity": (lambda: p.nli_diversity.nli_diversity(sets, m("tiny_roberta_nli_path"), device="cpu"), "response_sets[0][1]"),
            "nli_pair_matrices": (lambda: p.nli_diversity.nli_pair_matrices(sets, model=m("tiny_roberta_nli_path"), device="cpu"),
                                  "response_sets[0][1]"),
            "iter_nli_pair_matrices": (lambda: list(p.nli_diversity.iter_nli_pair_matrices(
                sets, p.nli_diversity.NLIScorer(m("tiny_roberta_nli_path"), device="cpu"))), "response_sets[0][1]"),
        },
        "vendi_score": {
            "vendi_score": (lambda: p.vendi_score.vendi_score(corpus, m("tiny_roberta_nli_path"), device="cpu"), "predictions[1]"),
            "vendi_score_from_embeddings": None,
            "vendi_score_from_kernel": None,
        },
        "sem_ent": {
            "sem_ent": (lambda: p.sem_ent.sem_ent(corpus, _clusters(m("tiny_roberta_nli_path"))), "texts[1]"),
            "SemanticClusters": (lambda: p.sem_ent.SemanticClusters.fit(
                ["a b", "c d", BAD], import_module("dialeval.metrics.engines.embedders").load_embedder(
                    "mean_pooling", m("tiny_roberta_nli_path"), device="cpu"), num_clusters=2), "reference_texts[2]"),
        },
        "diversity_meta_eval": {name: None for name in registry.get("diversity_meta_eval").functions},
        "response_selection": {
            "response_selection": (lambda: p.response_selection.response_selection([BAD], [["a b", "c d"]], [0], m("tiny_gpt2_path"),
                                                                                  device="cpu"), "contexts[0]"),
            "system_ranking_correlation": None,
            "random_protocol_correlation": None,
        },
        "nbest_contradiction": {
            "nbest_contradiction": (lambda: p.nbest_contradiction.nbest_contradiction(
                [["yes", BAD]], ["yes"], m("tiny_roberta_yes_no_path"), device="cpu"), "predictions[0][1]"),
            "certainty_variety": None,  # labels 'yes' / 'no' / ... only: anything else is refused as not a label
        },
        "compression_ratio": {
            "compression_ratio": (lambda: p.compression_ratio.compression_ratio(corpus), "texts[1]"),
            "compression_ratio_per_set": (lambda: p.compression_ratio.compression_ratio_per_set(sets), "response_sets[0][1]"),
        },
        "expectation_adjusted_distinct": {
            "expectation_adjusted_distinct": (lambda: ead.expectation_adjusted_distinct(["a b"], vocab_size=None, vocab_texts=corpus),
                                              "vocab_texts[1]"),
            "expectation_adjusted_distinct_scores": (lambda: ead.expectation_adjusted_distinct_scores(sets), "predictions[0][1]"),
            "expected_distinct": None,
        },
        "pos_templates": {
            "template_rate": (lambda: pos.template_rate(corpus, **POS), "texts[1]"),
            "templates_per_token": (lambda: pos.templates_per_token(corpus, **POS), "texts[1]"),
            "extract_templates": (lambda: pos.extract_templates(corpus, **POS), "texts[1]"),
            "pos_template_scores": (lambda: pos.pos_template_scores(sets, **POS), "predictions[0][1]"),
        },
        "embedding_distances": {
            "embedding_distances": (lambda: p.embedding_distances.embedding_distances(sets, m("tiny_roberta_nli_path"), device="cpu"),
                                    "predictions[0][1]"),
            "remote_clique": (lambda: p.embedding_distances.remote_clique(corpus, m("tiny_roberta_nli_path"), device="cpu"), "texts[1]"),
            "chamfer_distance": (lambda: p.embedding_distances.chamfer_distance(corpus, m("tiny_roberta_nli_path"), device="cpu"),
                                 "texts[1]"),
            "remote_clique_from_embeddings": None,
            "chamfer_distance_from_embeddings": None,
        },
        "self_repetition": {
            "self_repetition": (lambda: p.self_repetition.self_repetition(corpus), "texts[1]"),
            "self_repetition_per_set": (lambda: p.self_repetition.self_repetition_per_set(sets), "response_sets[0][1]"),
            "self_repetition_scores": (lambda: p.self_repetition.self_repetition_scores(sets), "predictions[0][1]"),
        },
        "homogenization": {
            "homogenization": (lambda: hom.homogenization(corpus), "texts[1]"),
            "homogenization_per_set": (lambda: hom.homogenization_per_set(sets), "response_sets[0][1]"),
            "homogenization_score": (lambda: hom.homogenization_score(sets, measure="bertscore", model=m("tiny_roberta_nli_path"),
                                                                     device="cpu"), "predictions[0][1]"),
        },
    }


def test_the_helpers_find_the_first_surrogate_and_name_the_argument():
    assert lone_surrogate("plain ascii") is None and lone_surrogate("caf\u00e9 \U0001F600") is None
    assert lone_surrogate("a\udfffb\ud800") == "a lone surrogate (U+DFFF) at character 1"
    with pytest.raises(ValueError, match=_bad_at("responses[3]")):
        check_unicode_text(BAD, "responses[3]")
    with pytest.raises(ValueError, match=_bad_at("responses[1]")):
        check_response_set(["fine", BAD], allow_empty=True)


@pytest.mark.parametrize("metric", [metric.name for metric in registry.METRICS])
def test_every_public_function_of_every_metric_refuses_a_lone_surrogate_by_argument(metric, request):
    cases = _cases(request.getfixturevalue)
    assert metric in cases, f"add the registered metric {metric!r} to _cases"
    assert sorted(cases[metric]) == sorted(registry.get(metric).functions), "every public function needs a case (None: takes no text)"
    for function, case in cases[metric].items():
        if case is None:
            continue
        call, argument = case
        with pytest.raises(ValueError, match=_bad_at(argument)):
            call()


#: Each registered module's inputs with ``BAD`` in one text, and the module argument its error names.
MODULE_INPUTS = {
    "lexical_diversity": ({"predictions": [["a b", BAD]]}, {}, "predictions[0][1]"),
    "compression_ratio": ({"predictions": ["a b", BAD]}, {}, "predictions[1]"),
    "expectation_adjusted_distinct": ({"predictions": ["a b", BAD]}, {}, "predictions[1]"),
    "homogenization": ({"predictions": [["a b", BAD]]}, {}, "predictions[0][1]"),
    "self_repetition": ({"predictions": ["a b", BAD]}, {}, "predictions[1]"),
    "pos_templates": ({"predictions": ["a b", BAD]}, POS, "predictions[1]"),
    "similarity_diversity": ({"predictions": [["a b", BAD]]}, {"device": "cpu", "model": "tiny_roberta_nli_path"}, "predictions[0][1]"),
    "vendi_score": ({"predictions": ["a b", BAD]}, {"device": "cpu", "model": "tiny_roberta_nli_path"}, "predictions[1]"),
    "nli_diversity": ({"predictions": [["a b", BAD]]}, {"device": "cpu", "model": "tiny_roberta_nli_path"}, "predictions[0][1]"),
    "embedding_distances": ({"predictions": ["a b", BAD]}, {"device": "cpu", "model": "tiny_roberta_nli_path"}, "predictions[1]"),
    "sem_ent": ({"predictions": ["a b", BAD]}, {"device": "cpu", "embedder": "mean_pooling", "embedder_model": "tiny_roberta_nli_path",
                                                "references": ["a b", "c d", "e f"], "num_clusters": 2, "n_init": 1}, "predictions[1]"),
    "response_selection": ({"contexts": ["a b"], "candidates": [["c d", BAD]], "labels": [0]}, {"device": "cpu", "model": "tiny_gpt2_path"},
                           "candidates[0][1]"),
    "nbest_contradiction": ({"predictions": [["yes", BAD]], "references": ["yes"]}, {"device": "cpu", "classifier": "tiny_roberta_yes_no_path"},
                            "predictions[0][1]"),
}
#: Modules that take no text.
TEXT_FREE_MODULES = {"diversity_meta_eval"}


@pytest.mark.parametrize("metric", [metric.name for metric in registry.METRICS])
def test_every_evaluate_module_refuses_a_lone_surrogate_when_the_batch_is_added(metric, request, tmp_path):
    if metric in TEXT_FREE_MODULES:
        return
    assert metric in MODULE_INPUTS, f"add the registered module {metric!r} to MODULE_INPUTS"
    inputs, options, argument = MODULE_INPUTS[metric]
    options = {key: request.getfixturevalue(value) if isinstance(value, str) and value.endswith("_path") else value
               for key, value in options.items()}
    module = evaluate.load(str(registry.get(metric).module_dir), cache_dir=str(tmp_path), experiment_id=uuid.uuid4().hex)
    with pytest.raises(ValueError, match=_bad_at(argument)):
        module.add_batch(**inputs)
    with pytest.raises(ValueError, match=_bad_at(argument)):
        module.compute(**inputs, **options)


@pytest.mark.parametrize("file_format, body, where", [
    ("jsonl", '{"responses": ["a"]}\n{"responses": ["b", "ok \\ud800 x"]}\n', ":2"),
    ("jsonl", '{"responses": ["a"], "context": ["hi", "ok \\ud800 x"]}\n', ":1"),
    ("json", '[{"responses": ["a"]},\n {"responses": ["ok \\ud800 x"]}]\n', ":2"),
])
def test_the_reader_names_file_and_line_of_a_lone_surrogate(tmp_path, file_format, body, where):
    path = tmp_path / f"sets.{file_format}"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}{where}: ") + ".*" + REFUSAL):
        io.read_response_sets(path)


def test_the_corpus_reader_names_file_and_line_of_undecodable_text(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes(b"fine\nbad \xed\xa0\x80 bytes\n")
    with pytest.raises(ValueError, match=re.escape(f"{path}:2: not valid UTF-8 (byte 0xed at byte 5")):
        list(io.iter_corpus_lines(path))


def test_dialeval_evaluate_exits_2_naming_file_and_line(tmp_path, capsys):
    from dialeval.cli import main

    path = tmp_path / "sets.jsonl"
    path.write_text('{"responses": ["a b", "c d"]}\n{"responses": ["a b", "ok \\ud800 x"]}\n', encoding="utf-8")
    assert main(["evaluate", str(path), "--metric", "lexical_diversity", "--no-progress", "--output", str(tmp_path / "out.json")]) == 2
    error = capsys.readouterr().err
    assert f'{path}:2: "responses"[1] holds a lone surrogate (U+D800)' in error and "Traceback" not in error


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


def test_every_json_reader_refuses_a_lone_surrogate_anywhere_in_a_record_but_reads_an_escaped_pair(tmp_path):
    from dialeval.cli.dtg_job import read_contexts
    from dialeval.metrics.response_selection import read_selection_questions

    path = tmp_path / "contexts.jsonl"
    path.write_text('{"context": ["\\ud83d\\ude00 hi"], "references": ["a"]}\n{"context": ["hi", "ok \\ud800 x"]}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f'{path}:2: "context"[1] ') + REFUSAL):
        read_contexts(None, None, str(path))
    path.write_text('{"context": ["\\ud83d\\ude00 hi"], "references": ["a"]}\n', encoding="utf-8")
    assert [context.turns for context in read_contexts(None, None, str(path))] == [["\U0001F600 hi"]]
    questions = tmp_path / "questions.jsonl"
    questions.write_text('{"context": ["hi"], "candidates": ["a", "ok \\ud800 x"], "label": 0}\n', encoding="utf-8")
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
            load_embedder(kind, model, device="cpu", **({"max_length": 64} if model else {})).embed(["a b", BAD])
    with pytest.raises(ValueError, match=_bad_at("hypotheses[0]")):
        NLIScorer(tiny_roberta_nli_path, device="cpu").pair_probabilities(["a b"], [BAD])


def test_dtg_refuses_a_context_string_holding_a_lone_surrogate(tiny_gpt2_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from dialeval.generation import diversity_threshold_generate

    model, tokenizer = AutoModelForCausalLM.from_pretrained(tiny_gpt2_path), AutoTokenizer.from_pretrained(tiny_gpt2_path)
    with pytest.raises(ValueError, match=_bad_at("inputs[1]")):
        diversity_threshold_generate(model, tokenizer, ["hello", BAD], metric="distinct_n", num_responses=2,
                                     max_new_tokens=3)
