"""Properties of the model-backed metrics on the tiny random models (tests/tiny_models.py) and
the embedded MiniLM: NLI Diversity, sent-BERT / BERTScore / cross-encoder diversity, the Vendi
Score, Sem-Ent, the embedders, response selection and n-best contradiction.

Each model is loaded once per session (the conftest fixtures and hub.load_model's cache); each
example runs forward passes, so these properties run a fraction of the profile's examples
(``fewer``). Ranges: NLI figures in [-n(n-1), n(n-1)]; sent-BERT diversity in [-1, 1];
cross-encoder and n-gram cosine diversity in [-1, 0]; raw BERTScore diversity in [-1, 1];
Vendi in [1, n]; Sem-Ent in [0, log k]. Scoring sets together equals scoring each alone.
"""

from __future__ import annotations

import importlib
import json
import math
import shutil
import warnings

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from property_support import (
    any_flag,
    any_response_sets,
    covers,
    fewer,
    junk,
    nonblank_text,
    outcome,
    refused,
    response_sets,
    text,
    within,
)

from dialeval.metrics import evaluate_module_path, registry
from dialeval.metrics.engines.embedders import (
    LastTokenEmbedder,
    MeanPoolingEmbedder,
    SentenceTransformerEmbedder,
    embedder_from_identity,
    load_embedder,
)
from dialeval.metrics.engines.lm_scorer import CandidateScorer

nli = importlib.import_module("dialeval.metrics.nli_diversity")
similarity = importlib.import_module("dialeval.metrics.similarity_diversity")
vendi = importlib.import_module("dialeval.metrics.vendi_score")
sem_ent = importlib.import_module("dialeval.metrics.sem_ent")
selection = importlib.import_module("dialeval.metrics.response_selection")
nbest = importlib.import_module("dialeval.metrics.nbest_contradiction")

#: Long enough to be truncated by the tiny models (128 tokens), short enough for a fast forward.
long_text = st.sampled_from(["word " * 400, "x" * 2000, "do you have any pets? " * 50])
model_text = st.one_of(nonblank_text, nonblank_text, nonblank_text, long_text)
ATOL = 1e-4  # float32 forward passes of differently padded batches


@pytest.fixture(scope="session")
def nli_scorer(tiny_roberta_nli_path):
    return nli.NLIScorer(tiny_roberta_nli_path, device="cpu")


@pytest.fixture(scope="session")
def bertscore_path(tiny_roberta_nli_path, tmp_path_factory) -> str:
    """The tiny checkpoint with a RobertaTokenizer, as roberta-large has (tests/metrics/test_bertscore.py)."""
    path = tmp_path_factory.mktemp("property-bertscore") / "model"
    shutil.copytree(tiny_roberta_nli_path, path)
    config_file = path / "tokenizer_config.json"
    config = json.loads(config_file.read_text())
    config["tokenizer_class"] = "RobertaTokenizer"
    config_file.write_text(json.dumps(config))
    return str(path)


@pytest.fixture(scope="session")
def clusters(tiny_roberta_nli_path):
    corpus = [
        "I love pizza.",
        "Sushi for dinner!",
        "Pasta tonight?",
        "It is raining.",
        "So sunny today.",
        "A storm is coming.",
        "My dog barks.",
        "Cats sleep a lot.",
        "The match was great.",
        "We lost the game.",
    ]
    return sem_ent.SemanticClusters.fit(
        corpus,
        load_embedder("mean_pooling", tiny_roberta_nli_path, max_length=128, device="cpu"),
        num_clusters=3,
        seed=0,
    )


@covers("nli_diversity", "NLIScorer")
@fewer(3)
@given(
    sets=st.one_of(response_sets(model_text, max_size=4, max_sets=3), any_response_sets),
    allow_empty=any_flag,
    chunk=st.one_of(st.just(16384), st.integers(-1, 3), junk),
)
@example(
    sets=[["I love cats.", "I love cats.", "Dogs 🐶 are fine."], ["مرحبا", "e\u0301te\u0301"]],
    allow_empty=False,
    chunk=2,
)
def test_nli_diversity_refuses_or_lies_in_its_range(nli_scorer, sets, allow_empty, chunk):
    result = outcome(
        nli.nli_diversity,
        sets,
        scorer=nli_scorer,
        allow_empty=allow_empty,
        max_pairs_per_chunk=chunk,
    )
    if refused(result):
        return
    assert result["num_sets"] == len(sets) == len(result["per_set"])
    for row, responses in zip(result["per_set"], sets):
        for figure in ("nli_diversity", "nli_diversity_neutral", "nli_diversity_confidence"):
            within(
                row[figure],
                -len(responses) * (len(responses) - 1),
                len(responses) * (len(responses) - 1),
                figure,
            )
        assert row["num_contradiction"] + row["num_neutral"] + row["num_entailment"] == len(
            responses
        ) * (len(responses) - 1)


