"""Reference outputs of transformers 4.51's diverse (group) beam search, for
``tests/generation/test_group_beam_search_reference.py``.

Runs ONLY under transformers 4.51 (its ``_group_beam_search`` with ``BeamSearchScorer`` and
``HammingDiversityLogitsProcessor``; transformers 5 moved group beam search to the Hub). It was
run once, in a throwaway virtual environment outside the repository::

    python3 -m venv /tmp/tf451
    /tmp/tf451/bin/pip install torch==2.13.0     # the CPU build, 2.13.0+cpu, installed first
    /tmp/tf451/bin/pip install transformers==4.51.3 safetensors numpy
    /tmp/tf451/bin/python tests/data/group_beam_search/make_reference.py

(torch 2.13.0+cpu, transformers 4.51.3, CPU, float32, from the repository root). It builds two tiny random checkpoints
with fixed seeds (``tiny-gpt2/``, ``tiny-bart/``: config.json, generation_config.json,
model.safetensors; no tokenizer, the cases feed token ids) and writes ``reference.json``: per
case the inputs, the ``generate`` options and what 4.51 returned (``sequences`` as token ids,
prompt included for GPT-2 and the decoder start token for BART; ``sequences_scores`` as
float32 values written in full). Re-running it rewrites the same files.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import transformers
from transformers import BartConfig, BartForConditionalGeneration, GPT2Config, GPT2LMHeadModel

HERE = Path(__file__).resolve().parent
SEED = 0
VOCAB_SIZE = 48
BOS, PAD, EOS = 0, 1, 2
# Wide initial weights: at the usual 0.02 a random model's next-token distribution is nearly flat.
INIT_RANGE = 0.3


def build(model_class, config, name: str):
    torch.manual_seed(SEED)
    model = model_class(config).eval()
    model.save_pretrained(HERE / name, safe_serialization=True)
    return model


def tiny_gpt2():
    config = GPT2Config(
        vocab_size=VOCAB_SIZE,
        n_positions=32,
        n_embd=16,
        n_layer=2,
        n_head=2,
        initializer_range=INIT_RANGE,
        bos_token_id=BOS,
        eos_token_id=EOS,
        pad_token_id=PAD,
    )
    return build(GPT2LMHeadModel, config, "tiny-gpt2")


def tiny_bart():
    # As facebook/bart-*: decoding starts from EOS and EOS is forced at max_length.
    config = BartConfig(
        vocab_size=VOCAB_SIZE,
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=32,
        init_std=INIT_RANGE,
        bos_token_id=BOS,
        eos_token_id=EOS,
        pad_token_id=PAD,
        decoder_start_token_id=EOS,
        forced_eos_token_id=EOS,
    )
    return build(BartForConditionalGeneration, config, "tiny-bart")


def left_padded(prompts):
    width = max(len(prompt) for prompt in prompts)
    input_ids = [[PAD] * (width - len(prompt)) + prompt for prompt in prompts]
    attention_mask = [[0] * (width - len(prompt)) + [1] * len(prompt) for prompt in prompts]
    return input_ids, attention_mask


def right_padded(prompts):
    width = max(len(prompt) for prompt in prompts)
    input_ids = [prompt + [PAD] * (width - len(prompt)) for prompt in prompts]
    attention_mask = [[1] * len(prompt) + [0] * (width - len(prompt)) for prompt in prompts]
    return input_ids, attention_mask


# (name, model, prompts, generate options). Every case passes do_sample=False,
# return_dict_in_generate=True and output_scores=True (without it 4.51 returns no sequences_scores).
GPT2_CASES = [
    # Cut at max_new_tokens: no hypothesis ends in EOS (the 4.51 difference the test pins).
    (
        "gpt2_max_length",
        [[5, 17, 9, 30]],
        {
            "num_beams": 4,
            "num_beam_groups": 2,
            "diversity_penalty": 0.1,
            "max_new_tokens": 5,
            "length_penalty": 0.0,
            "num_return_sequences": 4,
            "eos_token_id": EOS,
        },
    ),
    (
        "gpt2_max_length_three_groups",
        [[11, 3, 40]],
        {
            "num_beams": 6,
            "num_beam_groups": 3,
            "diversity_penalty": 0.25,
            "max_new_tokens": 4,
            "length_penalty": 0.0,
            "num_return_sequences": 6,
            "eos_token_id": EOS,
        },
    ),
    # A batch of prompts of different lengths, left-padded; length_penalty 1.
    (
        "gpt2_batch_left_padding",
        [[7, 21], [33, 4, 12, 8, 19], [25, 6, 44]],
        {
            "num_beams": 4,
            "num_beam_groups": 2,
            "diversity_penalty": 1.0,
            "max_new_tokens": 5,
            "length_penalty": 1.0,
            "num_return_sequences": 4,
            "eos_token_id": EOS,
        },
    ),
    # A frequent token as EOS: hypotheses finish early, groups are done at different steps.
    (
        "gpt2_frequent_eos",
        [[5, 17, 9, 30], [13, 27]],
        {
            "num_beams": 6,
            "num_beam_groups": 3,
            "diversity_penalty": 0.7,
            "max_new_tokens": 7,
            "length_penalty": 1.0,
            "num_return_sequences": 3,
            "eos_token_id": "FREQUENT",
        },
    ),
    (
        "gpt2_frequent_eos_early_stopping",
        [[5, 17, 9, 30]],
        {
            "num_beams": 4,
            "num_beam_groups": 2,
            "diversity_penalty": 0.3,
            "max_new_tokens": 7,
            "length_penalty": 0.0,
            "num_return_sequences": 4,
            "eos_token_id": "FREQUENT",
            "early_stopping": True,
        },
    ),
    # A group done early: 4.51 feeds its beams the pad token, which the later groups' Hamming
    # penalty then counts.
    (
        "gpt2_group_done_early",
        [[38, 13, 19]],
        {
            "num_beams": 3,
            "num_beam_groups": 3,
            "diversity_penalty": 0.7,
            "max_new_tokens": 7,
            "length_penalty": 1.0,
            "num_return_sequences": 3,
            "eos_token_id": 32,
        },
    ),
    # A group is done only when its worst hypothesis beats the best candidate (an EOS one included).
    (
        "gpt2_done_against_best_candidate",
        [[44, 23, 5]],
        {
            "num_beams": 4,
            "num_beam_groups": 2,
            "diversity_penalty": 0.7,
            "max_new_tokens": 7,
            "length_penalty": 1.0,
            "num_return_sequences": 4,
            "eos_token_id": 32,
        },
    ),
    # The penalty applies before the repetition penalty (4.51's processor order).
    (
        "gpt2_repetition_penalty",
        [[5, 17, 9, 30]],
        {
            "num_beams": 4,
            "num_beam_groups": 2,
            "diversity_penalty": 0.4,
            "max_new_tokens": 6,
            "length_penalty": 0.0,
            "num_return_sequences": 4,
            "eos_token_id": EOS,
            "repetition_penalty": 1.5,
        },
    ),
    # One group: 4.51 runs its plain beam search.
    (
        "gpt2_one_group",
        [[5, 17, 9, 30]],
        {
            "num_beams": 4,
            "num_beam_groups": 1,
            "max_new_tokens": 5,
            "length_penalty": 0.0,
            "num_return_sequences": 4,
            "eos_token_id": EOS,
        },
    ),
]
BART_CASES = [
    (
        "bart_eos",
        [[BOS, 9, 14, 22, EOS]],
        {
            "num_beams": 4,
            "num_beam_groups": 2,
            "diversity_penalty": 0.5,
            "max_new_tokens": 6,
            "length_penalty": 1.0,
            "num_return_sequences": 4,
        },
    ),
    (
        "bart_batch",
        [[BOS, 9, 14, 22, EOS], [BOS, 31, 5, EOS]],
        {
            "num_beams": 6,
            "num_beam_groups": 3,
            "diversity_penalty": 2.0,
            "max_new_tokens": 5,
            "length_penalty": 0.0,
            "num_return_sequences": 2,
        },
    ),
]


def frequent_token(model, prompt) -> int:
    """The token the model's plain beams pick most often after ``prompt`` (not the prompt's)."""
    output = model.generate(
        torch.tensor([prompt]),
        num_beams=4,
        num_return_sequences=4,
        do_sample=False,
        max_new_tokens=7,
        eos_token_id=EOS,
        pad_token_id=PAD,
    )
    generated = output[:, len(prompt) :].reshape(-1).tolist()
    return max(sorted(set(generated)), key=generated.count)


def run(model, name, prompts, options, padding):
    input_ids, attention_mask = padding(prompts)
    output = model.generate(
        input_ids=torch.tensor(input_ids),
        attention_mask=torch.tensor(attention_mask),
        do_sample=False,
        return_dict_in_generate=True,
        output_scores=True,
        **options,
    )
    return {
        "name": name,
        "model": "tiny-bart" if model.config.is_encoder_decoder else "tiny-gpt2",
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "options": options,
        "sequences": output.sequences.tolist(),
        "sequences_scores": output.sequences_scores.tolist(),
    }


def main():
    if not transformers.__version__.startswith("4.51."):
        raise SystemExit(f"needs transformers 4.51, found {transformers.__version__}")
    torch.set_num_threads(1)
    gpt2, bart = tiny_gpt2(), tiny_bart()
    cases = []
    with torch.no_grad():
        for name, prompts, options in GPT2_CASES:
            if options.get("eos_token_id") == "FREQUENT":
                options = dict(options, eos_token_id=frequent_token(gpt2, prompts[0]))
            cases.append(run(gpt2, name, prompts, options, left_padded))
        for name, prompts, options in BART_CASES:
            cases.append(run(bart, name, prompts, options, right_padded))
    reference = {
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "cases": cases,
    }
    (HERE / "reference.json").write_text(json.dumps(reference, indent=1) + "\n")


if __name__ == "__main__":
    main()
