"""The diversity trainers take what ``transformers.Trainer`` takes:

* raw text wherever a dataset is accepted: ``evaluate(eval_dataset=...)`` (a dict of them too) and
  ``predict`` prepare it as the constructor does;
* ``model_init=`` (seeded and called as Trainer does; ``train(trial=...)`` re-inits) and ``args=None``
  (the trainer's own config with Trainer's ``output_dir="tmp_trainer"``);
* torch map-style datasets and ``datasets.IterableDataset`` (tokenized and raw) for both trainers,
  except DRESS's training set, which must be map-style: refused with what to pass.
"""

import datasets
import numpy as np
import pytest
import torch
from test_dress_trainer import CONTEXTS, TopicEmbedder, config, load_gpt2, responses, tokenized
from test_unlikelihood_trainer import EXAMPLES
from test_unlikelihood_trainer import config as unlikelihood_config
from test_unlikelihood_trainer import dataset as unlikelihood_tokenized
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
)

from dialeval.trainers import (
    DRESSConfig,
    DRESSTrainer,
    UnlikelihoodConfig,
    UnlikelihoodTrainer,
    encode_dialogue,
)


@pytest.fixture(scope="module")
def tokenizer(tiny_gpt2_path):
    return AutoTokenizer.from_pretrained(tiny_gpt2_path)


class Rows(torch.utils.data.Dataset):
    """A plain torch map-style dataset of dict rows."""

    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        return dict(self.rows[index])


def as_rows(data: datasets.Dataset) -> Rows:
    return Rows([dict(row) for row in data])


def raw_dialogues(count=None):
    count = len(CONTEXTS) if count is None else count
    return datasets.Dataset.from_dict(
        {"context": CONTEXTS[:count], "response": responses()[:count]}
    )


def raw_unlikelihood():
    return datasets.Dataset.from_dict(
        {
            "context": [c for c, _, _ in EXAMPLES],
            "response": [g for _, g, _ in EXAMPLES],
            "negative_response": [n for _, _, n in EXAMPLES],
        }
    )


def dress_trainer(tmp_path, path, tokenizer, **overrides):
    args = config(
        tmp_path,
        negative_training=False,
        max_length=64,
        per_device_eval_batch_size=2,
        **overrides.pop("args", {}),
    )
    return DRESSTrainer(
        load_gpt2(path),
        args,
        train_dataset=overrides.pop("train_dataset", raw_dialogues()),
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
        **overrides,
    )


def unlikelihood_trainer(tmp_path, path, tokenizer, **overrides):
    args = unlikelihood_config(
        tmp_path, max_length=64, per_device_eval_batch_size=2, **overrides.pop("args", {})
    )
    return UnlikelihoodTrainer(
        load_gpt2(path),
        args,
        train_dataset=overrides.pop("train_dataset", raw_unlikelihood()),
        processing_class=tokenizer,
        **overrides,
    )


BUILDERS = {"dress": dress_trainer, "unlikelihood": unlikelihood_trainer}


# -- raw text after construction -------------------------------------------------------------


@pytest.mark.parametrize("method", BUILDERS)
def test_evaluate_and_predict_take_raw_text(tmp_path, tiny_gpt2_path, tokenizer, method):
    trainer = BUILDERS[method](tmp_path, tiny_gpt2_path, tokenizer)
    raw = raw_dialogues(4)
    gold = tokenized(tokenizer, False, count=4).remove_columns("response")
    expected = trainer.evaluate(eval_dataset=gold)["eval_loss"]
    assert trainer.evaluate(eval_dataset=raw)["eval_loss"] == pytest.approx(expected, rel=1e-6)
    both = trainer.evaluate(eval_dataset={"raw": raw, "tokenized": gold})
    assert both["eval_raw_loss"] == pytest.approx(expected, rel=1e-6)
    assert both["eval_tokenized_loss"] == pytest.approx(expected, rel=1e-6)
    output = trainer.predict(raw)
    assert output.metrics["test_loss"] == pytest.approx(expected, rel=1e-6)
    assert output.predictions.shape[0] == 4
    np.testing.assert_array_equal(output.label_ids, trainer.predict(gold).label_ids)
    with pytest.raises(
        ValueError, match=r"`test_dataset` needs tokenized .*\['context', 'response'\]"
    ):
        trainer.predict(datasets.Dataset.from_dict({"body": ["a", "b"]}))
    with pytest.raises(ValueError, match=r"`test_dataset` has TRL's language-modeling format"):
        trainer.predict(datasets.Dataset.from_dict({"text": ["a", "b"]}))


