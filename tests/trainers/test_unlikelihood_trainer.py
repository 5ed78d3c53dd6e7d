"""UnlikelihoodTrainer: MLE(gold) + alpha * UL(negative) (Li et al. 2020; n-best paper §4.3, App. C)
and Negative Training (He & Glass 2020) as its weight -1 case, on the tiny GPT-2 / BART."""

import datasets
import pytest
import torch
from transformers import (
    AutoModelForCausalLM,
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
)

from dialeval.trainers import (
    DialogueCollator,
    UnlikelihoodConfig,
    UnlikelihoodTrainer,
    encode_dialogue,
    encode_unlikelihood_example,
    unlikelihood_loss,
    weighted_nll_loss,
)

NO_DROPOUT_GPT2 = {"resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0}
# Polar questions with a consistent (gold) and a contradicting (negative) answer, as in App. C.
EXAMPLES = [
    (
        "i have a dog named max. do you like dogs?",
        "yes, i love dogs.",
        "no, i have never liked dogs at all.",
    ),
    ("do you have any plans for the weekend?", "i will visit my parents.", "no."),
    (
        "is the weather good today?",
        "yes, it is sunny and warm.",
        "no, it is sunny and warm, perfect for a walk.",
    ),
    (
        "do you enjoy your work at the hospital?",
        "most days, yes.",
        "i don't know what to say about that.",
    ),
]


def dataset(tokenizer, is_encoder_decoder):
    rows = [
        encode_unlikelihood_example(tokenizer, c, g, n, is_encoder_decoder, max_length=64)
        for c, g, n in EXAMPLES
    ]
    return datasets.Dataset.from_dict({key: [row[key] for row in rows] for key in rows[0]})


def config(tmp_path, **overrides):
    settings = dict(
        output_dir=str(tmp_path / "out"),
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        logging_strategy="no",
        seed=0,
        disable_tqdm=True,
    )
    settings.update(overrides)
    return UnlikelihoodConfig(**settings)


@pytest.fixture(scope="module")
def gpt2(tiny_gpt2_path):
    return tiny_gpt2_path, AutoTokenizer.from_pretrained(tiny_gpt2_path)


def test_config_validation(tmp_path):
    assert config(tmp_path).alpha == 1.0
    for bad, match in (
        ({"alpha": -1.0}, "alpha"),
        ({"negative_loss": "hinge"}, "negative_loss"),
        ({"min_complement": 1.0}, "min_complement"),
        ({"max_length": 2}, "max_length"),
    ):
        with pytest.raises(ValueError, match=match):
            config(tmp_path, **bad)


def test_encode_unlikelihood_example_layout(gpt2):
    _, tokenizer = gpt2
    row = encode_unlikelihood_example(
        tokenizer, ["hi there!", "do you like dogs?"], "yes.", "no.", False
    )
    gold = encode_dialogue(tokenizer, ["hi there!", "do you like dogs?"], "yes.", False)
    assert {k: row[k] for k in gold} == gold
    eos = tokenizer.eos_token_id
    response = tokenizer("no.", add_special_tokens=False)["input_ids"] + [eos]
    assert row["negative_input_ids"][-len(response) :] == response
    assert (
        row["negative_labels"]
        == [-100] * (len(row["negative_input_ids"]) - len(response)) + response
    )
    # two context turns and the response, DialoGPT style
    assert row["negative_input_ids"].count(eos) == 3
    with pytest.raises(ValueError, match="context"):
        encode_dialogue(tokenizer, [], "yes.", False)


@pytest.mark.parametrize("negative_loss", ["unlikelihood", "negative_training"])
@pytest.mark.parametrize("architecture", ["gpt2", "bart"])
def test_loss_is_mle_plus_alpha_times_negative_term_each_on_its_own_tokens(
    tmp_path, architecture, negative_loss, tiny_gpt2_path, tiny_bart_path
):
    """The one-forward (stacked rows) loss equals the two terms computed from separate forward passes."""
    path = tiny_gpt2_path if architecture == "gpt2" else tiny_bart_path
    tokenizer = AutoTokenizer.from_pretrained(path)
    is_encoder_decoder = architecture == "bart"
    model = (
        (AutoModelForSeq2SeqLM if is_encoder_decoder else AutoModelForCausalLM)
        .from_pretrained(path)
        .eval()
    )
    trainer = UnlikelihoodTrainer(
        model,
        config(tmp_path, alpha=10.0, negative_loss=negative_loss),
        train_dataset=dataset(tokenizer, is_encoder_decoder),
        processing_class=tokenizer,
    )
    batch = DialogueCollator(tokenizer.pad_token_id)(list(trainer.train_dataset))
    shift = not is_encoder_decoder
    with torch.no_grad():
        ours = trainer.compute_loss(model, batch)
        gold_logits = model(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            **({"labels": batch["labels"]} if is_encoder_decoder else {}),
        ).logits
        negative_logits = model(
            input_ids=batch["negative_input_ids"],
            attention_mask=batch["negative_attention_mask"],
            **({"labels": batch["negative_labels"]} if is_encoder_decoder else {}),
        ).logits
    mle = weighted_nll_loss(gold_logits, batch["labels"], shift_labels=shift)
    if negative_loss == "unlikelihood":
        negative = unlikelihood_loss(negative_logits, batch["negative_labels"], shift_labels=shift)
    else:
        negative = -weighted_nll_loss(negative_logits, batch["negative_labels"], shift_labels=shift)
    assert ours.item() == pytest.approx((mle + 10.0 * negative).item(), rel=1e-5)
    assert negative.item() != 0


def _one_step(path, tmp_path, tokenizer, batch_size, accumulation, alpha=1.0):
    model = AutoModelForCausalLM.from_pretrained(path, **NO_DROPOUT_GPT2)
    args = config(
        tmp_path / f"{batch_size}x{accumulation}-{alpha}",
        per_device_train_batch_size=batch_size,
        gradient_accumulation_steps=accumulation,
        max_steps=1,
        optim="sgd",
        learning_rate=0.5,
        lr_scheduler_type="constant",
        alpha=alpha,
    )
    before = [p.detach().clone() for p in model.parameters()]
    trainer = UnlikelihoodTrainer(
        model, args, train_dataset=dataset(tokenizer, False), processing_class=tokenizer
    )
    trainer.train()
    return trainer, [p.detach() - old for p, old in zip(model.parameters(), before)]


def test_gradient_accumulation_invariance(tmp_path, gpt2):
    path, tokenizer = gpt2
    _, big = _one_step(path, tmp_path, tokenizer, 4, 1)
    _, small = _one_step(path, tmp_path, tokenizer, 1, 4)
    assert max(update.abs().max().item() for update in big) > 1e-4
    for one, other in zip(big, small):
        torch.testing.assert_close(one, other, rtol=1e-4, atol=1e-6)


def test_negative_columns_survive_remove_unused_columns(tmp_path, gpt2):
    path, tokenizer = gpt2
    trainer, _ = _one_step(path, tmp_path, tokenizer, 2, 1)
    batch = next(iter(trainer.get_train_dataloader()))
    assert set(batch) == {
        "input_ids",
        "attention_mask",
        "labels",
        "negative_input_ids",
        "negative_attention_mask",
        "negative_labels",
    }


def test_alpha_zero_is_plain_maximum_likelihood(tmp_path, gpt2):
    """alpha = 0 (the contradiction paper's likelihood baseline) takes plain Trainer's step on the gold responses."""
    path, tokenizer = gpt2
    _, ours = _one_step(path, tmp_path, tokenizer, 2, 2, alpha=0.0)
    model = AutoModelForCausalLM.from_pretrained(path, **NO_DROPOUT_GPT2)
    before = [p.detach().clone() for p in model.parameters()]
    gold = dataset(tokenizer, False).remove_columns(
        ["negative_input_ids", "negative_attention_mask", "negative_labels"]
    )
    Trainer(
        model,
        TrainingArguments(
            str(tmp_path / "plain"),
            per_device_train_batch_size=2,
            gradient_accumulation_steps=2,
            max_steps=1,
            optim="sgd",
            learning_rate=0.5,
            lr_scheduler_type="constant",
            report_to="none",
            use_cpu=True,
            save_strategy="no",
            seed=0,
            disable_tqdm=True,
        ),
        train_dataset=gold,
        data_collator=DialogueCollator(tokenizer.pad_token_id),
    ).train()
    for update, p, old in zip(ours, model.parameters(), before):
        torch.testing.assert_close(update, p.detach() - old, rtol=1e-5, atol=1e-6)


def test_unlikelihood_step_lowers_the_negatives_probability(tmp_path, gpt2):
    path, tokenizer = gpt2
    trainer, _ = _one_step(path, tmp_path, tokenizer, 4, 1, alpha=10.0)
    baseline, _ = _one_step(path, tmp_path, tokenizer, 4, 1, alpha=0.0)
    batch = DialogueCollator(tokenizer.pad_token_id)(list(trainer.train_dataset))
    negatives = {
        "input_ids": batch["negative_input_ids"],
        "attention_mask": batch["negative_attention_mask"],
        "labels": batch["negative_labels"],
    }
    with torch.no_grad():
        assert trainer.model.eval()(**negatives).loss > baseline.model.eval()(**negatives).loss
