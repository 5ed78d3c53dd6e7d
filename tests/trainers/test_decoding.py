"""Greedy decoding whatever the checkpoint's generation_config (Han et al. 2022, §5.3)."""

import pytest
import torch
from tiny_lms import eager_to_stop
from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

from dialeval.trainers.decoding import greedy_generation_config


@pytest.fixture(scope="module")
def blender_small(tiny_seq2seq_paths):
    path = tiny_seq2seq_paths["blenderbot_small"]
    return eager_to_stop(
        AutoModelForSeq2SeqLM.from_pretrained(path).eval()
    ), AutoTokenizer.from_pretrained(path)


def test_greedy_ignores_the_checkpoints_beams_and_min_length(blender_small):
    model, tokenizer = blender_small
    inputs = tokenizer(
        ["hi there! how are you?", "do you like dogs?"], return_tensors="pt", padding=True
    )
    start, eos = model.config.decoder_start_token_id, model.config.eos_token_id
    with torch.no_grad():
        # what a call with only greedy's keywords gets: the checkpoint's min_length 20 keeps eos out
        inherited = model.generate(**inputs, do_sample=False, num_beams=1, max_new_tokens=6)
        greedy = model.generate(**inputs, generation_config=greedy_generation_config(model, 6))
    assert inherited.shape[1] == 7 and eos not in inherited[:, 1:-1].tolist()[0]
    assert greedy.tolist() == [[start, eos], [start, eos]]
    assert model.generation_config.min_length == 20  # the model's own settings are left alone


def test_context_ngrams_are_blocked_by_the_encoder_for_seq2seq_only(blender_small, tiny_gpt2_path):
    seq2seq = greedy_generation_config(blender_small[0], 8, 3, pad_token_id=7)
    assert (seq2seq.no_repeat_ngram_size, seq2seq.encoder_no_repeat_ngram_size) == (3, 3)
    assert (
        seq2seq.num_beams,
        seq2seq.min_length,
        seq2seq.length_penalty,
        seq2seq.pad_token_id,
    ) == (1, 0, 1.0, 7)
    # the checkpoint's token ids stay: decoding starts and stops as the model was trained to
    assert (
        seq2seq.decoder_start_token_id == blender_small[0].generation_config.decoder_start_token_id
    )
    causal = greedy_generation_config(AutoModelForCausalLM.from_pretrained(tiny_gpt2_path), 8, 2)
    assert (causal.no_repeat_ngram_size, causal.encoder_no_repeat_ngram_size) == (
        2,
        0,
    )  # the context is in the sequence


def test_bad_arguments_are_refused(blender_small):
    for bad in ({"max_new_tokens": 0}, {"max_new_tokens": True}, {"no_repeat_ngram_size": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            greedy_generation_config(blender_small[0], **{"max_new_tokens": 4, **bad})
