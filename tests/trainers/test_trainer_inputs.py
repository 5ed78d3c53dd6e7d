"""Data prepared the usual ways is handled or refused, never silently changed (both trainers).

* labels == input_ids (the usual causal-LM preparation) -> ValueError saying how to mask the context;
* a collator that drops ``dress_weight`` (DRESS would be plain MLE) or the negatives
  (unlikelihood would be plain MLE), or one that puts labels on the context -> ValueError;
* raw ``context`` / ``response`` (/ ``negative_response``) text -> tokenized by the trainer.
"""

import datasets
import numpy as np
import pytest
import torch
from test_dress_trainer import CONTEXTS, TopicEmbedder, config, load_gpt2, responses, tokenized
from test_unlikelihood_trainer import EXAMPLES
from test_unlikelihood_trainer import dataset as unlikelihood_dataset
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

from dialeval.trainers import (
    DialogueCollator,
    DRESSTrainer,
    UnlikelihoodConfig,
    UnlikelihoodTrainer,
    encode_dialogue,
    encode_unlikelihood_example,
)


@pytest.fixture(scope="module")
def tokenizer(tiny_gpt2_path):
    return AutoTokenizer.from_pretrained(tiny_gpt2_path)


def unlikelihood_config(tmp_path, **overrides):
    return UnlikelihoodConfig(
        output_dir=str(tmp_path / "out"),
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        logging_strategy="no",
        seed=0,
        disable_tqdm=True,
        **overrides,
    )


def dress(tmp_path, path, tokenizer, data, **kwargs):
    return DRESSTrainer(
        load_gpt2(path),
        config(tmp_path, **kwargs.pop("args", {})),
        train_dataset=data,
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
        **kwargs,
    )


def causal_lm_style(data):
    """What `labels = input_ids` preparation (e.g. a tokenize-and-copy map) gives."""
    return data.map(lambda row: {"labels": list(row["input_ids"])})


def test_labels_equal_to_input_ids_are_refused_with_the_fix(tmp_path, tiny_gpt2_path, tokenizer):
    data = tokenized(tokenizer, False, count=4)
    with pytest.raises(
        ValueError, match=r"`train_dataset` row 0: `labels` equals the input ids.*-100"
    ):
        dress(tmp_path, tiny_gpt2_path, tokenizer, causal_lm_style(data))
    with pytest.raises(ValueError, match=r"`eval_dataset` row 0: `labels` equals the input ids"):
        dress(tmp_path, tiny_gpt2_path, tokenizer, data, eval_dataset=causal_lm_style(data))
    gold = unlikelihood_dataset(tokenizer, False)
    with pytest.raises(ValueError, match=r"`train_dataset` row 0: `labels` equals"):
        UnlikelihoodTrainer(
            load_gpt2(tiny_gpt2_path),
            unlikelihood_config(tmp_path),
            train_dataset=causal_lm_style(gold),
            processing_class=tokenizer,
        )
    negatives_unmasked = gold.map(lambda row: {"negative_labels": list(row["negative_input_ids"])})
    with pytest.raises(ValueError, match=r"`negative_labels` equals"):
        UnlikelihoodTrainer(
            load_gpt2(tiny_gpt2_path),
            unlikelihood_config(tmp_path),
            train_dataset=negatives_unmasked,
            processing_class=tokenizer,
        )


def test_other_unusable_rows_are_refused(tmp_path, tiny_gpt2_path, tokenizer):
    data = tokenized(tokenizer, False, count=4)
    with pytest.raises(ValueError, match="no `labels`"):
        dress(tmp_path, tiny_gpt2_path, tokenizer, data.remove_columns("labels"))
    first_token_target = data.map(lambda row: {"labels": [row["input_ids"][0]] + row["labels"][1:]})
    with pytest.raises(ValueError, match="no context"):
        dress(tmp_path, tiny_gpt2_path, tokenizer, first_token_target)
    no_target = data.map(lambda row: {"labels": [-100] * len(row["labels"])})
    with pytest.raises(ValueError, match="no response"):
        dress(tmp_path, tiny_gpt2_path, tokenizer, no_target)
    with pytest.raises(ValueError, match=r"raw text columns \['context', 'response'\]"):
        dress(tmp_path, tiny_gpt2_path, tokenizer, datasets.Dataset.from_dict({"body": ["a", "b"]}))
    with pytest.raises(ValueError, match=r"TRL's language-modeling format \(`text`\)"):
        dress(tmp_path, tiny_gpt2_path, tokenizer, datasets.Dataset.from_dict({"text": ["a", "b"]}))


