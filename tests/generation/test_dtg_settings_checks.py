"""DTG refuses a threshold that is not a finite number, top_p outside (0, 1] and
min_new_tokens > max_new_tokens, by argument name, through the API and custom_generate."""

import pytest
from transformers import AutoModelForCausalLM, AutoTokenizer

from dialeval.generation.dtg import diversity_threshold_generate

BAD = [
    ({"threshold": float("nan")}, "`threshold` must be a finite number"),
    ({"threshold": float("inf")}, "`threshold` must be a finite number"),
    ({"threshold": "0.5"}, "`threshold` must be a finite number"),
    ({"threshold": True}, "`threshold` must be a finite number"),
    ({"top_p": 0.0}, r"`top_p` must be a number in \(0, 1\]"),
    ({"top_p": 1.5}, r"`top_p` must be a number in \(0, 1\]"),
    ({"top_p": 2}, r"`top_p` must be a number in \(0, 1\]"),
    (
        {"min_new_tokens": 8, "max_new_tokens": 4},
        r"`min_new_tokens` \(8\) must not exceed `max_new_tokens` \(4\)",
    ),
    ({"min_new_tokens": -1}, r"`min_new_tokens` must be an int >= 0"),
    (
        {"temperature": float("inf")},
        r"`temperature` must be a finite number in ",
    ),  # transformers samples uniformly
    ({"temperature": float("nan")}, r"`temperature` must be a finite number in "),
    (
        {"temperature": 1e39},
        r"`temperature` must be a finite number in ",
    ),  # inf in float32: NaN probabilities
    (
        {"repetition_penalty": float("nan")},
        r"`repetition_penalty` must be a finite number in ",
    ),  # not `penalty`
]


@pytest.fixture(scope="module")
def gpt2(tiny_gpt2_path):
    return AutoModelForCausalLM.from_pretrained(
        tiny_gpt2_path
    ).eval(), AutoTokenizer.from_pretrained(tiny_gpt2_path)


@pytest.mark.parametrize("options, message", BAD)
def test_the_api_refuses_bad_settings_by_argument(gpt2, options, message):
    model, tokenizer = gpt2
    options = {"max_new_tokens": 4, **options}
    with pytest.raises(ValueError, match=message):
        diversity_threshold_generate(
            model,
            tokenizer,
            ["hello"],
            metric="distinct_n",
            num_responses=2,
            max_samples=1,
            **options,
        )


@pytest.mark.parametrize("options, message", BAD)
def test_custom_generate_refuses_bad_settings_by_argument(gpt2, options, message):
    from conftest import REPO_ROOT

    model, tokenizer = gpt2
    encoded = tokenizer(["hello"], return_tensors="pt")
    options = {"max_new_tokens": 4, **options}
    with pytest.raises(ValueError, match=message):
        model.generate(
            **encoded,
            custom_generate=str(REPO_ROOT / "generation"),
            trust_remote_code=True,
            tokenizer=tokenizer,
            metric="distinct_n",
            num_responses=2,
            max_samples=1,
            **options,
        )


def test_a_finite_threshold_of_any_real_type_still_runs(gpt2):
    import numpy as np

    model, tokenizer = gpt2
    results = diversity_threshold_generate(
        model,
        tokenizer,
        ["hello"],
        metric="distinct_n",
        threshold=np.float32(-1),
        num_responses=2,
        max_samples=1,
        max_new_tokens=3,
    )
    assert results[0].reached_threshold and results[0].stop_reason == "threshold"
