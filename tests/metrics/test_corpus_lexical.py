"""Corpus Dist-n / Ent-n / LF against a port of the Sem-Ent released code (hyperconnect/sem-ent)."""

import random
from collections import Counter

import numpy as np
import pytest
from nltk.tokenize.casual import casual_tokenize
from nltk.util import ngrams

from dialeval.metrics import corpus_ngram_diversity, distinct_n, entropy_n, lf, token_counts
from dialeval.metrics.lexical_diversity.corpus import weighted_ngram_counts


def _reference_dist(instances, k):  # codes/utils/dist.py
    all_set, total = set(), 0
    for tokens in (casual_tokenize(x) for x in instances):
        grams = list(ngrams(tokens, k))
        total += len(grams)
        all_set.update(grams)
    return len(all_set) / total


def _reference_ent(instances, k):  # codes/utils/ent.py
    grams = [g for tokens in (casual_tokenize(x) for x in instances) for g in ngrams(tokens, k)]
    ent = 0
    for v in Counter(grams).values():
        p = v / len(grams)
        ent -= p * np.log2(p)
    return ent


def _reference_lf(instances, thres=100):  # codes/utils/low_frequency.py
    tokens = [t for x in instances for t in casual_tokenize(x)]
    return sum(v for v in Counter(tokens).values() if v <= thres) / len(tokens)


VOCAB = [
    "I",
    "you",
    "don't",
    "know",
    "what",
    ":)",
    "lol",
    "http://x.co/a",
    "...",
    "!!!",
    "?",
    ",",
    ".",
    "yes",
    "no",
    "maybe",
    "#tag",
    "@user",
    "Hello",
    "3.5",
    "héllo",
]


def _corpus(seed, size=1500):
    rng = random.Random(seed)
    return [" ".join(rng.choice(VOCAB) for _ in range(rng.randint(1, 10))) for _ in range(size)]


@pytest.mark.parametrize("seed", [0, 1])
def test_equal_to_released_code(seed):
    corpus = _corpus(seed)
    result = corpus_ngram_diversity(corpus, max_n=4)
    for k in range(1, 5):
        assert result[f"distinct_{k}"] == _reference_dist(corpus, k)
        assert result[f"entropy_{k}"] == pytest.approx(_reference_ent(corpus, k), rel=1e-9)
    assert lf(corpus, threshold=100) == _reference_lf(corpus, 100)
    assert lf(corpus, threshold=5) == _reference_lf(corpus, 5)


def test_released_entropy_example():
    expected = -(4 / 5 * np.log2(2 / 5) + 1 / 5 * np.log2(1 / 5))
    assert entropy_n(["Hello", "Hello World", "World Hi"], 1) == pytest.approx(expected)


def test_single_functions_agree_with_one_pass():
    corpus = _corpus(3, 300)
    both = corpus_ngram_diversity(corpus, max_n=3)
    assert distinct_n(corpus, 2) == both["distinct_2"]
    assert entropy_n(corpus, 3) == both["entropy_3"]


def test_ngrams_do_not_cross_responses():
    # Each response is one token: no bigram exists, though the pooled stream has many.
    result = corpus_ngram_diversity(["a", "b", "a"], max_n=2)
    assert result["distinct_1"] == pytest.approx(2 / 3)
    assert result["distinct_2"] == 0.0 and result["entropy_2"] == 0.0


def test_parallel_tokenization_gives_identical_result():
    corpus = _corpus(4, 400)
    assert corpus_ngram_diversity(corpus, num_workers=2) == corpus_ngram_diversity(
        corpus, num_workers=1
    )


def test_lf_against_reference_counts():
    reference = ["the cat"] * 3 + ["a dog"]
    generated = ["the dog", "the zebra"]  # the: 3 (frequent at threshold 2), dog: 1, zebra: 0
    assert lf(generated, reference=reference, threshold=2) == pytest.approx(2 / 4)
    assert lf(generated, reference=token_counts(reference), threshold=2) == pytest.approx(2 / 4)
    # the boundary is inclusive, as the released code's `v <= thres`
    assert lf(generated, reference=reference, threshold=3) == 1.0


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="responses"):
        distinct_n("not a list")
    with pytest.raises(ValueError, match=r"`n`"):
        distinct_n(["a"], n=0)
    with pytest.raises(ValueError, match="reference"):
        lf(["a"], reference=42)
    with pytest.raises(ValueError, match="threshold"):
        lf(["a"], threshold=-1)
    with pytest.raises(ValueError, match="num_workers"):
        corpus_ngram_diversity(["a"], num_workers=0)