@covers("nli_diversity", "nli_pair_matrices", "iter_nli_pair_matrices", "NLIPairMatrix")
@fewer(3)
@given(sets=response_sets(model_text, max_size=3, max_sets=2))
@example(sets=[["I love cats.", "I love cats.", "Dogs 🐶 are fine."], ["مرحبا", "e\u0301te\u0301"]])
def test_nli_sets_scored_together_equal_each_alone_and_the_matrices(nli_scorer, sets):
    together = nli.nli_diversity(sets, scorer=nli_scorer, return_matrices=True)
    matrices = nli.nli_pair_matrices(sets, scorer=nli_scorer)
    streamed = list(nli.iter_nli_pair_matrices(sets, nli_scorer, max_pairs_per_chunk=3))
    for index, responses in enumerate(sets):
        alone = nli.nli_diversity([responses], scorer=nli_scorer)["per_set"][0]
        assert together["per_set"][index]["nli_diversity_confidence"] == pytest.approx(
            alone["nli_diversity_confidence"], abs=ATOL
        )
        probabilities = matrices[index].probabilities
        assert probabilities.shape == (len(responses), len(responses), 3)
        off_diagonal = probabilities[~np.eye(len(responses), dtype=bool)]
        assert np.all((off_diagonal >= 0) & (off_diagonal <= 1))
        assert np.allclose(off_diagonal.sum(axis=-1), 1, atol=1e-5)
        assert np.allclose(streamed[index].probabilities, probabilities, atol=ATOL, equal_nan=True)


@covers(
    "sent_bert_diversity",
    "similarity_diversity",
    "similarity_matrices",
    "sent_bert_similarity_matrices",
)
@fewer(3)
@given(
    sets=st.one_of(response_sets(model_text, max_size=4, max_sets=3), any_response_sets),
    allow_empty=any_flag,
)
@example(
    sets=[["I love cats.", "I love cats.", "Dogs 🐶 are fine."], ["مرحبا", "e\u0301te\u0301"]],
    allow_empty=False,
)
def test_sent_bert_diversity_refuses_or_lies_in_its_range_and_per_set_agrees(
    tiny_roberta_nli_path, sets, allow_empty
):
    model = tiny_roberta_nli_path  # loaded by sentence-transformers with mean pooling
    scores = outcome(
        similarity.sent_bert_diversity, sets, model, device="cpu", allow_empty=allow_empty
    )
    summary = outcome(
        similarity.similarity_diversity,
        sets,
        "sent_bert",
        model,
        device="cpu",
        allow_empty=allow_empty,
    )
    assert refused(scores) == refused(summary), (scores, summary)
    if refused(scores):
        return
    assert len(scores) == len(sets)
    for index, (score, responses) in enumerate(zip(scores, sets)):
        within(score, -1, 1, "sent_bert_diversity")
        assert summary["per_set"][index]["similarity_diversity"] == pytest.approx(score, abs=ATOL)
        assert similarity.sent_bert_diversity(
            [responses], model, device="cpu", allow_empty=allow_empty
        )[0] == pytest.approx(score, abs=ATOL)
        if len(set(responses)) == 1:
            assert score == pytest.approx(-1, abs=ATOL)  # identical responses: cosine 1


