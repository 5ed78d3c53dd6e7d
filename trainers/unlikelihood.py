"""Unlikelihood training and Negative Training: the baselines the papers compare against.

* Unlikelihood (Li et al. 2020, "Don't say that!"; the n-best contradiction paper, §4.3 and
  App. C, trains Blender with alpha in {0, 1, 10}): every example has a gold and a negative
  response; ``loss = MLE(gold) + alpha * UL(negative)``, ``UL = -sum_t log(1 - p(neg_t))``
  (clamped), each term divided by its own target-token count over the accumulation window.
* Negative Training (He & Glass 2020; DRESS's NT baseline, §5.2): the negative term is the NLL
  of the negative response with weight -1, i.e. :func:`~dialeval.trainers.losses.weighted_nll_loss`
  (the same function DRESS uses) with ``example_weights = -1``;
  ``negative_loss="negative_training"``.

alpha = 0 is plain maximum likelihood in the same setting (the papers' fair comparison).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from dialeval.trainers.chat_formats import with_format_note
from dialeval.trainers.construction import default_config
from dialeval.trainers.losses import count_target_tokens, unlikelihood_loss, weighted_nll_loss
from dialeval.trainers.response_loss_trainer import (
    NEGATIVE_COLUMNS,
    NUM_NEGATIVE_ITEMS,
    ResponseLossTrainer,
)
from dialeval.trainers.unlikelihood_config import UnlikelihoodConfig
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    from huggingface_hub import ModelCard
    from transformers import PreTrainedModel

CITATION = """@inproceedings{li-etal-2020-dont,
  title = {Don't Say That! Making Inconsistent Dialogue Unlikely with Unlikelihood Training},
  author = {Li, Margaret and Roller, Stephen and Kulikov, Ilia and Welleck, Sean and Boureau, Y-Lan and Cho, Kyunghyun and Weston, Jason},
  booktitle = {Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics},
  year = {2020},
  url = {https://aclanthology.org/2020.acl-main.428}
}
@inproceedings{he-glass-2020-negative,
  title = {Negative Training for Neural Dialogue Response Generation},
  author = {He, Tianxing and Glass, James},
  booktitle = {Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics},
  year = {2020},
  url = {https://aclanthology.org/2020.acl-main.185}
}"""  # noqa: E501


class UnlikelihoodTrainer(ResponseLossTrainer):
    """A drop-in ``Trainer`` / ``Seq2SeqTrainer`` for examples with a gold and a negative response.

    Examples need ``input_ids`` / ``labels`` and ``negative_input_ids`` / ``negative_labels``
    (:func:`~dialeval.trainers.encode_unlikelihood_example` builds them), or raw ``context`` /
    ``response`` / ``negative_response`` text, which the trainer tokenizes, or TRL's preference
    format ``prompt`` / ``chosen`` / ``rejected`` (``chosen`` the gold completion, ``rejected`` the
    negative; strings or conversations, :mod:`~dialeval.trainers.chat_formats`); those columns
    survive ``remove_unused_columns``, and a collator that drops them is an error. ``eval_loss`` is
    the plain gold NLL (an evaluation set needs no negatives). ``save_model`` writes a model card.
    """

    extra_columns = NEGATIVE_COLUMNS
    required_batch_columns = (NEGATIVE_COLUMNS[0], NEGATIVE_COLUMNS[2])
    raw_text_columns = ("context", "response", "negative_response")
    train_label_columns = ("labels", NEGATIVE_COLUMNS[2])
    args: UnlikelihoodConfig

    def __init__(
        self,
        model: PreTrainedModel | None = None,
        args: UnlikelihoodConfig | None = None,
        *positional: Any,
        **kwargs: Any,
    ) -> None:
        if args is None:
            args = default_config(UnlikelihoodConfig)
        if not isinstance(args, UnlikelihoodConfig):
            raise ArgumentError("args", f"must be an UnlikelihoodConfig, got {type(args).__name__}")
        super().__init__(model, args, *positional, **kwargs)

    def prepare_window(self, batch_samples: list, device: torch.device) -> None:
        """The window's negative-token count (over processes when
        ``average_tokens_across_devices``)."""
        count: torch.Tensor | int = sum(
            (
                count_target_tokens(batch[NEGATIVE_COLUMNS[2]], self.shift_labels)
                for batch in batch_samples
            ),
            torch.tensor(0),
        )
        count = self._sum_over_processes(count, device)
        for batch in batch_samples:
            batch[NUM_NEGATIVE_ITEMS] = count

    def negative_loss(
        self,
        logits: torch.Tensor,
        labels: torch.Tensor,
        negative: dict,
        window_count: torch.Tensor | int | None,
    ) -> torch.Tensor:
        divisor = self.divisor(window_count, labels)
        if self.args.negative_loss == "negative_training":
            weights = torch.full((logits.shape[0],), -1.0, device=logits.device)
            term = weighted_nll_loss(logits, labels, weights, divisor, self.shift_labels)
        else:
            term = unlikelihood_loss(
                logits, labels, divisor, self.shift_labels, self.args.min_complement
            )
        return self.args.alpha * term

    def model_card(self, model_name: str | None) -> ModelCard:
        args = self.args
        name = (
            "Negative Training"
            if args.negative_loss == "negative_training"
            else "unlikelihood training"
        )
        method = (
            f"{name}: `loss = NLL(gold) + alpha * negative term`, each divided by its own target "
            "tokens over the accumulation window; the negative term is `-sum_t log(1 - "
            "p(neg_t))` (Li et al. 2020, unlikelihood) or the weight -1 NLL of the negative "
            "response (He & Glass 2020, Negative Training). alpha = 0 is plain maximum "
            "likelihood on the gold responses."
        )
        hyperparameters = {
            "alpha": args.alpha,
            "negative_loss": args.negative_loss,
            "min_complement": args.min_complement,
        }
        method = with_format_note(method, self.train_data_format, "unlikelihood")
        return self.card(
            model_name,
            tags=["unlikelihood"],
            title=name,
            method=method,
            hyperparameters=hyperparameters,
            differences=[],
            citation=CITATION,
        )
