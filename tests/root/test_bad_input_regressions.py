"""Examples of bad input that crashed, was accepted or gave a silent NaN."""

import warnings

import pytest

from dialeval.hub import resolve_device
from dialeval.metrics import (
    averaged_distinct_n,
    lf,
    nbest_contradiction,
    ngram_cosine_similarity,
    sent_bert_diversity,
    system_ranking_correlation,
    tevet_tokenize,
    token_counts,
)
from dialeval.text import casual_tokenize


@pytest.mark.parametrize("tokenize", [tevet_tokenize, casual_tokenize])
@pytest.mark.parametrize("value", [None, b"hello there", 3])
def test_tokenizers_refuse_non_strings(tokenize, value):
    with pytest.raises(ValueError, match="`text` must be a string"):
        tokenize(value)


def test_token_counts_refuses_a_bare_string():
    with pytest.raises(ValueError, match="`texts` must be a list of strings"):
        token_counts("hello there")
    assert token_counts(["hello there", "hello"])["hello"] == 2


def test_bytes_are_not_text():
    with pytest.raises(ValueError, match="responses"):
        averaged_distinct_n(b"abc def")
    with pytest.raises(ValueError, match=r"responses\[0\]` must be a string"):
        averaged_distinct_n([b"abc", "def"])


@pytest.mark.parametrize("n", [0, -1, 1.5, True])
def test_ngram_order_must_be_positive(n):
    with pytest.raises(ValueError, match="`n` must be a positive int"):
        ngram_cosine_similarity(["a"], ["a"], n)


def test_ranking_correlation_needs_one_number_per_system():
    with pytest.raises(ValueError, match="one number per system"):
        system_ranking_correlation([[0.1], [0.5], [0.3], [0.9]], [1, 2, 3, 4])


def test_lf_reference_refuses_empty_texts_like_the_responses():
    with pytest.raises(ValueError, match=r"`reference\[0\]` is an empty string"):
        lf(["the dog"], reference=[""], threshold=2)
    assert lf(["the dog"], reference=[""], threshold=2, allow_empty=True) == 1.0


@pytest.mark.parametrize("blank", ["   ", "\t\n"])
def test_whitespace_only_responses_are_refused_like_empty_ones(blank):
    with pytest.raises(ValueError, match="whitespace-only.*allow_empty"):
        averaged_distinct_n(["a b", blank])
    with pytest.raises(ValueError, match="whitespace-only"):
        sent_bert_diversity([["a b", blank]])
    assert averaged_distinct_n(["a b", blank], allow_empty=True) >= 0


def test_all_lists_excluded_warns_instead_of_a_silent_nan():
    with pytest.warns(UserWarning, match="excluded"):
        result = nbest_contradiction([["maybe"]], ["yes"], "prefix")
    assert result["num_analyzed"] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nbest_contradiction([["yes", "no"]], ["yes"], "prefix")


@pytest.mark.parametrize(
    "device, match", [("cuda:0", "not available"), ("bogus", "not a torch device")]
)
def test_unavailable_devices_are_a_value_error_listing_the_devices(device, match):
    if device.startswith("cuda"):
        import torch

        if torch.cuda.is_available():
            pytest.skip("this machine has a GPU: cuda:0 is available")
    with pytest.raises(ValueError, match=rf"{match}.*available here: \['cpu'"):
        resolve_device(device)


def test_number_checkers_take_any_real_or_integral_type_and_refuse_bools():
    import numpy as np

    from dialeval.validation import check_int, check_real

    assert check_int(np.int64(2), "n") == 2 and type(check_int(np.uint8(2), "n")) is int
    assert check_real(np.float32(0.5), "alpha", 0, 1) == 0.5
    assert check_real(np.int64(3), "gamma", 0) == 3.0
    for value in (True, np.bool_(True)):
        with pytest.raises(ValueError, match="`n` must be a positive int"):
            check_int(value, "n")
        with pytest.raises(ValueError, match="`alpha` must be"):
            check_real(value, "alpha", 0, 1)
    for value in (float("nan"), float("inf"), 10**400, 1j, "0.5", None):
        with pytest.raises(ValueError, match="`alpha` must be a finite number"):
            check_real(value, "alpha")
    with pytest.raises(ValueError, match="`threshold` must be a number strictly between 0 and 1"):
        check_real(1.0, "threshold", 0, 1, open_bounds=(True, True))
    with pytest.raises(ValueError, match="`workers` must be at most 1,024"):
        check_int(10**30, "workers", maximum=1024)
