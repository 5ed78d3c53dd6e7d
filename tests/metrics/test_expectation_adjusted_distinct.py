"""EAD (Liu et al. 2022): hand-computed values, the length adjustment it exists for, scopes and errors."""

from __future__ import annotations

import math
import random

import pytest

from dialeval.metrics import registry
from dialeval.metrics.expectation_adjusted_distinct import (
    expectation_adjusted_distinct,
    expectation_adjusted_distinct_scores,
    expected_distinct,
)
from dialeval.metrics.lexical_diversity import distinct_n


def test_expected_distinct_by_hand():
    # V (1 - ((V - 1) / V) ** C)
    assert expected_distinct(3, 2) == pytest.approx(2 * (1 - 0.5**3))  # 1.75
    assert expected_distinct(4, 4) == pytest.approx(4 * (1 - 0.75**4))  # 2.734375
    assert expected_distinct(1, 30522) == pytest.approx(1.0)
    assert expected_distinct(0, 10) == 0.0
    assert expected_distinct(7, 1) == 1.0  # a one-word vocabulary: one distinct word whatever C
    # order n draws from V**n n-grams: 2-grams of a 2-word vocabulary are 4 items
    assert expected_distinct(4, 2, n=2) == pytest.approx(expected_distinct(4, 4))


def test_expected_distinct_stays_exact_where_the_textbook_form_rounds():
    # ((V - 1) / V) ** C rounds (V - 1) / V to 1 for V = 1e17: the textbook form says 0 distinct
    vocab_size = 10**17
    assert vocab_size * (1 - ((vocab_size - 1) / vocab_size) ** 1000) == 0.0
    assert expected_distinct(1000, vocab_size) == pytest.approx(
        1000 - 1000 * 999 / 2 / vocab_size, rel=1e-12
    )
    # V**n beyond float64's range: every draw distinct
    assert expected_distinct(50, 30522, n=100) == 50.0


def test_ead_by_hand():
    # tokens a b a | c: N = 3 distinct of C = 4; V = 4 -> 3 / 2.734375
    assert expectation_adjusted_distinct(["a b a", "c"], vocab_size=4) == pytest.approx(
        3 / 2.734375
    )
    # bigrams (a b), (b a) of "a b a"; none in "c": N = C = 2, V**2 = 16 -> 2 / (16 (1 - (15/16)**2))
    assert expectation_adjusted_distinct(["a b a", "c"], n=2, vocab_size=4) == pytest.approx(
        2 / (16 * (1 - (15 / 16) ** 2))
    )


def test_ead_undoes_distinct_n_s_length_bias():
    """The paper's point (§2-3): words drawn uniformly from V lose Distinct-1 as texts grow, EAD stays ~1."""
    rng = random.Random(0)
    vocab_size = 500
    words = [f"w{i}" for i in range(vocab_size)]
    short = [" ".join(rng.choice(words) for _ in range(50))]
    long = [" ".join(rng.choice(words) for _ in range(2000))]
    assert distinct_n(short) > 0.9 and distinct_n(long) < 0.6  # Distinct-1 collapses with length
    for text in (short, long):
        assert expectation_adjusted_distinct(text, vocab_size=vocab_size) == pytest.approx(
            1.0, abs=0.06
        )


def test_ead_counts_repeated_responses_and_keeps_ngrams_within_a_response():
    once = expectation_adjusted_distinct(["x y", "x y"], n=2, vocab_size=10)
    # "x y" twice: 1 distinct bigram of 2 (no bigram "y x" across the boundary)
    assert once == pytest.approx(1 / expected_distinct(2, 10, n=2))


def test_vocab_texts_counts_v_like_the_reference_s_data_for_vocab_cal():
    texts = ["a b c", "c d", "d e"]  # 5 distinct tokens
    assert expectation_adjusted_distinct(
        ["a b a"], vocab_size=None, vocab_texts=texts
    ) == pytest.approx(expectation_adjusted_distinct(["a b a"], vocab_size=5))
    with pytest.raises(ValueError, match="`vocab_size` or `vocab_texts`, not both"):
        expectation_adjusted_distinct(["a"], vocab_size=9, vocab_texts=texts)
    with pytest.raises(ValueError, match="`vocab_texts` holds no tokens"):
        expectation_adjusted_distinct(["a"], vocab_size=None, vocab_texts=["", " "])