@covers("bertscore_diversity", "bertscore_similarity_matrices")
@fewer(3)
@given(
    sets=st.one_of(response_sets(model_text, max_size=4, max_sets=3), any_response_sets),
    allow_empty=any_flag,
    rescale=st.one_of(st.booleans(), junk),
)
@example(
    sets=[["I love cats.", "I love cats.", "Dogs 🐶 are fine."], ["مرحبا", "e\u0301te\u0301"]],
    allow_empty=False,
    rescale=True,
)
@example(
    sets=[["I love cats.", "I love cats.", "Dogs 🐶 are fine."], ["مرحبا", "e\u0301te\u0301"]],
    allow_empty=False,
    rescale=False,
)
def test_bertscore_diversity_refuses_or_is_finite_and_per_set_agrees(
    bertscore_path, sets, allow_empty, rescale
):
    scores = outcome(
        similarity.bertscore_diversity,
        sets,
        model=bertscore_path,
        rescale_with_baseline=rescale,
        device="cpu",
        allow_empty=allow_empty,
    )
    if refused(scores):
        return
    matrices = similarity.bertscore_similarity_matrices(
        sets,
        model=bertscore_path,
        rescale_with_baseline=rescale,
        device="cpu",
        allow_empty=allow_empty,
    )
    for score, matrix, responses in zip(scores, matrices, sets):
        if rescale:
            within(
                score,
                -1 / (1 - 0.83122575) * 2,
                1 / (1 - 0.83122575) * 2,
                "rescaled BERTScore diversity",
            )
        else:
            within(score, -1, 1, "BERTScore diversity")
        assert matrix.shape == (len(responses), len(responses)) and np.allclose(
            matrix, matrix.T, atol=ATOL
        )
        alone = similarity.bertscore_diversity(
            [responses],
            model=bertscore_path,
            rescale_with_baseline=rescale,
            device="cpu",
            allow_empty=allow_empty,
        )[0]
        assert alone == pytest.approx(score, abs=ATOL)


@covers("cross_encoder_similarity_matrices")
@fewer(3)
@given(
    sets=st.one_of(response_sets(model_text, max_size=4, max_sets=3), any_response_sets),
    allow_empty=any_flag,
)
@example(
    sets=[["I love cats.", "I love cats.", "Dogs 🐶 are fine."], ["مرحبا", "e\u0301te\u0301"]],
    allow_empty=False,
)
def test_cross_encoder_similarity_lies_in_0_1_and_per_set_agrees(
    tiny_cross_encoder_path, sets, allow_empty
):
    matrices = outcome(
        similarity.cross_encoder_similarity_matrices,
        sets,
        model=tiny_cross_encoder_path,
        device="cpu",
        allow_empty=allow_empty,
    )
    if refused(matrices):
        return
    diversity = similarity.similarity_diversity(
        sets, "cross_encoder", tiny_cross_encoder_path, device="cpu", allow_empty=allow_empty
    )
    for index, (matrix, responses) in enumerate(zip(matrices, sets)):
        assert np.all((matrix >= 0) & (matrix <= 1)) and np.allclose(matrix, matrix.T, atol=ATOL)
        within(
            diversity["per_set"][index]["similarity_diversity"], -1, 0, "cross_encoder_diversity"
        )
        alone = similarity.cross_encoder_similarity_matrices(
            [responses], model=tiny_cross_encoder_path, device="cpu", allow_empty=allow_empty
        )[0]
        assert np.allclose(alone, matrix, atol=ATOL)


@covers("similarity_diversity", "similarity_matrices")
@given(
    sets=any_response_sets,
    kind=st.one_of(st.sampled_from(["ngram_cosine", "sent-bert", ""]), junk),
    allow_empty=any_flag,
)
def test_model_free_similarity_kind_refuses_or_lies_in_its_range(sets, kind, allow_empty):
    result = outcome(similarity.similarity_diversity, sets, kind, allow_empty=allow_empty)
    if refused(result):
        return
    for row in result["per_set"]:
        within(row["similarity_diversity"], -1, 0, "ngram cosine diversity")


@covers("vendi_score")
@fewer(3)
@given(
    predictions=st.one_of(any_response_sets, response_sets(model_text, max_size=4, max_sets=3)),
    scope=st.one_of(st.none(), st.sampled_from(["corpus", "response_set", "sets"]), junk),
    orders=st.one_of(
        st.just((1,)),
        st.just((0.5, 2, "inf")),
        st.lists(st.one_of(st.floats(-1, 3), junk), max_size=2),
    ),
)
@example(
    predictions=[
        ["I love cats.", "I love cats.", "Dogs 🐶 are fine."],
        ["مرحبا", "e\u0301te\u0301"],
    ],
    scope=None,
    orders=(0.5, 1, "inf"),
)
@example(predictions=["a b", "a b", "c"], scope=None, orders=(1,))
def test_vendi_score_refuses_or_lies_in_1_n(tiny_roberta_nli_path, predictions, scope, orders):
    result = outcome(
        vendi.vendi_score,
        predictions,
        tiny_roberta_nli_path,
        orders=orders,
        scope=scope,
        device="cpu",
    )
    if refused(result):
        return
    rows = result.get("per_set") or [result]
    sizes = (
        [len(s) for s in predictions]
        if "per_set" in result
        else [
            sum(len(s) for s in predictions)
            if predictions and not isinstance(predictions[0], str)
            else len(predictions)
        ]
    )
    for row, size in zip(rows, sizes):
        for key, value in row.items():
            if key.startswith("vendi_score"):
                within(value, 1, size, key, tolerance=1e-4 * size)


