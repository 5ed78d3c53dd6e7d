"""Homogenization score: hand cases, a pair-by-pair reference loop, and the `diversity` package's own function."""

import importlib
import json
import math
from pathlib import Path

import evaluate
import numpy as np
import pytest
from diversity_peer_files import peer_module

from dialeval.hub import ModelNotAvailableError
from dialeval.metrics import homogenization, homogenization_per_set, homogenization_score
from dialeval.metrics.homogenization import rouge_tokens

# evaluate's `bleu` module (and the two files it imports), vendored: evaluate.load("bleu") needs the Hub.
VENDORED_BLEU = Path(__file__).parent / "vendored_evaluate" / "bleu"

TEXTS = [
    "The cat sat on the mat.",
    "the cat sat on a mat",
    "A dog ran home!",
    "The cat sat on the mat.",
    "Running dogs run; the runner runs.",
    "I don't know.",
    "I don't know.",
]


@pytest.fixture(scope="module")
def bleu_module():
    return evaluate.load(str(VENDORED_BLEU))


def _reference_loop(texts, measure, use_stemmer=False, bleu_module=None):
    """The definition, pair by pair, with the reference scorers (rouge_score, evaluate's bleu)."""
    n = len(texts)
    if measure == "rougel":
        from rouge_score import rouge_scorer

        scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=use_stemmer)
    total = 0.0
    for i, reference in enumerate(texts):
        others = [text for j, text in enumerate(texts) if j != i]
        if measure == "rougel":
            total += sum(scorer.score(other, reference)["rougeL"].fmeasure for other in others) / (
                n - 1
            )
        else:
            total += bleu_module.compute(
                predictions=others, references=[[reference]] * len(others)
            )["bleu"]
    return total / n


def test_rouge_l_hand_case():
    # F = 2 LCS / (|a| + |b|): (the cat sat, the cat ran) 4/6; (the cat ran, a dog ran) 2/6; the third pair 0.
    assert homogenization(["the cat sat", "the cat ran", "a dog ran"]) == pytest.approx(
        (4 / 6 + 2 / 6 + 0) / 3, abs=1e-15
    )


