"""Every error about an argument of a model-backed function names that argument.

The sibling of ``test_argument_names.py`` for what it leaves out: BERTScore (and homogenization
with it), response selection with an LM, N-best contradiction's classifiers, Sem-Ent's clusters,
the evaluate modules of the model-backed metrics and the model flags of ``dialeval evaluate``.
Each call loads a tiny model, so each parameter is probed with a few hostile values only.
"""

from __future__ import annotations

import inspect
import math

import pytest
from test_argument_names import CORPUS, SETS, _function, _names, evaluate_errors_not_naming

from dialeval.validation import ArgumentProblem

HOSTILE = {"object": object(), "-1": -1, "nan": math.nan, "'x'": "x", "True": True}
CONTEXTS = ["hello there", "good day"]
CANDIDATES = [["hello you", "sun"], ["good night", "rain"]]
REFERENCE_TEXTS = [
    f"reference sentence number {word}" for word in ("one", "two", "three", "four", "five", "six")
]
BERTSCORE = {"model": "{nli}", "num_layers": 1, "rescale_with_baseline": False, "device": "cpu"}
HOMOGENIZATION = {"measure": "bertscore", "model": "{nli}", "num_layers": 1, "device": "cpu"}

#: Valid tiny inputs; "{nli}", "{gpt2}", "{yes_no}" are the conftest's tiny models, "{clusters}" fitted clusters.
VALID = {
    "bertscore_diversity": {"response_sets": SETS, **BERTSCORE},
    "bertscore_similarity_matrices": {"response_sets": SETS, **BERTSCORE},
    "homogenization": {"texts": CORPUS, **HOMOGENIZATION},
    "homogenization_per_set": {"response_sets": SETS, **HOMOGENIZATION},
    "homogenization_score": {"predictions": SETS, **HOMOGENIZATION},
    "similarity_matrices": {"response_sets": SETS, "similarity": "bertscore", **BERTSCORE},
    "response_selection": {
        "contexts": CONTEXTS,
        "candidates": CANDIDATES,
        "labels": [0, 0],
        "model": "{gpt2}",
        "device": "cpu",
    },
    "nbest_contradiction": {
        "predictions": [["yes", "no"], ["no", "no"]],
        "references": ["yes", "no"],
        "classifier": "{yes_no}",
        "device": "cpu",
    },
    "load_yes_no_classifier": {"classifier": "{yes_no}", "device": "cpu"},
    "sem_ent": {"texts": CORPUS, "clusters": "{clusters}"},
    "fit_clusters": {
        "reference_texts": REFERENCE_TEXTS,
        "embedder": "{embedder}",
        "num_clusters": 2,
        "n_init": 1,
    },
    "load_clusters": {"directory": "{saved}", "embedder": "{embedder}"},
}
#: Not one value's argument: a pre-built scorer, a progress bar, a pool's size.
NOT_PROBED = {"scorer", "progress", "workers", "label_map"}
#: A valid (large) batch: probed without the huge value (not in HOSTILE anyway).


def _callable(name):
    if name == "fit_clusters":
        from dialeval.metrics.sem_ent import SemanticClusters

        return SemanticClusters.fit
    if name == "load_clusters":
        from dialeval.metrics.sem_ent import SemanticClusters

        return SemanticClusters.load
    return _function(name)


@pytest.fixture(scope="module")
def models(tiny_roberta_nli_path, tiny_gpt2_path, tiny_roberta_yes_no_path, tmp_path_factory):
    from dialeval.metrics import load_embedder
    from dialeval.metrics.sem_ent import SemanticClusters

    embedder = load_embedder("mean_pooling", tiny_roberta_nli_path, device="cpu", max_length=128)
    clusters = SemanticClusters.fit(REFERENCE_TEXTS, embedder, num_clusters=2, n_init=1)
    saved = str(clusters.save(tmp_path_factory.mktemp("clusters")))
    return {
        "{nli}": tiny_roberta_nli_path,
        "{gpt2}": tiny_gpt2_path,
        "{yes_no}": tiny_roberta_yes_no_path,
        "{clusters}": clusters,
        "{embedder}": embedder,
        "{saved}": saved,
    }


def _valid(name, models):
    return {
        key: models[value] if isinstance(value, str) and value in models else value
        for key, value in VALID[name].items()
    }


def _cases():
    for name in VALID:
        for parameter in inspect.signature(_callable(name)).parameters.values():
            if (
                parameter.kind
                not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
                and parameter.name not in NOT_PROBED
                and parameter.name != "cls"
            ):
                yield pytest.param(name, parameter.name, id=f"{name}-{parameter.name}")


