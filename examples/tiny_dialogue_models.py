"""The tokenizer and GPT-2 the CPU examples train from scratch (no pretrained model can be
downloaded there): ``examples/dress_dailydialog.py`` and ``examples/reproduce/han2022_tables3_5.py
--scale tiny`` import them from here.

DialoGPT-style dialogue (``turn <eos> turn <eos> response <eos>``, see
:func:`dialeval.trainers.encode_dialogue`): the end-of-text token separates turns and starts
generation, so it is GPT-2's bos, eos and the tokenizer's bos; a separate pad token keeps padding
out of the vocabulary the model predicts.
"""

from __future__ import annotations

PAD, EOS = "<pad>", "<|endoftext|>"


def build_tokenizer(texts: list[str], vocab_size: int, max_length: int):
    """A byte-level BPE (any text round-trips, no ``<unk>``) trained on ``texts``, as a
    ``PreTrainedTokenizerFast`` with ``PAD`` and ``EOS`` as its special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=[PAD, EOS],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        model_max_length=max_length,
        pad_token=PAD,
        eos_token=EOS,
        bos_token=EOS,
    )


def build_gpt2(tokenizer, max_length: int, width: int, layers: int, heads: int = 4):
    """A randomly initialized GPT-2 (``width`` = n_embd) over ``tokenizer``'s vocabulary; seed
    torch before calling for reproducible weights."""
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=max_length,
        n_embd=width,
        n_layer=layers,
        n_head=heads,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return GPT2LMHeadModel(config)