def test_bleu_hand_case():
    # 13a tokens, 6 each; 1..4-gram precisions 5/6, 3/5, 2/4, 1/3 both ways; equal lengths: BP = 1.
    expected = (5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25
    assert homogenization(
        ["the cat sat on the mat", "the cat sat on a mat"], "bleu"
    ) == pytest.approx(expected, abs=1e-15)


def test_identical_texts_score_one_and_unrelated_texts_zero():
    # The package reports 1.0 for the unrelated corpus (its "all pairs 0" case); the true mean is 0.
    for measure in ("rougel", "bleu"):
        assert homogenization(["Same words here."] * 4, measure) == pytest.approx(1.0, abs=1e-15)
        assert (
            homogenization(
                ["alpha beta gamma delta", "one two three four", "red green blue black"], measure
            )
            == 0.0
        )


def test_rouge_tokens_follow_rouge_score():
    from rouge_score import tokenizers

    for use_stemmer in (False, True):
        reference = tokenizers.DefaultTokenizer(use_stemmer=use_stemmer)
        for text in [*TEXTS, "Ça va? Très-bien_ok 42x", "   ", "running RUNS ran"]:
            assert rouge_tokens(text, use_stemmer) == reference.tokenize(text)


@pytest.mark.parametrize(
    ("measure", "use_stemmer"), [("rougel", False), ("rougel", True), ("bleu", False)]
)
def test_equals_the_pair_by_pair_reference_with_repeated_texts(measure, use_stemmer, bleu_module):
    # TEXTS repeats two texts: each distinct text is scored once and weighted, identical ones still pair.
    expected = _reference_loop(TEXTS, measure, use_stemmer, bleu_module)
    assert homogenization(TEXTS, measure, use_stemmer=use_stemmer) == pytest.approx(
        expected, rel=1e-12, abs=1e-15
    )


def test_rouge_l_row_blocks_and_threads_give_the_same_sum(monkeypatch):
    from dialeval.metrics.homogenization import rouge_l

    whole = homogenization(TEXTS)
    monkeypatch.setattr(rouge_l, "_BLOCK_ELEMENTS", 1)  # one row per block
    done = []
    assert homogenization(TEXTS, workers=2, progress=done.append) == pytest.approx(whole, rel=1e-14)
    assert sum(done) == len(set(TEXTS)) and len(done) == len(set(TEXTS))


def test_code_points_skip_the_surrogates():
    from dialeval.metrics.homogenization.rouge_l import encode_units

    texts = [
        " ".join(f"w{k}" for k in range(start, start + 2000)) for start in range(0, 60000, 2000)
    ]
    sequences, _lengths, _counts = encode_units(texts, use_stemmer=False)
    assert all(not 0xD800 <= ord(char) < 0xE000 for sequence in sequences for char in sequence)
    assert len({char for sequence in sequences for char in sequence}) == 60000
    texts = texts[:2] + ["w0 w1 w2 w59999"]
    assert homogenization(texts) == pytest.approx(_reference_loop(texts, "rougel"), rel=1e-12)


def test_scopes_and_per_set():
    sets = [["I like tea.", "I like tea a lot."], ["Yes.", "No."], TEXTS]
    result = homogenization_score(sets, measure="bleu")
    per_set = homogenization_per_set(sets, measure="bleu")
    assert (
        result["scope"] == "response_set"
        and result["num_sets"] == 3
        and result["measure"] == "bleu"
    )
    assert (
        [row["homogenization"] for row in result["per_set"]]
        == per_set
        == [homogenization(s, "bleu") for s in sets]
    )
    assert result["homogenization"] == pytest.approx(sum(per_set) / 3)
    corpus = homogenization_score(TEXTS)
    assert corpus == {
        "scope": "corpus",
        "homogenization": homogenization(TEXTS),
        "measure": "rougel",
        "num_responses": 7,
    }


def test_empty_texts_score_zero_when_allowed():
    texts = ["", "the cat sat on the mat", "the cat sat on the mat", "   "]
    # ROUGE-L: of the 12 ordered pairs only the two between the copies score (1 each).
    assert homogenization(texts, "rougel", allow_empty=True) == pytest.approx(2 / 12, abs=1e-15)
    # BLEU: an empty reference scores 0 (evaluate's bleu divides by zero there); each copy as the
    # reference: precisions 1, but 6 hypothesis tokens for 3 x 6 reference tokens, BP = exp(1 - 3).
    assert homogenization(texts, "bleu", allow_empty=True) == pytest.approx(
        2 * math.exp(-2) / 4, abs=1e-15
    )
    with pytest.raises(ValueError, match=r"`texts\[0\]` is an empty string"):
        homogenization(texts)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: homogenization(["only one"]), r"`texts` must hold at least 2 responses"),
        (lambda: homogenization([]), r"`texts` must hold at least 2"),
        (lambda: homogenization("a b c"), r"`texts` must be a list of strings"),
        (lambda: homogenization(["a", 3]), r"`texts\[1\]` must be a string"),
        (lambda: homogenization(["a", "b"], measure="rouge"), r"`measure` must be one of"),
        (
            lambda: homogenization(["a", "b"], use_stemmer="yes"),
            r"`use_stemmer` must be True or False",
        ),
        (lambda: homogenization(["a", "b"], workers=0), r"`workers` must be a positive int"),
        (lambda: homogenization(["a", "b"], progress=3), r"`progress` must be a callable"),
        (lambda: homogenization_per_set([]), r"`response_sets` is empty"),
        (
            lambda: homogenization_per_set([["a", "b"], ["c"]]),
            r"`response_sets\[1\]` must hold at least 2",
        ),
        (lambda: homogenization_score([]), r"`predictions` must be a non-empty list"),
        (
            lambda: homogenization_score([["a", "b"], ["c"]]),
            r"`predictions\[1\]` must hold at least 2",
        ),
        (lambda: homogenization_score(["a", ["b"]]), r"`predictions` mixes nesting levels"),
    ],
)
def test_bad_input_names_the_argument(call, error):
    with pytest.raises(ValueError, match=error):
        call()


