"""DTG behind generate()'s contract (issue 16): outputs laid out as generate() lays them out, caller's state untouched."""
import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer, GenerationConfig
from transformers.generation import GenerateDecoderOnlyOutput, GenerateEncoderDecoderOutput

from dialeval.generation.dtg import diversity_threshold_generate
from dialeval.generation.objectives import NLIContradictions
from dialeval.metrics.nli_diversity.nli import CONTRADICTION

CONTEXTS = ["hello there , how are you today ?", "i like music", "tell me a story"]
GENERATE = {"max_new_tokens": 6, "min_new_tokens": 2}


class RuleScorer:
    """A pair contradicts when its texts' lengths sum to a multiple of 3."""

    def pair_probabilities(self, premises, hypotheses):
        return np.array([np.eye(3)[CONTRADICTION if (len(p) + len(h)) % 3 == 0 else 1] for p, h in zip(premises, hypotheses)])


@pytest.fixture(scope="module", params=["causal", "seq2seq"])
def setup(request, tiny_gpt2_path, tiny_bart_path):
    from conftest import REPO_ROOT

    path, model_class = ((tiny_gpt2_path, AutoModelForCausalLM) if request.param == "causal"
                         else (tiny_bart_path, AutoModelForSeq2SeqLM))
    model = model_class.from_pretrained(path).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    encoded = tokenizer(CONTEXTS, return_tensors="pt", padding=True)
    return model, tokenizer, encoded, str(REPO_ROOT / "generation")


def _dtg(model, encoded, recipe, tokenizer, **options):
    return model.generate(**encoded, custom_generate=recipe, trust_remote_code=True, tokenizer=tokenizer, **GENERATE,
                          **options)


def test_sequences_are_generates_own_when_no_response_is_replaced(setup):
    """A first set above the threshold is one plain nucleus-sampling call: the very tensor generate() returns."""
    model, tokenizer, encoded, recipe = setup
    torch.manual_seed(11)
    out = _dtg(model, encoded, recipe, tokenizer, metric=NLIContradictions(RuleScorer()), threshold=-1.0,
               num_return_sequences=4, return_dict_in_generate=True)
    torch.manual_seed(11)
    expected = model.generate(**encoded, do_sample=True, top_p=0.9, top_k=0, num_return_sequences=4, **GENERATE)
    output_class = GenerateEncoderDecoderOutput if model.config.is_encoder_decoder else GenerateDecoderOnlyOutput
    assert isinstance(out, output_class)
    assert torch.equal(out.sequences, expected)
    assert len(out.dtg_results) == len(CONTEXTS) and all(len(r.responses) == 4 for r in out.dtg_results)
    torch.manual_seed(11)
    plain = _dtg(model, encoded, recipe, tokenizer, metric=NLIContradictions(RuleScorer()), threshold=-1.0,
                 num_responses=4)
    assert isinstance(plain, torch.Tensor) and torch.equal(plain, expected)


def test_sequences_hold_the_final_sets_after_resampling(setup):
    model, tokenizer, encoded, recipe = setup
    torch.manual_seed(3)
    out = _dtg(model, encoded, recipe, tokenizer, metric=NLIContradictions(RuleScorer()), threshold=10.0,
               return_dict_in_generate=True)
    results = out.dtg_results
    assert any(r.num_resampled for r in results)  # the layout is checked after swaps, not only for first sets
    assert out.sequences.shape[0] == 5 * len(CONTEXTS)
    if model.config.is_encoder_decoder:
        generated = out.sequences
        assert (generated[:, 0] == model.generation_config.decoder_start_token_id).all()
    else:
        width = encoded["input_ids"].shape[1]
        assert torch.equal(out.sequences[:, :width], encoded["input_ids"].repeat_interleave(5, dim=0))
        generated = out.sequences[:, width:]
    decoded = [text.strip() for text in tokenizer.batch_decode(generated, skip_special_tokens=True)]
    assert decoded == [text for r in results for text in r.responses]
    torch.manual_seed(3)
    direct = diversity_threshold_generate(model, tokenizer, encoded, metric=NLIContradictions(RuleScorer()),
                                          threshold=10.0, **GENERATE)
    assert [r.responses for r in direct] == [r.responses for r in results]


def test_callers_tokenizer_and_generation_configs_are_left_as_they_were(setup):
    model, tokenizer, encoded, recipe = setup
    tokenizer_state = (tokenizer.padding_side, tokenizer.truncation_side, tokenizer.pad_token, dict(tokenizer.init_kwargs))
    model_config = model.generation_config.to_dict()
    given = GenerationConfig(num_beams=4, no_repeat_ngram_size=2)
    given_state = given.to_dict()
    _dtg(model, encoded, recipe, tokenizer, metric=NLIContradictions(RuleScorer()), threshold=10.0, generation_config=given)
    diversity_threshold_generate(model, tokenizer, CONTEXTS, metric=NLIContradictions(RuleScorer()), threshold=10.0,
                                 max_context_tokens=4, generation_config=given, **GENERATE)
    assert (tokenizer.padding_side, tokenizer.truncation_side, tokenizer.pad_token, dict(tokenizer.init_kwargs)) == tokenizer_state
    assert model.generation_config.to_dict() == model_config
    assert given.to_dict() == given_state


def test_a_config_that_asks_for_dicts_gets_one_and_arguments_are_checked(setup):
    model, tokenizer, encoded, recipe = setup
    config = GenerationConfig(return_dict_in_generate=True)
    out = _dtg(model, encoded, recipe, tokenizer, metric=NLIContradictions(RuleScorer()), threshold=-1.0,
               generation_config=config, num_responses=2)
    assert out.sequences.shape[0] == 2 * len(CONTEXTS) and len(out.dtg_results) == len(CONTEXTS)
    with pytest.raises(ValueError, match="name the same thing"):
        _dtg(model, encoded, recipe, tokenizer, metric=NLIContradictions(RuleScorer()), num_responses=3,
             num_return_sequences=4)
    with pytest.raises(ValueError, match="tokenizer"):
        model.generate(**encoded, custom_generate=recipe, trust_remote_code=True)
