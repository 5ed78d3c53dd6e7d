"""DTG behind generate()'s contract: outputs laid out as generate() lays them out, caller's state untouched."""

import re

import numpy as np
import pytest
import torch
from transformers import (
    AutoModelForCausalLM,
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    GenerationConfig,
)
from transformers.generation import GenerateDecoderOnlyOutput, GenerateEncoderDecoderOutput

from dialeval.generation.dtg import diversity_threshold_generate
from dialeval.generation.objectives import NLIContradictions
from dialeval.metrics.nli_diversity.nli import CONTRADICTION

CONTEXTS = ["hello there , how are you today ?", "i like music", "tell me a story"]
GENERATE = {"max_new_tokens": 6, "min_new_tokens": 2}


class RuleScorer:
    """A pair contradicts when its texts' lengths sum to a multiple of 3."""

    def pair_probabilities(self, premises, hypotheses):
        return np.array(
            [
                np.eye(3)[CONTRADICTION if (len(p) + len(h)) % 3 == 0 else 1]
                for p, h in zip(premises, hypotheses)
            ]
        )


@pytest.fixture(scope="module", params=["causal", "seq2seq"])
def setup(request, tiny_gpt2_path, tiny_bart_path):
    from conftest import REPO_ROOT

    path, model_class = (
        (tiny_gpt2_path, AutoModelForCausalLM)
        if request.param == "causal"
        else (tiny_bart_path, AutoModelForSeq2SeqLM)
    )
    model = model_class.from_pretrained(path).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    encoded = tokenizer(CONTEXTS, return_tensors="pt", padding=True)
    return model, tokenizer, encoded, str(REPO_ROOT / "generation")


def _dtg(model, encoded, recipe, tokenizer, **options):
    return model.generate(
        **encoded,
        custom_generate=recipe,
        trust_remote_code=True,
        tokenizer=tokenizer,
        **GENERATE,
        **options,
    )


def test_sequences_are_generates_own_when_no_response_is_replaced(setup):
    """A first set above the threshold is one plain nucleus-sampling call: the very tensor generate() returns."""
    model, tokenizer, encoded, recipe = setup
    torch.manual_seed(11)
    out = _dtg(
        model,
        encoded,
        recipe,
        tokenizer,
        metric=NLIContradictions(RuleScorer()),
        threshold=-1.0,
        num_return_sequences=4,
        return_dict_in_generate=True,
    )
    torch.manual_seed(11)
    expected = model.generate(
        **encoded, do_sample=True, top_p=0.9, top_k=0, num_return_sequences=4, **GENERATE
    )
    output_class = (
        GenerateEncoderDecoderOutput
        if model.config.is_encoder_decoder
        else GenerateDecoderOnlyOutput
    )
    assert isinstance(out, output_class)
    assert torch.equal(out.sequences, expected)
    assert len(out.dtg_results) == len(CONTEXTS) and all(
        len(r.responses) == 4 for r in out.dtg_results
    )
    torch.manual_seed(11)
    plain = _dtg(
        model,
        encoded,
        recipe,
        tokenizer,
        metric=NLIContradictions(RuleScorer()),
        threshold=-1.0,
        num_responses=4,
    )
    assert isinstance(plain, torch.Tensor) and torch.equal(plain, expected)


