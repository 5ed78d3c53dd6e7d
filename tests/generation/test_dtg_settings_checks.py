"""DTG refuses a threshold that is not a finite number, top_p outside (0, 1],
min_new_tokens > max_new_tokens, sizes it cannot honour in bounded time, and a model, tokenizer,
token batch or metric option it cannot use, by argument name, through the API and
custom_generate."""

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
    # not `max_context_tokens`, which a decoder-only model's limit minus 2.5 was checked as
    ({"max_new_tokens": 2.5}, r"`max_new_tokens` must be a positive int, got 2.5"),
    ({"max_new_tokens": True}, r"`max_new_tokens` must be a positive int, got True"),
    # an unreachable threshold would resample for ever; 10**30 rows overflow in generate()
    ({"max_samples": 10**30}, r"`max_samples` must be at most 10000"),
    ({"max_samples": 2**63}, r"`max_samples` must be at most 10000"),
    ({"num_responses": 10**30}, r"`num_responses` must be at most 1024"),
    ({"output_scores": "yes"}, r"`output_scores` must be True or False, got str: 'yes'"),
    ({"output_logits": 1}, r"`output_logits` must be True or False"),
]


@pytest.fixture(scope="module")
def gpt2(tiny_gpt2_path):
    return AutoModelForCausalLM.from_pretrained(
        tiny_gpt2_path
    ).eval(), AutoTokenizer.from_pretrained(tiny_gpt2_path)


@pytest.mark.parametrize("options, message", BAD)
def test_the_api_refuses_bad_settings_by_argument(gpt2, options, message):
    model, tokenizer = gpt2
    options = {"max_new_tokens": 4, "num_responses": 2, "max_samples": 1, **options}
    with pytest.raises(ValueError, match=message):
        diversity_threshold_generate(model, tokenizer, ["hello"], metric="distinct_n", **options)


