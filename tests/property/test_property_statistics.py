"""Properties of the model-free numeric functions: diversity_meta_eval's statistics (decTest /
conTest / McDiv), the §5 reduction, response selection's pure functions, Certainty / Variety,
the Vendi Score from kernels and embeddings, and Sem-Ent's entropy.

Ranges: correlations in [-1, 1] with p-values in [0, 1]; OCA in [0.5, 1]; Vendi in [1, n];
entropies >= 0 (Sem-Ent <= log k); Certainty, Variety and accuracies in [0, 1]. A NaN is
accepted only where the card documents it, and then with a warning or a count saying why.
"""

from __future__ import annotations

import importlib
import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from property_support import any_response, covers, finite, junk, outcome, refused, text, within

from dialeval.metrics.engines import reduction

meta = importlib.import_module("dialeval.metrics.diversity_meta_eval")
selection = importlib.import_module("dialeval.metrics.response_selection")
nbest = importlib.import_module("dialeval.metrics.nbest_contradiction")
vendi = importlib.import_module("dialeval.metrics.vendi_score")
sem_ent = importlib.import_module("dialeval.metrics.sem_ent")

number = st.one_of(st.floats(-5, 5, allow_nan=False), st.integers(-3, 3))
numbers_or_junk = st.one_of(
    st.lists(number, min_size=0, max_size=12),
    st.lists(st.one_of(number, junk, st.floats()), max_size=6),
    st.lists(st.sampled_from([0, 1]), max_size=12),
    text,
    junk,
    st.lists(st.lists(number, max_size=2), max_size=3),
)


def _constant(values) -> bool:
    return np.ptp(np.asarray(values, dtype=np.float64)) == 0


@covers("spearman", "pearson", "optimal_classification_accuracy", "diversity_meta_evaluation")
@given(
    scores=numbers_or_junk,
    parameters=numbers_or_junk,
    tolerance=st.one_of(st.just(1e-5), st.floats(), st.integers(-1, 1), junk),
)
def test_correlations_refuse_or_lie_in_their_ranges(scores, parameters, tolerance):
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        for function in (meta.spearman, meta.pearson):
            value = outcome(function, scores, parameters)
            if refused(value):
                continue
            statistic, p_value = value
            # A constant side is refused (naming it), never a NaN.
            assert not (_constant(scores) or _constant(parameters)), (
                f"{function.__name__} accepted a constant side"
            )
            within(statistic, -1, 1, function.__name__)
            within(p_value, 0, 1, "p-value")
        oca = outcome(meta.optimal_classification_accuracy, scores, parameters, tolerance)
        if not refused(oca):
            assert (
                not isinstance(tolerance, bool) and math.isfinite(tolerance) and tolerance >= 0
            ), f"tolerance={tolerance!r} accepted"
            within(oca[0], 0.5, 1, "oca")
            finite(oca[1], "oca_threshold")
        result = outcome(meta.diversity_meta_evaluation, scores, parameters)
        if not refused(result):
            assert result["num_sets"] == len(scores)
            # Undefined correlations are None with their reason, never NaN.
            assert (
                (result["spearman"] is None)
                == (result["undefined_reason"] is not None)
                == (_constant(scores) or _constant(parameters))
            )
            if "oca" in result and tolerance == 1e-5:
                assert (result["oca"], result["oca_threshold"]) == oca