def _naive_weighted_counts(token_lists, weights, n):
    counts = Counter()
    for tokens, weight in zip(token_lists, weights):
        for gram in ngrams(tokens, n):
            counts[gram] += weight
    return sorted(counts.values())


@pytest.mark.parametrize(
    ("vocabulary_size", "max_weight", "max_n"),
    [
        (5, 1, 4),  # every text once: group sizes of the sorted keys
        (30, 7, 4),  # weights packed below the keys
        (9000, 3, 6),  # 9000**5 overflows int64: the 4-gram keys are ranked first
        (300, 10**13, 3),  # key * weight overflows int64: argsort, integer sums
    ],
)
def test_weighted_ngram_counts_against_a_counter(vocabulary_size, max_weight, max_n):
    rng = np.random.default_rng(vocabulary_size)
    lengths = rng.integers(0, 9, size=400)
    ids = rng.integers(0, vocabulary_size, size=int(lengths.sum()))
    weights = rng.integers(1, max_weight + 1, size=lengths.size)
    token_lists = np.split(ids, np.cumsum(lengths)[:-1])
    counts = weighted_ngram_counts(ids, lengths, weights, vocabulary_size, max_n)
    for n in range(1, max_n + 1):
        assert counts[n].tolist() == _naive_weighted_counts(
            [tuple(t) for t in token_lists], weights.tolist(), n
        )


def test_repeated_responses_count_with_their_multiplicity():
    corpus = _corpus(5, 200)
    repeated = corpus * 3 + corpus[:17] + ["", "Hello", ""]
    result = corpus_ngram_diversity(repeated, max_n=3, allow_empty=True)
    for k in range(1, 4):
        assert result[f"distinct_{k}"] == _reference_dist(repeated, k)
        assert result[f"entropy_{k}"] == pytest.approx(_reference_ent(repeated, k), rel=1e-12)
    assert result["num_tokens"] == sum(len(casual_tokenize(text)) for text in repeated)


@pytest.mark.parametrize(
    "reference, match",
    [
        ({1: 2}, "`reference` keys must be token strings"),
        ({"a": float("nan")}, r"`reference\['a'\]` must be a non-negative count"),
        ({"a": -1}, r"`reference\['a'\]` must be a non-negative count"),
        ({"a": "3"}, r"`reference\['a'\]` must be a non-negative count"),
        ({"a": 2.5}, r"`reference\['a'\]` must be a non-negative count \(an int\)"),
        ({"a": 2.0}, r"`reference\['a'\]` must be a non-negative count \(an int\)"),
    ],
)
def test_lf_refuses_a_malformed_frequency_mapping(reference, match):
    """Found by tests/property: {1: 2} gave 1.0 and {"a": nan} gave 0.5, silently."""
    with pytest.raises(ValueError, match=match):
        lf(["a b"], reference=reference)
    assert lf(["a b"], reference={"a": 5, "b": 0}, threshold=2) == 0.5


def test_numpy_integers_are_taken_as_orders_thresholds_and_counts():
    responses = ["the cat sat on the mat", "the dog sat"]
    assert distinct_n(responses, n=np.int64(2)) == distinct_n(responses, n=2)
    assert entropy_n(responses, n=np.int32(2)) == entropy_n(responses, n=2)
    assert corpus_ngram_diversity(responses, max_n=np.int64(2)) == corpus_ngram_diversity(
        responses, max_n=2
    )
    assert lf(responses, threshold=np.int64(1)) == lf(responses, threshold=1)
    assert lf(responses, reference={"the": np.int64(200), "cat": np.uint8(3)}) == lf(
        responses, reference={"the": 200, "cat": 3}
    )