def test_predict_with_generate_takes_raw_text(tmp_path, tiny_gpt2_path, tokenizer):
    trainer = unlikelihood_trainer(
        tmp_path,
        tiny_gpt2_path,
        tokenizer,
        args={"predict_with_generate": True, "generation_max_length": 3},
    )
    output = trainer.predict(raw_dialogues(2))
    assert output.predictions.shape == (2, 3)


# -- model_init and args=None ----------------------------------------------------------------


def random_gpt2(path):
    return AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(path))


def test_model_init_is_seeded_and_called_as_trainer_does(tmp_path, tiny_gpt2_path, tokenizer):
    calls = []

    def model_init(trial):
        calls.append(trial)
        return random_gpt2(tiny_gpt2_path)

    trainer = UnlikelihoodTrainer(
        model_init=model_init,
        args=unlikelihood_config(tmp_path, seed=7, max_steps=1),
        train_dataset=raw_unlikelihood(),
        processing_class=tokenizer,
    )
    trainer_draw = torch.rand(4)
    plain = Trainer(
        model_init=lambda: random_gpt2(tiny_gpt2_path),
        args=TrainingArguments(
            output_dir=str(tmp_path / "plain"), report_to="none", use_cpu=True, seed=7
        ),
    )
    # the random streams after construction are Trainer's
    assert torch.equal(torch.rand(4), trainer_draw)
    assert calls == [None]  # made once, at construction
    for name, value in plain.model.state_dict().items():  # the same seed before the same call
        torch.testing.assert_close(trainer.model.state_dict()[name], value)
    first = trainer.model
    trainer.train()
    assert calls == [None, None] and trainer.model is not first  # train() re-inits
    with pytest.raises(ValueError, match="but not both"):
        UnlikelihoodTrainer(
            load_gpt2(tiny_gpt2_path),
            unlikelihood_config(tmp_path),
            model_init=model_init,
            train_dataset=raw_unlikelihood(),
            processing_class=tokenizer,
        )
    with pytest.raises(RuntimeError, match="either a `model` or `model_init`"):
        UnlikelihoodTrainer(
            args=unlikelihood_config(tmp_path),
            train_dataset=raw_unlikelihood(),
            processing_class=tokenizer,
        )


def test_hyperparameter_search_makes_a_model_per_trial(tmp_path, tiny_gpt2_path, tokenizer):
    optuna = pytest.importorskip("optuna")
    trials = []

    def model_init(trial):
        trials.append(trial)
        return load_gpt2(tiny_gpt2_path)

    trainer = UnlikelihoodTrainer(
        model_init=model_init,
        args=unlikelihood_config(tmp_path, max_steps=1),
        train_dataset=raw_unlikelihood(),
        eval_dataset=raw_dialogues(2),
        processing_class=tokenizer,
    )
    best = trainer.hyperparameter_search(
        hp_space=lambda trial: {"learning_rate": trial.suggest_float("learning_rate", 1e-4, 1e-3)},
        backend="optuna",
        n_trials=2,
        direction="minimize",
    )
    assert trials[0] is None and len(trials) == 3
    assert all(isinstance(trial, optuna.trial.Trial) for trial in trials[1:])
    assert np.isfinite(best.objective) and "learning_rate" in best.hyperparameters


