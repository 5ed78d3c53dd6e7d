"""Every error about an argument names that argument, as the caller wrote it.

A probe over the model-free public functions of ``dialeval.metrics`` (model-backed ones load
models: their argument errors are the engines' and the hub's, checked in their own tests): each
is called with valid tiny inputs except one parameter set to a hostile value; a ``ValueError`` or
``TypeError`` it raises must be a :class:`~dialeval.validation.ArgumentProblem` whose root argument
is that parameter. An outer function that hands its arguments to an inner one under other names
(``corpus_lexical_diversity``'s ``lf_threshold`` is ``lf``'s ``threshold``) must rename them.
"""

from __future__ import annotations

import importlib
import inspect
import math
import pickle

import numpy as np
import pytest
from pos_tagging_fixtures import lexicon_tagger, regex_sentence_splitter

from dialeval.validation import ArgumentError, ArgumentProblem, ArgumentTypeError, arguments_named

metrics = importlib.import_module("dialeval.metrics")

SETS = [["a b c", "a b d"], ["x y", "y z w"]]
CORPUS = ["a b c", "a b d", "x y z"]
SCORES = [0.1, 0.5, 0.3, 0.9, 0.7]
PARAMETERS = [0.0, 1.0, 0.5, 2.0, 1.5]
POS_TAGGING = {
    "tagger": lexicon_tagger,
    "sentence_splitter": regex_sentence_splitter,
}  # spaCy is not installable here
EMBEDDINGS = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])

#: Valid tiny inputs of every probed function (the parameters not listed keep their defaults).
VALID = {
    "averaged_distinct_n": {"responses": CORPUS, "max_n": 2},
    "batch_set_lexical_diversity": {"response_sets": SETS, "max_n": 2},
    "set_lexical_diversity": {"response_sets": SETS, "max_n": 2},
    "ngram_cosine_diversity": {"responses": CORPUS, "max_n": 2},
    "corpus_lexical_diversity": {
        "responses": CORPUS,
        "max_n": 2,
        "lf_threshold": 2,
        "self_bleu_max_n": 2,
    },
    "corpus_ngram_diversity": {"responses": CORPUS, "max_n": 2},
    "distinct_n": {"responses": CORPUS, "n": 2},
    "entropy_n": {"responses": CORPUS, "n": 2},
    "lf": {"responses": CORPUS, "threshold": 2},
    "self_bleu": {"responses": CORPUS, "max_n": 2},
    "token_counts": {"texts": CORPUS},
    "lexical_diversity": {"predictions": SETS},
    "compression_ratio": {"texts": CORPUS},
    "compression_ratio_per_set": {"response_sets": SETS},
    "compression_ratio_scores": {"predictions": SETS},
    "self_repetition": {"texts": CORPUS, "n": 2},
    "self_repetition_per_set": {"response_sets": SETS, "n": 2},
    "self_repetition_scores": {"predictions": SETS, "n": 2},
    "expectation_adjusted_distinct": {"responses": CORPUS, "vocab_size": 50},
    "expectation_adjusted_distinct_scores": {"predictions": SETS, "vocab_size": 50},
    "expected_distinct": {"num_ngrams": 5, "vocab_size": 50},
    "homogenization": {"texts": CORPUS},
    "homogenization_per_set": {"response_sets": SETS},
    "homogenization_score": {"predictions": SETS},
    "spearman": {"scores": SCORES, "parameters": PARAMETERS},
    "pearson": {"scores": SCORES, "parameters": PARAMETERS},
    "subsampled_spearman": {
        "scores": SCORES,
        "parameters": PARAMETERS,
        "sample_size": 4,
        "repeats": 3,
    },
    "bootstrap_spearman_ci": {"scores": SCORES, "parameters": PARAMETERS, "num_resamples": 5},
    "diversity_meta_evaluation": {"scores": SCORES, "parameters": PARAMETERS},
    "optimal_classification_accuracy": {"scores": SCORES, "labels": [0, 1, 0, 1, 1]},
    "remote_clique_from_embeddings": {"embeddings": EMBEDDINGS},
    "chamfer_distance_from_embeddings": {"embeddings": EMBEDDINGS},
    "vendi_score_from_embeddings": {"embeddings": EMBEDDINGS},
    "vendi_score_from_kernel": {"kernel": EMBEDDINGS @ EMBEDDINGS.T},
    "diversity_from_similarity_matrix": {"similarity_matrix": np.eye(3)},
    "distribution_entropy": {"distribution": [0.5, 0.25, 0.25]},
    "select_by_loss": {"losses": [[1.0, 2.0], [3.0, 0.5]], "labels": [0, 1]},
    "tfidf_selection": {
        "contexts": ["hello there", "good day"],
        "candidates": [["hello you", "sun"], ["good night", "rain"]],
        "labels": [0, 0],
    },
    "system_ranking_correlation": {
        "human_scores": [1.0, 2.0, 3.0],
        "metric_scores": [0.1, 0.3, 0.2],
    },
    "certainty_variety": {"answers": [["yes", "no"], ["no", "no"]], "references": ["yes", "no"]},
    "ngram_cosine_similarity": {"tokens_a": ["a", "b"], "tokens_b": ["a", "c"], "n": 1},
    "extract_templates": {"texts": CORPUS, "n": 2, **POS_TAGGING},
    "template_rate": {"texts": CORPUS, "n": 2, **POS_TAGGING},
    "templates_per_token": {"texts": CORPUS, "n": 2, **POS_TAGGING},
    "pos_template_scores": {"predictions": SETS, "n": 2, **POS_TAGGING},
    "similarity_to_diversity": {"items": ["a", "b", "c"], "similarity": lambda a, b: float(a == b)},
    "build_repository": {"utterances": ["hello there", "good day"]},
    "filter_pool": {"scores": [[5, 5, 5, 5, 5], [1, 2, 1, 2, 1], [4, 4, 4, 1, 1]]},
    "random_protocol_correlation": {
        "human_scores": [1.0, 2.0, 3.0],
        "metric_scores_per_trial": [[0.1, 0.3, 0.2], [0.2, 0.1, 0.3]],
    },
    "rouge_tokens": {"text": "the cats sat"},
}