def test_scopes_agree_and_report_distinct_beside_ead():
    sets = [["I like it.", "I love it."], ["No way!", "Sure."]]
    result = expectation_adjusted_distinct_scores(sets, vocab_size=50257)
    assert result["scope"] == "response_set" and result["vocab_size"] == 50257 and result["n"] == 1
    assert [row["ead"] for row in result["per_set"]] == [
        expectation_adjusted_distinct(s, vocab_size=50257) for s in sets
    ]
    assert result["ead"] == pytest.approx(math.fsum(row["ead"] for row in result["per_set"]) / 2)
    # 5 distinct of 8 casual tokens
    assert result["per_set"][0]["distinct"] == pytest.approx(distinct_n(sets[0]))
    corpus = expectation_adjusted_distinct_scores([r for s in sets for r in s], vocab_size=50257)
    assert corpus["scope"] == "corpus" and corpus["num_responses"] == 4
    assert corpus["ead"] == expectation_adjusted_distinct(
        [r for s in sets for r in s], vocab_size=50257
    )


def test_no_ngrams_scores_zero_even_for_a_huge_order():
    assert expectation_adjusted_distinct(["a b"], n=3, vocab_size=9) == 0.0
    assert expectation_adjusted_distinct(["a b c d"] * 3, n=10**9, vocab_size=9) == 0.0  # at once
    assert expectation_adjusted_distinct(["", "a"], allow_empty=True, n=2, vocab_size=9) == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"responses": "a b"}, "`responses` must be a list of strings"),
        ({"responses": []}, "`responses` must hold at least one response"),
        ({"responses": ["a", ""]}, r"`responses\[1\]` is an empty string"),
        ({"responses": ["a"], "n": 0}, "`n` must be a positive int"),
        ({"responses": ["a"], "vocab_size": 0}, "`vocab_size` must be a positive int"),
        ({"responses": ["a"], "vocab_size": 3.5}, "`vocab_size` must be a positive int"),
        ({"responses": ["a"], "vocab_size": None}, "`vocab_size` must be given"),
        ({"responses": ["a"]}, r"`vocab_size` must be given \(or `vocab_texts`\): EAD's V is"),
        ({"responses": ["a"], "vocab_size": 9, "tokenizer": "bpe"}, "`tokenizer` must be one of"),
    ],
)
def test_bad_input_names_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        expectation_adjusted_distinct(**kwargs)


def test_registered_for_meta_eval_with_v_counted_from_the_test_set_and_the_job():
    scorer = registry.set_scorer("ead")
    sets = [["a b a", "c"], ["x", "y"]]
    result = scorer.run(sets)
    assert result["vocab_size"] == 5  # a, b, c, x, y
    assert [row["ead"] for row in result["per_set"]] == [
        expectation_adjusted_distinct(["a b a", "c"], vocab_size=5),
        expectation_adjusted_distinct(["x", "y"], vocab_size=5),
    ]
    assert "ead" in [step.name for step in registry.JOB_STEPS]


def test_the_ead_step_is_blocked_with_its_reason_unless_given_a_vocabulary_size(tmp_path):
    import json

    from conftest import REPO_ROOT

    from dialeval.cli import main
    from dialeval.io import read_response_sets
    from dialeval.metrics.engines.job_steps import StepSkipped
    from dialeval.metrics.expectation_adjusted_distinct.job import (
        NO_VOCABULARY_REASON,
        STEPS,
        EADOptions,
    )

    (step,) = STEPS
    assert step.blocked(EADOptions()) == NO_VOCABULARY_REASON
    assert step.blocked(EADOptions(ead_vocab_size=50257)) is None
    with pytest.raises(StepSkipped, match="--ead-vocab-size"):
        step.run(None, None, EADOptions(), None)
    demo = REPO_ROOT / "examples" / "demo_response_sets.jsonl"
    out = tmp_path / "report.json"
    command = ["evaluate", str(demo), "-o", str(out), "--no-progress", "--metric", "ead"]
    assert main([*command, "--ead-vocab-size", "50257"]) == 0
    figures = json.loads(out.read_text())["metrics"]["ead"]
    sets = [s.responses for s in read_response_sets(str(demo))]
    assert figures["vocab_size"] == 50257
    assert figures["ead"] == expectation_adjusted_distinct_scores(sets, vocab_size=50257)["ead"]