@covers("subsampled_spearman", "bootstrap_spearman_ci")
@given(
    scores=st.lists(number, min_size=2, max_size=12),
    data=st.data(),
    sample_size=st.one_of(st.integers(-1, 14), st.just(2.5), junk),
    repeats=st.one_of(st.integers(-1, 5), st.just(1.5), junk),
    seed=st.one_of(st.integers(-1, 3), st.just(1.5), junk),
    num_resamples=st.one_of(st.integers(-1, 20), st.just(2.0), junk),
    fraction=st.one_of(st.floats(-0.5, 1.5), junk),
    confidence=st.one_of(st.floats(-0.5, 1.5), junk),
)
def test_resampled_spearman_refuses_or_gives_a_correlation(
    scores, data, sample_size, repeats, seed, num_resamples, fraction, confidence
):
    parameters = data.draw(st.lists(number, min_size=len(scores), max_size=len(scores)))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        value = outcome(
            meta.subsampled_spearman,
            scores,
            parameters,
            sample_size=sample_size,
            repeats=repeats,
            seed=seed,
        )
        if not refused(value):
            mean, spread = value
            # Constant subsets are left out; all constant is refused, never a NaN
            within(mean, -1, 1, "mean rho")
            assert finite(spread) >= 0
        interval = outcome(
            meta.bootstrap_spearman_ci,
            scores,
            parameters,
            num_resamples=num_resamples,
            sample_fraction=fraction,
            confidence=confidence,
            seed=seed,
        )
    if not refused(interval):
        low, high = within(interval[0], -1, 1), within(interval[1], -1, 1)
        assert low <= high


@covers("similarity_to_diversity", "diversity_from_similarity_matrix")
@given(
    matrix=hnp.arrays(
        np.float64,
        st.tuples(st.integers(0, 6), st.integers(0, 6)),
        elements=st.one_of(
            st.floats(-1, 1),
            st.floats(-1, 1),
            st.floats(-1, 1),
            st.floats(-1, 1),
            st.just(math.nan),
        ),
    ),
    bad=st.one_of(st.none(), junk, text),
)
def test_reduction_of_a_matrix_equals_the_pairwise_reduction(matrix, bad):
    assert refused(outcome(reduction.diversity_from_similarity_matrix, bad))
    symmetric = matrix if matrix.shape[0] != matrix.shape[1] else (matrix + matrix.T) / 2
    value = outcome(reduction.diversity_from_similarity_matrix, symmetric)
    if refused(value):
        off_diagonal = (
            ~np.eye(len(symmetric), dtype=bool)
            if symmetric.shape[0] == symmetric.shape[1]
            else None
        )
        assert (
            symmetric.shape[0] != symmetric.shape[1]
            or symmetric.shape[0] < 2
            or not np.isfinite(symmetric[off_diagonal]).all()
        ), value
        return
    within(value, -1, 1, "diversity")  # a NaN similarity off the diagonal must have been refused
    pairwise = reduction.similarity_to_diversity(
        list(range(len(symmetric))), lambda i, j: symmetric[i, j]
    )
    assert value == pytest.approx(pairwise)


@covers("system_ranking_correlation", "random_protocol_correlation")
@given(
    human=st.one_of(
        st.lists(number, min_size=0, max_size=6),
        numbers_or_junk,
        st.dictionaries(st.sampled_from("abcde"), number, max_size=5),
    ),
    trials=st.lists(
        st.one_of(
            st.lists(number, min_size=0, max_size=6),
            numbers_or_junk,
            st.dictionaries(st.sampled_from("abcde"), number, max_size=5),
        ),
        min_size=0,
        max_size=3,
    ),
)
def test_ranking_correlations_refuse_or_lie_in_their_ranges(human, trials):
    for metric in trials:
        value = outcome(selection.system_ranking_correlation, human, metric)
        if refused(value):
            continue
        if value["spearman"] is None:
            # Documented: rho is None, with undefined_reason, when either side ranks every system the same.
            assert value["undefined_reason"] and value["p_value"] is None
            values = list(human.values()) if isinstance(human, dict) else human
            other = list(metric.values()) if isinstance(metric, dict) else metric
            assert _constant(values) or _constant(other)
        else:
            within(value["spearman"], -1, 1, "spearman")
            within(value["p_value"], 0, 1, "p_value")
    value = outcome(selection.random_protocol_correlation, human, trials)
    if not refused(value):
        assert value["num_trials"] == len(trials) == len(value["spearman_per_trial"])
        if value["num_undefined_trials"] < len(trials):
            within(value["spearman_mean"], -1, 1)
            assert value["spearman_min"] <= value["spearman_median"] <= value["spearman_max"]


losses = st.lists(st.floats(0, 50), min_size=2, max_size=4)


