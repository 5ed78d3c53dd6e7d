"""Self-BLEU (metrics/self_bleu.py) against a straightforward NLTK sentence_bleu loop, and
exactly (``==``) against the former dict-of-tuples implementation (tests/self_bleu_dict_reference.py)."""

import importlib
import json
import random
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from self_bleu_dict_reference import dict_self_bleu

from dialeval.metrics.lexical_diversity import corpus as corpus_module
from dialeval.metrics.lexical_diversity.self_bleu import self_bleu
from dialeval.text import casual_tokenize

# The package exports the function under the module's name: reach the module itself.
self_bleu_module = importlib.import_module("dialeval.metrics.lexical_diversity.self_bleu")


def naive_self_bleu(token_lists, max_n):
    """Texygen's SelfBleu, spelled out: each response against all the others, then the mean."""
    weights = (1 / max_n,) * max_n
    smoothing = SmoothingFunction().method1
    scores = [
        sentence_bleu(
            token_lists[:i] + token_lists[i + 1 :],
            hypothesis,
            weights=weights,
            smoothing_function=smoothing,
        )
        for i, hypothesis in enumerate(token_lists)
    ]
    return sum(scores) / len(scores), scores


def random_corpus(rng, size, vocab_size, max_len=12):
    vocab = [f"w{k}" for k in range(vocab_size)]
    corpus = [
        " ".join(rng.choice(vocab) for _ in range(rng.randint(0, max_len))) for _ in range(size)
    ]
    corpus += rng.sample(corpus, 3)  # exact duplicates
    corpus += [
        vocab[0],
        f"{vocab[1]} {vocab[2]}",
    ]  # a 1-token response, one shorter than max_n >= 3
    rng.shuffle(corpus)
    return corpus


@pytest.mark.parametrize("max_n", [1, 2, 3, 4])
@pytest.mark.parametrize("seed", range(4))
def test_equals_nltk_loop(seed, max_n):
    rng = random.Random(1000 * seed + max_n)
    corpus = random_corpus(rng, size=rng.randint(5, 40), vocab_size=rng.choice([3, 5, 8]))
    expected, expected_per = naive_self_bleu([casual_tokenize(text) for text in corpus], max_n)
    score, per_response = self_bleu(corpus, max_n=max_n, allow_empty=True, return_per_response=True)
    assert score == pytest.approx(expected, abs=1e-12)
    assert len(per_response) == len(corpus)
    for got, want in zip(per_response, expected_per):
        assert got == pytest.approx(want, abs=1e-12)
    assert self_bleu(corpus, max_n=max_n, allow_empty=True) == score


def test_default_max_n_is_three_and_callable_tokenizer():
    rng = random.Random(7)
    corpus = [text for text in random_corpus(rng, size=30, vocab_size=6) if text]
    token_lists = [text.split() for text in corpus]
    expected, _ = naive_self_bleu(token_lists, 3)
    assert self_bleu(corpus, tokenizer=str.split) == pytest.approx(expected, abs=1e-12)


def test_length_ties_and_bisection():
    # Hypothesis lengths with references equally far above and below (tie -> shorter), only
    # longer / only shorter references, and a unique length whose neighbours are elsewhere.
    corpus = [
        "a b c d e f",
        "a b",
        "a b c d",
        "a b c d e f g h",
        "c d e",
        "b c d e f g h i j k",
        "a",
    ]
    expected, expected_per = naive_self_bleu([text.split() for text in corpus], 2)
    score, per_response = self_bleu(corpus, max_n=2, return_per_response=True)
    assert score == pytest.approx(expected, abs=1e-12)
    assert per_response == pytest.approx(expected_per, abs=1e-12)


def test_identical_responses_score_one():
    assert self_bleu(["the cat sat on the mat"] * 4) == pytest.approx(1.0, abs=1e-12)
    assert self_bleu(["hello there", "hello there"], max_n=2) == pytest.approx(1.0, abs=1e-12)


def test_disjoint_vocabularies_score_zero():
    score, per_response = self_bleu(["a b c d", "e f g h", "i j k l"], return_per_response=True)
    assert score == 0.0
    assert per_response == [0.0, 0.0, 0.0]


def test_empty_response_scores_zero_when_allowed():
    _score, per_response = self_bleu(
        ["", "a b c", "a b c"], allow_empty=True, return_per_response=True
    )
    assert per_response[0] == 0.0
    assert per_response[1] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    "responses",
    [
        ["only one response"],
        [],
        ["fine", 3],
        ["fine", ""],
        [["nested", "list"], ["of", "lists"]],
        "a string, not a list",
    ],
)
def test_bad_responses_raise_naming_the_argument(responses):
    with pytest.raises(ValueError, match="responses"):
        self_bleu(responses)


@pytest.mark.parametrize("max_n", [0, -1, 2.0, True])
def test_bad_max_n(max_n):
    with pytest.raises(ValueError, match="max_n"):
        self_bleu(["a b", "b c"], max_n=max_n)


def test_bad_tokenizer():
    with pytest.raises(ValueError, match="tokenizer"):
        self_bleu(["a b", "b c"], tokenizer="whitespace")


# --- the integer-array implementation returns exactly what the dict-of-tuples one returned ---