def test_sequences_hold_the_final_sets_after_resampling(setup):
    model, tokenizer, encoded, recipe = setup
    torch.manual_seed(3)
    out = _dtg(
        model,
        encoded,
        recipe,
        tokenizer,
        metric=NLIContradictions(RuleScorer()),
        threshold=10.0,
        return_dict_in_generate=True,
    )
    results = out.dtg_results
    # the layout is checked after swaps, not only for first sets
    assert any(r.num_resampled for r in results)
    assert out.sequences.shape[0] == 5 * len(CONTEXTS)
    if model.config.is_encoder_decoder:
        generated = out.sequences
        assert (generated[:, 0] == model.generation_config.decoder_start_token_id).all()
    else:
        width = encoded["input_ids"].shape[1]
        assert torch.equal(
            out.sequences[:, :width], encoded["input_ids"].repeat_interleave(5, dim=0)
        )
        generated = out.sequences[:, width:]
    decoded = [text.strip() for text in tokenizer.batch_decode(generated, skip_special_tokens=True)]
    assert decoded == [text for r in results for text in r.responses]
    torch.manual_seed(3)
    direct = diversity_threshold_generate(
        model,
        tokenizer,
        encoded,
        metric=NLIContradictions(RuleScorer()),
        threshold=10.0,
        **GENERATE,
    )
    assert [r.responses for r in direct] == [r.responses for r in results]


def test_callers_tokenizer_and_generation_configs_are_left_as_they_were(setup):
    model, tokenizer, encoded, recipe = setup
    tokenizer_state = (
        tokenizer.padding_side,
        tokenizer.truncation_side,
        tokenizer.pad_token,
        dict(tokenizer.init_kwargs),
    )
    model_config = model.generation_config.to_dict()
    given = GenerationConfig(num_beams=4, no_repeat_ngram_size=2)
    given_state = given.to_dict()
    _dtg(
        model,
        encoded,
        recipe,
        tokenizer,
        metric=NLIContradictions(RuleScorer()),
        threshold=10.0,
        generation_config=given,
    )
    diversity_threshold_generate(
        model,
        tokenizer,
        CONTEXTS,
        metric=NLIContradictions(RuleScorer()),
        threshold=10.0,
        max_context_tokens=4,
        generation_config=given,
        **GENERATE,
    )
    assert (
        tokenizer.padding_side,
        tokenizer.truncation_side,
        tokenizer.pad_token,
        dict(tokenizer.init_kwargs),
    ) == tokenizer_state
    assert model.generation_config.to_dict() == model_config
    assert given.to_dict() == given_state


def test_a_config_that_asks_for_dicts_gets_one_and_arguments_are_checked(setup):
    model, tokenizer, encoded, recipe = setup
    config = GenerationConfig(return_dict_in_generate=True)
    out = _dtg(
        model,
        encoded,
        recipe,
        tokenizer,
        metric=NLIContradictions(RuleScorer()),
        threshold=-1.0,
        generation_config=config,
        num_responses=2,
    )
    assert out.sequences.shape[0] == 2 * len(CONTEXTS) and len(out.dtg_results) == len(CONTEXTS)
    with pytest.raises(ValueError, match="name the same thing"):
        _dtg(
            model,
            encoded,
            recipe,
            tokenizer,
            metric=NLIContradictions(RuleScorer()),
            num_responses=3,
            num_return_sequences=4,
        )
    with pytest.raises(ValueError, match="tokenizer"):
        model.generate(**encoded, custom_generate=recipe, trust_remote_code=True)


def test_num_return_sequences_is_read_where_generate_reads_it(setup):
    """The argument, then the GenerationConfig passed, then model.generation_config, then DTG's 5:
    the counts plain generate() returns under the same settings."""
    import copy

    model, tokenizer, encoded, recipe = setup
    model = copy.deepcopy(model)  # the module's model keeps its generation_config
    model.generation_config.do_sample = True
    model.generation_config.num_return_sequences = 3
    given = GenerationConfig(do_sample=True, num_return_sequences=4)
    options = {"metric": NLIContradictions(RuleScorer()), "threshold": 10.0, "max_samples": 1}

    def per_context(output):
        return output.shape[0] // len(CONTEXTS)

    assert per_context(model.generate(**encoded, **GENERATE)) == 3
    assert per_context(_dtg(model, encoded, recipe, tokenizer, **options)) == 3
    assert per_context(model.generate(**encoded, generation_config=given, **GENERATE)) == 4
    assert (
        per_context(_dtg(model, encoded, recipe, tokenizer, generation_config=given, **options))
        == 4
    )
    for keyword in ("num_return_sequences", "num_responses"):
        output = _dtg(
            model, encoded, recipe, tokenizer, generation_config=given, **{keyword: 2}, **options
        )
        assert per_context(output) == 2
    direct = diversity_threshold_generate(
        model, tokenizer, encoded, generation_config=given, **options, **GENERATE
    )
    assert [len(result.responses) for result in direct] == [4] * len(CONTEXTS)
    # 1 is plain generate()'s single sequence, not a set size: DTG's own default applies
    model.generation_config.num_return_sequences = 1
    assert per_context(_dtg(model, encoded, recipe, tokenizer, **options)) == 5
    model.generation_config.num_return_sequences = None
    assert per_context(_dtg(model, encoded, recipe, tokenizer, **options)) == 5