def _dropping(pad_token_id, dropped):
    collate = DialogueCollator(pad_token_id)
    return lambda features: collate(
        [{k: v for k, v in feature.items() if k not in dropped} for feature in features]
    )


def test_a_collator_that_drops_dress_weight_is_an_error(tmp_path, tiny_gpt2_path, tokenizer):
    trainer = dress(
        tmp_path,
        tiny_gpt2_path,
        tokenizer,
        tokenized(tokenizer, False, count=4),
        data_collator=_dropping(tokenizer.pad_token_id, {"dress_weight"}),
        args=dict(max_steps=1, per_device_train_batch_size=2),
    )
    with pytest.raises(ValueError, match=r"no \['dress_weight'\]: the data collator dropped"):
        trainer.train()
    assert trainer.negative_cycles == []  # refused before a cycle's generation was spent


def test_a_collator_that_drops_the_negatives_is_an_error(tmp_path, tiny_gpt2_path, tokenizer):
    dropped = {"negative_input_ids", "negative_attention_mask", "negative_labels"}
    trainer = UnlikelihoodTrainer(
        load_gpt2(tiny_gpt2_path),
        unlikelihood_config(tmp_path, max_steps=1),
        train_dataset=unlikelihood_dataset(tokenizer, False),
        processing_class=tokenizer,
        data_collator=_dropping(tokenizer.pad_token_id, dropped),
    )
    with pytest.raises(ValueError, match="negative_input_ids"):
        trainer.train()


def test_a_collator_that_labels_the_context_is_an_error(tmp_path, tiny_gpt2_path, tokenizer):
    collate = DialogueCollator(tokenizer.pad_token_id)

    def language_modeling(
        features,
    ):  # what DataCollatorForLanguageModeling(mlm=False) does to labels
        batch = collate(features)
        batch["labels"] = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
        return batch

    trainer = dress(
        tmp_path,
        tiny_gpt2_path,
        tokenizer,
        tokenized(tokenizer, False, count=4),
        data_collator=language_modeling,
        args=dict(max_steps=1, per_device_train_batch_size=2),
    )
    with pytest.raises(
        ValueError, match="start with a target token.*DataCollatorForLanguageModeling"
    ):
        trainer.train()


def raw_dress_data(count=None):
    count = len(CONTEXTS) if count is None else count
    return datasets.Dataset.from_dict(
        {"context": CONTEXTS[:count], "response": responses()[:count]}
    )


@pytest.mark.parametrize("architecture", ["gpt2", "bart"])
def test_dress_tokenizes_raw_text(tmp_path, architecture, request):
    path = request.getfixturevalue(f"tiny_{architecture}_path")
    tokenizer = AutoTokenizer.from_pretrained(path)
    is_encoder_decoder = architecture == "bart"
    model = AutoModelForSeq2SeqLM.from_pretrained(path) if is_encoder_decoder else load_gpt2(path)
    trainer = DRESSTrainer(
        model,
        config(
            tmp_path,
            max_length=64,
            max_steps=1,
            per_device_train_batch_size=2,
            negative_contexts_per_cycle=2,
            negative_generation_batch_size=2,
        ),
        train_dataset=raw_dress_data(),
        eval_dataset=raw_dress_data(2),
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
    )
    expected = [
        encode_dialogue(tokenizer, context, response, is_encoder_decoder, max_length=64)
        for context, response in zip(CONTEXTS, responses())
    ]
    for key in ("input_ids", "attention_mask", "labels"):
        assert trainer.train_dataset[key] == [row[key] for row in expected]
        assert trainer.eval_dataset[key] == [row[key] for row in expected[:2]]
    assert trainer.train_response_texts == responses()  # the raw responses are what was clustered
    assert sorted(trainer.training_cluster_distribution.round(6).tolist()) == [0.1, 0.3, 0.6]
    trainer.train()
    assert np.isfinite(trainer.evaluate()["eval_loss"])


