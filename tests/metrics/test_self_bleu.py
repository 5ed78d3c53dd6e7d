"""Self-BLEU (metrics/self_bleu.py) against a straightforward NLTK sentence_bleu loop."""
import random

import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from dialeval.metrics.lexical_diversity.self_bleu import self_bleu
from dialeval.text import casual_tokenize


def naive_self_bleu(token_lists, max_n):
    """Texygen's SelfBleu, spelled out: each response against all the others, then the mean."""
    weights = (1 / max_n,) * max_n
    smoothing = SmoothingFunction().method1
    scores = [
        sentence_bleu(token_lists[:i] + token_lists[i + 1 :], hypothesis, weights=weights, smoothing_function=smoothing)
        for i, hypothesis in enumerate(token_lists)
    ]
    return sum(scores) / len(scores), scores


def random_corpus(rng, size, vocab_size, max_len=12):
    vocab = [f"w{k}" for k in range(vocab_size)]
    corpus = [" ".join(rng.choice(vocab) for _ in range(rng.randint(0, max_len))) for _ in range(size)]
    corpus += rng.sample(corpus, 3)  # exact duplicates
    corpus += [vocab[0], f"{vocab[1]} {vocab[2]}"]  # a 1-token response, one shorter than max_n >= 3
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
    corpus = ["a b c d e f", "a b", "a b c d", "a b c d e f g h", "c d e", "b c d e f g h i j k", "a"]
    expected, expected_per = naive_self_bleu([text.split() for text in corpus], 2)
    score, per_response = self_bleu(corpus, max_n=2, return_per_response=True)
    assert score == pytest.approx(expected, abs=1e-12)
    assert per_response == pytest.approx(expected_per, abs=1e-12)


def test_identical_responses_score_one():
    assert self_bleu(["the cat sat on the mat"] * 4) == pytest.approx(1.0, abs=1e-12)
    assert self_bleu(["hello there", "hello there"], max_n=2) == pytest.approx(1.0, abs=1e-12)


def test_disjoint_vocabularies_score_zero():
    score, per_response = self_bleu(
        ["a b c d", "e f g h", "i j k l"], return_per_response=True
    )
    assert score == 0.0
    assert per_response == [0.0, 0.0, 0.0]


def test_empty_response_scores_zero_when_allowed():
    score, per_response = self_bleu(["", "a b c", "a b c"], allow_empty=True, return_per_response=True)
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
