"""Pairwise BERTScore F1 with a tiny random RoBERTa, checked against the reference bert_score."""

import itertools
import json
import shutil

import numpy as np
import pytest

from dialeval.hub import ModelNotAvailableError
from dialeval.metrics.engines.reduction import diversity_from_similarity_matrix
from dialeval.metrics.similarity_diversity import bertscore
from dialeval.metrics.similarity_diversity.bertscore import (
    DEFAULT_BERTSCORE_LAYER,
    DEFAULT_BERTSCORE_MODEL,
    ROBERTA_LARGE_L17_BASELINE,
    bertscore_diversity,
    bertscore_similarity_matrices,
    compute_bertscore_matrices,
)

SETS = [
    [
        "hi there! how are you doing today?",
        "i'm doing well, thanks.",
        "hi there! how are you doing today?",
        "what about you?",
    ],
    [
        "a man is playing a guitar on the stage.",
        "nobody is playing music right now.",
        "   ",
        "sure.",
    ],
    ["do you have any pets at home?", "yes, a dog named max. " * 30],  # the second one is truncated
]


@pytest.fixture(scope="module")
def roberta_path(tiny_roberta_nli_path, tmp_path_factory) -> str:
    """The tiny checkpoint with a ``RobertaTokenizer``, as roberta-large has.

    The fixture's tokenizer is a bare ``TokenizersBackend``: no cls/sep roles (so no zero
    weights) and not a RoBERTa-style class (so no prefix space). Declaring the class gives the
    tiny model roberta-large's conventions: ``<s>``/``</s>`` as cls/sep and the prefix space.
    """
    path = tmp_path_factory.mktemp("tiny-roberta-tokenizer") / "model"
    shutil.copytree(tiny_roberta_nli_path, path)
    config_file = path / "tokenizer_config.json"
    config = json.loads(config_file.read_text())
    config["tokenizer_class"] = "RobertaTokenizer"
    config_file.write_text(json.dumps(config))
    return str(path)


def _reference_sent_encode(tokenizer, sent):
    """bert_score 0.3.13's ``sent_encode`` as it behaves on transformers 4.

    On transformers 5 the original (a) passes ``add_prefix_space=True`` to ``encode``, which now
    ignores it, so RoBERTa sentences lose their leading space, and (b) calls
    ``build_inputs_with_special_tokens`` for an empty sentence, which transformers 5 does not have. The
    space is added here as the slow tokenizer's ``prepare_for_tokenization`` did with that flag.
    """
    from transformers import GPT2Tokenizer, RobertaTokenizer

    sent = sent.strip()
    if sent == "":
        return tokenizer.encode("", add_special_tokens=True)
    if isinstance(tokenizer, (GPT2Tokenizer, RobertaTokenizer)) and not sent[0].isspace():
        sent = " " + sent
    return tokenizer.encode(
        sent, add_special_tokens=True, max_length=tokenizer.model_max_length, truncation=True
    )