def _wrong_names(call, parameter, label):
    try:
        call()
    except (ValueError, TypeError) as error:
        if not isinstance(error, ArgumentProblem) or not _names(error, parameter):
            return [f"{parameter}={label}: {type(error).__name__}: {str(error)[:160]}"]
    # a model id that is not on the machine: the hub's ModelNotAvailableError names it
    except OSError:
        if parameter not in ("model", "classifier") and not parameter.endswith("_model"):
            return [f"{parameter}={label}: an OSError"]
    return []


@pytest.mark.parametrize(("name", "parameter"), list(_cases()))
def test_a_model_backed_error_about_a_parameter_names_it(
    name, parameter, models, tmp_path, monkeypatch
):
    # a hostile "x" is a folder name written here, and no folder found here
    monkeypatch.chdir(tmp_path)
    function, valid = _callable(name), _valid(name, models)
    wrong = []
    for label, value in HOSTILE.items():
        wrong += _wrong_names(
            lambda value=value: function(**{**valid, parameter: value}), parameter, label
        )
    assert not wrong, f"{name}: errors that do not name `{parameter}`:\n" + "\n".join(wrong)


def test_the_valid_inputs_are_valid(models):
    for name in VALID:
        _callable(name)(**_valid(name, models))


def test_an_argument_error_attaches_an_equals_sign_as_the_call_wrote_it():
    from dialeval.validation import ArgumentError

    assert str(ArgumentError("max_length", "=512 exceeds 128")) == "`max_length`=512 exceeds 128"
    assert (
        str(ArgumentError("labels[0]", "= 2 is not an index")) == "`labels[0]` = 2 is not an index"
    )


# -- the model-backed evaluate modules: an error about an option names the module's option -----------

#: Valid tiny inputs of each module; its options are probed one at a time, on the values of HOSTILE.
MODULE_INPUTS = {
    "similarity_diversity": {"predictions": SETS, "similarity": "bertscore", **BERTSCORE},
    "vendi_score": {"predictions": SETS, "device": "cpu"},
    "embedding_distances": {"predictions": SETS, "device": "cpu"},
    "nli_diversity": {"predictions": SETS, "model": "{nli}", "device": "cpu"},
    "nbest_contradiction": {
        "predictions": [["yes", "no"], ["no", "no"]],
        "references": ["yes", "no"],
        "classifier": "{yes_no}",
        "device": "cpu",
    },
    "sem_ent": {
        "predictions": CORPUS,
        "references": REFERENCE_TEXTS,
        "num_clusters": 2,
        "n_init": 1,
        "device": "cpu",
    },
    "sem_ent (fit settings)": {
        "predictions": CORPUS,
        "references": REFERENCE_TEXTS,
        "num_clusters": 2,
        "n_init": 1,
        "device": "cpu",
    },
    "sem_ent (saved clusters)": {"predictions": CORPUS, "clusters": "{saved}", "device": "cpu"},
    "response_selection": {
        "contexts": CONTEXTS,
        "candidates": CANDIDATES,
        "labels": [0, 0],
        "model": "{gpt2}",
        "device": "cpu",
    },
    "homogenization": {"predictions": SETS, **HOMOGENIZATION},
}
#: Options the input above needs unset to be probed (a module option given twice is probed alone).
MODULE_PROBED_ALONE = {
    "sem_ent": {"clusters": ("references",)},
    "sem_ent (saved clusters)": {"references": ("clusters",)},
}
#: Sem-Ent fits clusters at each call its options let through: its fit settings are probed as a case of their own.
SEM_ENT_FIT_SETTINGS = {
    "num_clusters",
    "pca_variance",
    "seed",
    "n_init",
    "max_iter",
    "save_clusters_to",
    "batch_size",
    "dtype",
}
#: Options of the other similarity, refused as such whatever their value; a pool's size.
MODULE_NOT_PROBED = {"workers", "label_map"}


@pytest.fixture(scope="module")
def modules():
    import evaluate

    from dialeval.metrics import registry

    folders = {metric.name: metric.module_dir for metric in registry.METRICS}
    return {name: evaluate.load(str(folders[name.split(" ")[0]])) for name in MODULE_INPUTS}