@pytest.mark.parametrize("options, message", BAD)
def test_custom_generate_refuses_bad_settings_by_argument(gpt2, options, message):
    from conftest import REPO_ROOT

    model, tokenizer = gpt2
    encoded = tokenizer(["hello"], return_tensors="pt")
    options = {"max_new_tokens": 4, "num_responses": 2, "max_samples": 1, **options}
    with pytest.raises(ValueError, match=message):
        model.generate(
            **encoded,
            custom_generate=str(REPO_ROOT / "generation"),
            trust_remote_code=True,
            tokenizer=tokenizer,
            metric="distinct_n",
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


CONTEXT_OPTIONS = {
    "metric": "distinct_n",
    "num_responses": 2,
    "max_samples": 1,
    "max_new_tokens": 3,
}


def _run(model, tokenizer, inputs, **options):
    return diversity_threshold_generate(model, tokenizer, inputs, **{**CONTEXT_OPTIONS, **options})


def test_a_model_that_cannot_generate_or_a_missing_tokenizer_is_refused_by_name(
    gpt2, tiny_roberta_nli_path
):
    from transformers import AutoModelForSequenceClassification

    model, tokenizer = gpt2
    classifier = AutoModelForSequenceClassification.from_pretrained(tiny_roberta_nli_path)
    for wrong in (classifier, None):
        with pytest.raises(ValueError, match="^`model` must be a causal or seq2seq language model"):
            _run(wrong, tokenizer, ["hello"])
    for wrong in (None, "gpt2"):
        with pytest.raises(ValueError, match="^`tokenizer` must be the model's tokenizer"):
            _run(model, wrong, ["hello"])
    with pytest.raises(ValueError, match="^`generation_config` must be a transformers"):
        _run(model, tokenizer, ["hello"], generation_config={"top_p": 0.5})


def test_a_context_without_a_token_is_refused_naming_it(gpt2):
    model, tokenizer = gpt2
    with pytest.raises(ValueError, match=r"^`inputs\[1\]` \(''\) encodes to no token"):
        _run(model, tokenizer, ["hello", ""])


def _batch(ids, dtype=None, mask=None):
    import torch

    input_ids = torch.tensor([ids], dtype=dtype or torch.long)
    return {
        "input_ids": input_ids,
        "attention_mask": torch.ones(input_ids.shape, dtype=torch.long) if mask is None else mask,
    }


def test_a_token_batch_the_model_cannot_take_is_refused_naming_the_tensor(gpt2):
    import torch

    model, tokenizer = gpt2
    vocabulary = model.get_input_embeddings().num_embeddings
    for batch, message in (
        (_batch([5, vocabulary]), f"^`input_ids` holds token id {vocabulary}, outside"),
        (_batch([5, -3]), "^`input_ids` holds token id -3, outside"),
        (_batch([5.0, 6.5], torch.float), "^`input_ids` must hold integer token ids"),
        ({"input_ids": torch.tensor([5, 6])}, "^`input_ids` must be a 2-D tensor"),
        (_batch([5, 6], mask=torch.zeros(1, 2, dtype=torch.long)), "^`attention_mask` masks every"),
        (_batch([5, 6], mask=torch.full((1, 2), 2)), "^`attention_mask` must hold only 0"),
    ):
        with pytest.raises(ValueError, match=message):
            _run(model, tokenizer, batch)


def test_custom_generate_names_the_token_batch_as_generate_takes_it(gpt2):
    import torch
    from conftest import REPO_ROOT

    model, tokenizer = gpt2
    recipe = {
        "custom_generate": str(REPO_ROOT / "generation"),
        "trust_remote_code": True,
        "tokenizer": tokenizer,
        **CONTEXT_OPTIONS,
    }
    with pytest.raises(ValueError, match="^`inputs` holds token id -1"):
        model.generate(torch.tensor([[5, -1]]), **recipe)
    with pytest.raises(ValueError, match="^`input_ids` holds token id -1"):
        model.generate(input_ids=torch.tensor([[5, -1]]), **recipe)
    with pytest.raises(ValueError, match="^`attention_mask` masks every token of row 0"):
        model.generate(**_batch([5, 6], mask=torch.zeros(1, 2, dtype=torch.long)), **recipe)
    with pytest.raises(ValueError, match="^`num_return_sequences` must be an int >= 2, got 1"):
        model.generate(
            **_batch([5, 6]), **{**recipe, "num_responses": None}, num_return_sequences=1
        )
    with pytest.raises(ValueError, match="^`return_dict_in_generate` must be True or False"):
        model.generate(**_batch([5, 6]), **recipe, return_dict_in_generate="yes")


def test_metric_options_must_be_a_dict_of_the_objectives_own_options(gpt2):
    model, tokenizer = gpt2
    with pytest.raises(ValueError, match="^`metric_options` must be a dict"):
        _run(model, tokenizer, ["hello"], metric_options=[1])
    with pytest.raises(ValueError, match=r"^`metric_options\['bogus'\]` is not an option of"):
        _run(model, tokenizer, ["hello"], metric_options={"bogus": 1})
    with pytest.raises(ValueError, match=r"^`metric_options\['max_n'\]` is not an option of"):
        _run(model, tokenizer, ["hello"], metric="nli", metric_options={"max_n": 2})
    results = _run(model, tokenizer, ["hello"], metric_options={"max_n": 2})
    assert len(results[0].responses) == 2


class _SurrogateDecoder:
    """The tokenizer, except that every decoded response holds a lone surrogate."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def __getattr__(self, name):
        if name == "tokenizer":  # a copy being built has none yet
            raise AttributeError(name)
        return getattr(self.tokenizer, name)

    def __call__(self, *args, **kwargs):
        return self.tokenizer(*args, **kwargs)

    def batch_decode(self, *args, **kwargs):
        return [text + "\ud800" for text in self.tokenizer.batch_decode(*args, **kwargs)]


class _EveryPairNeutral:
    def pair_probabilities(self, premises, hypotheses):
        import numpy as np

        return np.tile([0.0, 1.0, 0.0], (len(premises), 1))


def test_a_tokenizer_that_decodes_a_lone_surrogate_is_named(gpt2):
    from dialeval.generation.objectives import NLIContradictions

    model, tokenizer = gpt2
    # an objective that never reads the texts would take them without a word
    with pytest.raises(
        ValueError, match="^`tokenizer` decoded a response holding a lone surrogate"
    ):
        _run(
            model,
            _SurrogateDecoder(tokenizer),
            ["hello"],
            metric=NLIContradictions(_EveryPairNeutral()),
        )


def test_max_context_tokens_beyond_what_the_model_takes_is_refused(gpt2):
    model, tokenizer = gpt2
    for value, message in (
        (10**30, r"^`max_context_tokens` \(10{30}\) exceeds the \d+ tokens the model takes"),
        (0, "^`max_context_tokens` must be a positive int"),
        (2.5, "^`max_context_tokens` must be a positive int"),
    ):
        with pytest.raises(ValueError, match=message):
            _run(model, tokenizer, ["hello"], max_context_tokens=value)
