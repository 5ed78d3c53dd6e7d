"""DRESS's negative term as the authors' released code computes it, by hand.

The released code (hyperconnect/sem-ent, ``dm_generator.compute_loss_with_weight`` and
``train_diversify_base.clustering``) keeps every generation of a batch, head-cluster ones with
weight -1 and the others with weight 0, and divides the batch by *all* its generated tokens.
"""

import math

import numpy as np
import pytest
import torch
from test_dress_losses import seq2seq_batch
from test_dress_trainer import NO_DROPOUT_BART, TopicEmbedder, config, load_gpt2, tokenized
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

from dialeval.trainers import DialogueCollator, DRESSTrainer
from dialeval.trainers.dress_negative_schedule import (
    group_normalizers,
    max_rows_per_slot,
    slot_rows,
)
from dialeval.trainers.losses import sequence_nll

LN2, LN3 = math.log(2), math.log(3)


def test_group_normalizers_by_hand():
    counts, head = [3, 5, 2, 4, 6], [True, False, True, True, False]
    # groups of 2: {3, 5} -> 8, {2, 4} -> 6, {6} -> 6; head tokens only: 3, 6, 0
    assert group_normalizers(counts, head, 2).tolist() == [8, 8, 6, 6, 6]
    assert group_normalizers(counts, head, 2, "head_only").tolist() == [3, 3, 6, 6, 0]
    assert group_normalizers(counts, head, 5).tolist() == [20] * 5
    for bad, match in (
        ((counts, head[:2], 2), "is_head"),
        ((counts, head, 0), "group_size"),
        (([-1], [True], 1), "token_counts"),
    ):
        with pytest.raises(ValueError, match=match):
            group_normalizers(*bad)
    with pytest.raises(ValueError, match="normalization"):
        group_normalizers(counts, head, 2, "tokens")


def test_slots_spread_rows_evenly_and_steps_take_the_same_rows_whatever_the_split():
    assert [slot_rows(5, 3, slot) for slot in range(4)] == [(0, 1), (1, 3), (3, 5), (5, 5)]
    assert max_rows_per_slot(5, 3) == 2 and max_rows_per_slot(0, 3) == 0
    for rows in range(12):
        for steps in range(1, 5):
            for split in (1, 2, 3, 4):  # accumulation steps x processes per optimizer step
                slots = steps * split
                taken = [slot_rows(rows, slots, slot) for slot in range(slots)]
                assert [start for start, _ in taken[1:]] == [stop for _, stop in taken[:-1]]
                assert taken[0][0] == 0 and taken[-1][1] == rows
                for step in range(steps):
                    assert (
                        taken[step * split][0],
                        taken[step * split + split - 1][1],
                    ) == slot_rows(rows, steps, step)
                assert max(stop - start for start, stop in taken) <= max_rows_per_slot(rows, slots)


def test_negative_term_by_hand(tmp_path, tiny_bart_path):
    """Rows NLL (ln2 + ln3) and ln2, in groups of 8 and 6 generated tokens: -(ln2 + ln3) / 8 - ln2 / 6."""
    tokenizer = AutoTokenizer.from_pretrained(tiny_bart_path)
    trainer = DRESSTrainer(
        AutoModelForSeq2SeqLM.from_pretrained(tiny_bart_path, **NO_DROPOUT_BART),
        config(tmp_path),
        train_dataset=tokenized(tokenizer, True),
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
    )
    logits, labels = seq2seq_batch()
    term = trainer.negative_loss(logits, labels, {"weight": torch.tensor([-1 / 8, -1 / 6])}, None)
    assert term.item() == pytest.approx(-(LN2 + LN3) / 8 - LN2 / 6, rel=1e-6)