def test_dress_model_init(tmp_path, tiny_gpt2_path, tokenizer):
    calls = []

    def model_init():
        calls.append(1)
        return load_gpt2(tiny_gpt2_path)

    trainer = DRESSTrainer(
        model_init=model_init,
        args=config(
            tmp_path,
            max_length=64,
            max_steps=1,
            per_device_train_batch_size=2,
            negative_contexts_per_cycle=2,
        ),
        train_dataset=raw_dialogues(),
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
    )
    assert len(calls) == 1
    trainer.train()
    assert len(calls) == 2 and np.isfinite(trainer.state.log_history[-1]["train_loss"])


def test_args_none_builds_the_trainers_own_default_config(
    tmp_path, monkeypatch, tiny_gpt2_path, tiny_bart_path, tokenizer
):
    monkeypatch.chdir(tmp_path)
    trainer = UnlikelihoodTrainer(
        load_gpt2(tiny_gpt2_path), train_dataset=raw_unlikelihood(), processing_class=tokenizer
    )
    assert isinstance(trainer.args, UnlikelihoodConfig)
    assert trainer.args.output_dir == "tmp_trainer" and trainer.args.alpha == 1.0
    # DRESS's defaults (k = 20, 128 generated tokens) need 20 responses and an encoder-decoder's room
    bart_tokenizer = AutoTokenizer.from_pretrained(tiny_bart_path)
    many = datasets.Dataset.from_dict(
        {
            "context": [f"question {index}?" for index in range(40)],
            "response": [f"t{index % 3} answer {index} about the park" for index in range(40)],
        }
    )
    trainer = DRESSTrainer(
        AutoModelForSeq2SeqLM.from_pretrained(tiny_bart_path),
        train_dataset=many,
        processing_class=bart_tokenizer,
        embedder=TopicEmbedder(),
    )
    assert isinstance(trainer.args, DRESSConfig)
    assert trainer.args.output_dir == "tmp_trainer" and (
        trainer.args.gamma,
        trainer.args.num_clusters,
    ) == (30.0, 20)


# -- dataset types ---------------------------------------------------------------------------


def test_unlikelihood_trains_on_a_raw_iterable_dataset(tmp_path, tiny_gpt2_path, tokenizer):
    reference = unlikelihood_trainer(tmp_path, tiny_gpt2_path, tokenizer, args={"max_steps": 2})
    expected = reference.train().training_loss
    rows = [dict(row) for row in raw_unlikelihood()]
    streams = {
        "known features": raw_unlikelihood().to_iterable_dataset(),
        "unknown features": datasets.IterableDataset.from_generator(lambda: iter(rows)),
    }
    for name, stream in streams.items():
        trainer = unlikelihood_trainer(
            tmp_path, tiny_gpt2_path, tokenizer, train_dataset=stream, args={"max_steps": 2}
        )
        loss = trainer.train().training_loss
        assert np.isfinite(loss), name
        assert (
            trainer.evaluate(eval_dataset=raw_dialogues(2).to_iterable_dataset())["eval_loss"] > 0
        )
    assert np.isfinite(expected)


def test_unlikelihood_trains_on_torch_datasets(tmp_path, tiny_gpt2_path, tokenizer):
    args = {"max_steps": 2, "per_device_train_batch_size": 2}
    expected = (
        unlikelihood_trainer(tmp_path, tiny_gpt2_path, tokenizer, args=args).train().training_loss
    )
    for data in (as_rows(raw_unlikelihood()), as_rows(unlikelihood_tokenized(tokenizer, False))):
        trainer = unlikelihood_trainer(
            tmp_path, tiny_gpt2_path, tokenizer, train_dataset=data, args=args
        )
        assert trainer.train().training_loss == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("kind", ["raw", "tokenized"])
def test_dress_trains_on_a_torch_map_style_dataset(tmp_path, tiny_gpt2_path, tokenizer, kind):
    data = (
        raw_dialogues() if kind == "raw" else tokenized(tokenizer, False).remove_columns("response")
    )
    args = {"max_steps": 2, "per_device_train_batch_size": 2}
    reference = dress_trainer(tmp_path, tiny_gpt2_path, tokenizer, train_dataset=data, args=args)
    trainer = dress_trainer(
        tmp_path, tiny_gpt2_path, tokenizer, train_dataset=as_rows(data), args=args
    )
    assert trainer.train_dataset["dress_weight"] == reference.train_dataset["dress_weight"]
    assert trainer.train().training_loss == pytest.approx(reference.train().training_loss, rel=1e-5)