def test_missing_bertscore_model_is_the_loader_error():
    with pytest.raises(ModelNotAvailableError):
        # microsoft/deberta-base-mnli is not cached here
        homogenization(["a b", "c d"], "bertscore", device="cpu")


# -- the `diversity` package's own function --------------------------------------------------------


def _peer():
    """``diversity/homogenization.py`` alone (its package __init__ pulls spaCy, OpenAI, ...), unrounded."""
    pytest.importorskip("rouge_score")
    module = peer_module("homogenization")
    module.round = lambda value, digits: value  # compare before its 3-decimal rounding
    return module


@pytest.fixture(scope="module")
def dailydialog_texts(shared_data) -> list[str]:
    path = shared_data / "dailydialog-plusplus" / "test.json"
    if not path.is_file():
        pytest.skip(f"DailyDialog++ is not at {path}")
    records = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    texts = [
        text
        for record in records
        for key in record
        if key.endswith("_responses")
        for text in record[key]
    ]
    return [text for text in texts if text.strip()][:150]


@pytest.mark.parametrize(
    ("measure", "use_stemmer"), [("rougel", False), ("rougel", True), ("bleu", False)]
)
def test_equals_the_diversity_package_on_dailydialog(
    measure, use_stemmer, dailydialog_texts, bleu_module
):
    peer = _peer()
    peer.load = lambda name: bleu_module
    theirs = peer.homogenization_score(
        dailydialog_texts, measure, use_stemmer=use_stemmer, verbose=False
    )
    ours = homogenization(dailydialog_texts, measure, use_stemmer=use_stemmer)
    # The package divides BLEU (already one figure per reference) by n - 1 once more (see the card).
    scale = len(dailydialog_texts) - 1 if measure == "bleu" else 1
    # repeated responses are in the comparison
    assert len(set(dailydialog_texts)) < len(dailydialog_texts)
    assert ours == pytest.approx(theirs * scale, rel=1e-12)
    assert ours > 0.01 if measure == "rougel" else ours > 0


def test_bertscore_equals_the_diversity_package_with_bert_score(tiny_roberta_nli_path):
    bert_score = pytest.importorskip("bert_score")
    peer = _peer()
    texts = [
        "do you have any pets at home?",
        "yes, a dog named max.",
        "i have a cat.",
        "yes, a dog named max.",
        "not really, no.",
    ]

    class EvaluateBertScore:  # evaluate's `bertscore` module: bert_score.BERTScorer(...).score, F1 as a list
        def compute(self, predictions, references, model_type, batch_size):
            # batch_size=1: bert_score lets its batch padding into the greedy max (see test_bertscore.py).
            _, _, f1 = bert_score.score(
                predictions,
                references,
                model_type=model_type,
                num_layers=2,
                batch_size=1,
                device="cpu",
            )
            return {"f1": f1.tolist()}

    peer.load = lambda name: EvaluateBertScore()
    theirs = peer.homogenization_score(
        texts, "bertscore", model=tiny_roberta_nli_path, verbose=False
    )
    ours = homogenization(
        texts, "bertscore", model=tiny_roberta_nli_path, num_layers=2, device="cpu"
    )
    assert ours == pytest.approx(theirs, abs=1e-6)
    per_set = homogenization_per_set(
        [texts, texts[:2]], "bertscore", model=tiny_roberta_nli_path, num_layers=2, device="cpu"
    )
    assert per_set[0] == pytest.approx(ours, abs=1e-12)
    assert 0 < per_set[1] < 1 and math.isfinite(per_set[1])


