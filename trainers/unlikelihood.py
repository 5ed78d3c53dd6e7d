"""Unlikelihood training and Negative Training: the baselines the papers compare against.

* Unlikelihood (Li et al. 2020, "Don't say that!"; the n-best contradiction paper, §4.3 and
  App. C, trains Blender with alpha in {0, 1, 10}): every example has a gold and a negative
  response; ``loss = MLE(gold) + alpha * UL(negative)``, ``UL = -sum_t log(1 - p(neg_t))``
  (clamped), each term divided by its own target-token count.
* Negative Training (He & Glass 2020; DRESS's NT baseline, §5.2): the negative term is the NLL
  of the negative response with weight -1, i.e. :func:`~dialeval.trainers.losses.weighted_nll_loss`
  (the same function DRESS uses) with ``example_weights = -1``; ``negative_loss="negative_training"``.

alpha = 0 is plain maximum likelihood in the same setting (the papers' fair comparison).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from transformers import Seq2SeqTrainingArguments

from ._base import NEGATIVE_COLUMNS, ResponseLossTrainer
from .losses import unlikelihood_loss, weighted_nll_loss

NEGATIVE_LOSSES = ("unlikelihood", "negative_training")


@dataclass
class UnlikelihoodConfig(Seq2SeqTrainingArguments):
    alpha: float = field(default=1.0, metadata={"help": "Weight of the negative term (the contradiction paper: 0, 1, 10)."})
    negative_loss: str = field(
        default="unlikelihood",
        metadata={"help": "'unlikelihood': -log(1 - p) per negative token; 'negative_training': -NLL (weight -1)."})
    min_complement: float = field(default=1e-5, metadata={"help": "Lower clamp of 1 - p in the unlikelihood term."})

    def __post_init__(self):
        super().__post_init__()
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, (int, float)) or self.alpha < 0 or not math.isfinite(self.alpha):
            raise ValueError(f"`alpha` must be a finite number >= 0, got {self.alpha!r}")
        if self.negative_loss not in NEGATIVE_LOSSES:
            raise ValueError(f"`negative_loss` must be one of {NEGATIVE_LOSSES}, got {self.negative_loss!r}")
        if not isinstance(self.min_complement, float) or not 0 < self.min_complement < 1:
            raise ValueError(f"`min_complement` must be a float in (0, 1), got {self.min_complement!r}")


class UnlikelihoodTrainer(ResponseLossTrainer):
    """A drop-in ``Trainer`` / ``Seq2SeqTrainer`` for examples with a gold and a negative response.

    Examples need ``input_ids`` / ``labels`` and ``negative_input_ids`` / ``negative_labels``
    (:func:`~dialeval.trainers.encode_unlikelihood_example` builds them); those columns survive
    ``remove_unused_columns``.
    """

    extra_columns = NEGATIVE_COLUMNS

    def __init__(self, model=None, args=None, *positional, **kwargs):
        if not isinstance(args, UnlikelihoodConfig):
            raise ValueError(f"`args` must be an UnlikelihoodConfig, got {type(args).__name__}")
        super().__init__(model, args, *positional, **kwargs)

    def negative_loss(self, logits, labels, num_items) -> torch.Tensor:
        if self.args.negative_loss == "negative_training":
            weights = torch.full((logits.shape[0],), -1.0, device=logits.device)
            term = weighted_nll_loss(logits, labels, weights, num_items, self.shift_labels)
        else:
            term = unlikelihood_loss(logits, labels, num_items, self.shift_labels, self.args.min_complement)
        return self.args.alpha * term