@pytest.mark.parametrize("normalization", ["all_generated", "head_only"])
def test_a_cycle_divides_head_negatives_by_all_generated_tokens(
    tmp_path, tiny_gpt2_path, normalization, monkeypatch
):
    """One head cluster of 3 generations and one non-head generation (share 0.25 < 0.3): the step's
    negative term is -sum(head NLL) / (tokens of all 4 generations), or of the 3 head ones."""
    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_path)
    model = load_gpt2(tiny_gpt2_path)
    args = config(
        tmp_path,
        per_device_train_batch_size=4,
        recluster_every=1,
        negative_generation_batch_size=4,
        head_threshold=0.3,
        negative_normalization=normalization,
    )
    trainer = DRESSTrainer(
        model,
        args,
        train_dataset=tokenized(tokenizer, False, count=4),
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
    )
    prompts = trainer._sample_prompts(0)
    _, generations = trainer.generate_responses(prompts)
    texts = [
        tokenizer.decode(response, skip_special_tokens=True).strip() for response in generations
    ]
    assert len(generations) == 4 and all(texts)
    # the last generation alone in cluster 1, the others in cluster 0
    monkeypatch.setattr(
        trainer.semantic_clusters, "assign", lambda batch: np.array([0] * (len(batch) - 1) + [1])
    )
    trainer.plan_negative_slots(trainer.get_train_dataloader())
    trainer.cycle_due = True
    batch = DialogueCollator(tokenizer.pad_token_id)(
        [
            {key: row[key] for key in ("input_ids", "attention_mask", "labels", "dress_weight")}
            for row in trainer.train_dataset
        ]
    )
    trainer.prepare_window([batch], "cpu")
    stats = trainer.negative_cycles[0]
    assert (
        stats["num_generated"] == 4 and stats["num_negatives"] == 3 and stats["head_share"] == 0.75
    )
    all_tokens = sum(len(response) for response in generations)
    head_tokens = all_tokens - len(generations[-1])
    expected_divisor = all_tokens if normalization == "all_generated" else head_tokens
    assert [row["normalizer"] for row in trainer._negative_pool] == [expected_divisor] * 3
    assert batch["negative_input_ids"].shape[0] == 3

    model.eval()
    gold_tokens = sum(
        sum(label != -100 for label in row[1:]) for row in trainer.train_dataset["labels"]
    )
    with torch.no_grad():
        loss = trainer.compute_loss(model, batch, num_items_in_batch=torch.tensor(gold_tokens))
        gold = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        negatives = model(
            input_ids=batch["negative_input_ids"], attention_mask=batch["negative_attention_mask"]
        ).logits
    weighted = (
        sequence_nll(gold, batch["labels"], True) * batch["dress_weight"]
    ).sum() / gold_tokens
    negative = -sequence_nll(negatives, batch["negative_labels"], True).sum() / expected_divisor
    assert loss.item() == pytest.approx((weighted + negative).item(), rel=1e-5)


def test_negatives_are_spread_over_the_epoch_within_the_bound(
    tmp_path, tiny_gpt2_path, monkeypatch
):
    """4 negatives over an epoch of 4 micro-batches of 2: one each (not 2, 2, 0, 0 right after the cycle)."""
    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_path)
    args = config(
        tmp_path,
        per_device_train_batch_size=2,
        num_train_epochs=1,
        negative_contexts_per_cycle=4,
        negative_generation_batch_size=4,
    )
    trainer = DRESSTrainer(
        load_gpt2(tiny_gpt2_path),
        args,
        train_dataset=tokenized(tokenizer, False, count=8),
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
    )
    rows = []
    prepare = trainer.prepare_window

    def recording(batch_samples, device):
        prepare(batch_samples, device)
        rows.extend(
            batch["negative_input_ids"].shape[0] if "negative_input_ids" in batch else 0
            for batch in batch_samples
        )

    monkeypatch.setattr(trainer, "prepare_window", recording)
    trainer.train()
    assert trainer.negative_cycles[0]["num_negatives"] == 4 and rows == [1, 1, 1, 1]


def test_a_schedule_past_the_memory_bound_is_refused(tmp_path, tiny_gpt2_path):
    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_path)
    args = config(
        tmp_path,
        per_device_train_batch_size=1,
        max_steps=1,
        recluster_every=1,
        negative_contexts_per_cycle=4,
    )
    trainer = DRESSTrainer(
        load_gpt2(tiny_gpt2_path),
        args,
        train_dataset=tokenized(tokenizer, False, count=4),
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
    )
    with pytest.raises(
        ValueError, match=r"could stack 4 negative rows .* above `max_negatives_per_batch`=1"
    ):
        trainer.train()
    assert trainer.negative_cycles == []
