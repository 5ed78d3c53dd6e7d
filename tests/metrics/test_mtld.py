"""MTLD (metrics/mtld): hand-computed values, equality with lexicalrichness's algorithm (ported
below, MIT License, Copyright (c) 2018 Shen Yan Shun) on random texts and DailyDialog++, the
scopes, the CLI and bad input naming the argument."""

from __future__ import annotations

import json
import random
import statistics

import evaluate
import pytest

from dialeval.metrics import registry
from dialeval.metrics.mtld import mtld, mtld_scores, mtld_words


def lexicalrichness_mtld(words: list[str], threshold: float = 0.72) -> float:
    """``LexicalRichness(text).mtld(threshold)`` of lexicalrichness 0.5.1 on its word list ``words``,
    line for line (``sub_mtld`` forward and reversed, and their mean)."""

    def sub_mtld(reverse: bool) -> float:
        terms, word_counter, factor_count = set(), 0, 0
        for word in reversed(words) if reverse else iter(words):
            word_counter += 1
            terms.add(word)
            ttr = len(terms) / word_counter
            if ttr <= threshold:
                word_counter, terms = 0, set()
                factor_count += 1
        if word_counter > 0:
            factor_count += (1 - ttr) / (1 - threshold)
        if factor_count == 0:
            ttr = len(set(words)) / len(words)
            factor_count += 1 if ttr == 1 else (1 - ttr) / (1 - threshold)
        return len(words) / factor_count

    return statistics.mean((sub_mtld(False), sub_mtld(True)))


def test_hand_computed_values():
    # "a b c a": TTR 1, 1, 1, 3/4 = 0.75 > 0.72: no full factor; partial (1 - 0.75) / 0.28; both directions alike
    assert mtld(["a b c a"]) == pytest.approx(4 / (0.25 / 0.28), rel=1e-12) == pytest.approx(4.48)
    # "a a a a": TTR 1, 1/2 (a factor, reset), 1, 1/2 (a factor): 4 tokens / 2 factors
    assert mtld(["a a a a"]) == 2.0
    # "a b a b": a factor at the third token (2/3), then "b" alone (partial 0): 4 / 1, both ways
    assert mtld(["a b a b"]) == 4.0
    # "a a b c": forward 4 / 1 (a factor at the second token, then "b c" partial 0), backward "c b a a" as "a b c a"
    assert mtld(["a a b c"]) == pytest.approx((4 + 4.48) / 2)
    # every token distinct: no factor at all, the token count (lexicalrichness's convention)
    assert mtld(["a b", "c"]) == 3.0
    # a lower threshold needs more repetition to close a factor: "a b a b" at 0.5 closes one at the fourth token
    assert mtld(["a b a b"], threshold=0.5) == 4.0 and mtld(
        ["a b a"], threshold=0.5
    ) == pytest.approx(3 / ((1 - 2 / 3) / 0.5))


def test_words_are_lexicalrichness_words():
    assert mtld_words("Don't stop-me, 42 times: OK?") == ["don", "t", "stopme", "times", "ok"]
    assert mtld_words("— 2024 —") == []
    # the default counts words only: case and punctuation do not make new types
    assert mtld(["The cat.", "the CAT!"]) == mtld(["the cat the cat"])


def test_equals_lexicalrichness_on_random_texts():
    rng = random.Random(0)
    vocabulary = [
        "the",
        "a",
        "cat",
        "dog",
        "sat",
        "on",
        "mat",
        "I",
        "you",
        "we",
        "it",
        "is",
        "was",
        "not",
        "Hello,",
        "world!",
        "3",
        "well-known",
        "—",
        "ok?",
    ]
    for _ in range(500):
        texts = [
            " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 40)))
            for _ in range(rng.randint(1, 4))
        ]
        words = mtld_words(" ".join(texts))
        if not words:
            continue
        for threshold in (0.72, 0.5, 0.9):
            assert mtld(texts, threshold=threshold) == pytest.approx(
                lexicalrichness_mtld(words, threshold), rel=1e-12
            )


