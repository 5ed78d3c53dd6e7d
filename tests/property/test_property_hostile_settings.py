"""Hostile settings, as properties: huge n-gram orders for every lexical function that takes one,
and NaN / infinite / mistyped settings for DTG (API and CLI) and the trainers' configs.

Each call gives a finite result or a ValueError / TypeError whose message starts with the
argument's name in backticks (its flag, from the CLI); a huge order costs what the longest
response's order costs (orders above it have no n-gram), so no example here can hang or allocate
by the order asked for.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from property_support import all_finite, covers, fewer, outcome, refused

from dialeval.generation.dtg_checks import MAX_LOGIT_DIVISOR, MIN_LOGIT_DIVISOR
from dialeval.metrics import (
    averaged_distinct_n,
    batch_set_lexical_diversity,
    corpus_lexical_diversity,
    corpus_ngram_diversity,
    distinct_n,
    entropy_n,
    expectation_adjusted_distinct,
    ngram_cosine_diversity,
    self_bleu,
    self_repetition,
    set_lexical_diversity,
)

huge_order = st.one_of(st.integers(10**3, 10**12), st.integers(2**62, 2**80))
short_responses = st.lists(
    st.text(alphabet="abc ", min_size=1, max_size=12).filter(str.strip), min_size=2, max_size=5
)

#: The functions that take one order and score it: a huge order scores as the first order above
#: the longest response (no n-gram at all), in O(1).
SINGLE_ORDER = {
    "distinct_n": (distinct_n, "n"),
    "entropy_n": (entropy_n, "n"),
    "expectation_adjusted_distinct": (
        functools.partial(expectation_adjusted_distinct, vocab_size=50257),
        "n",
    ),
    "self_repetition": (self_repetition, "n"),
}

#: The functions that list or compute every order up to ``argument``: refused past the bound, by name.
UP_TO_ORDER = {
    "averaged_distinct_n": (averaged_distinct_n, "max_n", False),
    "ngram_cosine_diversity": (ngram_cosine_diversity, "max_n", False),
    "self_bleu": (self_bleu, "max_n", False),
    "corpus_ngram_diversity": (corpus_ngram_diversity, "max_n", False),
    "corpus_lexical_diversity": (corpus_lexical_diversity, "max_n", False),
    "corpus_lexical_diversity[self_bleu_max_n]": (
        corpus_lexical_diversity,
        "self_bleu_max_n",
        False,
    ),
    "set_lexical_diversity": (set_lexical_diversity, "max_n", True),
    "batch_set_lexical_diversity": (batch_set_lexical_diversity, "max_n", True),
}


def _names_argument(error: Exception, argument: str) -> bool:
    return re.match(rf"`{re.escape(argument)}`", str(error)) is not None


def _longest(responses: list[str]) -> int:
    return max(len(response.split()) for response in responses)


@covers(*SINGLE_ORDER)
@given(responses=short_responses, order=huge_order, name=st.sampled_from(sorted(SINGLE_ORDER)))
def test_a_huge_single_order_scores_as_the_first_order_above_the_longest_response(
    responses, order, name
):
    function, argument = SINGLE_ORDER[name]
    result = outcome(function, responses, **{argument: order})
    assert not refused(result), f"{name}({argument}={order}) refused: {result!r}"
    all_finite(result)
    assert result == function(responses, **{argument: _longest(responses) + 1})


@covers(*{name.split("[")[0] for name in UP_TO_ORDER})
@given(responses=short_responses, order=huge_order, name=st.sampled_from(sorted(UP_TO_ORDER)))
def test_a_huge_listed_order_is_refused_by_its_argument_before_any_allocation(
    responses, order, name
):
    function, argument, takes_sets = UP_TO_ORDER[name]
    result = outcome(function, [responses] if takes_sets else responses, **{argument: order})
    if refused(result):
        assert _names_argument(result.error, argument), f"{name}: {result.error}"
    else:
        all_finite(result)


dtg_setting = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-3, 3),
    st.booleans(),
    st.none(),
    st.sampled_from(["0.5", "inf", b"1", [0.5]]),
)


def _valid_real(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _invalid_settings(settings: dict) -> set[str]:
    """The settings DTG must refuse, by the documented rules (generation/dtg_checks.py)."""
    invalid = set()
    if settings["threshold"] is not None and not _valid_real(settings["threshold"]):
        invalid.add("threshold")
    top_p = settings["top_p"]
    if top_p is not None and not (_valid_real(top_p) and 0 < top_p <= 1):
        invalid.add("top_p")
    for name in ("temperature", "repetition_penalty"):
        value = settings[name]
        if value is not None and not (
            _valid_real(value) and MIN_LOGIT_DIVISOR <= value <= MAX_LOGIT_DIVISOR
        ):
            invalid.add(name)
    return invalid


@pytest.fixture(scope="module")
def tiny_lm(tiny_gpt2_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(
        tiny_gpt2_path
    ).eval(), AutoTokenizer.from_pretrained(tiny_gpt2_path)


@covers("diversity_threshold_generate")
@fewer(3)
@given(
    settings=st.fixed_dictionaries(
        {name: dtg_setting for name in ("threshold", "top_p", "temperature", "repetition_penalty")}
    )
)
def test_dtg_refuses_every_non_finite_or_mistyped_setting_by_its_name(tiny_lm, settings):
    from dialeval.generation.dtg import diversity_threshold_generate

    model, tokenizer = tiny_lm
    invalid = _invalid_settings(settings)
    given_settings = {name: value for name, value in settings.items() if value is not None}
    result = outcome(
        diversity_threshold_generate,
        model,
        tokenizer,
        ["hello"],
        metric="distinct_n",
        num_responses=2,
        max_samples=1,
        max_new_tokens=2,
        **given_settings,
    )
    if invalid:
        assert refused(result), f"{sorted(invalid)} accepted: {settings}"
        assert any(_names_argument(result.error, name) for name in invalid), (
            f"{result.error} names none of {invalid}"
        )
    else:
        assert not refused(result), f"valid settings {settings} refused: {result!r}"
        assert len(result) == 1 and len(result[0].responses) == 2


@given(
    value=st.floats(allow_nan=True, allow_infinity=True),
    flag=st.sampled_from(["--threshold", "--top-p", "--temperature", "--repetition-penalty"]),
)
def test_the_dtg_cli_refuses_a_non_finite_or_out_of_range_setting_by_its_flag_before_writing(
    tmp_path_factory, value, flag
):
    from dialeval.cli.main import main

    settings = {"threshold": None, "top_p": None, "temperature": None, "repetition_penalty": None}
    settings[flag[2:].replace("-", "_")] = value
    assume(_invalid_settings(settings))  # a valid setting would go on to load the (absent) model
    folder = tmp_path_factory.mktemp("dtg-settings")
    contexts = folder / "contexts.jsonl"
    contexts.write_text('{"context": "hi"}\n', encoding="utf-8")
    error = io.StringIO()
    with contextlib.redirect_stderr(error):
        code = main(
            [
                "dtg",
                "--model",
                str(folder / "no-model"),
                "--input",
                str(contexts),
                "--metric",
                "distinct_n",
                "--output",
                str(folder / "out.jsonl"),
                "--no-progress",
                f"{flag}={value!r}",
            ]
        )
    assert code == 2 and not (folder / "out.jsonl").exists()
    assert f"`{flag}`" in error.getvalue() and "no-model" not in error.getvalue(), error.getvalue()


trainer_number = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-5, 200),
    st.booleans(),
    st.none(),
    st.text(max_size=2),
)


@given(gamma=trainer_number, num_clusters=trainer_number)
def test_dress_config_refuses_non_finite_or_mistyped_gamma_and_num_clusters_by_name(
    gamma, num_clusters
):
    from dialeval.trainers import DRESSConfig

    result = outcome(
        DRESSConfig, output_dir="unused", gamma=gamma, num_clusters=num_clusters, report_to=[]
    )
    gamma_valid = _valid_real(gamma) and gamma >= 0
    clusters_valid = (
        isinstance(num_clusters, int) and not isinstance(num_clusters, bool) and num_clusters >= 2
    )
    if gamma_valid and clusters_valid:
        assert not refused(result), result
        assert math.isfinite(result.gamma)
    else:
        assert refused(result), (gamma, num_clusters)
        named = [
            name
            for name, valid in (("gamma", gamma_valid), ("num_clusters", clusters_valid))
            if not valid
        ]
        assert any(_names_argument(result.error, name) for name in named), result.error


@given(alpha=trainer_number)
def test_unlikelihood_config_refuses_non_finite_or_mistyped_alpha_by_name(alpha):
    from dialeval.trainers import UnlikelihoodConfig

    result = outcome(UnlikelihoodConfig, output_dir="unused", alpha=alpha, report_to=[])
    if _valid_real(alpha) and alpha >= 0:
        assert not refused(result) and math.isfinite(result.alpha)
    else:
        assert refused(result) and _names_argument(result.error, "alpha"), result
