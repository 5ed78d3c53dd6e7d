"""Vendi Score (Friedman & Dieng 2023): hand-computable cases, primal == dual, the reference
formula, duplicates, scopes, validation, and the evaluate module with the embedded MiniLM."""

import itertools
import math
import os
import tracemalloc
from pathlib import Path

import evaluate
import numpy as np
import pytest
import scipy.linalg
from threadpoolctl import threadpool_info, threadpool_limits

from dialeval.metrics.vendi_score import gram
from dialeval.metrics.vendi_score.vendi import (
    check_orders,
    order_key,
    vendi_score,
    vendi_score_from_eigenvalues,
    vendi_score_from_embeddings,
    vendi_score_from_kernel,
    vendi_statistic,
)

ALL_ORDERS = (0, 0.1, 0.5, 1, 2, 3.5, "inf")
MODULE_DIR = Path(__file__).resolve().parents[2] / "metrics" / "vendi_score"


def _keys(orders):
    return [order_key(q) for q in orders]


def _random_unit_rows(n, d, seed=0):
    rows = np.random.default_rng(seed).normal(size=(n, d))
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _reference_entropy_q(p, q=1):
    """``vendi_score.vendi.entropy_q`` of the authors' package 0.0.3, verbatim."""
    p_ = p[p > 0]
    if q == 1:
        return -(p_ * np.log(p_)).sum()
    if q == "inf":
        return -np.log(np.max(p))
    return np.log((p_**q).sum()) / (1 - q)


def _reference_score_K(K, q=1):
    """``vendi_score.vendi.score_K`` (dense, uniform weights) of the authors' package 0.0.3."""
    w = scipy.linalg.eigvalsh(K / K.shape[0])
    return np.exp(_reference_entropy_q(w, q=q))


class FakeEncoder:
    """A loaded "model" for embed_unique: maps each text to a fixed vector (no network, instant)."""

    def __init__(self, vectors):
        self.vectors = {
            text: np.asarray(vector, dtype=np.float64) for text, vector in vectors.items()
        }
        self.calls = []

    def encode(self, texts, batch_size, convert_to_numpy, normalize_embeddings, show_progress_bar):
        self.calls.append(list(texts))
        rows = np.stack([self.vectors[text] for text in texts])
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


# Three orthonormal directions in R^4 and one in between.
FAKE = FakeEncoder({"a": [1, 0, 0, 0], "b": [0, 1, 0, 0], "c": [0, 0, 1, 0], "ab": [1, 1, 0, 0]})


# ------------------------------------------------------------------------------------------
# hand-computable cases


@pytest.mark.parametrize("n", [1, 2, 5])
def test_identical_items_score_one_for_every_order(n):
    by_kernel = vendi_score_from_kernel(np.ones((n, n)), ALL_ORDERS)
    by_rows = vendi_score_from_embeddings(np.tile([[0.3, -1.2, 2.0]], (n, 1)), ALL_ORDERS)
    by_dual = vendi_score_from_embeddings(np.tile([[0.3, -1.2]], (n + 3, 1)), ALL_ORDERS)
    for scores in (by_kernel, by_rows, by_dual):
        assert list(scores) == _keys(ALL_ORDERS)
        assert all(value == pytest.approx(1.0, abs=1e-12) for value in scores.values())


@pytest.mark.parametrize("n, d", [(1, 1), (4, 4), (3, 10)])
def test_orthonormal_items_score_n_for_every_order(n, d):
    q_matrix, _ = np.linalg.qr(np.random.default_rng(n).normal(size=(d, n)))
    rows = q_matrix.T  # n orthonormal rows in R^d
    by_kernel = vendi_score_from_kernel(np.eye(n), ALL_ORDERS)
    for scores in (by_kernel, vendi_score_from_embeddings(rows, ALL_ORDERS)):
        assert all(value == pytest.approx(n, rel=1e-12) for value in scores.values())


