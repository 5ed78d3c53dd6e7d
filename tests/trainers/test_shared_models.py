"""A trainer never trains the instance dialeval.hub.load_model shares with metrics and DTG."""

from __future__ import annotations

import pytest
from test_trainer_inputs import unlikelihood_config

from dialeval.hub import load_model
from dialeval.trainers import UnlikelihoodTrainer
from dialeval.validation import ArgumentError


def test_a_trainer_refuses_the_shared_instance_and_takes_a_private_one(tmp_path, tiny_gpt2_path):
    shared = load_model(tiny_gpt2_path, "language_model", device="cpu")
    with pytest.raises(
        ArgumentError, match="^`model` is the shared, read-only instance .*cached=False"
    ) as caught:
        UnlikelihoodTrainer(
            shared.model, unlikelihood_config(tmp_path), processing_class=shared.tokenizer
        )
    assert caught.value.argument == "model"
    private = load_model(tiny_gpt2_path, "language_model", device="cpu", cached=False)
    trainer = UnlikelihoodTrainer(
        private.model, unlikelihood_config(tmp_path), processing_class=private.tokenizer
    )
    assert trainer.model is private.model


def test_a_model_init_returning_the_shared_instance_is_refused(tmp_path, tiny_gpt2_path):
    shared = load_model(tiny_gpt2_path, "language_model", device="cpu")
    with pytest.raises(ArgumentError, match="^`model_init` is the shared, read-only instance"):
        UnlikelihoodTrainer(
            model_init=lambda trial=None: shared.model,
            args=unlikelihood_config(tmp_path),
            processing_class=shared.tokenizer,
        )
