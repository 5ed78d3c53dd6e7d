"""Hangs and memory: huge n-gram orders cost what the longest response costs, orders
that would be listed are refused above a bound from the input, and the cosine diversity's pair
layout is refused above the available memory. Work is bounded by measuring peak allocations
(tracemalloc sees numpy's arrays), never by timing."""

import math
import tracemalloc

import pytest

from dialeval.cli import main
from dialeval.metrics.expectation_adjusted_distinct import expectation_adjusted_distinct
from dialeval.metrics.lexical_diversity import pair_memory
from dialeval.metrics.lexical_diversity.by_scope import corpus_lexical_diversity
from dialeval.metrics.lexical_diversity.corpus import corpus_ngram_diversity, distinct_n, entropy_n
from dialeval.metrics.lexical_diversity.self_bleu import self_bleu
from dialeval.metrics.lexical_diversity.set_level import averaged_distinct_n, ngram_cosine_diversity
from dialeval.metrics.lexical_diversity.set_level_batch import batch_set_lexical_diversity
from dialeval.metrics.self_repetition import self_repetition

CORPUS = ["a b c", "d e"]
SET = ["a b c", "a e", "d e"]
HUGE = (10**5, 10**9, 2**63)


def _peak_bytes(function, *args, **kwargs):
    tracemalloc.start()
    try:
        result = function(*args, **kwargs)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("n", HUGE)
@pytest.mark.parametrize("metric", [distinct_n, entropy_n])
def test_corpus_order_above_the_longest_scores_zero_in_bounded_memory(metric, n):
    value, peak = _peak_bytes(metric, CORPUS, n=n)
    assert value == 0.0
    assert peak < 2**20  # a listing of all 1e5 orders would hold ~10 MB


def test_corpus_orders_up_to_the_longest_are_unchanged():
    assert distinct_n(CORPUS, n=3) == 1.0 and entropy_n(CORPUS, n=2) == pytest.approx(math.log2(3))
    assert distinct_n(CORPUS, n=4) == 0.0


@pytest.mark.parametrize(
    "function, argument", [(corpus_ngram_diversity, "max_n"), (corpus_lexical_diversity, "max_n")]
)
@pytest.mark.parametrize("max_n", HUGE)
def test_listed_orders_above_the_bound_are_refused(function, argument, max_n):
    with pytest.raises(
        ValueError,
        match=rf"`{argument}` \({max_n}\) exceeds 3, the longest response's token count \(3\)",
    ):
        function(CORPUS, max_n=max_n)


def test_listed_orders_up_to_the_default_are_zero_on_short_corpora():
    result = corpus_ngram_diversity(["a", "b"], max_n=3)
    assert result["distinct_1"] == 1.0 and result["distinct_3"] == result["entropy_3"] == 0.0
    assert corpus_ngram_diversity(["a b c d e"], max_n=5)["distinct_5"] == 1.0
    with pytest.raises(ValueError, match=r"`max_n` \(4\) exceeds 3"):
        corpus_ngram_diversity(["a", "b"], max_n=4)


@pytest.mark.parametrize("max_n", HUGE)
def test_set_level_orders_above_the_longest_score_zero_in_bounded_memory(max_n):
    (distinct, peak_distinct), (cosine, peak_cosine) = (
        _peak_bytes(averaged_distinct_n, SET, max_n=max_n),
        _peak_bytes(ngram_cosine_diversity, SET, max_n=max_n),
    )
    assert distinct == pytest.approx((averaged_distinct_n(SET, max_n=3) * 3) / max_n, rel=1e-12)
    assert cosine == pytest.approx((ngram_cosine_diversity(SET, max_n=3) * 3) / max_n, rel=1e-12)
    assert max(peak_distinct, peak_cosine) < 2**20
    batch = batch_set_lexical_diversity([SET, CORPUS], max_n=max_n)
    assert (
        batch["averaged_distinct_n"][0] == distinct and batch["ngram_cosine_diversity"][0] == cosine
    )