# output_scores / output_logits are kept, not silently dropped (`.scores` was None).
STEP_FLAGS = {"return_dict_in_generate": True, "output_scores": True, "output_logits": True}
EOS_BIAS = 7.0


def _assert_steps_equal(actual, expected):
    assert isinstance(actual, tuple) and len(actual) == len(expected)
    for step, (got, want) in enumerate(zip(actual, expected)):
        assert got.shape == want.shape and got.dtype == want.dtype, step
        assert torch.equal(got, want), step


def test_scores_and_logits_are_generates_own_when_no_response_is_replaced(setup):
    model, tokenizer, encoded, recipe = setup
    torch.manual_seed(5)
    out = _dtg(
        model,
        encoded,
        recipe,
        tokenizer,
        metric=NLIContradictions(RuleScorer()),
        threshold=-1.0,
        num_return_sequences=3,
        **STEP_FLAGS,
    )
    torch.manual_seed(5)
    expected = model.generate(
        **encoded,
        do_sample=True,
        top_p=0.9,
        top_k=0,
        num_return_sequences=3,
        **GENERATE,
        **STEP_FLAGS,
    )
    assert torch.equal(out.sequences, expected.sequences)
    _assert_steps_equal(out.scores, expected.scores)
    _assert_steps_equal(out.logits, expected.logits)
    transition = model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)
    assert torch.equal(
        transition,
        model.compute_transition_scores(expected.sequences, expected.scores, normalize_logits=True),
    )


class _GenerateCalls:
    """Records the output of every sampling call DTG makes (those without ``custom_generate``)."""

    def __init__(self, monkeypatch):
        from transformers import GenerationMixin

        self.outputs, original = [], GenerationMixin.generate

        def recording(model, *args, **kwargs):
            output = original(model, *args, **kwargs)
            if kwargs.get("custom_generate") is None:
                self.outputs.append(output)
            return output

        monkeypatch.setattr(GenerationMixin, "generate", recording)


def _source_rows(results, num_responses):
    """(call, row) of each final response: call 0 drew every first set; the k-th resample call drew one
    response for each context with at least k resamples, in context order, which replaced slot
    ``history[k-1]["dropped"]`` of that context."""
    sources = []
    for context, result in enumerate(results):
        slots = [(0, context * num_responses + slot) for slot in range(num_responses)]
        for call, swap in enumerate(result.history, start=1):
            row = sum(1 for other in results[:context] if other.num_resampled >= call)
            slots[swap["dropped"]] = (call, row)
        sources.extend(slots)
    return sources


