"""Tiny random checkpoints built in code, so tests run offline through the real ``from_pretrained``.

The Hub is unreachable from the test machines, and mocking the loaders would skip exactly the
code paths (configs, tokenizer files, safetensors) that break in practice. Everything here is
seeded, so two builds give byte-identical weights and tests can compare numbers across runs.

One special-token set serves all three architectures: RoBERTa/BART's ``<s> <pad> </s> <unk>``
at ids 0-3 (so RoBERTa's position offset, ``pad_token_id + 1``, is the usual 2) plus ``<mask>``.
"""

from __future__ import annotations

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import (
    AutoTokenizer,
    BartConfig,
    BartForConditionalGeneration,
    GPT2Config,
    GPT2LMHeadModel,
    PreTrainedTokenizerFast,
    RobertaConfig,
    RobertaForSequenceClassification,
)

SEED = 0
MAX_LENGTH = 128
VOCAB_SIZE = 400
SPECIAL_TOKENS = {
    "bos_token": "<s>",
    "pad_token": "<pad>",
    "eos_token": "</s>",
    "unk_token": "<unk>",
    "mask_token": "<mask>",
}
NLI_LABELS = {0: "contradiction", 1: "neutral", 2: "entailment"}
# At the usual 0.02 a 32-wide model maps every input to near-identical outputs (the NLI head
# gives one label for everything), which would let metric tests pass vacuously.
INIT_RANGE = 0.2

# Dialogue-flavoured so the merges look like the text the metrics will see.
CORPUS = [
    "hi there! how are you doing today?",
    "i'm doing well, thanks for asking. how about you?",
    "not bad. i just got back from a walk in the park.",
    "that sounds nice. was the weather good?",
    "yes, it was sunny and warm, perfect for a walk.",
    "i love sunny days. do you have any plans for the weekend?",
    "i think i will visit my parents and cook dinner with them.",
    "what are you going to cook?",
    "probably pasta with tomato sauce, it is my favourite.",
    "i don't know what to say about that.",
    "i don't know. maybe we could watch a movie tonight?",
    "sure, what kind of movies do you like?",
    "i like comedies and science fiction. what about you?",
    "i prefer documentaries, but i am happy to watch anything.",
    "do you have any pets at home?",
    "yes, i have a dog named max and two cats.",
    "that's great! i have always wanted a dog.",
    "where do you work? i'm a teacher at the local school.",
    "i work as a nurse at the hospital near the river.",
    "that must be hard work. do you enjoy it?",
    "most days, yes. helping people makes me happy.",
    "what is your favourite book? mine is about the sea.",
    "i read a lot of history books. they help me relax.",
    "a man is playing a guitar on the stage.",
    "a woman is reading a book in the garden.",
    "the children are playing football outside.",
    "nobody is playing music right now.",
    "okay, see you later! have a good night.",
    "thank you, you too. talk to you tomorrow.",
]


def _save(model_class, config, tokenizer, path) -> str:
    """The RNG is forked so that building a model never shifts the randomness of the caller."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        model = model_class(config)
    model.save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return str(path)


def save_tiny_tokenizer(path) -> str:
    """Byte-level BPE: any unicode round-trips, so no test meets an ``<unk>`` by accident."""
    tokenizer = Tokenizer(models.BPE(unk_token=SPECIAL_TOKENS["unk_token"]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=list(SPECIAL_TOKENS.values()),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(CORPUS, trainer=trainer)
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, model_max_length=MAX_LENGTH, **SPECIAL_TOKENS
    )
    wrapped.save_pretrained(str(path))
    return str(path)


def _special_ids(tokenizer) -> dict[str, int]:
    return {
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
    }


def _with_roberta_template(tokenizer):
    """Encoders read ``<s> a </s></s> b </s>``; GPT-2 must not, or every prompt would end in EOS."""
    tokenizer.backend_tokenizer.post_processor = processors.RobertaProcessing(
        (tokenizer.eos_token, tokenizer.eos_token_id),  # sep
        (tokenizer.bos_token, tokenizer.bos_token_id),  # cls
        add_prefix_space=False,
    )
    return tokenizer


def save_tiny_gpt2(path, tokenizer_path) -> str:
    """Left padding is saved with it because decoder-only batch generation needs it."""
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_path), padding_side="left")
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=MAX_LENGTH,
        n_embd=32,
        n_layer=2,
        n_head=2,
        initializer_range=INIT_RANGE,
        **_special_ids(tokenizer),
    )
    return _save(GPT2LMHeadModel, config, tokenizer, path)


def save_tiny_bart(path, tokenizer_path) -> str:
    """Decoding starts from ``</s>`` as in facebook/bart-*, so generation code is tested as used."""
    tokenizer = _with_roberta_template(AutoTokenizer.from_pretrained(str(tokenizer_path)))
    config = BartConfig(
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
        decoder_start_token_id=tokenizer.eos_token_id,
        forced_eos_token_id=tokenizer.eos_token_id,
        **_special_ids(tokenizer),
    )
    return _save(BartForConditionalGeneration, config, tokenizer, path)


def _tiny_roberta_config(tokenizer, **head) -> RobertaConfig:
    return RobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        # Positions start at pad_token_id + 1, so 128 tokens need pad_token_id + 1 + 128 slots.
        max_position_embeddings=tokenizer.pad_token_id + 1 + MAX_LENGTH,
        type_vocab_size=1,
        initializer_range=INIT_RANGE,
        **head,
        **_special_ids(tokenizer),
    )


def save_tiny_roberta_nli(path, tokenizer_path) -> str:
    """Label order of roberta-large-mnli, lower-cased: metrics should find labels by name."""
    tokenizer = _with_roberta_template(AutoTokenizer.from_pretrained(str(tokenizer_path)))
    config = _tiny_roberta_config(
        tokenizer,
        num_labels=len(NLI_LABELS),
        id2label=dict(NLI_LABELS),
        label2id={label: i for i, label in NLI_LABELS.items()},
    )
    return _save(RobertaForSequenceClassification, config, tokenizer, path)


def save_tiny_roberta_cross_encoder(path, tokenizer_path) -> str:
    """A one-output RoBERTa, the shape of an STS cross-encoder (``cross-encoder/stsb-roberta-large``)."""
    tokenizer = _with_roberta_template(AutoTokenizer.from_pretrained(str(tokenizer_path)))
    return _save(
        RobertaForSequenceClassification,
        _tiny_roberta_config(tokenizer, num_labels=1),
        tokenizer,
        path,
    )


#: A 3-way yes/no classifier's labels (Sato et al. 2022, §3.2: affirmation / refutation / neither).
YES_NO_LABELS = {0: "yes", 1: "no", 2: "ambiguous"}


def save_tiny_roberta_yes_no(path, tokenizer_path, labels: dict[int, str] | None = None) -> str:
    """A RoBERTa yes/no/ambiguous classifier; ``labels`` may give Circa's label names instead."""
    labels = dict(labels or YES_NO_LABELS)
    tokenizer = _with_roberta_template(AutoTokenizer.from_pretrained(str(tokenizer_path)))
    config = _tiny_roberta_config(
        tokenizer,
        num_labels=len(labels),
        id2label=labels,
        label2id={label: i for i, label in labels.items()},
    )
    return _save(RobertaForSequenceClassification, config, tokenizer, path)
