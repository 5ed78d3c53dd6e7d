"""DRESSTrainer (Han et al. 2022, §4.2) on the tiny GPT-2 and BART built in tests/tiny_models.py.

Responses are written "t<topic> ..." and :class:`TopicEmbedder` puts each near its topic's axis,
so the semantic clusters, their shares and the DRESS weights are known by construction.
Dropout is switched off so that two runs can be compared number for number.
"""

import re

import datasets
import numpy as np
import pytest
import torch
from transformers import (
    AutoModelForCausalLM,
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
)

from dialeval.metrics.sem_ent.clusters import SemanticClusters
from dialeval.trainers import DialogueCollator, DRESSConfig, DRESSTrainer, encode_dialogue

TOPICS = 3
NO_DROPOUT_GPT2 = {"resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0}
NO_DROPOUT_BART = {"dropout": 0.0, "attention_dropout": 0.0, "activation_dropout": 0.0}
# 6 responses of topic 0, 3 of topic 1, 1 of topic 2: shares 0.6 / 0.3 / 0.1.
TOPIC_OF_EXAMPLE = [0, 0, 0, 0, 0, 0, 1, 1, 1, 2]
CONTEXTS = [
    "hi there! how are you doing today?",
    "do you have any plans for the weekend?",
    "what are you going to cook?",
    "sure, what kind of movies do you like?",
    "do you have any pets at home?",
    "where do you work?",
    "what is your favourite book?",
    "was the weather good?",
    "that must be hard work. do you enjoy it?",
    "okay, see you later!",
]


class TopicEmbedder:
    """ "t<k> ..." lies on axis k (plus a little text-seeded noise); any other text on axis 0."""

    def identity(self):
        return {"kind": "test", "model": "topic-embedder", "dim": 8}

    def embed(self, texts):
        rows = []
        for text in texts:
            match = re.match(r"t(\d) ", text)
            vector = np.zeros(8)
            vector[int(match.group(1)) if match else 0] = 1.0
            rng = np.random.default_rng(sum(map(ord, text)))
            rows.append(vector + 0.01 * rng.standard_normal(8))
        return np.asarray(rows, dtype=np.float32)


def responses():
    return [
        f"t{topic} reply number {index} about the park"
        for index, topic in enumerate(TOPIC_OF_EXAMPLE)
    ]


def tokenized(tokenizer, is_encoder_decoder, count=None):
    count = len(CONTEXTS) if count is None else count
    rows = [
        encode_dialogue(tokenizer, context, response, is_encoder_decoder, max_length=64)
        for context, response in zip(CONTEXTS[:count], responses()[:count])
    ]
    data = {key: [row[key] for row in rows] for key in rows[0]}
    data["response"] = responses()[:count]  # an extra text column: must be removed, not collated
    return datasets.Dataset.from_dict(data)


@pytest.fixture(scope="module")
def gpt2(tiny_gpt2_path):
    return tiny_gpt2_path, AutoTokenizer.from_pretrained(tiny_gpt2_path)


@pytest.fixture(scope="module")
def bart(tiny_bart_path):
    return tiny_bart_path, AutoTokenizer.from_pretrained(tiny_bart_path)


def load_gpt2(path):
    return AutoModelForCausalLM.from_pretrained(path, **NO_DROPOUT_GPT2)


def config(tmp_path, **overrides):
    settings = dict(
        output_dir=str(tmp_path / "out"),
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        logging_strategy="no",
        num_clusters=TOPICS,
        gamma=2.0,
        seed=0,
        disable_tqdm=True,
        negative_max_new_tokens=6,
    )  # the default 128 fills the tiny GPT-2's 128 positions
    settings.update(overrides)
    return DRESSConfig(**settings)


def test_config_validates_and_has_paper_defaults(tmp_path):
    defaults = DRESSConfig(output_dir=str(tmp_path), report_to="none")
    assert (defaults.gamma, defaults.num_clusters, defaults.head_threshold) == (30.0, 20, 0.1)
    assert defaults.negative_training and defaults.negative_contexts_per_cycle == 5000
    # where the paper is silent, the released code's: --label-truncate 128, all generated tokens as the divisor
    assert (
        defaults.negative_max_new_tokens == 128
        and defaults.negative_normalization == "all_generated"
    )
    for bad in (
        {"gamma": -1.0},
        {"num_clusters": 1},
        {"head_threshold": 1.0},
        {"recluster_every": 0},
        {"negative_contexts_per_cycle": 0},
        {"negative_normalization": "tokens"},
        {"max_negatives_per_batch": 0},
        {"max_length": 2},
    ):
        with pytest.raises(ValueError, match=next(iter(bad))):
            DRESSConfig(output_dir=str(tmp_path), report_to="none", **bad)


def test_weights_follow_eq5_on_training_clusters(tmp_path, gpt2):
    path, tokenizer = gpt2
    trainer = DRESSTrainer(
        load_gpt2(path),
        config(tmp_path),
        train_dataset=tokenized(tokenizer, False),
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
    )
    # the labels were decoded back to the texts, clustered by topic: shares 0.6, 0.3, 0.1 (in some cluster order)
    assert sorted(trainer.training_cluster_distribution.round(6).tolist()) == [0.1, 0.3, 0.6]
    expected = {0: 0.4**2, 1: 0.7**2, 2: 0.9**2}
    np.testing.assert_allclose(
        trainer.train_dataset["dress_weight"], [expected[t] for t in TOPIC_OF_EXAMPLE], rtol=1e-6
    )


def test_weight_column_survives_remove_unused_columns(tmp_path, gpt2):
    path, tokenizer = gpt2
    trainer = DRESSTrainer(
        load_gpt2(path),
        config(tmp_path, per_device_train_batch_size=4),
        train_dataset=tokenized(tokenizer, False),
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
    )
    assert trainer.args.remove_unused_columns
    batch = next(iter(trainer.get_train_dataloader()))
    assert set(batch) == {"input_ids", "attention_mask", "labels", "dress_weight"}
    assert batch["dress_weight"].dtype == torch.float32 and batch["dress_weight"].shape == (4,)


def test_input_validation(tmp_path, gpt2):
    path, tokenizer = gpt2
    data = tokenized(tokenizer, False)
    with pytest.raises(ValueError, match="DRESSConfig"):
        DRESSTrainer(
            load_gpt2(path),
            TrainingArguments(str(tmp_path), report_to="none"),
            train_dataset=data,
            processing_class=tokenizer,
            embedder=TopicEmbedder(),
        )
    with pytest.raises(
        ValueError, match=r"^`semantic_clusters` is required \(fitted\), or an `embedder`"
    ):
        DRESSTrainer(
            load_gpt2(path), config(tmp_path), train_dataset=data, processing_class=tokenizer
        )
    clusters = SemanticClusters.fit(responses(), TopicEmbedder(), num_clusters=2)
    with pytest.raises(ValueError, match="k=2"):
        DRESSTrainer(
            load_gpt2(path),
            config(tmp_path),
            train_dataset=data,
            processing_class=tokenizer,
            semantic_clusters=clusters,
        )
    with pytest.raises(ValueError, match="response_text_column"):
        DRESSTrainer(
            load_gpt2(path),
            config(tmp_path, response_text_column="missing"),
            train_dataset=data,
            processing_class=tokenizer,
            embedder=TopicEmbedder(),
        )
    # a list of dict rows is a map-style dataset (Trainer's DataLoader takes it); no dataset at all is refused
    with pytest.raises(ValueError, match="datasets.Dataset or a torch map-style Dataset"):
        DRESSTrainer(
            load_gpt2(path),
            config(tmp_path),
            train_dataset=None,
            processing_class=tokenizer,
            embedder=TopicEmbedder(),
        )


@pytest.mark.parametrize("architecture", ["gpt2", "bart"])
def test_unit_weights_reproduce_the_models_own_loss(tmp_path, architecture, request):
    """gamma = 0 (every weight 1) must be exactly the model's mean token NLL: same shift, same targets."""
    path, tokenizer = request.getfixturevalue(architecture)
    is_encoder_decoder = architecture == "bart"
    model = (AutoModelForSeq2SeqLM if is_encoder_decoder else AutoModelForCausalLM).from_pretrained(
        path
    )
    trainer = DRESSTrainer(
        model,
        config(tmp_path, gamma=0.0),
        train_dataset=tokenized(tokenizer, is_encoder_decoder),
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
    )
    batch = DialogueCollator(tokenizer.pad_token_id)(
        [
            {k: v for k, v in row.items() if k != "response"}
            for row in trainer.train_dataset.select(range(4))
        ]
    )
    model.eval()
    with torch.no_grad():
        ours = trainer.compute_loss(model, batch)
        reference = model(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            labels=batch["labels"],
        ).loss
    assert ours.item() == pytest.approx(reference.item(), rel=1e-5)


def _one_step(
    path,
    tmp_path,
    batch_size,
    accumulation,
    negative_training,
    loader=load_gpt2,
    is_encoder_decoder=False,
    tokenizer=None,
    data=None,
    embedder=None,
    **overrides,
):
    model = loader(path)
    settings = dict(
        per_device_train_batch_size=batch_size,
        gradient_accumulation_steps=accumulation,
        max_steps=1,
        optim="sgd",
        learning_rate=0.5,
        lr_scheduler_type="constant",
        negative_training=negative_training,
        recluster_every=1,
        negative_generation_batch_size=3,
        negative_max_new_tokens=6,
        head_threshold=0.1,
    )
    args = config(tmp_path / f"{batch_size}x{accumulation}", **{**settings, **overrides})
    data = tokenized(tokenizer, is_encoder_decoder, count=4) if data is None else data
    trainer = DRESSTrainer(
        model,
        args,
        train_dataset=data,
        processing_class=tokenizer,
        embedder=embedder or TopicEmbedder(),
    )
    before = [parameter.detach().clone() for parameter in model.parameters()]
    trainer.train()
    updates = [parameter.detach() - old for parameter, old in zip(model.parameters(), before)]
    return trainer, updates


@pytest.mark.parametrize("negative_training", [False, True], ids=["DRESS-NT", "DRESS"])
def test_gradient_accumulation_invariance(tmp_path, gpt2, negative_training):
    """TRL-style: batch 1 x 4 accumulation steps == batch 4 x 1 step (tokens differ per example)."""
    path, tokenizer = gpt2
    big, big_updates = _one_step(path, tmp_path, 4, 1, negative_training, tokenizer=tokenizer)
    small, small_updates = _one_step(path, tmp_path, 1, 4, negative_training, tokenizer=tokenizer)
    assert max(update.abs().max().item() for update in big_updates) > 1e-4  # the step did something
    for one, other in zip(big_updates, small_updates):
        torch.testing.assert_close(one, other, rtol=1e-4, atol=1e-6)
    if negative_training:
        # the random tiny model answers everything alike: one head cluster, every generation a negative
        assert [cycle["num_negatives"] for cycle in big.negative_cycles] == [4]
        # 4 negatives over the 4 micro-batches of the step: one each (1 x 4), all four at once (4 x 1)
        assert small.negative_cycles[0]["num_negatives"] == 4 and small._negative_batches_done == 4
        assert (
            small.negative_cycles[0]["max_negatives_per_batch"] == 1
            and big.negative_cycles[0]["max_negatives_per_batch"] == 4
        )
    else:
        assert big.negative_cycles == [] and small.negative_cycles == []


def test_negatives_are_the_models_greedy_responses(tmp_path, gpt2):
    """Left-padded batch generation of the cycle == generating each prompt alone; labels on the response only."""
    path, tokenizer = gpt2
    trainer, _ = _one_step(path, tmp_path, 4, 1, True, tokenizer=tokenizer)
    # the weights the cycle generated with (it ran before the first step)
    model = load_gpt2(path).eval()
    eos = tokenizer.eos_token_id
    assert len(trainer._negative_pool) == 4
    for example in trainer._negative_pool:
        start = next(i for i, label in enumerate(example["labels"]) if label != -100)
        prompt, response = example["input_ids"][:start], example["input_ids"][start:]
        assert example["labels"][start:] == response
        with torch.no_grad():
            alone = model.generate(
                torch.tensor([prompt]),
                attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                do_sample=False,
                max_new_tokens=6,
                no_repeat_ngram_size=3,
                pad_token_id=tokenizer.pad_token_id,
            )
        expected = alone[0, len(prompt) :].tolist()
        if eos in expected:
            expected = expected[: expected.index(eos) + 1]
        assert response == expected
        assert tuple(prompt) in {
            tuple(row["input_ids"][: next(i for i, l in enumerate(row["labels"]) if l != -100)])
            for row in trainer.train_dataset
        }


def test_long_contexts_keep_within_the_position_table(tmp_path, gpt2):
    """tiny GPT-2 has 128 positions: 40 new tokens leave 88 for a (longer) context, cut from the left."""
    path, tokenizer = gpt2
    long_context = [" ".join(CONTEXTS[i:] + CONTEXTS[:i]) for i in range(4)]
    rows = [
        encode_dialogue(tokenizer, context, response, False, max_length=128)
        for context, response in zip(long_context, responses())
    ]
    data = datasets.Dataset.from_dict({key: [row[key] for row in rows] for key in rows[0]})
    assert min(row["labels"].count(-100) for row in rows) > 88
    trainer, _ = _one_step(
        path,
        tmp_path,
        4,
        1,
        True,
        tokenizer=tokenizer,
        data=data,
        negative_max_new_tokens=40,
        negative_generation_batch_size=4,
    )
    assert len(trainer._negative_pool) == 4
    for example in trainer._negative_pool:
        start = next(i for i, label in enumerate(example["labels"]) if label != -100)
        assert start == 88 and len(example["input_ids"]) <= 128
    with pytest.raises(ValueError, match="no room"):
        _one_step(
            path,
            tmp_path / "too-long",
            4,
            1,
            True,
            tokenizer=tokenizer,
            negative_max_new_tokens=128,
        )


def test_negative_loss_pushes_generated_responses_down(tmp_path, gpt2):
    """After DRESS steps, the weight -1 term has raised the NLL of the negatives relative to DRESS(-NT)."""
    path, tokenizer = gpt2
    with_nt, _ = _one_step(path, tmp_path / "nt", 4, 1, True, tokenizer=tokenizer)
    without_nt, _ = _one_step(path, tmp_path / "plain", 4, 1, False, tokenizer=tokenizer)
    negatives = DialogueCollator(tokenizer.pad_token_id)(
        [
            {key: row[key] for key in ("input_ids", "attention_mask", "labels")}
            for row in with_nt._negative_pool
        ]
    )
    losses = {}
    for name, trainer in (("nt", with_nt), ("plain", without_nt)):
        trainer.model.eval()
        with torch.no_grad():
            losses[name] = trainer.model(**negatives).loss.item()
    assert losses["nt"] > losses["plain"]


def test_seq2seq_training_negatives_and_predict_with_generate(tmp_path, bart):
    path, tokenizer = bart
    loader = lambda p: AutoModelForSeq2SeqLM.from_pretrained(p, **NO_DROPOUT_BART)
    trainer, updates = _one_step(
        path, tmp_path, 2, 2, True, loader=loader, is_encoder_decoder=True, tokenizer=tokenizer
    )
    assert max(update.abs().max().item() for update in updates) > 1e-4
    assert trainer.negative_cycles[0]["num_generated"] == 4
    # encoder input = the context, labels = the generation only
    for example in trainer._negative_pool:
        assert example["input_ids"] in trainer.train_dataset["input_ids"]
        assert 0 < len(example["labels"]) <= 6

    eval_args = config(
        tmp_path / "eval",
        predict_with_generate=True,
        generation_max_length=8,
        per_device_eval_batch_size=3,
    )
    seen = {}

    def compute_metrics(prediction):
        seen["shape"] = prediction.predictions.shape
        return {"generated": float(prediction.predictions.shape[0])}

    evaluator = DRESSTrainer(
        trainer.model,
        eval_args,
        train_dataset=tokenized(tokenizer, True),
        eval_dataset=tokenized(tokenizer, True, count=5),
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
        compute_metrics=compute_metrics,
    )
    metrics = evaluator.evaluate()
    assert np.isfinite(metrics["eval_loss"]) and metrics["eval_generated"] == 5.0
    # generated token ids, not (n, length, vocab) logits
    assert len(seen["shape"]) == 2 and seen["shape"][0] == 5


def test_gamma_zero_takes_plain_trainers_step(tmp_path, gpt2):
    """gamma = 0 without negatives takes exactly plain Trainer's step (the drop-in baseline)."""
    path, tokenizer = gpt2
    data = tokenized(tokenizer, False, count=4)
    plain_model, dress_model = load_gpt2(path), load_gpt2(path)
    common = dict(
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
    )
    Trainer(
        plain_model,
        TrainingArguments(str(tmp_path / "plain"), **common),
        train_dataset=data.remove_columns("response"),
        data_collator=DialogueCollator(tokenizer.pad_token_id),
    ).train()
    DRESSTrainer(
        dress_model,
        DRESSConfig(
            str(tmp_path / "dress"),
            gamma=0.0,
            num_clusters=TOPICS,
            negative_training=False,
            **common,
        ),
        train_dataset=data,
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
    ).train()
    for plain, dress in zip(plain_model.parameters(), dress_model.parameters()):
        torch.testing.assert_close(plain, dress, rtol=1e-5, atol=1e-6)


def test_causal_predict_with_generate_generates_from_the_context_only(tmp_path, gpt2):
    """A causal eval example holds context + response: predictions must continue the context, not the gold."""
    path, tokenizer = gpt2
    model = load_gpt2(path).eval()
    eval_data = tokenized(tokenizer, False, count=5)
    seen = {}

    def compute_metrics(prediction):
        seen["predictions"], seen["labels"] = prediction.predictions, prediction.label_ids
        return {"rows": float(prediction.predictions.shape[0])}

    evaluator = DRESSTrainer(
        model,
        config(
            tmp_path,
            predict_with_generate=True,
            generation_max_length=5,
            per_device_eval_batch_size=2,
        ),
        train_dataset=eval_data,
        eval_dataset=eval_data,
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
        compute_metrics=compute_metrics,
    )
    metrics = evaluator.evaluate()
    assert np.isfinite(metrics["eval_loss"]) and metrics["eval_rows"] == 5.0
    for row, example in enumerate(eval_data):
        start = example["labels"].index(next(label for label in example["labels"] if label != -100))
        context = torch.tensor([example["input_ids"][:start]])
        with torch.no_grad():
            expected = model.generate(
                context,
                attention_mask=torch.ones_like(context),
                max_new_tokens=5,
                do_sample=False,
                pad_token_id=tokenizer.pad_token_id,
            )[0, start:].tolist()
        predicted = [token for token in seen["predictions"][row].tolist() if token != -100][
            : len(expected)
        ]
        assert predicted == expected
        gold = [token for token in seen["labels"][row].tolist() if token != -100]
        assert gold == example["labels"][start:]


@pytest.mark.parametrize("recluster_every", [3, None], ids=["every-3-steps", "every-epoch"])
def test_a_resumed_run_trains_as_the_uninterrupted_one(tmp_path, gpt2, recluster_every):
    """The negative pool, its position and the cycle schedule travel with the checkpoint.

    Every-3-steps (batch 1): cycle 0's four negatives are spread over its three steps as 1, 1, 2
    rows, and cycle 1 comes after step 3; a resume at step 2 that lost the pool, lost its
    position in it (step 2 takes the last two) or ran a cycle at once would train steps 2-3 on
    other negatives. Every-epoch: 2 steps an epoch, the resume lands mid-epoch 2 and must not
    start a cycle there.
    """
    path, tokenizer = gpt2
    data = tokenized(tokenizer, False, count=4)
    steps_per_epoch = 2 if recluster_every is None else None

    def run(output_dir, max_steps, resume=None):
        model = load_gpt2(path)
        args = config(
            output_dir,
            per_device_train_batch_size=2 if steps_per_epoch else 1,
            max_steps=max_steps,
            optim="sgd",
            learning_rate=0.5,
            lr_scheduler_type="constant",
            negative_training=True,
            recluster_every=recluster_every,
            negative_generation_batch_size=4,
            negative_max_new_tokens=6,
            save_strategy="steps",
            save_steps=1 if steps_per_epoch else 2,
            head_threshold=0.1,
            max_negatives_per_batch=2,
        )
        trainer = DRESSTrainer(
            model, args, train_dataset=data, processing_class=tokenizer, embedder=TopicEmbedder()
        )
        trainer.train(resume_from_checkpoint=resume)
        return trainer, [parameter.detach().clone() for parameter in model.parameters()]

    total, resume_at = (5, 3) if steps_per_epoch else (4, 2)
    whole, whole_params = run(tmp_path / "whole", total)
    checkpoint = tmp_path / "whole" / "out" / f"checkpoint-{resume_at}"
    assert (checkpoint / "dress_negative_state.json").is_file()
    resumed, resumed_params = run(tmp_path / "resumed", total, resume=str(checkpoint))
    assert [c["global_step"] for c in resumed.negative_cycles] == [
        c["global_step"] for c in whole.negative_cycles
    ]
    assert len(whole.negative_cycles) >= 2
    for one, other in zip(whole_params, resumed_params):
        torch.testing.assert_close(one, other, rtol=1e-5, atol=1e-6)


def test_negatives_are_greedy_whatever_the_checkpoints_decoding(tmp_path, tiny_seq2seq_paths):
    """A checkpoint's Blender-style generation_config (10 beams, min_length 20) must not shape the negatives:
    a model whose greedy answer is eos at once answers eos at once (an empty, never-negative response)."""
    from tiny_lms import eager_to_stop

    path = tiny_seq2seq_paths["blenderbot_small"]
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = eager_to_stop(AutoModelForSeq2SeqLM.from_pretrained(path, **NO_DROPOUT_BART))
    trainer = DRESSTrainer(
        model,
        config(tmp_path),
        train_dataset=tokenized(tokenizer, True),
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
    )
    prompts = trainer.train_dataset["input_ids"][:3]
    _, generated = trainer.generate_responses(prompts)
    assert generated == [[tokenizer.eos_token_id]] * 3
