"""The Trainer contract, for DRESS and unlikelihood x causal (tiny GPT-2) and seq2seq (tiny BART).

What a ``transformers.Trainer`` user does: ``evaluate`` / ``predict`` with predict_with_generate
on and off and compute_metrics on and off; ``train`` with ``eval_strategy="steps"`` +
``load_best_model_at_end``; ``save_model``; resume from a checkpoint. ``eval_loss`` must be the
plain gold NLL (the model's own mean token loss on the gold responses, negatives ignored), and
each training log must carry the gold NLL, the weighted loss and the negative term.
Tiny models, 4 examples, 4 steps.
"""

import numpy as np
import pytest
import torch
from huggingface_hub import ModelCard
from safetensors.torch import load_file
from test_dress_trainer import NO_DROPOUT_BART, NO_DROPOUT_GPT2, TOPICS, TopicEmbedder, tokenized
from test_unlikelihood_trainer import dataset as unlikelihood_dataset
from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

from dialeval.metrics.sem_ent.clusters import SemanticClusters
from dialeval.trainers import (
    DialogueCollator,
    DRESSConfig,
    DRESSTrainer,
    UnlikelihoodConfig,
    UnlikelihoodTrainer,
)

KINDS = ["dress", "unlikelihood"]
ARCHITECTURES = ["gpt2", "bart"]
ROWS = ("input_ids", "attention_mask", "labels")


def _model(path, architecture):
    if architecture == "bart":
        return AutoModelForSeq2SeqLM.from_pretrained(path, **NO_DROPOUT_BART)
    return AutoModelForCausalLM.from_pretrained(path, **NO_DROPOUT_GPT2)


def make(kind, architecture, request, output_dir, compute_metrics=None, **overrides):
    """A trainer of ``kind`` on 4 examples, evaluated on the same 4."""
    path = request.getfixturevalue(f"tiny_{architecture}_path")
    tokenizer = AutoTokenizer.from_pretrained(path)
    is_encoder_decoder = architecture == "bart"
    settings = dict(
        output_dir=str(output_dir),
        report_to="none",
        use_cpu=True,
        disable_tqdm=True,
        seed=0,
        save_strategy="no",
        logging_strategy="no",
        per_device_train_batch_size=2,
        per_device_eval_batch_size=4,
        generation_max_length=5,
        optim="sgd",
        learning_rate=0.5,
        lr_scheduler_type="constant",
    )
    settings.update(overrides)
    if kind == "dress":
        data = tokenized(tokenizer, is_encoder_decoder, count=4)
        args = DRESSConfig(
            num_clusters=TOPICS,
            gamma=2.0,
            negative_max_new_tokens=6,
            negative_generation_batch_size=4,
            recluster_every=2,
            **settings,
        )
        trainer = DRESSTrainer(
            _model(path, architecture),
            args,
            train_dataset=data,
            eval_dataset=data,
            processing_class=tokenizer,
            compute_metrics=compute_metrics,
            embedder=TopicEmbedder(),
        )
    else:
        data = unlikelihood_dataset(tokenizer, is_encoder_decoder)
        trainer = UnlikelihoodTrainer(
            _model(path, architecture),
            UnlikelihoodConfig(alpha=1.0, **settings),
            train_dataset=data,
            eval_dataset=data,
            processing_class=tokenizer,
            compute_metrics=compute_metrics,
        )
    return trainer, data


def plain_gold_nll(model, data, pad_token_id) -> float:
    """The model's own mean token loss on the gold rows: what plain Trainer reports as eval_loss."""
    batch = DialogueCollator(pad_token_id)([{key: row[key] for key in ROWS} for row in data])
    model.eval()
    with torch.no_grad():
        return model(**batch).loss.item()