HOSTILE = {
    "object": object(),
    "-1": -1,
    "0": 0,
    "nan": math.nan,
    "'x'": "x",
    "[]": [],
    "huge": 10**30,
    "True": True,
}

#: Counts of work whose huge value is a valid (very long) request, not a bad argument: probed without it.
WORK_COUNTS = {
    ("subsampled_spearman", "repeats"),
    ("bootstrap_spearman_ci", "num_resamples"),
    ("diversity_meta_evaluation", "num_resamples"),
}

#: Parameters probed with another one changed too: ``vocab_texts`` replaces the default ``vocab_size``.
ALONG_WITH = {
    ("expectation_adjusted_distinct", "vocab_texts"): {"vocab_size": None},
    ("expectation_adjusted_distinct_scores", "vocab_texts"): {"vocab_size": None},
}


def _names(error: ArgumentProblem, parameter: str) -> bool:
    """The error is about ``parameter``: its argument, or one it mentions when it compares two
    (```scores` and `parameters` must be of equal length``)."""
    return parameter in {error.root, *(mention.split("[", 1)[0] for mention in error.mentions)}


def _function(name: str):
    function = getattr(metrics, name, None)
    if function is None:
        from dialeval.metrics import registry

        for metric in registry.METRICS:
            function = getattr(
                importlib.import_module(f"dialeval.metrics.{metric.name}"), name, None
            )
            if function is not None:
                break
    return function


def _cases():
    for name in VALID:
        function = _function(name)
        for parameter in inspect.signature(function).parameters.values():
            if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                continue
            if parameter.name in (
                "progress",
                "num_workers",
                "workers",
            ):  # pools and bars: not one argument's value
                continue
            yield pytest.param(name, parameter.name, id=f"{name}-{parameter.name}")