@covers("sem_ent", "SemanticClusters", "load_embedder", "TextEmbedder")
@fewer(3)
@given(
    texts=st.one_of(
        st.lists(model_text, min_size=1, max_size=6),
        st.lists(st.one_of(text, junk), max_size=4),
        text,
        junk,
    )
)
@example(texts=["I love pizza.", "I love pizza.", "Rain 🌧", "x" * 2000])
def test_sem_ent_refuses_or_lies_in_0_log_k(clusters, texts):
    result = outcome(sem_ent.sem_ent, texts, clusters)
    if refused(result):
        return
    within(result["sem_ent"], 0, math.log(clusters.num_clusters), "sem_ent")
    assert sum(result["cluster_distribution"]) == pytest.approx(1)
    one_at_a_time = np.concatenate([clusters.assign([t]) for t in texts])
    assert np.array_equal(clusters.assign(texts), one_at_a_time)


@covers(
    "MeanPoolingEmbedder",
    "LastTokenEmbedder",
    "SentenceTransformerEmbedder",
    "embedder_from_identity",
)
@fewer(3)
@given(
    texts=st.one_of(
        st.lists(model_text, min_size=1, max_size=5),
        st.lists(st.one_of(text, junk), max_size=3),
        text,
        junk,
    )
)
@example(texts=["I love pizza.", "I love pizza.", "Rain 🌧", "x" * 2000])
def test_embedders_refuse_or_embed_each_text_as_alone(tiny_roberta_nli_path, tiny_gpt2_path, texts):
    for embedder in (
        MeanPoolingEmbedder(tiny_roberta_nli_path, max_length=128, device="cpu"),
        LastTokenEmbedder(tiny_gpt2_path, max_length=128, device="cpu"),
        SentenceTransformerEmbedder(tiny_roberta_nli_path, device="cpu"),
    ):
        vectors = outcome(embedder.embed, texts)
        if refused(vectors):
            continue
        assert vectors.shape[0] == len(texts) and np.isfinite(vectors).all()
        rebuilt = embedder_from_identity(embedder.identity(), device="cpu")
        assert np.allclose(rebuilt.embed(texts[:1]), vectors[:1], atol=ATOL)
        assert np.allclose(embedder.embed(texts[-1:]), vectors[-1:], atol=ATOL)


@covers("response_selection", "CandidateScorer")
@fewer(3)
@given(
    items=st.lists(
        st.tuples(
            st.one_of(model_text, st.lists(model_text, min_size=1, max_size=2)),
            st.lists(model_text, min_size=2, max_size=3),
            st.integers(0, 1),
        ),
        min_size=1,
        max_size=3,
    ),
    reduction=st.one_of(st.sampled_from(["sum", "mean"]), junk),
    bad=st.booleans(),
)
@example(
    items=[
        (["Hi!", "How are you?"], ["Fine.", "Fine."], 0),
        ("Where? 🌍", ["Here.", "x" * 2000, "No"], 1),
    ],
    reduction="sum",
    bad=False,
)
@example(
    items=[
        (["Hi!", "How are you?"], ["Fine.", "Fine."], 0),
        ("Where? 🌍", ["Here.", "مرحبا", "No"], 1),
    ],
    reduction="mean",
    bad=False,
)
def test_response_selection_refuses_or_gives_an_accuracy(tiny_gpt2_path, items, reduction, bad):
    contexts = [context for context, _, _ in items]
    candidates = [options for _, options, _ in items]
    labels = [label for _, _, label in items] + ([5] if bad else [])
    scorer = CandidateScorer(tiny_gpt2_path, device="cpu")
    result = outcome(
        selection.response_selection,
        contexts,
        candidates,
        labels,
        scorer=scorer,
        reduction=reduction,
    )
    if refused(result):
        return
    within(result["accuracy"], 0, 1, "accuracy")
    for index in range(len(items)):
        alone = selection.response_selection(
            contexts[index : index + 1],
            candidates[index : index + 1],
            labels[index : index + 1],
            scorer=scorer,
            reduction=reduction,
        )
        assert (
            alone["per_question"][0]["selected"] == result["per_question"][index]["selected"]
            or result["per_question"][index]["tie"]
        )