@covers("select_by_loss")
@given(
    rows=st.lists(st.one_of(losses, st.lists(st.floats(), max_size=3), junk), max_size=5),
    labels=st.lists(st.one_of(st.integers(-1, 4), junk), max_size=5),
    tie=st.one_of(st.floats(-1, 2), junk),
)
def test_select_by_loss_refuses_or_gives_an_accuracy(rows, labels, tie):
    result = outcome(selection.select_by_loss, rows, labels, tie_rtol=tie)
    if refused(result):
        return
    within(result["accuracy"], 0, 1, "accuracy")
    assert all(isinstance(label, int) and not isinstance(label, bool) for label in labels), (
        f"labels {labels} accepted"
    )
    assert len(result["per_question"]) == len(rows)
    for row, label, values in zip(result["per_question"], labels, rows):
        assert 0 <= row["selected"] < len(values)


questions = st.lists(
    st.tuples(
        st.one_of(text, st.lists(text, max_size=3)),
        st.lists(any_response, min_size=0, max_size=4),
        st.integers(-1, 4),
    ),
    min_size=0,
    max_size=4,
)


@covers("tfidf_selection")
@given(items=questions, fit=st.one_of(st.none(), st.lists(text, max_size=3), text, junk))
def test_tfidf_selection_refuses_or_gives_an_accuracy(items, fit):
    contexts = [context for context, _, _ in items]
    candidates = [options for _, options, _ in items]
    labels = [label for _, _, label in items]
    result = outcome(selection.tfidf_selection, contexts, candidates, labels, fit_texts=fit)
    if not refused(result):
        within(result["accuracy"], 0, 1, "accuracy")


@covers("build_repository", "filter_pool")
@given(
    utterances=st.one_of(st.lists(any_response, max_size=6), text, junk),
    exclude=st.one_of(st.lists(text, max_size=3), junk),
    scores=st.one_of(
        hnp.arrays(
            np.int64, st.tuples(st.integers(0, 4), st.integers(0, 6)), elements=st.integers(-1, 6)
        ),
        st.lists(st.lists(st.integers(0, 5), max_size=5), max_size=4),
        junk,
    ),
)
def test_construction_functions_refuse_or_keep_their_invariants(utterances, exclude, scores):
    repository = outcome(selection.build_repository, utterances, exclude)
    if not refused(repository):
        assert repository and all(isinstance(u, str) and u == u.strip() and u for u in repository)
        keys = [" ".join(u.lower().split()) for u in repository]
        assert len(set(keys)) == len(keys)
    pool = outcome(selection.filter_pool, scores)
    if not refused(pool):
        removed = set(pool.acceptable) | set(pool.ungrammatical)
        assert (
            not removed & set(pool.usable)
            and len(removed | set(pool.usable)) == len(np.asarray(scores)) - 1
        )


answer = st.sampled_from(["yes", "no", "ambiguous"])