def test_dress_refuses_an_iterable_training_set_and_evaluates_on_one(
    tmp_path, tiny_gpt2_path, tokenizer
):
    stream = tokenized(tokenizer, False).to_iterable_dataset()
    with pytest.raises(ValueError, match="needs a map-style dataset: pass a datasets.Dataset"):
        dress_trainer(tmp_path, tiny_gpt2_path, tokenizer, train_dataset=stream)
    trainer = dress_trainer(tmp_path, tiny_gpt2_path, tokenizer)
    expected = trainer.evaluate(eval_dataset=raw_dialogues(4))["eval_loss"]
    assert trainer.evaluate(eval_dataset=raw_dialogues(4).to_iterable_dataset())[
        "eval_loss"
    ] == pytest.approx(expected, rel=1e-6)
    assert trainer.evaluate(eval_dataset=as_rows(raw_dialogues(4)))["eval_loss"] == pytest.approx(
        expected, rel=1e-6
    )


def test_rows_read_lazily_are_checked_with_their_index(tmp_path, tiny_gpt2_path, tokenizer):
    rows = [
        encode_dialogue(tokenizer, context, response, False, max_length=64)
        for context, response in zip(CONTEXTS[:4], responses()[:4])
    ]
    rows[2] = {**rows[2], "labels": list(rows[2]["input_ids"])}  # the usual causal-LM preparation
    trainer = dress_trainer(tmp_path, tiny_gpt2_path, tokenizer)
    with pytest.raises(ValueError, match=r"`eval_dataset` row 2: `labels` equals the input ids"):
        trainer.evaluate(eval_dataset=Rows(rows))
    with pytest.raises(ValueError, match=r"`test_dataset` row 0 is a str"):
        trainer.predict(["just text"])


def test_identical_dress_trials_give_identical_losses(tmp_path, tiny_gpt2_path, tokenizer):
    """Every train() starts from the config's negative-training state, so hyperparameter_search's
    trials of one setting train alike, negative training on (a state carried over samples other
    contexts for the next trial's first cycle)."""
    pytest.importorskip("optuna")
    losses = []

    def objective(metrics):
        losses.append(metrics["eval_loss"])
        return metrics["eval_loss"]

    trainer = DRESSTrainer(
        model_init=lambda trial: load_gpt2(tiny_gpt2_path),
        args=config(
            tmp_path,
            max_length=64,
            max_steps=2,
            learning_rate=5e-3,
            per_device_train_batch_size=2,
            negative_contexts_per_cycle=2,
            recluster_every=1,
        ),
        train_dataset=raw_dialogues(),
        eval_dataset=raw_dialogues(4),
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
    )
    trainer.hyperparameter_search(
        hp_space=lambda trial: {"seed": trial.suggest_categorical("seed", [0])},
        compute_objective=objective,
        backend="optuna",
        n_trials=2,
        direction="minimize",
    )
    assert len(losses) == 2 and losses[0] == losses[1], losses
    assert trainer.negative_cycles  # negative training ran in each trial


@pytest.mark.parametrize("method", ["dress", "unlikelihood"])
def test_options_that_would_change_the_trainers_own_loss_are_refused(
    tmp_path, tiny_gpt2_path, tokenizer, method
):
    """Documented on the trainers' page: both compute their loss themselves."""
    with pytest.raises(ValueError, match=r"`label_smoothing_factor` must be 0"):
        BUILDERS[method](tmp_path, tiny_gpt2_path, tokenizer, args={"label_smoothing_factor": 0.1})
    with pytest.raises(ValueError, match=r"`compute_loss_func` cannot be combined"):
        BUILDERS[method](
            tmp_path, tiny_gpt2_path, tokenizer, compute_loss_func=lambda *args, **kwargs: 0
        )