@pytest.mark.parametrize("tokenizer_kind", ["roberta", "bare"])
@pytest.mark.parametrize("num_layers", [1, 2])
def test_equals_reference_bert_score_on_all_ordered_pairs(
    tokenizer_kind, num_layers, roberta_path, tiny_roberta_nli_path, tmp_path, monkeypatch
):
    bert_score = pytest.importorskip("bert_score")
    # score() reaches sent_encode through bert_score.utils' globals (collate_idf).
    monkeypatch.setattr(bert_score.utils, "sent_encode", _reference_sent_encode)
    path = roberta_path if tokenizer_kind == "roberta" else tiny_roberta_nli_path
    baseline = 0.3
    # bert_score reads the row of index num_layers and its P, R, F columns.
    baseline_file = tmp_path / "baseline.tsv"
    baseline_file.write_text(
        "LAYER,P,R,F\n" + "".join(f"{layer},0.1,0.2,{baseline}\n" for layer in range(3))
    )
    with pytest.warns(UserWarning, match="1 of .* truncated"):
        result = compute_bertscore_matrices(
            SETS,
            model=path,
            num_layers=num_layers,
            baseline=baseline,
            device="cpu",
            allow_empty=True,
        )
    assert result.num_truncated == 1 and result.num_encoded == 9 and result.max_length == 128

    for response_set, matrix in zip(SETS, result.matrices):
        pairs = list(itertools.product(range(len(response_set)), repeat=2))
        # batch_size=1: bert_score lets the cosine 0 of its batch padding into the greedy max,
        # so its scores depend on the batch when a token's cosines are all negative; one pair
        # per batch has no padding and gives the definition's max over real tokens.
        _, _, f1 = bert_score.score(
            [response_set[i] for i, _ in pairs],
            [response_set[j] for _, j in pairs],
            model_type=path,
            num_layers=num_layers,
            batch_size=1,
            device="cpu",
            lang="en",
            rescale_with_baseline=True,
            baseline_path=str(baseline_file),
        )
        expected = f1.double().numpy().reshape(len(response_set), len(response_set))
        np.testing.assert_allclose(matrix, expected, atol=1e-5, rtol=0)


def test_matrix_is_symmetric_with_unit_diagonal_and_rescaled(roberta_path):
    raw = bertscore_similarity_matrices(
        SETS[:2], model=roberta_path, rescale_with_baseline=False, device="cpu", allow_empty=True
    )
    rescaled = bertscore_similarity_matrices(
        SETS[:2], model=roberta_path, baseline=0.4, device="cpu", allow_empty=True
    )
    for raw_matrix, rescaled_matrix in zip(raw, rescaled):
        assert raw_matrix.dtype == np.float64
        np.testing.assert_array_equal(raw_matrix, raw_matrix.T)
        np.testing.assert_allclose(rescaled_matrix, (raw_matrix - 0.4) / (1 - 0.4), atol=1e-12)
    # Duplicates score as the self-score; the whitespace-only response has no weighted token, F = 0.
    assert raw[0][0, 2] == pytest.approx(1.0, abs=1e-6) and raw[0][0, 0] == pytest.approx(
        1.0, abs=1e-6
    )
    assert np.all(raw[1][2] == 0.0) and np.all(raw[1][:, 2] == 0.0)


def test_diversity_is_the_reduction_of_the_matrix(roberta_path):
    kwargs = {
        "model": roberta_path,
        "rescale_with_baseline": False,
        "device": "cpu",
        "allow_empty": True,
    }
    matrices = bertscore_similarity_matrices(SETS[:2], **kwargs)
    # The sets repeat sentences, which the diversity weights instead of expanding: equal to rounding.
    assert bertscore_diversity(SETS[:2], **kwargs) == pytest.approx(
        [diversity_from_similarity_matrix(m) for m in matrices], rel=1e-12, abs=1e-15
    )


def test_each_distinct_sentence_is_encoded_once(roberta_path):
    # the encoder the engine loads (through the one loader, cached): the hook sees its forward passes
    _, encoder = bertscore._load(roberta_path, "cpu", "float32")
    rows = []
    handle = encoder.get_input_embeddings().register_forward_hook(
        lambda module, args, out: rows.append(args[0].shape[0])
    )
    try:
        sets = [
            ["same words", "other words", "same words"],
            ["other words ", "same words", "new ones"],
        ]
        # torch: the hook counts the torch encoder's forward passes
        result = compute_bertscore_matrices(
            sets,
            model=roberta_path,
            rescale_with_baseline=False,
            batch_size=2,
            device="cpu",
            backend="torch",
        )
    finally:
        handle.remove()
    assert result.num_encoded == 3 and sum(rows) == 3 and len(rows) == 2
    # The embedding is shared across sets: the same pair scores the same in both.
    assert result.matrices[0][0, 1] == result.matrices[1][1, 0]