@pytest.mark.parametrize("s", [0.0, 0.3, -0.6, 0.9])
def test_two_by_two_kernel_by_hand(s):
    # K = [[1, s], [s, 1]]: K / 2 has the eigenvalues (1 + s) / 2 and (1 - s) / 2.
    big, small = (1 + abs(s)) / 2, (1 - abs(s)) / 2
    scores = vendi_score_from_kernel([[1.0, s], [s, 1.0]], (0, 1, 2, "inf", 0.5))
    assert scores["vendi_score"] == pytest.approx(
        math.exp(-(big * math.log(big) + small * math.log(small)))
    )
    assert scores["vendi_score_q2"] == pytest.approx(1 / (big**2 + small**2))
    assert scores["vendi_score_qinf"] == pytest.approx(1 / big)
    assert scores["vendi_score_q0.5"] == pytest.approx((math.sqrt(big) + math.sqrt(small)) ** 2)
    assert scores["vendi_score_q0"] == 2.0


def test_two_identical_items_have_rank_one():
    assert vendi_score_from_kernel([[1.0, 1.0], [1.0, 1.0]], (0, 0.5, 1))["vendi_score_q0"] == 1.0


def test_readme_kernel_example():
    # The example of the authors' README: vendi.score_K(K) = 2.1573.
    kernel = [[1.0, 0.9, 0.0], [0.9, 1.0, 0.0], [0.0, 0.0, 1.0]]
    assert vendi_score_from_kernel(kernel)["vendi_score"] == pytest.approx(2.1573, abs=1e-4)


def test_scores_do_not_increase_with_the_order_and_lie_in_one_to_rank():
    rows = _random_unit_rows(30, 6, seed=3) + 0.8  # correlated rows: a non-trivial spectrum
    scores = list(vendi_score_from_embeddings(rows, (0, 0.1, 0.5, 1, 2, 3.5, 50, "inf")).values())
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(scores))
    assert scores[0] == 6.0 and scores[-1] >= 1.0


def test_large_orders_do_not_underflow():
    scores = vendi_score_from_kernel(np.eye(50) * 0.5 + 0.5, (2, 1000, "inf"))
    assert scores["vendi_score_qinf"] <= scores["vendi_score_q1000"] <= scores["vendi_score_q2"]
    assert scores["vendi_score_q1000"] == pytest.approx(scores["vendi_score_qinf"], rel=1e-2)


# ------------------------------------------------------------------------------------------
# primal == dual, and the reference formula


@pytest.mark.parametrize("n, d", [(40, 8), (200, 16), (9, 3)])
def test_primal_equals_dual_for_every_order(n, d):
    rows = _random_unit_rows(n, d, seed=n)
    dual = vendi_score_from_embeddings(rows, ALL_ORDERS)  # n > d: the d x d form
    primal = vendi_score_from_kernel(rows @ rows.T, ALL_ORDERS)  # the n x n kernel
    assert list(dual) == list(primal)
    for key in dual:
        assert dual[key] == pytest.approx(primal[key], rel=1e-9), key
    assert dual["vendi_score_q0"] == d


@pytest.mark.parametrize("n, d", [(6, 20), (40, 8)])
@pytest.mark.parametrize("q", [1, 2, 3.5, "inf", 0.5])
def test_equals_the_reference_formula(n, d, q):
    rows = _random_unit_rows(n, d, seed=7)
    kernel = rows @ rows.T
    expected = _reference_score_K(kernel, q=q)
    ours = vendi_score_from_kernel(kernel, [q])[order_key(q)]
    # For q < 1 the reference also raises the ~1e-17 noise eigenvalues of a rank-deficient kernel
    # to the power q, which we zero; the effect is ~1e-7 at q = 0.5 (and large at q = 0.1).
    assert ours == pytest.approx(expected, rel=1e-6 if q == 0.5 else 1e-10)