@pytest.mark.parametrize(("name", "parameter"), list(_cases()))
def test_an_error_about_a_parameter_names_it(name, parameter):
    function = _function(name)
    wrong = []
    for label, value in HOSTILE.items():
        if label == "huge" and (name, parameter) in WORK_COUNTS:
            continue
        try:
            function(**{**VALID[name], **ALONG_WITH.get((name, parameter), {}), parameter: value})
        except (ValueError, TypeError) as error:
            if not isinstance(error, ArgumentProblem) or not _names(error, parameter):
                wrong.append(f"{parameter}={label}: {type(error).__name__}: {str(error)[:120]}")
    assert not wrong, f"{name}: errors that do not name `{parameter}`:\n" + "\n".join(wrong)


def test_the_valid_inputs_are_valid():
    for name, valid in VALID.items():
        _function(name)(**valid)


# -- the error itself ------------------------------------------------------------------------------


def test_an_argument_error_keeps_its_message_and_renames_its_paths():
    error = ArgumentError(
        "predictions[0][2]", "is an empty string; see `predictions` and `min_n`, not `None`"
    )
    assert (
        str(error)
        == "`predictions[0][2]` is an empty string; see `predictions` and `min_n`, not `None`"
    )
    assert (
        isinstance(error, ValueError)
        and error.root == "predictions"
        and error.mentions == ("predictions", "min_n", "None")
    )
    renamed = error.renamed(
        {"predictions[0]": "prediction", "predictions": "responses", "min_n": "--min-n"}
    )
    assert (
        str(renamed)
        == "`prediction[2]` is an empty string; see `responses` and `--min-n`, not `None`"
    )
    assert renamed.argument == "prediction[2]" and type(renamed) is ArgumentError
    assert str(ArgumentError("metrics", ": nli needs a corpus")) == "`metrics`: nli needs a corpus"
    assert str(pickle.loads(pickle.dumps(error))) == str(error)
    assert isinstance(ArgumentTypeError("x", "must be a list"), TypeError)


def test_arguments_named_renames_what_an_inner_function_raises():
    with (
        pytest.raises(ArgumentTypeError, match=r"^`responses\[1\]` must be a string$"),
        arguments_named({"texts": "responses"}),
    ):
        raise ArgumentTypeError("texts[1]", "must be a string")
    with (
        pytest.raises(ValueError, match="^plain$"),
        arguments_named({"texts": "responses"}),
    ):  # others pass unchanged
        raise ValueError("plain")


# -- the evaluate modules: an error about an option names the module's option -----------------------

#: The model-free modules, with valid tiny inputs (a module with two scopes, once per scope).
MODULE_INPUTS = {
    "lexical_diversity": {"predictions": SETS},
    "lexical_diversity (corpus)": {"predictions": CORPUS},
    "compression_ratio": {"predictions": SETS},
    "expectation_adjusted_distinct": {"predictions": SETS, "vocab_size": 50},
    "self_repetition": {"predictions": SETS},
    "homogenization": {"predictions": SETS},
    "diversity_meta_eval": {"predictions": SCORES, "references": [0, 1, 0, 1, 1]},
}
#: Options probed with another one changed too (as for the functions), and options left out.
MODULE_ALONG_WITH = {("expectation_adjusted_distinct", "vocab_texts"): {"vocab_size": None}}
MODULE_WORK_COUNTS = {("diversity_meta_eval", "num_resamples")}
MODULE_NOT_PROBED = {"workers"}  # a process pool's size: probed through the function's own tests
#: Options of the other scope, refused as such whatever their value ("[...] do not apply to sets-scope input").
OTHER_SCOPE = {
    "lexical_diversity": {"lf_threshold", "reference_corpus", "self_bleu_max_n"},
    "lexical_diversity (corpus)": {"tokenizer"},
}


@pytest.fixture(scope="module")
def modules():
    import evaluate

    from dialeval.metrics import registry

    folders = {metric.name: metric.module_dir for metric in registry.METRICS}
    return {name: evaluate.load(str(folders[name.split(" ")[0]])) for name in MODULE_INPUTS}


