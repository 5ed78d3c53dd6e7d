"""Tevet & Berant's set-level metrics: released scores, a port of the released code, edge cases."""

import csv
import random

import numpy as np
import pytest
from scipy.spatial.distance import cosine

from dialeval.metrics import (
    averaged_distinct_n,
    batch_set_lexical_diversity,
    ngram_cosine_diversity,
    ngram_cosine_similarity,
    tevet_tokenize,
)

# --- A straightforward port of GuyTevet/diversity-eval (utils.py, similarity_metrics.py, metric.py) ---


def _lines_to_ngrams(lines, n):
    out = []
    for s in lines:
        words = [e for e in s.replace(".", "").replace("\n", "").split(" ") if e != ""]
        out.append([tuple(words[i : i + n]) for i in range(len(words) - n + 1)])
    return out


def _reference_distinct(response_set, n):
    ngrams = [g for sub in _lines_to_ngrams(response_set, n) for g in sub]
    return len(set(ngrams)) / len(ngrams) if len(ngrams) > 0 else 0.0


def _reference_cosine_similarity(a, b, n):
    g1, g2 = _lines_to_ngrams([a, b], n)
    if len(list(set(g1) & set(g2))) == 0:
        return 1 - 1.0
    space = list(set().union(g1, g2))
    return 1 - cosine([g1.count(e) for e in space], [g2.count(e) for e in space])


def _reference_averaged(response_set, per_n):
    return np.mean([per_n(response_set, n) for n in range(1, 6)])


def _reference_cosine_diversity(response_set, n):
    sims = [
        _reference_cosine_similarity(response_set[i], response_set[j], n)
        for i in range(len(response_set))
        for j in range(i)
    ]
    return -np.mean(sims)


WORDS = ["i", "am", "going", "home", "you", "go.", "Lets", "why", "?", "no", "..", "yes\nno", "a.b"]


def _random_sets(seed, count=200):
    rng = random.Random(seed)
    return [
        [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9)))
            for _ in range(rng.randint(2, 8))
        ]
        for _ in range(count)
    ]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equal_to_released_algorithm_bit_for_bit(seed):
    for response_set in _random_sets(seed):
        assert averaged_distinct_n(response_set) == _reference_averaged(
            response_set, _reference_distinct
        )
        assert ngram_cosine_diversity(response_set) == pytest.approx(
            _reference_averaged(response_set, _reference_cosine_diversity), abs=1e-15
        )


def test_hand_computed_distinct():
    # n=1: 5/10, n=2: 5/7, n=3: 3/4, n=4: 1/1, n=5: no 5-gram -> 0
    expected = (0.5 + 5 / 7 + 0.75 + 1.0 + 0.0) / 5
    assert averaged_distinct_n(["i am going", "i am going", "lets go i i"]) == pytest.approx(
        expected
    )


def test_cosine_extremes():
    assert ngram_cosine_diversity(["the cat sat on the mat"] * 3) == pytest.approx(-1.0)
    assert ngram_cosine_diversity(["alpha beta", "gamma delta", "epsilon zeta"]) == 0.0
    assert ngram_cosine_similarity(["a", "b"], ["a", "b"], 1) == pytest.approx(1.0)


def test_tevet_tokenization_rules():
    assert tevet_tokenize("Hi. There\nyou  are...") == ["Hi", "Thereyou", "are"]


def _score_one_by_one(response_sets):
    return (
        [averaged_distinct_n(r, allow_empty=True) for r in response_sets],
        [ngram_cosine_diversity(r, allow_empty=True) for r in response_sets],
    )


def _score_batched(response_sets):
    scores = batch_set_lexical_diversity(response_sets, allow_empty=True)
    return scores["averaged_distinct_n"], scores["ngram_cosine_diversity"]


@pytest.mark.parametrize(
    "score",
    [
        # the one-by-one path equals the batched one (tested on their own); 28 s on all 18 files
        pytest.param(_score_one_by_one, id="per_set", marks=pytest.mark.slow),
        pytest.param(_score_batched, id="batched"),
    ],
)
def test_matches_released_scores_on_all_18_files(shared_data, score):
    files = sorted((shared_data / "tevet-diversity-eval" / "with_metrics").glob("*/*.csv"))
    assert len(files) == 18
    rows = mismatches = 0
    for path in files:
        with open(path, encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            columns = sorted(
                (c for c in reader.fieldnames if c.startswith("resp_")), key=lambda c: int(c[5:])
            )
            table = list(reader)
        distinct, cos_sim = score([[row[c] for c in columns] for row in table])
        for row, d, c in zip(table, distinct, cos_sim):
            rows += 1
            mismatches += float(f"{d:.3f}") != float(row["metric_AveragedDistinctNgrams"])
            mismatches += float(f"{c:.3f}") != float(row["metric_AveragedCosineSimilarity"])
    assert rows == 13929  # row counts of SOURCE.md
    assert mismatches == 0


def test_empty_after_tokenization_follows_reference():
    # "..." has no token: it adds no n-gram and shares none (similarity 0), as in the released code.
    response_set = ["...", "hello there", "hello there"]
    assert averaged_distinct_n(response_set) == _reference_averaged(
        response_set, _reference_distinct
    )
    assert ngram_cosine_diversity(response_set) == pytest.approx(
        _reference_averaged(response_set, _reference_cosine_diversity)
    )


def test_empty_string_needs_allow_empty():
    with pytest.raises(ValueError, match=r"responses\[1\].*allow_empty"):
        averaged_distinct_n(["hello", ""])
    assert averaged_distinct_n(["", ""], allow_empty=True) == 0.0


@pytest.mark.parametrize(
    "bad, match",
    [
        ("just a string", "list of strings"),
        ([], "at least one"),
        (["ok", 3], r"responses\[1\].*int"),
        (["ok", ["nested"]], r"responses\[1\].*list"),
    ],
)
def test_bad_response_sets(bad, match):
    with pytest.raises(ValueError, match=match):
        averaged_distinct_n(bad)


def test_pairwise_metric_needs_two_responses():
    with pytest.raises(ValueError, match="responses.*at least 2"):
        ngram_cosine_diversity(["only one"])
    assert averaged_distinct_n(["only one"]) > 0  # distinct-n is defined for one response


def test_bad_orders():
    with pytest.raises(ValueError, match="min_n"):
        averaged_distinct_n(["a b"], max_n=2, min_n=3)
    with pytest.raises(ValueError, match="max_n"):
        ngram_cosine_diversity(["a b", "c"], max_n=0)