def test_raw_text_is_capped_by_the_models_positions(tmp_path, tiny_gpt2_path, tokenizer):
    long = datasets.Dataset.from_dict(
        {"context": [" ".join(CONTEXTS * 3)] * 3, "response": responses()[:3]}
    )
    args = config(tmp_path, negative_training=False, num_clusters=2)
    trainer = DRESSTrainer(
        load_gpt2(tiny_gpt2_path),
        args,
        train_dataset=long,
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
    )
    # the tiny GPT-2's position table
    assert args.max_length == 512 and trainer.max_example_length == 128
    assert max(len(row) for row in trainer.train_dataset["input_ids"]) == 128


def test_unlikelihood_tokenizes_raw_text(tmp_path, tiny_gpt2_path, tokenizer):
    raw = datasets.Dataset.from_dict(
        {
            "context": [c for c, _, _ in EXAMPLES],
            "response": [g for _, g, _ in EXAMPLES],
            "negative_response": [n for _, _, n in EXAMPLES],
        }
    )
    with pytest.raises(ValueError, match="negative_response"):
        UnlikelihoodTrainer(
            load_gpt2(tiny_gpt2_path),
            unlikelihood_config(tmp_path),
            train_dataset=raw.remove_columns("negative_response"),
            processing_class=tokenizer,
        )
    trainer = UnlikelihoodTrainer(
        load_gpt2(tiny_gpt2_path),
        unlikelihood_config(tmp_path, max_length=64, max_steps=1),
        train_dataset=raw,
        eval_dataset=raw.remove_columns("negative_response"),
        processing_class=tokenizer,
    )
    expected = [
        encode_unlikelihood_example(tokenizer, c, g, n, False, max_length=64)
        for c, g, n in EXAMPLES
    ]
    for key in expected[0]:
        assert trainer.train_dataset[key] == [row[key] for row in expected]
    # evaluation needs no negatives
    assert "negative_input_ids" not in trainer.eval_dataset.column_names
    trainer.train()
    assert torch.isfinite(torch.tensor(trainer.evaluate()["eval_loss"]))


def test_seq2seq_labels_end_with_eos_and_contexts_keep_their_last_tokens(tiny_seq2seq_paths):
    """BlenderBot-small's tokenizer adds no special tokens: without an explicit eos a model trained on its
    labels never learns to stop. A long context keeps its last tokens (ParlAI truncates inputs from the
    left) inside the tokenizer's own template."""
    context, response = (
        ["hi there! how are you doing today?", "do you have any pets at home?"],
        "yes, a dog.",
    )
    # each family's template around one sequence (tests/tiny_lms.py, tests/tiny_models.py)
    templates = {
        "bart": ("bos", "eos"),
        "blenderbot": (None, "eos"),
        "t5": (None, "eos"),
        "blenderbot_small": (None, None),
    }
    for family, (before, after) in templates.items():
        tokenizer = AutoTokenizer.from_pretrained(tiny_seq2seq_paths[family])
        prefix = [tokenizer.bos_token_id] if before else []
        suffix = [tokenizer.eos_token_id] if after else []
        row = encode_dialogue(tokenizer, context, response, True, max_length=12)
        assert row["labels"] == prefix + tokenizer(response, add_special_tokens=False)[
            "input_ids"
        ] + [tokenizer.eos_token_id]
        joined = tokenizer(f" {tokenizer.eos_token} ".join(context), add_special_tokens=False)[
            "input_ids"
        ]
        room = 12 - len(prefix) - len(suffix)
        assert row["input_ids"] == prefix + joined[-room:] + suffix, family
