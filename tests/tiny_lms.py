"""More tiny language models for the candidate scorer, in the style of ``tiny_models.py``.

Each seq2seq family derives its decoder inputs differently (BlenderBot and BlenderBot-small have
no ``prepare_decoder_input_ids_from_labels``; T5 starts from the pad token, BART from ``</s>``,
BlenderBot from ``<s>``), and Mistral-style models attend within a sliding window. All share the
session's tiny tokenizer (``<s> <pad> </s> <unk> <mask>`` at ids 0-4).
"""

from __future__ import annotations

import torch
from tiny_models import INIT_RANGE, MAX_LENGTH, SEED
from tokenizers import processors
from transformers import (
    AutoTokenizer,
    BlenderbotConfig,
    BlenderbotForConditionalGeneration,
    BlenderbotSmallConfig,
    BlenderbotSmallForConditionalGeneration,
    MistralConfig,
    MistralForCausalLM,
    T5Config,
    T5ForConditionalGeneration,
)


def _special_ids(tokenizer) -> dict[str, int]:
    return {
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
    }


def _save(model_class, config, tokenizer, path) -> str:
    with torch.random.fork_rng(devices=[]):  # never shifts the caller's randomness
        torch.manual_seed(SEED)
        model = model_class(config)
    model.save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return str(path)


def _with_eos_template(tokenizer):
    """``text </s>``: BlenderBot's and T5's tokenizers end every sequence with the EOS token."""
    tokenizer.backend_tokenizer.post_processor = processors.TemplateProcessing(
        single=f"$A {tokenizer.eos_token}",
        pair=f"$A {tokenizer.eos_token} $B {tokenizer.eos_token}",
        special_tokens=[(tokenizer.eos_token, tokenizer.eos_token_id)],
    )
    return tokenizer


def _bart_like(config_class, tokenizer, **extra):
    return config_class(
        vocab_size=len(tokenizer),
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=MAX_LENGTH,
        init_std=INIT_RANGE,
        decoder_start_token_id=tokenizer.bos_token_id,
        **extra,
        **_special_ids(tokenizer),
    )


def save_tiny_blenderbot(path, tokenizer_path) -> str:
    """Decoding starts from ``<s>`` (facebook/blenderbot-400M-distill: decoder_start_token_id = bos)."""
    tokenizer = _with_eos_template(AutoTokenizer.from_pretrained(str(tokenizer_path)))
    return _save(
        BlenderbotForConditionalGeneration, _bart_like(BlenderbotConfig, tokenizer), tokenizer, path
    )


def save_tiny_blenderbot_small(path, tokenizer_path) -> str:
    """Its tokenizer adds no special tokens (as BlenderbotSmallTokenizer); decoding starts from ``<s>``."""
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_path))
    return _save(
        BlenderbotSmallForConditionalGeneration,
        _bart_like(BlenderbotSmallConfig, tokenizer),
        tokenizer,
        path,
    )


def save_tiny_t5(path, tokenizer_path) -> str:
    """Decoding starts from the pad token, as in every T5 checkpoint."""
    tokenizer = _with_eos_template(AutoTokenizer.from_pretrained(str(tokenizer_path)))
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_kv=16,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=2,
        relative_attention_num_buckets=8,
        initializer_factor=1.0,
        decoder_start_token_id=tokenizer.pad_token_id,
        **_special_ids(tokenizer),
    )
    return _save(T5ForConditionalGeneration, config, tokenizer, path)


def save_tiny_mistral(path, tokenizer_path, sliding_window: int | None = 8) -> str:
    """A Mistral-style causal LM whose layers attend to the last ``sliding_window`` tokens only."""
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_path), padding_side="left")
    config = MistralConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        max_position_embeddings=MAX_LENGTH,
        sliding_window=sliding_window,
        initializer_range=INIT_RANGE,
        tie_word_embeddings=False,
        **_special_ids(tokenizer),
    )
    return _save(MistralForCausalLM, config, tokenizer, path)


#: Blender-style decoding settings (the Blender recipe's beam search: 10 beams, min length 20), as a checkpoint may ship them.
BLENDER_DECODING = {
    "num_beams": 10,
    "min_length": 20,
    "max_length": 128,
    "length_penalty": 0.65,
    "no_repeat_ngram_size": 3,
}


def eager_to_stop(model, eos_bias: float = 30.0):
    """Blender-style decoding settings on a tiny seq2seq model whose greedy choice is eos at once
    (``final_logits_bias``): greedy code that inherits the checkpoint's ``min_length`` 20 cannot stop."""
    model.generation_config.update(**BLENDER_DECODING)
    with torch.no_grad():
        model.final_logits_bias[0, model.config.eos_token_id] = eos_bias
    return model