def test_reference_inflates_small_orders_with_noise_eigenvalues_but_we_do_not():
    rows = _random_unit_rows(50, 8, seed=0)
    ours = vendi_score_from_kernel(rows @ rows.T, [0.1])["vendi_score_q0.1"]
    assert ours == pytest.approx(
        vendi_score_from_embeddings(rows, [0.1])["vendi_score_q0.1"], rel=1e-9
    )
    assert ours <= 8.0  # at most the rank; the reference's 50 x 50 primal form exceeds it
    assert _reference_score_K(rows @ rows.T, q=0.1) > 8.0


# score_K reads scipy.sparse.csr.csr_matrix, a deprecated alias in current scipy.
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("q", [1, 2, "inf", 0.5])
def test_equals_the_installed_vendi_score_package(q):
    vendi = pytest.importorskip("vendi_score.vendi")
    rows = _random_unit_rows(30, 10, seed=11)
    small = rows[:8]
    assert vendi_score_from_kernel(small @ small.T, [q])[order_key(q)] == pytest.approx(
        vendi.score_K(small @ small.T, q=q), rel=1e-9
    )
    assert vendi_score_from_embeddings(rows, [q])[order_key(q)] == pytest.approx(
        vendi.score_dual(rows, q=q), rel=1e-9
    )


def test_dual_handles_a_large_corpus_without_an_n_by_n_matrix():
    rows = _random_unit_rows(20_000, 32, seed=1)  # an n x n kernel would take 3.2 GB
    scores = vendi_score_from_embeddings(rows, (1, "inf"))
    assert 28 < scores["vendi_score"] <= 32 and scores["vendi_score_qinf"] <= scores["vendi_score"]


def test_eigenvalue_noise_is_zeroed_and_renormalized():
    scores = vendi_score_from_eigenvalues([0.5, 0.5, -1e-17, 1e-18], (0, 0.5, 1))
    assert scores["vendi_score_q0"] == 2.0
    assert scores["vendi_score_q0.5"] == pytest.approx(2.0) and scores[
        "vendi_score"
    ] == pytest.approx(2.0)


def test_normalize_false_takes_unit_rows_as_they_are():
    rows = _random_unit_rows(5, 3)
    as_given = vendi_score_from_embeddings(rows, normalize=False)
    assert as_given == pytest.approx(vendi_score_from_embeddings(3 * rows))