@pytest.mark.parametrize("name", list(MODULE_INPUTS))
def test_a_module_error_about_an_option_names_the_option(modules, name):
    module = modules[name]
    wrong = []
    for option in module.compute_options():
        if option in MODULE_NOT_PROBED or option in OTHER_SCOPE.get(name, ()):
            continue
        for label, value in HOSTILE.items():
            if label == "huge" and (name, option) in MODULE_WORK_COUNTS:
                continue
            try:
                module.compute(
                    **{
                        **MODULE_INPUTS[name],
                        **MODULE_ALONG_WITH.get((name, option), {}),
                        option: value,
                    }
                )
            except (ValueError, TypeError) as error:
                if not isinstance(error, ArgumentProblem) or not _names(error, option):
                    wrong.append(f"{option}={label}: {type(error).__name__}: {str(error)[:140]}")
    assert not wrong, f"{name}: errors that do not name the option:\n" + "\n".join(wrong)


# -- dialeval evaluate: an error about a flag names the flag ------------------------------------------

#: Flags of `dialeval evaluate`, each with the step that reads it ("{nli}": the conftest's tiny NLI model).
CLI_FLAGS = {
    "--max-n": ["--metric", "lexical_diversity"],
    "--lf-threshold": ["--metric", "corpus_lexical_diversity"],
    "--ead-n": ["--metric", "ead", "--ead-vocab-size", "50"],
    "--ead-vocab-size": ["--metric", "ead", "--ead-vocab-size", "50"],
    "--device": ["--metric", "lexical_diversity"],
    "--batch-size": ["--metric", "nli", "--nli-model", "{nli}"],
    "--sem-ent-k": [
        "--metric",
        "sem_ent",
        "--sem-ent-k",
        "3",
        "--sem-ent-embedder",
        "mean_pooling={nli}",
        "--sem-ent-max-length",
        "64",
        "--reference-corpus",
        "{corpus}",
    ],
    "--sem-ent-seed": [
        "--metric",
        "sem_ent",
        "--sem-ent-k",
        "3",
        "--sem-ent-embedder",
        "mean_pooling={nli}",
        "--sem-ent-max-length",
        "64",
        "--reference-corpus",
        "{corpus}",
    ],
}
CLI_HOSTILE = ["-1", "0", "nan", "x", "", str(10**30), "True"]


@pytest.mark.parametrize("flag", list(CLI_FLAGS))
def test_an_evaluate_error_about_a_flag_names_the_flag(
    flag, tmp_path, capsys, tiny_roberta_nli_path
):
    responses = tmp_path / "sets.jsonl"
    responses.write_text('{"responses": ["a b c", "a b d"]}\n{"responses": ["x y", "y z w"]}\n')
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"reference sentence number {i}\n" for i in range(8)))
    paths = {"{nli}": tiny_roberta_nli_path, "{corpus}": str(corpus)}
    step = [paths.get(arg, arg.replace("{nli}", tiny_roberta_nli_path)) for arg in CLI_FLAGS[flag]]
    wrong = evaluate_errors_not_naming(
        flag, CLI_HOSTILE, ["evaluate", str(responses), *step], tmp_path, capsys
    )
    assert not wrong, "errors that do not name the flag:\n" + "\n".join(wrong)


def evaluate_errors_not_naming(flag, values, command, tmp_path, capsys) -> list[str]:
    """``command`` (``evaluate FILE --metric ...``) runs; with ``flag=value`` added, each value that
    fails must fail with a message naming ``flag``: the values whose message does not."""
    from dialeval.cli.main import main

    assert main([*command, "--no-progress", "-o", str(tmp_path / "valid.json")]) == 0
    capsys.readouterr()
    wrong = []
    for value in values:
        try:
            code = main(
                [*command, f"{flag}={value}", "--no-progress", "-o", str(tmp_path / "report.json")]
            )
        except SystemExit as stop:  # argparse's own refusal ("argument --max-n: invalid int value")
            code = stop.code
        error = capsys.readouterr().err
        if code != 0 and flag not in error:
            wrong.append(f"{flag}={value!r}: {error.strip()[-240:]}")
    return wrong