def test_set_scores_equal_alone_and_beside_a_longer_set():
    # The batch computes orders up to its longest response; trailing zero orders change no bit.
    alone = (
        averaged_distinct_n(["a b", "b c"], max_n=9),
        ngram_cosine_diversity(["a b", "b c"], max_n=9),
    )
    batch = batch_set_lexical_diversity([["a b", "b c"], ["a b c d e f g h i j", "k"]], max_n=9)
    assert (batch["averaged_distinct_n"][0], batch["ngram_cosine_diversity"][0]) == alone


@pytest.mark.parametrize("max_n", HUGE)
def test_self_bleu_orders_above_the_longest_in_bounded_memory(max_n):
    value, peak = _peak_bytes(self_bleu, SET, max_n=max_n)
    assert 0.0 < value < self_bleu(SET, max_n=3)
    assert peak < 2**20
    assert corpus_lexical_diversity(SET, self_bleu_max_n=max_n)["self_bleu"] == value


def test_self_bleu_above_the_longest_equals_nltk():
    from nltk.tokenize import casual_tokenize
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    tokens = [casual_tokenize(text) for text in SET]
    for max_n in (4, 7):
        expected = sum(
            sentence_bleu(
                [other for j, other in enumerate(tokens) if j != i],
                hypothesis,
                weights=(1 / max_n,) * max_n,
                smoothing_function=SmoothingFunction().method1,
            )
            for i, hypothesis in enumerate(tokens)
        ) / len(tokens)
        assert self_bleu(SET, max_n=max_n) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("n", HUGE)
def test_self_repetition_and_ead_huge_orders(n):
    value, peak = _peak_bytes(self_repetition, CORPUS, n=n)
    assert value == 0.0 and peak < 2**20
    assert expectation_adjusted_distinct(CORPUS, n=n, vocab_size=30522) == 0.0


@pytest.mark.parametrize("max_n", ["1000000000", str(2**63)])
def test_cli_max_n_above_the_bound_exits_2_naming_the_flag(tmp_path, capsys, max_n):
    data = tmp_path / "sets.jsonl"
    data.write_text('{"context": "hi", "responses": ["a b c", "d e"]}\n', encoding="utf-8")
    argv = [
        "evaluate",
        str(data),
        "-o",
        str(tmp_path / "out.json"),
        "--no-progress",
        "--metric",
        "lexical_diversity",
    ]
    assert main([*argv, "--max-n", max_n]) == 2
    error = capsys.readouterr().err
    assert f"`--max-n` ({max_n}) exceeds 5" in error and "Traceback" not in error
    assert main([*argv, "--max-n", "5"]) == 0  # the default is accepted on short responses


def test_cosine_pairs_above_the_available_memory_are_refused(monkeypatch):
    monkeypatch.setattr(pair_memory, "available_memory", lambda: 6 * pair_memory.BYTES_PER_PAIR)
    ngram_cosine_diversity(["a", "b", "c", "d", "a"])  # 4 distinct responses: 6 pairs fit
    with pytest.raises(
        ValueError, match=r"^`responses`: .* 10 pairs \(largest set: 5 distinct responses\)"
    ):
        ngram_cosine_diversity(["a", "b", "c", "d", "e"])
    with pytest.raises(ValueError, match=r"^`response_sets`: .* 11 pairs"):
        batch_set_lexical_diversity([["a", "b", "c", "d", "e"], ["a", "b"]])
    assert averaged_distinct_n(["a", "b", "c", "d", "e"]) == 0.2  # no pairs: not bounded by them


def test_one_huge_set_is_refused_before_its_pairs_are_allocated():
    responses = [f"response {index}" for index in range(100_000)]
    with pytest.raises(
        ValueError, match=r"`responses`: .* 4,999,950,000 pairs \(largest set: 100,000 distinct"
    ):
        _peak_bytes(ngram_cosine_diversity, responses)
    assert averaged_distinct_n(responses) == pytest.approx(
        (100_001 / 200_000 + 100_000 / 100_000) / 5
    )