EXACT_CORPORA = {
    "repeats_and_empties": None,  # random_corpus(...) below: repeats, "" and 1- and 2-token texts
    "one_token_each": ["a", "b", "a", "c", "a", "b", "d"],
    "all_identical": ["the cat sat on the mat"] * 5,
    "two_responses": ["a b c d", "a b c e"],
    "only_empties": ["", "", " "],
    "empties_and_repeats": ["", "a b", "", "a b", "b a b", "a", ""],
    "same_tokens_other_text": ["a  b c", "a b c", " a b c ", "a b\tc d", "c b a"],
    "casual_tokens": [
        "Hello :) world!!!",
        "hello :-) WORLD !",
        "@you http://x.y/z ok",
        "ok ok ok",
        "<3 <3",
    ],
    "long_and_short": ["w " * 60, "w " * 59 + "v", "w v", "v", "w " * 30],
}


def _exact_corpus(name):
    if EXACT_CORPORA[name] is not None:
        return EXACT_CORPORA[name]
    return random_corpus(random.Random(11), size=60, vocab_size=4, max_len=9)


@pytest.mark.parametrize("max_n", [1, 2, 3, 4])
@pytest.mark.parametrize("name", sorted(EXACT_CORPORA))
def test_equals_the_dict_implementation_exactly(name, max_n):
    corpus = _exact_corpus(name)
    expected = dict_self_bleu(corpus, max_n=max_n, allow_empty=True, return_per_response=True)
    assert self_bleu(corpus, max_n=max_n, allow_empty=True, return_per_response=True) == expected
    assert self_bleu(corpus, max_n=max_n, allow_empty=True) == expected[0]


@pytest.mark.parametrize("max_n", [1, 2, 3, 4])
# (empty tokens are refused: the lambda drops the empty pieces of its split)
@pytest.mark.parametrize(
    "tokenizer",
    [str.split, list, lambda text: [piece for piece in text.lower().split("a") if piece]],
    ids=["split", "chars", "lambda"],
)
def test_equals_the_dict_implementation_with_a_callable_tokenizer(tokenizer, max_n):
    corpus = _exact_corpus("repeats_and_empties") + EXACT_CORPORA["same_tokens_other_text"]
    expected = dict_self_bleu(
        corpus, max_n=max_n, tokenizer=tokenizer, allow_empty=True, return_per_response=True
    )
    assert (
        self_bleu(
            corpus, max_n=max_n, tokenizer=tokenizer, allow_empty=True, return_per_response=True
        )
        == expected
    )


# Few characters, so that texts, tokens and n-grams repeat; ":)", "!!!" and tabs for the casual
# tokenizer; "" and " " for the empty responses.
_SMALL_TEXTS = st.text(alphabet="ab c:)!\t", max_size=14)


@settings(max_examples=150)
@given(corpus=st.lists(_SMALL_TEXTS, min_size=2, max_size=30), max_n=st.integers(1, 5))
def test_equals_the_dict_implementation_on_generated_corpora(corpus, max_n):
    expected = dict_self_bleu(corpus, max_n=max_n, allow_empty=True, return_per_response=True)
    assert self_bleu(corpus, max_n=max_n, allow_empty=True, return_per_response=True) == expected


@pytest.mark.parametrize("limit", [2**10, 2**16])
def test_keys_that_would_overflow_are_ranked_with_the_same_result(monkeypatch, limit):
    # At real sizes the (n-gram, text) keys overflow int64 only for huge vocabularies; a small
    # limit takes both rank paths (n-gram keys of ngram_keys, then (n-gram, text) pairs) here.
    corpus = random_corpus(random.Random(5), size=80, vocab_size=30, max_len=10)
    expected = dict_self_bleu(corpus, max_n=4, allow_empty=True, return_per_response=True)
    monkeypatch.setattr(corpus_module, "KEY_LIMIT", limit)
    monkeypatch.setattr(self_bleu_module, "KEY_LIMIT", limit)
    assert self_bleu(corpus, max_n=4, allow_empty=True, return_per_response=True) == expected


def test_dailydialog_plusplus_dev_equals_the_dict_implementation(shared_data):
    path = shared_data / "dailydialog-plusplus" / "dev.json"
    records = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    corpus = [
        text
        for record in records
        for key in record
        if key.endswith("_responses")
        for text in record[key]
    ]
    assert len(corpus) > 15_000 and len(set(corpus)) < len(corpus)  # real text, repeated responses
    for max_n in (1, 4):
        assert self_bleu(corpus, max_n=max_n, return_per_response=True) == dict_self_bleu(
            corpus, max_n=max_n, return_per_response=True
        )


def test_memory_stays_a_few_arrays_per_token():
    # At its peak the dict-of-tuples implementation held ~410 bytes per token of the distinct
    # texts here (n-gram tuples in a dict per text and order), the array one ~87, tokenizing
    # included (tracemalloc counts numpy's buffers too). Allocations, not time: deterministic.
    rng = random.Random(3)
    vocabulary = [f"w{k}" for k in range(3000)]
    corpus = [" ".join(rng.choices(vocabulary, k=rng.randint(1, 12))) for _ in range(20_000)]
    corpus += corpus[:2_000]
    tokens = sum(len(text.split()) for text in set(corpus))
    self_bleu(corpus[:10], tokenizer=str.split)  # lazy imports outside the measurement
    tracemalloc.start()
    try:
        self_bleu(corpus, tokenizer=str.split)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 150 * tokens


def test_a_numpy_max_n_is_taken():
    import numpy as np

    corpus = ["the cat sat on the mat", "the dog sat on the log", "a bird flew"]
    assert self_bleu(corpus, max_n=np.int64(2)) == self_bleu(corpus, max_n=2)