def test_the_cli_renames_an_argument_error_by_its_fields():
    from dialeval.cli.options import name_flags

    names = {
        "max_n": "--max-n",
        "min_n": "--min-n",
        "allow_empty=True": "--allow-empty",
        "responses": "FILE",
    }
    error = ArgumentError(
        "max_n", "must not be below `min_n` (a `max_n_x` is no flag); pass allow_empty=True"
    )
    assert (
        name_flags(error, names)
        == "`--max-n` must not be below `--min-n` (a `max_n_x` is no flag); pass --allow-empty"
    )
    # an index path keeps its index; a plain message falls back to the quoted names
    assert name_flags(ArgumentError("responses[3]", "is empty"), names) == "`FILE[3]` is empty"
    assert name_flags(ValueError("give `max_n` or `min_n`"), names) == "give `--max-n` or `--min-n`"


# -- model-backed functions, on the tiny models (and the embedded MiniLM) ------------------------------

#: Valid tiny inputs of the model-backed functions; "{nli}" / "{cross}" are the conftest's tiny models.
MODEL_VALID = {
    "sent_bert_diversity": {"response_sets": SETS, "device": "cpu"},
    "similarity_diversity": {"response_sets": SETS, "device": "cpu"},
    "vendi_score": {"predictions": SETS, "device": "cpu"},
    "embedding_distances": {"predictions": SETS, "device": "cpu"},
    "remote_clique": {"texts": CORPUS, "device": "cpu"},
    "chamfer_distance": {"texts": CORPUS, "device": "cpu"},
    "nli_diversity": {"response_sets": SETS, "model": "{nli}", "device": "cpu"},
    "cross_encoder_similarity_matrices": {
        "response_sets": SETS,
        "model": "{cross}",
        "device": "cpu",
    },
}
#: Not one value's argument: a pre-built scorer, a progress bar, counters filled in for the caller.
MODEL_NOT_PROBED = {"scorer", "progress", "stats", "label_map"}


def _model_cases():
    for name in MODEL_VALID:
        for parameter in inspect.signature(_function(name)).parameters.values():
            if (
                parameter.kind
                not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
                and parameter.name not in MODEL_NOT_PROBED
            ):
                yield pytest.param(name, parameter.name, id=f"{name}-{parameter.name}")


@pytest.mark.parametrize(("name", "parameter"), list(_model_cases()))
def test_a_model_backed_error_about_a_parameter_names_it(
    name, parameter, tiny_roberta_nli_path, tiny_cross_encoder_path
):
    models = {"{nli}": tiny_roberta_nli_path, "{cross}": tiny_cross_encoder_path}
    valid = {
        key: models.get(value, value) if isinstance(value, str) else value
        for key, value in MODEL_VALID[name].items()
    }
    function = _function(name)
    wrong = []
    for label, value in HOSTILE.items():
        if label == "huge" and parameter in (
            "batch_size",
            "max_pairs_per_chunk",
            "max_pairs_per_set",
        ):
            continue  # a valid (large) batch
        try:
            function(**{**valid, parameter: value})
        except (ValueError, TypeError) as error:
            if not isinstance(error, ArgumentProblem) or not _names(error, parameter):
                wrong.append(f"{parameter}={label}: {type(error).__name__}: {str(error)[:140]}")
        # a model id that is not on the machine: hub's ModelNotAvailableError names it
        except OSError:
            assert parameter == "model", f"{name}({parameter}={label}) gave an OSError"
    assert not wrong, f"{name}: errors that do not name `{parameter}`:\n" + "\n".join(wrong)


def test_the_model_backed_valid_inputs_are_valid(tiny_roberta_nli_path, tiny_cross_encoder_path):
    models = {"{nli}": tiny_roberta_nli_path, "{cross}": tiny_cross_encoder_path}
    for name, valid in MODEL_VALID.items():
        _function(name)(
            **{
                key: models.get(value, value) if isinstance(value, str) else value
                for key, value in valid.items()
            }
        )