@covers("nbest_contradiction", "ModelYesNoClassifier", "load_yes_no_classifier")
@fewer(3)
@given(
    lists=st.one_of(
        st.lists(st.lists(model_text, min_size=1, max_size=3), min_size=1, max_size=3),
        st.lists(st.lists(st.one_of(text, junk), max_size=2), max_size=2),
        junk,
    )
)
@example(lists=[["Yes, I do.", "No."], ["x" * 2000]])
def test_nbest_contradiction_with_a_model_refuses_or_lies_in_0_1(tiny_roberta_yes_no_path, lists):
    references = ["yes", "no", "yes"][: len(lists)] if isinstance(lists, list) else ["yes"]
    classifier = nbest.load_yes_no_classifier(tiny_roberta_yes_no_path, device="cpu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = outcome(nbest.nbest_contradiction, lists, references, classifier)
    if refused(result):
        return
    for figure in ("certainty", "variety"):
        if math.isnan(result[figure]):
            assert caught, f"silent NaN {figure}"
        else:
            within(result[figure], 0, 1, figure)


@covers("evaluate_module_path")
@given(name=st.one_of(st.sampled_from([m.name for m in registry.METRICS]), text, junk))
def test_evaluate_module_path_names_a_registered_folder_or_refuses(name):
    path = outcome(evaluate_module_path, name)
    if refused(path):
        assert name not in registry.BY_NAME if isinstance(name, str) else True
    else:
        assert path == str(registry.get(name).module_dir)


devices = st.one_of(
    st.sampled_from(["cpu", "cuda", "cuda:0", "cuda:7", "bogus", "mps", "CPU", "", "cpu:0"]),
    st.integers(-1, 1),
    st.none(),
    junk,
)
dtypes = st.one_of(
    st.none(), st.sampled_from(["float32", "float16", "bfloat16", "int8", "half", ""]), junk
)


@covers(
    "NLIScorer",
    "CandidateScorer",
    "load_yes_no_classifier",
    "sent_bert_diversity",
    "MeanPoolingEmbedder",
)
@fewer(3)
@given(device=devices, dtype=dtypes)
@example(device="cuda:0", dtype=None)
@example(device="bogus", dtype=None)
def test_devices_and_dtypes_are_used_or_refused_with_a_value_error(
    tiny_roberta_nli_path, tiny_gpt2_path, tiny_roberta_yes_no_path, device, dtype
):
    pairs = [["I love cats.", "I hate cats."]]
    calls = [
        lambda: nli.nli_diversity(pairs, tiny_roberta_nli_path, device=device, dtype=dtype),
        lambda: similarity.sent_bert_diversity(
            pairs, tiny_roberta_nli_path, device=device, dtype=dtype
        ),
        lambda: selection.response_selection(
            ["Hi?"], [["Yes.", "No."]], [0], tiny_gpt2_path, device=device, dtype=dtype
        ),
        lambda: nbest.nbest_contradiction(
            [["Yes."]], ["yes"], tiny_roberta_yes_no_path, device=device, dtype=dtype
        ),
        lambda: MeanPoolingEmbedder(
            tiny_roberta_nli_path, max_length=128, device=device, dtype=dtype
        ).embed(["hi"]),
    ]
    for call in calls:
        result = outcome(call)
        if refused(result):
            assert "device" in str(result.error) or "dtype" in str(result.error), result


@covers(
    "sent_bert_diversity",
    "vendi_score",
    "nli_diversity",
    "bertscore_diversity",
    "cross_encoder_similarity_matrices",
    "response_selection",
    "nbest_contradiction",
    "MeanPoolingEmbedder",
    "LastTokenEmbedder",
)
@given(model=st.sampled_from([3, 1.5, b"bytes", ["a model"], {}, "", ("t",), True]))
def test_a_model_argument_that_is_no_model_is_a_value_error(model):
    pairs = [["I love cats.", "I hate cats."]]
    calls = [
        lambda: similarity.sent_bert_diversity(pairs, model, device="cpu"),
        lambda: vendi.vendi_score(pairs, model, device="cpu"),
        lambda: nli.nli_diversity(pairs, model, device="cpu"),
        lambda: similarity.bertscore_diversity(pairs, model, device="cpu"),
        lambda: similarity.cross_encoder_similarity_matrices(pairs, model, device="cpu"),
        lambda: selection.response_selection(["Hi?"], [["Yes.", "No."]], [0], model, device="cpu"),
        lambda: nbest.nbest_contradiction([["Yes."]], ["yes"], model, device="cpu"),
        lambda: MeanPoolingEmbedder(model, device="cpu").embed(["hi"]),
        lambda: LastTokenEmbedder(model, device="cpu").embed(["hi"]),
    ]
    for call in calls:
        result = outcome(call)
        assert refused(result), result
        assert "model" in str(result.error).lower() or "classifier" in str(result.error), result


# -- remote clique and chamfer distance ------------------------------------------------------------

distances = importlib.import_module("dialeval.metrics.embedding_distances")


@covers("embedding_distances", "remote_clique", "chamfer_distance")
@fewer(3)
@given(
    predictions=st.one_of(any_response_sets, response_sets(model_text, max_size=4, max_sets=3)),
    allow_empty=any_flag,
    figures=st.one_of(
        st.just(("remote_clique", "chamfer_distance")),
        st.sampled_from([["chamfer_distance"], "remote_clique"]),
        junk,
    ),
)
@example(
    predictions=[
        ["I love cats.", "I love cats.", "Dogs 🐶 are fine."],
        ["مرحبا", "e\u0301te\u0301"],
    ],
    allow_empty=False,
    figures=("remote_clique", "chamfer_distance"),
)
@example(
    predictions=["a b", "a b", "c"],
    allow_empty=False,
    figures=("remote_clique", "chamfer_distance"),
)
def test_embedding_distances_refuse_or_lie_in_0_2_and_one_list_agrees(
    tiny_roberta_nli_path, predictions, allow_empty, figures
):
    result = outcome(
        distances.embedding_distances,
        predictions,
        tiny_roberta_nli_path,
        figures,
        device="cpu",
        allow_empty=allow_empty,
    )
    if refused(result):
        return
    rows = result.get("per_set") or [result]
    lists = predictions if "per_set" in result else [predictions]
    for row, texts in zip(rows, lists, strict=True):
        for figure in ("remote_clique", "chamfer_distance"):
            if figure in row:
                within(row[figure], 0, 2, figure)
        if "chamfer_distance" in row:
            one = distances.chamfer_distance(
                texts, tiny_roberta_nli_path, device="cpu", allow_empty=allow_empty
            )
            assert one == pytest.approx(row["chamfer_distance"], abs=1e-6)
        if "remote_clique" in row:
            one = distances.remote_clique(
                texts, tiny_roberta_nli_path, device="cpu", allow_empty=allow_empty
            )
            assert one == pytest.approx(row["remote_clique"], abs=1e-6)


embedding_rows = st.one_of(
    st.lists(st.lists(st.floats(-1e3, 1e3), min_size=3, max_size=3), min_size=0, max_size=12),
    st.lists(
        st.lists(
            st.one_of(st.floats(allow_nan=True, allow_infinity=True), junk), min_size=1, max_size=3
        ),
        max_size=3,
    ),
    junk,
)


@covers("remote_clique_from_embeddings", "chamfer_distance_from_embeddings")
@given(rows=embedding_rows, block_size=st.one_of(st.integers(1, 5), any_flag))
@example(rows=[[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], block_size=2)
@example(rows=[[1e-300, 0.0, 0.0], [0.0, 1e-300, 0.0]], block_size=1)
def test_distances_from_embeddings_refuse_or_lie_in_0_2_for_every_block_size(rows, block_size):
    rc = outcome(distances.remote_clique_from_embeddings, rows)
    cd = outcome(distances.chamfer_distance_from_embeddings, rows, block_size=block_size)
    if refused(rc):
        assert refused(cd)
        return
    within(rc, 0, 2, "remote_clique")
    if refused(cd):
        assert "block_size" in str(cd.error)
        return
    within(cd, 0, 2, "chamfer_distance")
    assert cd == pytest.approx(distances.chamfer_distance_from_embeddings(rows), abs=1e-6)