# ------------------------------------------------------------------------------------------
# the d x d sum of many rows: blocks, workers, memory


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of ``MIN_BLOCK_ROWS`` rows: a small input spans many blocks and every lane."""
    monkeypatch.setattr(gram, "BLOCK_BYTES", 1)


def _float32_rows(n, d, seed, unit=False):
    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(n, d)).astype(np.float32)
    if unit:  # like sentence embeddings: unit rows around a shared direction
        rows += 3 * rng.normal(size=d).astype(np.float32)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def test_dual_sum_is_bit_equal_for_any_number_of_workers(small_blocks):
    rows = _float32_rows(5000, 24, seed=3)
    weights = np.full(len(rows), 1 / len(rows))
    one, norms = gram.dual_gram(rows, weights, workers=1)
    for workers in (2, 3, 8):
        assert np.array_equal(gram.dual_gram(rows, weights, workers=workers)[0], one)
    exact = rows.astype(np.float64)
    np.testing.assert_allclose(norms, np.linalg.norm(exact, axis=1), rtol=1e-6)
    unit = exact / np.linalg.norm(exact, axis=1, keepdims=True)
    np.testing.assert_allclose(one, unit.T @ unit / len(rows), rtol=0, atol=1e-8)


def test_dual_sum_of_picked_rows_equals_that_of_the_rows_themselves(small_blocks):
    rows = _float32_rows(3000, 16, seed=4)
    index = np.random.default_rng(4).choice(len(rows), size=2000, replace=False)
    weights = np.random.default_rng(5).random(2000)
    picked, norms = gram.dual_gram(rows, weights, index, workers=2)
    copied, copied_norms = gram.dual_gram(rows[index], weights, workers=1)
    assert np.array_equal(picked, copied) and np.array_equal(norms, copied_norms)


@pytest.mark.parametrize("unit", [False, True], ids=["gaussian", "unit"])
def test_float32_corpus_equals_the_installed_package_within_1e_5(unit, small_blocks):
    vendi = pytest.importorskip("vendi_score.vendi")
    rows = _float32_rows(4000, 48, seed=6, unit=unit)
    with threadpool_limits(2, user_api="blas"):
        ours = vendi_score_from_embeddings(rows, (1, 2))
    assert ours["vendi_score"] == pytest.approx(float(vendi.score_dual(rows)), rel=1e-5)
    assert ours["vendi_score_q2"] == pytest.approx(float(vendi.score_dual(rows, q=2)), rel=1e-5)
    exact = vendi_score_from_embeddings(rows.astype(np.float64), (1, 2))
    assert ours == pytest.approx(exact, rel=1e-6)


def test_resampled_corpus_equals_its_per_occurrence_rows(small_blocks):
    vectors = _float32_rows(1500, 12, seed=7)
    index = np.random.default_rng(7).integers(0, len(vectors), size=2000)
    counts = np.random.default_rng(8).integers(0, 3, size=(1, len(index))).astype(np.float64)
    value = vendi_statistic(vectors, index).evaluate(counts)[0]
    occurrences = np.repeat(vectors[index], counts[0].astype(np.int64), axis=0)
    assert value == pytest.approx(vendi_score_from_embeddings(occurrences)["vendi_score"], rel=1e-6)


def _blas_threads():
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_the_blas_runs_one_thread_a_worker_and_gets_its_threads_back():
    with threadpool_limits(2, user_api="blas"):
        before = _blas_threads()
        if not before:
            pytest.skip("threadpoolctl sees no BLAS here")
        with gram.blas_workers() as workers:
            inside = _blas_threads()
        assert _blas_threads() == before
    assert inside == [1] * len(before)
    assert workers == min(2, len(os.sched_getaffinity(0)))


def _peak_traced_bytes(function, *args):
    tracemalloc.start()
    try:
        function(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_large_corpus_is_scored_without_a_copy_of_its_rows():
    rows = np.random.default_rng(0).standard_normal((100_000, 256), dtype=np.float32)
    with threadpool_limits(2, user_api="blas"):
        peak = _peak_traced_bytes(vendi_score_from_embeddings, rows)
        resampled = vendi_statistic(rows, np.arange(len(rows))).evaluate
        peak_of_texts = _peak_traced_bytes(resampled, np.ones((1, len(rows))))
    assert peak < rows.nbytes / 2
    assert peak_of_texts < rows.nbytes / 2


# ------------------------------------------------------------------------------------------
# duplicates and scopes (a fake encoder: no model needed)


def test_duplicates_lower_the_score():
    two = vendi_score(["a", "b"], model=FAKE)["vendi_score"]
    three = vendi_score(["a", "a", "b"], model=FAKE)["vendi_score"]
    assert two == pytest.approx(2.0)
    assert three == pytest.approx(math.exp(-(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3))))
    assert three < two


@pytest.mark.parametrize("texts", [["a", "a", "b", "ab", "c", "a"], ["ab", "b", "ab"]])
def test_occurrence_counts_equal_per_occurrence_rows(texts):
    rows = np.stack([FAKE.vectors[text] for text in texts])
    scores = vendi_score(texts, model=FAKE, orders=ALL_ORDERS)
    expected = vendi_score_from_embeddings(rows, ALL_ORDERS)
    for key in expected:
        assert scores[key] == pytest.approx(expected[key], rel=1e-9), key


def test_each_distinct_text_is_embedded_once():
    encoder = FakeEncoder(FAKE.vectors)
    vendi_score([["a", "b", "a"], ["b", "c"]], model=encoder)
    assert encoder.calls == [["a", "b", "c"]]


def test_set_scope():
    result = vendi_score(
        [["a", "b"], ["a", "a", "a"], ["a", "b", "c"]], model=FAKE, orders=(1, "inf")
    )
    assert result["scope"] == "response_set" and result["num_sets"] == 3
    assert [s["vendi_score"] for s in result["per_set"]] == pytest.approx([2.0, 1.0, 3.0])
    assert result["vendi_score"] == pytest.approx(2.0)
    assert result["vendi_score_qinf"] == pytest.approx(2.0)
    assert set(result) == {"scope", "vendi_score", "vendi_score_qinf", "num_sets", "per_set"}


def test_corpus_scope_and_pooling():
    corpus = vendi_score(["a", "b", "a", "a"], model=FAKE)
    expected = math.exp(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))
    assert corpus == {"scope": "corpus", "vendi_score": pytest.approx(expected), "num_responses": 4}
    pooled = vendi_score([["a", "b"], ["a", "a"]], model=FAKE, scope="corpus")
    assert pooled == corpus
    single = vendi_score(["a", "b", "c"], model=FAKE, scope="response_set")
    assert single["num_sets"] == 1 and single["vendi_score"] == pytest.approx(3.0)


# ------------------------------------------------------------------------------------------
# orders and validation


def test_order_keys():
    assert [order_key(q) for q in (1, 1.0, "inf", math.inf, 2, 2.0, 0.5, 0, np.float64(0.25))] == [
        "vendi_score",
        "vendi_score",
        "vendi_score_qinf",
        "vendi_score_qinf",
        "vendi_score_q2",
        "vendi_score_q2",
        "vendi_score_q0.5",
        "vendi_score_q0",
        "vendi_score_q0.25",
    ]
    assert check_orders([1, 1.0, "inf", math.inf, 2]) == [1.0, math.inf, 2.0]
    assert check_orders(2) == [2.0] and check_orders("inf") == [math.inf]


@pytest.mark.parametrize(
    "orders", [[-1], ["two"], [True], [float("nan")], [], None, [[1]], ["-inf"]]
)
def test_bad_orders(orders):
    with pytest.raises(ValueError, match="orders"):
        vendi_score_from_kernel(np.eye(2), orders)
    with pytest.raises(ValueError, match="orders"):
        vendi_score(["a", "b"], model=FAKE, orders=orders)


@pytest.mark.parametrize(
    "kernel, match",
    [
        ([[1.0, 0.5], [0.2, 1.0]], "symmetric"),
        ([[1.0, 0.5, 0.0], [0.5, 1.0, 0.0]], "square"),
        ([[2.0, 0.5], [0.5, 2.0]], "diagonal"),
        ([[1.0, 0.9, -0.9], [0.9, 1.0, 0.9], [-0.9, 0.9, 1.0]], "positive semidefinite"),
        ([[1.0, np.nan], [np.nan, 1.0]], "NaN"),
        ([1.0, 1.0], "2-D"),
        ([[]], "empty"),
        ([["a"]], "numbers"),
    ],
)
def test_bad_kernels(kernel, match):
    with pytest.raises(ValueError, match=f"`kernel`.*{match}|{match}.*`kernel`"):
        vendi_score_from_kernel(kernel)


def test_bad_embeddings():
    with pytest.raises(ValueError, match="embeddings.*zero"):
        vendi_score_from_embeddings([[1.0, 0.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match="embeddings.*unit-norm"):
        vendi_score_from_embeddings([[2.0, 0.0]], normalize=False)
    with pytest.raises(ValueError, match="embeddings.*2-D"):
        vendi_score_from_embeddings([1.0, 0.0])


@pytest.mark.parametrize(
    "predictions, match",
    [
        (["a", ["b"]], "mixes nesting"),
        ([["a", "b"], "c"], "mixes nesting"),
        ([["a", "b"], [1, 2]], r"predictions\[1\]\[0\]"),
        ([], "non-empty"),
        ([["a", ""]], "empty string"),
    ],
)
def test_bad_predictions(predictions, match):
    with pytest.raises(ValueError, match=match):
        vendi_score(predictions, model=FAKE)


def test_allow_empty_embeds_empty_responses_as_the_model_does():
    """meta-eval scores decTest promptGen, where a set holds an empty response, with allow_empty."""
    encoder = FakeEncoder({**FAKE.vectors, "": [0, 0, 0, 1]})
    result = vendi_score([["a", ""], ["a", "b"]], model=encoder, allow_empty=True)
    assert [row["vendi_score"] for row in result["per_set"]] == pytest.approx([2.0, 2.0])
    assert vendi_score(["", "a"], model=encoder, allow_empty=True)["vendi_score"] == pytest.approx(
        2.0
    )
    with pytest.raises(ValueError, match=r"`predictions\[0\]\[1\]` is an empty string"):
        vendi_score([["a", ""]], model=encoder)


@pytest.mark.parametrize("normalize", ["no", "False", 0, None])
def test_normalize_must_be_a_bool(normalize):
    with pytest.raises(ValueError, match="`normalize` must be True or False"):
        vendi_score_from_embeddings([[1.0, 0.0], [0.0, 1.0]], normalize=normalize)


def test_bad_scope():
    with pytest.raises(ValueError, match="scope"):
        vendi_score(["a"], model=FAKE, scope="sets")


# ------------------------------------------------------------------------------------------
# the evaluate module, offline, with the embedded all-MiniLM-L6-v2


PARAPHRASES = [
    "I stayed at home and relaxed.",
    "I just relaxed at home.",
    "Nothing much, relaxing at home.",
]
DIFFERENT = [
    "I went hiking in the mountains.",
    "I fixed the kitchen sink.",
    "We ate seafood on the coast.",
]


@pytest.fixture(scope="module")
def vendi_module():
    return evaluate.load(str(MODULE_DIR))


def test_module_set_scope_with_minilm(vendi_module):
    sets = [PARAPHRASES, DIFFERENT, ["same words here"] * 3]
    result = vendi_module.compute(
        predictions=sets, model="sentence-transformers/all-MiniLM-L6-v2", orders=[1, "inf"]
    )
    low, high, same = (s["vendi_score"] for s in result["per_set"])
    assert high > low + 0.3 and 1.0 < low < high <= 3.0
    assert same == pytest.approx(1.0, abs=1e-6)
    assert result["num_sets"] == 3 and result["scope"] == "response_set"
    assert result["vendi_score_qinf"] <= result["vendi_score"]
    direct = vendi_score(sets, orders=[1, "inf"])
    assert result["vendi_score"] == pytest.approx(direct["vendi_score"], rel=1e-9)


def test_module_corpus_scope_with_minilm(vendi_module):
    result = vendi_module.compute(predictions=PARAPHRASES + DIFFERENT + PARAPHRASES[:1])
    assert result["scope"] == "corpus" and result["num_responses"] == 7
    assert 2.0 < result["vendi_score"] < 6.0


@pytest.mark.parametrize(
    "predictions, match",
    [
        (["a", ["b"]], "mixes nesting"),
        ([["a", "b"], "cd"], "mixes nesting"),
        ([["a", "b"], [1, 2]], r"predictions\[1\]\[0\]"),
    ],
)
def test_module_rejects_bad_input_before_evaluate_coerces_it(vendi_module, predictions, match):
    with pytest.raises(ValueError, match=match):
        vendi_module.compute(predictions=predictions)


def test_module_rejects_references(vendi_module):
    with pytest.raises(ValueError, match="references"):
        vendi_module.compute(predictions=[PARAPHRASES], references=[PARAPHRASES])
