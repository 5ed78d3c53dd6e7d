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


import torch

from dialeval.trainers._base import NEGATIVE_COLUMNS, ResponseLossTrainer
from dialeval.trainers.unlikelihood_config import UnlikelihoodConfig
from dialeval.trainers.losses import unlikelihood_loss, weighted_nll_loss



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