def test_equals_lexicalrichness_on_dailydialog(shared_data):
    path = shared_data / "dailydialog-plusplus" / "test.json"
    if not path.is_file():
        pytest.skip(f"DailyDialog++ is not at {path}")
    records = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    sets = [record[key] for record in records[:200] for key in record if key.endswith("_responses")]
    sets = [[text for text in responses if mtld_words(text)] for responses in sets]
    sets = [responses for responses in sets if len(responses) >= 2]
    assert len(sets) > 100
    result = mtld_scores(sets)
    for responses, row in zip(sets, result["per_set"]):
        assert row["mtld"] == pytest.approx(
            lexicalrichness_mtld(mtld_words(" ".join(responses))), rel=1e-12
        )
    corpus = [text for responses in sets for text in responses]
    assert mtld(corpus) == pytest.approx(
        lexicalrichness_mtld(mtld_words(" ".join(corpus))), rel=1e-12
    )


def test_scopes_and_tokenizers():
    sets = [["I like it.", "I like it a lot."], ["No way!", "Sure."]]
    result = mtld_scores(sets)
    assert result["scope"] == "response_set" and [row["mtld"] for row in result["per_set"]] == [
        mtld(s) for s in sets
    ]
    assert result["mtld"] == pytest.approx((8.0 + 3.0) / 2)
    corpus = mtld_scores(["a b c a"])
    assert (
        corpus["scope"] == "corpus"
        and corpus["mtld"] == mtld(["a b c a"])
        and corpus["num_tokens"] == 4
    )
    # a tokenizer that keeps punctuation counts "." as a repeated type: 6 tokens, 5 types, one partial
    # factor (1 - 5/6) / 0.28; without punctuation every word is distinct and MTLD is the count, 4
    assert (
        mtld(["a b.", "c d."], tokenizer="casual")
        == pytest.approx(6 / ((1 - 5 / 6) / 0.28))
        == pytest.approx(10.08)
    )
    assert mtld(["a b.", "c d."]) == 4.0
    assert mtld(["A b c a"], tokenizer=str.split) == 4.0 and mtld(["A b c a"]) == pytest.approx(
        4.48
    )  # case kept: 4 types
    assert mtld(["", "..."], allow_empty=True) == 0.0  # no words


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: mtld([]), "`responses` must hold at least one response"),
        (lambda: mtld(["fine", ""]), r"`responses\[1\]` is an empty string"),
        (
            lambda: mtld(["a b"], threshold=1),
            "`threshold` must be a number strictly between 0 and 1",
        ),
        (lambda: mtld(["a b"], threshold=True), "`threshold` must be a number"),
        (lambda: mtld(["a b"], tokenizer="nltk"), "`tokenizer` must be one of"),
        (lambda: mtld_scores([["a b", 3]]), r"`predictions\[0\]\[1\]` must be a string"),
    ],
)
def test_bad_input_names_the_argument(call, error):
    with pytest.raises(ValueError, match=error):
        call()


def test_the_module_the_job_and_meta_eval_run_it(tmp_path):
    module = evaluate.load(str(registry.get("mtld").module_dir))
    assert module.compute(predictions=["a b c a"])["mtld"] == mtld(["a b c a"])
    scorer = registry.set_scorer("mtld")
    sets = [["I like it.", "I like it a lot."], ["No way!", "Sure."]]
    assert [row["mtld"] for row in scorer.run(sets, None)["per_set"]] == [8.0, 3.0]
    from dialeval.cli import main

    data = tmp_path / "sets.jsonl"
    data.write_text("".join(json.dumps({"responses": s}) + "\n" for s in sets), encoding="utf-8")
    out = tmp_path / "report.json"
    assert main(["evaluate", str(data), "-o", str(out), "--no-progress", "--metric", "mtld"]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["metrics"]["mtld"]["mtld"] == pytest.approx(5.5) and [
        row["mtld"] for row in report["per_set"]
    ] == [8.0, 3.0]


def test_a_numpy_threshold_is_taken():
    import numpy as np

    text = ["the cat sat on the mat and the dog sat on the log"]
    assert mtld(text, threshold=np.float64(0.72)) == mtld(text, threshold=0.72)
    assert mtld(text, threshold=np.float32(0.5)) == mtld(text, threshold=0.5)