@pytest.mark.parametrize("name", list(MODULE_INPUTS))
def test_a_model_backed_module_error_about_an_option_names_the_option(
    modules, models, name, tmp_path, monkeypatch
):
    # a hostile "x" is a folder name written here, and no folder found here
    monkeypatch.chdir(tmp_path)
    module = modules[name]
    inputs = {
        key: models[value] if isinstance(value, str) and value in models else value
        for key, value in MODULE_INPUTS[name].items()
    }
    module.compute(**inputs)  # the inputs are valid
    wrong = []
    for option in module.compute_options():
        fit_setting = option in SEM_ENT_FIT_SETTINGS
        if (
            option in MODULE_NOT_PROBED
            or (name == "sem_ent" and fit_setting)
            or (name == "sem_ent (fit settings)" and not fit_setting)
        ):
            continue
        given = {
            key: value
            for key, value in inputs.items()
            if key not in MODULE_PROBED_ALONE.get(name, {}).get(option, ())
        }
        for label, value in HOSTILE.items():
            wrong += _wrong_names(
                lambda given=given, option=option, value=value: module.compute(
                    **{**given, option: value}
                ),
                option,
                label,
            )
    assert not wrong, f"{name}: errors that do not name the option:\n" + "\n".join(wrong)


# -- dialeval evaluate: an error about a model flag names the flag ----------------------------------

#: Model flags of `dialeval evaluate`, each with the step that reads it ("{nli}" etc.: the tiny models;
#: a repeatable flag given again adds the hostile value to the valid one).
CLI_FLAGS = {
    "--sentence-model": ["--metric", "sent_bert"],
    "--bertscore-model": [
        "--metric",
        "bertscore",
        "--bertscore-model",
        "{nli}",
        "--bertscore-rescale",
        "off",
    ],
    "--bertscore-rescale": [
        "--metric",
        "bertscore",
        "--bertscore-model",
        "{nli}",
        "--bertscore-rescale",
        "off",
    ],
    "--bertscore-baseline": [
        "--metric",
        "bertscore",
        "--bertscore-model",
        "{nli}",
        "--bertscore-rescale",
        "off",
    ],
    "--cross-encoder-model": ["--metric", "cross_encoder", "--cross-encoder-model", "{cross}"],
    "--nli-model": ["--metric", "nli", "--nli-model", "{nli}"],
    "--sem-ent-clusters": [
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
    "--sem-ent-embedder": [
        "--metric",
        "sem_ent",
        "--sem-ent-k",
        "3",
        "--reference-corpus",
        "{corpus}",
    ],
    "--save-sem-ent-clusters": [
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
    "--selection-model": [
        "--metric",
        "response_selection",
        "--selection-model",
        "{gpt2}",
        "--selection-questions",
        "{questions}",
    ],
    "--selection-questions": ["--metric", "response_selection", "--selection-model", "{gpt2}"],
    "--selection-reduction": [
        "--metric",
        "response_selection",
        "--selection-model",
        "{gpt2}",
        "--selection-questions",
        "{questions}",
    ],
    "--selection-batch-size": [
        "--metric",
        "response_selection",
        "--selection-model",
        "{gpt2}",
        "--selection-questions",
        "{questions}",
    ],
    "--homogenization-model": [
        "--metric",
        "homogenization_bertscore",
        "--homogenization-model",
        "{nli}",
    ],
}
CLI_HOSTILE = ["x", "", "-1", "0", "nan", "on", "{corpus}", "{nothing}/model"]


@pytest.mark.parametrize("flag", list(CLI_FLAGS))
def test_an_evaluate_error_about_a_model_flag_names_the_flag(
    flag, tmp_path, monkeypatch, capsys, models, tiny_cross_encoder_path
):
    monkeypatch.chdir(tmp_path)
    responses = tmp_path / "sets.jsonl"
    responses.write_text('{"responses": ["a b c", "a b d"]}\n{"responses": ["x y", "y z w"]}\n')
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"reference sentence number {i}\n" for i in range(8)))
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        "".join(
            f'{{"context": ["{context}"], "candidates": ["{candidates[0]}", "{candidates[1]}"], "label": 0}}\n'
            for context, candidates in zip(CONTEXTS, CANDIDATES)
        )
    )
    paths = {
        "{nli}": models["{nli}"],
        "{gpt2}": models["{gpt2}"],
        "{cross}": tiny_cross_encoder_path,
        "{corpus}": str(corpus),
        "{questions}": str(questions),
        "{nothing}": str(tmp_path / "nothing"),
    }

    def filled(arg):
        for key, path in paths.items():
            arg = arg.replace(key, path)
        return arg

    step = [filled(arg) for arg in CLI_FLAGS[flag]]
    if flag == "--selection-questions":
        step += ["--selection-questions", str(questions)]
    values = [filled(value) for value in CLI_HOSTILE]
    wrong = evaluate_errors_not_naming(
        flag, values, ["evaluate", str(responses), *step], tmp_path, capsys
    )
    assert not wrong, "errors that do not name the flag:\n" + "\n".join(wrong)