@pytest.mark.parametrize("compute_metrics", [False, True], ids=["no-metrics", "metrics"])
@pytest.mark.parametrize("predict_with_generate", [False, True], ids=["logits", "generate"])
@pytest.mark.parametrize("architecture", ARCHITECTURES)
@pytest.mark.parametrize("kind", KINDS)
def test_evaluate_and_predict(
    kind, architecture, predict_with_generate, compute_metrics, request, tmp_path
):
    seen = {}

    def metrics(prediction):
        seen["predictions"] = prediction.predictions
        return {"rows": float(len(prediction.predictions))}

    trainer, data = make(
        kind,
        architecture,
        request,
        tmp_path,
        compute_metrics=metrics if compute_metrics else None,
        predict_with_generate=predict_with_generate,
    )
    expected = plain_gold_nll(trainer.model, data, trainer.pad_token_id)
    result = trainer.evaluate()
    assert result["eval_loss"] == pytest.approx(expected, rel=1e-5)
    assert ("eval_rows" in result) == compute_metrics
    if compute_metrics:
        assert result["eval_rows"] == 4.0
        # generated token ids (rows x new tokens) with predict_with_generate, else (rows x length x vocab) logits
        assert seen["predictions"].ndim == (2 if predict_with_generate else 3)
    output = trainer.predict(data)
    assert output.metrics["test_loss"] == pytest.approx(expected, rel=1e-5)
    assert output.predictions.shape[0] == 4 and output.predictions.ndim == (
        2 if predict_with_generate else 3
    )
    assert output.label_ids.shape[0] == 4


def _weights(directory):
    return load_file(str(directory / "model.safetensors"))


@pytest.mark.parametrize("architecture", ARCHITECTURES)
@pytest.mark.parametrize("kind", KINDS)
def test_train_eval_steps_best_model_save_and_resume(kind, architecture, request, tmp_path):
    schedule = dict(
        max_steps=4,
        eval_strategy="steps",
        eval_steps=2,
        save_strategy="steps",
        save_steps=2,
        load_best_model_at_end=True,
        logging_strategy="steps",
        logging_steps=1,
    )
    trainer, _ = make(kind, architecture, request, tmp_path / "whole", **schedule)
    trainer.train()

    logs = [
        entry for entry in trainer.state.log_history if "loss" in entry and "eval_loss" not in entry
    ]
    assert len(logs) == 4
    for entry in logs:
        # the optimized loss is the weighted gold term plus the negative term, logged apart with the plain gold NLL
        assert entry["loss"] == pytest.approx(
            entry["weighted_nll"] + entry["negative_loss"], rel=1e-4, abs=1e-6
        )
        assert entry["negative_loss"] != 0.0  # every step carries negatives
        if kind == "dress":
            assert entry["weighted_nll"] < entry["gold_nll"]  # gamma 2 weights are < 1
            assert entry["negative_loss"] < 0.0  # weight -1
        else:
            assert entry["weighted_nll"] == entry["gold_nll"] and entry["negative_loss"] > 0.0
    evaluations = [
        entry["eval_loss"] for entry in trainer.state.log_history if "eval_loss" in entry
    ]
    assert len(evaluations) == 2
    best = tmp_path / "whole" / f"checkpoint-{2 * (1 + int(np.argmin(evaluations)))}"
    assert trainer.state.best_model_checkpoint == str(best)
    # load_best_model_at_end restored the best checkpoint's weights
    for name, value in _weights(best).items():
        torch.testing.assert_close(trainer.model.state_dict()[name], value)

    final = tmp_path / "final"
    trainer.save_model(str(final))
    card = ModelCard.load(str(final / "README.md"))
    assert card.data.library_name == "transformers" and "dialeval" in card.data.tags
    assert ("dress" if kind == "dress" else "unlikelihood") in card.data.tags
    assert "## Hyperparameters" in card.text and "## Citation" in card.text
    assert ("`gamma` | 2.0" if kind == "dress" else "`alpha` | 1.0") in card.text
    assert (best / "README.md").is_file()
    if kind == "dress":
        saved = SemanticClusters.load(final / "semantic_clusters", embedder=TopicEmbedder())
        np.testing.assert_array_equal(saved.centroids, trainer.semantic_clusters.centroids)

    resumed, _ = make(kind, architecture, request, tmp_path / "resumed", **schedule)
    resumed.train(resume_from_checkpoint=str(tmp_path / "whole" / "checkpoint-2"))
    for name, value in _weights(tmp_path / "whole" / "checkpoint-4").items():
        torch.testing.assert_close(
            _weights(tmp_path / "resumed" / "checkpoint-4")[name], value, rtol=1e-5, atol=1e-6
        )