@covers("certainty_variety")
@given(
    answers=st.one_of(
        st.lists(st.lists(answer, min_size=1, max_size=4), min_size=1, max_size=5),
        st.lists(
            st.one_of(st.lists(st.one_of(answer, junk, text), max_size=3), junk, text), max_size=3
        ),
        junk,
        text,
    ),
    data=st.data(),
    types=st.one_of(st.none(), st.just("typed")),
)
def test_certainty_variety_refuses_or_lies_in_0_1_and_nan_comes_with_a_warning(
    answers, data, types
):
    size = len(answers) if isinstance(answers, list) else 1
    references = data.draw(
        st.one_of(
            st.lists(st.sampled_from(["yes", "no"]), min_size=size, max_size=size),
            st.lists(st.one_of(answer, junk), max_size=4),
            junk,
        )
    )
    input_types = (
        None
        if types is None
        else data.draw(st.lists(st.sampled_from(["ENTQ", "CNTQ"]), min_size=size, max_size=size))
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = outcome(nbest.certainty_variety, answers, references, input_types)
    if refused(result):
        return
    assert result["num_inputs"] == len(answers) == result["num_analyzed"] + result["num_excluded"]
    for figure in ("certainty", "variety"):
        if math.isnan(result[figure]):
            assert caught, f"silent NaN {figure}"
            assert result["num_analyzed"] == 0 or result["num_with_noncontradictory"] == 0
        else:
            within(result[figure], 0, 1, figure)


@covers("PrefixYesNoClassifier", "nbest_contradiction")
@given(
    lists=st.one_of(
        st.lists(st.lists(any_response, min_size=0, max_size=3), min_size=0, max_size=4), junk, text
    ),
    data=st.data(),
)
def test_nbest_contradiction_with_the_prefix_rule(lists, data):
    size = len(lists) if isinstance(lists, list) else 1
    references = data.draw(
        st.one_of(st.lists(st.sampled_from(["yes", "no"]), min_size=size, max_size=size), junk)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = outcome(nbest.nbest_contradiction, lists, references, "prefix")
    if refused(result):
        return
    answers = [nbest.PrefixYesNoClassifier().classify(responses) for responses in lists]
    assert result["certainty"] == pytest.approx(
        nbest.certainty_variety(answers, references)["certainty"], nan_ok=True
    )
    for figure in ("certainty", "variety"):
        if math.isnan(result[figure]):
            assert caught, f"silent NaN {figure}"
        else:
            within(result[figure], 0, 1, figure)


def _kernel(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / norms
    return np.clip(unit @ unit.T, -1, 1)


embeddings = hnp.arrays(
    np.float64,
    st.tuples(st.integers(1, 6), st.integers(1, 4)),
    elements=st.floats(-3, 3, allow_subnormal=False).filter(lambda x: abs(x) > 1e-3),
)
orders = st.one_of(
    st.just((1,)),
    st.lists(st.one_of(st.sampled_from([0, 0.5, 1, 2, "inf"]), st.floats(-1, 5), junk), max_size=3),
)


@covers("vendi_score_from_embeddings", "vendi_score_from_kernel")
@given(vectors=embeddings, orders=orders, duplicate=st.booleans())
def test_vendi_from_embeddings_lies_in_1_n_and_equals_the_kernel_path(vectors, orders, duplicate):
    if duplicate:
        vectors = np.concatenate([vectors, vectors[:1]])
    n = len(vectors)
    scores = outcome(vendi.vendi_score_from_embeddings, vectors, orders=orders)
    if refused(scores):
        return
    for key, value in scores.items():
        within(value, 1, n, key, tolerance=1e-6 * n)
    kernel = _kernel(vectors)
    from_kernel = outcome(vendi.vendi_score_from_kernel, kernel, orders=orders)
    assume(not refused(from_kernel))  # a rounding-level negative eigenvalue of a clipped kernel
    for key, value in from_kernel.items():
        assert value == pytest.approx(scores[key], rel=1e-5, abs=1e-5), key


@covers("vendi_score_from_kernel")
@given(
    kernel=st.one_of(
        hnp.arrays(
            np.float64,
            st.tuples(st.integers(0, 4), st.integers(0, 4)),
            elements=st.floats(allow_nan=True),
        ),
        junk,
        text,
        st.lists(st.lists(number, max_size=3), max_size=3),
    )
)
def test_vendi_from_kernel_refuses_bad_kernels(kernel):
    scores = outcome(vendi.vendi_score_from_kernel, kernel)
    if not refused(scores):
        n = np.asarray(kernel).shape[0]
        within(scores["vendi_score"], 1, n, "vendi_score", tolerance=1e-6 * n)


probability_vectors = (
    st.lists(st.floats(0, 10), min_size=1, max_size=8)
    .filter(lambda w: sum(w) > 0)
    .map(lambda w: [x / math.fsum(w) for x in w])
)


@covers("distribution_entropy")
@given(distribution=st.one_of(probability_vectors, st.lists(st.floats(), max_size=4), junk, text))
def test_distribution_entropy_is_between_0_and_log_k(distribution):
    value = outcome(sem_ent.distribution_entropy, distribution)
    if not refused(value):
        within(value, 0, math.log(len(distribution)), "entropy")