def test_bleu_matches_sum_over_ordered_pairs_of_clipped_counts():
    """The sparse identity min(a, b) = sum_t [a >= t][b >= t] against Counter's & on every pair."""
    from collections import Counter

    from dialeval.metrics.homogenization.bleu import (
        clipped_match_sums,
        distinct_token_sequences,
        tokenize_13a,
    )

    units, counts = distinct_token_sequences(TEXTS + ["the the the cat", "the the cat cat"])
    for order in (1, 2):
        grams = [Counter(tuple(u[k : k + order]) for k in range(len(u) - order + 1)) for u in units]
        expected = [
            sum(m * sum((grams[j] & grams[i]).values()) for j, m in enumerate(counts))
            for i in range(len(units))
        ]
        np.testing.assert_array_equal(clipped_match_sums(units, counts, order), expected)
    assert tokenize_13a("Hello, world (1,000.5)!") == (
        "Hello",
        ",",
        "world",
        "(",
        "1,000.5",
        ")",
        "!",
    )
    assert units[0] == tokenize_13a(TEXTS[0]) and counts[0] == 2  # TEXTS[0] occurs twice


def test_bertscore_defaults_to_the_package_model_at_bert_scores_layer(monkeypatch):
    from dialeval.metrics.similarity_diversity import bertscore

    seen = {}

    def record(response_sets, **kwargs):
        seen.update(kwargs)
        raise RuntimeError("stop")

    monkeypatch.setattr(bertscore, "compute_bertscore_matrices", record)
    with pytest.raises(RuntimeError, match="stop"):
        homogenization(["a b", "c d"], "bertscore")
    assert seen["model"] == "microsoft/deberta-base-mnli" and seen["num_layers"] == 9
    # the package's evaluate bertscore call does not rescale
    assert seen["rescale_with_baseline"] is False


def test_bertscore_refuses_more_texts_than_its_dense_matrix_allows_before_loading_a_model(
    monkeypatch,
):
    # the module the functions live in (the package exports them lazily)
    module = importlib.import_module("dialeval.metrics.homogenization.scores")
    monkeypatch.setattr(module, "MAX_BERTSCORE_TEXTS", 2)
    with pytest.raises(
        ValueError, match=r"`texts` holds 3 distinct texts: BERTScore homogenization keeps a dense"
    ):
        module.homogenization(["a", "b", "c", "a"], "bertscore", model="/no/such/model")
    with pytest.raises(ValueError, match=r"`response_sets\[1\]` holds 3 distinct texts"):
        module.homogenization_per_set(
            [["a", "b"], ["a", "b", "c"]], "bertscore", model="/no/such/model"
        )
    # ROUGE-L streams: no limit
    assert module.homogenization(["a", "b", "c"], "rougel") == 0.0


@pytest.mark.parametrize("measure", ["rougel", "bleu"])
@pytest.mark.parametrize(
    "option, value",
    [
        ("model", object()),
        ("batch_size", 0),
        ("device", "bogus"),
        ("dtype", "float8"),
        ("num_layers", -1),
        ("workers", 10**30),
    ],
)
def test_every_option_is_checked_whatever_the_measure_reads(measure, option, value):
    texts = ["the cat sat", "a dog ran", "the cat ran"]
    for call in (
        lambda: homogenization(texts, measure=measure, **{option: value}),
        lambda: homogenization_per_set([texts], measure=measure, **{option: value}),
        lambda: homogenization_score([texts], measure=measure, **{option: value}),
    ):
        with pytest.raises(ValueError, match=f"`{option}`"):
            call()


def test_numpy_integers_are_taken_as_options():
    texts = ["the cat sat", "a dog ran", "the cat ran"]
    expected = homogenization(texts, workers=2, batch_size=8, num_layers=3)
    assert (
        homogenization(texts, workers=np.int64(2), batch_size=np.int32(8), num_layers=np.int64(3))
        == expected
    )