def test_scores_and_logits_after_swaps_are_those_of_the_call_that_drew_each_response(
    setup, monkeypatch
):
    model, tokenizer, encoded, recipe = setup
    calls = _GenerateCalls(monkeypatch)
    torch.manual_seed(3)
    # EOS made likely, so that the calls stop after different numbers of steps (padding is checked too)
    out = _dtg(
        model,
        encoded,
        recipe,
        tokenizer,
        metric=NLIContradictions(RuleScorer()),
        threshold=10.0,
        max_samples=4,
        num_responses=3,
        sequence_bias={(tokenizer.eos_token_id,): EOS_BIAS},
        **STEP_FLAGS,
    )
    results = out.dtg_results
    assert any(r.num_resampled for r in results) and len(calls.outputs) == 1 + max(
        r.num_resampled for r in results
    )
    assert all(len(r.history) == r.num_resampled for r in results)
    prompt = 0 if model.config.is_encoder_decoder else encoded["input_ids"].shape[1]
    # generate() does not score the decoder start token
    skip = 1 if model.config.is_encoder_decoder else 0
    width = out.sequences.shape[1] - prompt - skip
    assert len(out.scores) == len(out.logits) == width
    pad = results[0].decoding_settings["pad_token_id"]
    for row, (call, source) in enumerate(_source_rows(results, 3)):
        drawn = calls.outputs[call]
        steps = len(drawn.scores)
        length = min(steps, width)
        # the row's own tokens are the drawing call's (the reconstruction above is right)
        own = out.sequences[row, prompt : prompt + skip + length]
        assert torch.equal(
            own[own != pad], drawn.sequences[source, prompt : prompt + skip + length][own != pad]
        )
        for name in ("scores", "logits"):
            for step in range(width):
                got = getattr(out, name)[step][row]
                if step < steps:
                    assert torch.equal(got, getattr(drawn, name)[step][source]), (name, row, step)
                else:  # the drawing call had stopped: all the mass on the pad token that sequences hold there
                    assert got[pad] == 0 and torch.isinf(got).sum() == got.numel() - 1
                    assert out.sequences[row, prompt + skip + step] == pad
    # some kept response came from a call that stopped before the longest one: the padding was checked
    assert any(len(calls.outputs[call].scores) < width for call, _ in _source_rows(results, 3))


def test_scores_follow_each_kept_beam_with_beam_decoding(setup):
    model, tokenizer, encoded, recipe = setup
    eos_bias = {(tokenizer.eos_token_id,): 4.0}  # beams of different lengths
    out = _dtg(
        model,
        encoded,
        recipe,
        tokenizer,
        metric=NLIContradictions(RuleScorer()),
        threshold=10.0,
        decoding="beam",
        num_beams=6,
        num_responses=3,
        max_samples=3,
        return_dict_in_generate=True,
        output_scores=True,
        sequence_bias=eos_bias,
    )
    assert out.logits is None
    beams = model.generate(
        **encoded,
        num_beams=6,
        num_return_sequences=6,
        do_sample=False,
        sequence_bias=eos_bias,
        **GENERATE,
        **STEP_FLAGS,
    )
    prompt = 0 if model.config.is_encoder_decoder else encoded["input_ids"].shape[1]
    skip = 1 if model.config.is_encoder_decoder else 0
    width = out.sequences.shape[1] - prompt - skip
    pad = out.dtg_results[0].decoding_settings["pad_token_id"]
    assert len(out.scores) == width
    row, shorter = 0, 0
    for context, result in enumerate(out.dtg_results):
        taken = [0, 1, 2]  # the 3 most likely beams, then each swap takes the next one
        for swap, entry in enumerate(result.history):
            taken[entry["dropped"]] = 3 + swap
        for beam in taken:
            source = context * 6 + beam
            sources = [int(index) for index in beams.beam_indices[source].tolist() if index >= 0]
            shorter += len(sources) < width
            for step in range(width):
                got = out.scores[step][row]
                if step < len(sources):
                    assert torch.equal(got, beams.scores[step][sources[step]]), (row, step)
                else:
                    assert got[pad] == 0 and torch.isinf(got).sum() == got.numel() - 1
            row += 1
    assert row == out.sequences.shape[0] and shorter