@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_a_middle_layer_runs_a_cut_encoder_on_every_backend(backend, roberta_path, monkeypatch):
    """The encoder is loaded cut at the layer read (bert_score's cut, on every backend), and the
    exported backends give torch's F1."""
    asked = []
    original = bertscore.load_model

    def recorded(*arguments, **options):
        asked.append((options["backend"], options["layers"]))
        return original(*arguments, **options)

    monkeypatch.setattr(bertscore, "load_model", recorded)
    kwargs = {"model": roberta_path, "num_layers": 1, "rescale_with_baseline": False}
    kwargs.update(device="cpu", allow_empty=True)
    expected = compute_bertscore_matrices(SETS, backend="torch", **kwargs).matrices
    got = compute_bertscore_matrices(SETS, backend=backend, **kwargs).matrices
    assert asked == [("torch", 1), (backend, 1)]
    # the top layer is read from the whole model, not from a second export of it
    compute_bertscore_matrices(SETS, backend=backend, **{**kwargs, "num_layers": 2})
    assert asked[-1] == (backend, None)
    for mine, reference in zip(got, expected):
        np.testing.assert_allclose(mine, reference, atol=1e-5, rtol=0)


def test_num_layers_and_baseline_defaults():
    assert (
        bertscore._resolve_num_layers(DEFAULT_BERTSCORE_MODEL, None, 24)
        == DEFAULT_BERTSCORE_LAYER
        == 17
    )
    assert bertscore._resolve_num_layers("roberta-large", None, 24) == 17
    assert bertscore._resolve_num_layers("some/model", None, 6) == 6
    assert (
        bertscore._resolve_baseline(DEFAULT_BERTSCORE_MODEL, 17, True, None)
        == ROBERTA_LARGE_L17_BASELINE["F"]
        == 0.83122575
    )
    assert bertscore._resolve_baseline(DEFAULT_BERTSCORE_MODEL, 17, False, None) is None
    assert bertscore._resolve_baseline("some/model", 3, True, 0.5) == 0.5
    # other layers and models: bert-score's published file (0.3.13, rescale_baseline/en/roberta-large.tsv, LAYER=16)
    assert bertscore._resolve_baseline(DEFAULT_BERTSCORE_MODEL, 16, True, None) == 0.833912
    with pytest.raises(ValueError, match=r"baseline=.*rescale_with_baseline=False"):
        bertscore._resolve_baseline("some/model", 16, True, None)


def test_bad_input(roberta_path):
    good = [["a b", "c d"]]
    with pytest.raises(ValueError, match=r"response_sets\[0\].*at least 2"):
        bertscore_similarity_matrices([["lonely"]], model=roberta_path)
    with pytest.raises(ValueError, match="response_sets"):
        bertscore_similarity_matrices("not a list of sets", model=roberta_path)
    with pytest.raises(ValueError, match="batch_size"):
        bertscore_similarity_matrices(good, model=roberta_path, batch_size=0)
    with pytest.raises(ValueError, match="dtype"):
        bertscore_similarity_matrices(good, model=roberta_path, dtype="int8")
    with pytest.raises(ValueError, match="baseline"):
        bertscore_similarity_matrices(good, model=roberta_path, baseline=1.0)
    for bad_layers in (3, -1, True, 1.5):
        with pytest.raises(ValueError, match="num_layers"):
            bertscore_similarity_matrices(
                good,
                model=roberta_path,
                num_layers=bad_layers,
                rescale_with_baseline=False,
                device="cpu",
            )
    with pytest.raises(ValueError, match=r"baseline=.*rescale_with_baseline=False"):
        bertscore_similarity_matrices(good, model=roberta_path, device="cpu")


def test_missing_model_says_how_to_get_it(tmp_path):
    with pytest.raises(ValueError, match="no such folder"):
        bertscore_similarity_matrices([["a", "b"]], model=str(tmp_path / "absent"))
    with pytest.raises(ModelNotAvailableError, match="hf download"):
        bertscore_diversity([["a", "b"]], model="dialeval-tests/no-such-model")