def test_outputs_dtg_cannot_give_are_refused_naming_the_flag(setup):
    model, tokenizer, encoded, recipe = setup
    with pytest.raises(ValueError, match="output_attentions"):
        _dtg(
            model,
            encoded,
            recipe,
            tokenizer,
            metric=NLIContradictions(RuleScorer()),
            threshold=-1.0,
            return_dict_in_generate=True,
            output_attentions=True,
        )
    with pytest.raises(ValueError, match="output_hidden_states"):
        _dtg(
            model,
            encoded,
            recipe,
            tokenizer,
            metric=NLIContradictions(RuleScorer()),
            threshold=-1.0,
            generation_config=GenerationConfig(
                return_dict_in_generate=True, output_hidden_states=True
            ),
        )


def test_a_generation_config_asking_for_scores_gets_them_and_the_direct_function_keeps_them(setup):
    model, tokenizer, encoded, recipe = setup
    out = _dtg(
        model,
        encoded,
        recipe,
        tokenizer,
        metric=NLIContradictions(RuleScorer()),
        threshold=-1.0,
        num_responses=2,
        generation_config=GenerationConfig(return_dict_in_generate=True, output_scores=True),
    )
    assert out.logits is None and len(out.scores) >= GENERATE["min_new_tokens"]
    assert all(step.shape == (2 * len(CONTEXTS), model.config.vocab_size) for step in out.scores)
    results = diversity_threshold_generate(
        model,
        tokenizer,
        encoded,
        metric=NLIContradictions(RuleScorer()),
        threshold=-1.0,
        num_responses=2,
        output_logits=True,
        **GENERATE,
    )
    assert all(r.response_scores is None and len(r.response_logits) == 2 for r in results)
    assert "response_logits" not in results[0].to_dict()
    plain = diversity_threshold_generate(
        model,
        tokenizer,
        encoded,
        metric=NLIContradictions(RuleScorer()),
        threshold=-1.0,
        num_responses=2,
        **GENERATE,
    )
    assert plain[0].response_scores is None and plain[0].response_logits is None


# Every documented custom_generate= form runs (a documented "generation/custom_generate" was refused by transformers).
_DOCUMENTED_FORM = re.compile(
    r'custom_generate=(?:"([^"<][^"]*)"|((?:dialeval\.generation\.)?custom_generate_path\(\)))'
)


def _documented_forms(root):
    files = [
        root / "README.md",
        root / "ARCHITECTURE.md",
        *sorted((root / "docs").glob("*.md")),
        *sorted((root / "generation").rglob("*.md")),
        *sorted((root / "generation").rglob("*.py")),
    ]
    return {
        match.group(1) or match.group(2)
        for path in files
        for match in _DOCUMENTED_FORM.finditer(path.read_text())
    }


def test_every_documented_custom_generate_form_runs(tiny_gpt2_path, tmp_path, monkeypatch):
    from conftest import REPO_ROOT

    from dialeval.generation import custom_generate_path

    forms = _documented_forms(REPO_ROOT)
    assert {
        "generation",
        "custom_generate_path()",
        "dialeval.generation.custom_generate_path()",
    } <= forms
    model = AutoModelForCausalLM.from_pretrained(tiny_gpt2_path).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_path)
    encoded = tokenizer(CONTEXTS[:2], return_tensors="pt", padding=True)
    for form in sorted(forms):
        if form.endswith("custom_generate_path()"):
            monkeypatch.chdir(tmp_path)  # the function's folder works from anywhere
            recipe = custom_generate_path()
        else:
            monkeypatch.chdir(REPO_ROOT)  # a relative folder is documented from a checkout's root
            recipe = form
        out = _dtg(
            model,
            encoded,
            recipe,
            tokenizer,
            metric=NLIContradictions(RuleScorer()),
            threshold=-1.0,
            num_responses=2,
            return_dict_in_generate=True,
        )
        assert out.sequences.shape[0] == 4 and len(out.dtg_results) == 2, form
    monkeypatch.chdir(REPO_ROOT)
    with pytest.raises(OSError, match="does not contain a `custom_generate` subdirectory"):
        _dtg(
            model,
            encoded,
            "generation/custom_generate",
            tokenizer,
            metric=NLIContradictions(RuleScorer()),
        )
