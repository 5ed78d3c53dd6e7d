"""dialeval.trainers: Trainer subclasses that train for diverse responses (DRESS, unlikelihood).

* :class:`DRESSConfig` / :class:`DRESSTrainer`: DRESS (Han et al., Findings of EMNLP 2022, §4.2);
  ``negative_training=False`` is DRESS(-NT).
* :class:`UnlikelihoodConfig` / :class:`UnlikelihoodTrainer`: unlikelihood training (Li et al. 2020)
  and Negative Training (He & Glass 2020).
* :func:`encode_dialogue`, :func:`encode_unlikelihood_example`, :class:`DialogueCollator`: the
  examples they train on (causal LMs DialoGPT-style, or encoder-decoder models).
* :mod:`dialeval.trainers.losses`: the pure loss functions;
  :mod:`dialeval.trainers.dress_negative_schedule`: DRESS's negative groups and schedule (the
  released code's normalization).
* Table 3 baselines of Han et al. (2022) as data steps: :mod:`dialeval.trainers.entropy_filtering`
  (EDF, Csáky et al. 2019: :func:`filter_by_target_entropy`) and
  :mod:`dialeval.trainers.frequent_negatives` (NT's frequent-response negatives, He & Glass 2020:
  :func:`frequent_negatives`, :func:`negative_training_rows`, trained with ``UnlikelihoodTrainer``).
* :mod:`dialeval.trainers.inputs`: what data the trainers accept (raw text is tokenized) and refuse;
  :mod:`dialeval.trainers.chat_formats`: TRL's dataset formats (``prompt`` / ``completion``,
  conversational ``messages`` with the loss on the assistant turns, preference data for
  unlikelihood);
  :mod:`dialeval.trainers.dataset_types`: the same for every dataset type ``Trainer`` takes (torch,
  iterable) and wherever it takes one (``evaluate(eval_dataset=)``, ``predict``);
  :mod:`dialeval.trainers.construction`: ``args=None`` and ``model_init`` as ``Trainer`` does them;
  :mod:`dialeval.trainers.model_card`: the ``README.md`` written on save.

Both trainers work as ``Trainer`` does for ``train`` / ``evaluate`` / ``predict`` /
``predict_with_generate`` / checkpoints; ``eval_loss`` is the plain gold NLL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
    from dialeval.trainers.data import (
        DialogueCollator,
        encode_dialogue,
        encode_unlikelihood_example,
    )
    from dialeval.trainers.dress import DRESSTrainer
    from dialeval.trainers.dress_config import DRESSConfig
    from dialeval.trainers.entropy_filtering import (
        filter_by_target_entropy,
        target_entropies,
        threshold_for_fraction,
    )
    from dialeval.trainers.frequent_negatives import (
        frequent_negatives,
        negative_training_rows,
        response_ratios,
    )
    from dialeval.trainers.losses import (
        dress_weights,
        head_cluster_mask,
        unlikelihood_loss,
        weighted_nll_loss,
    )
    from dialeval.trainers.unlikelihood import UnlikelihoodTrainer
    from dialeval.trainers.unlikelihood_config import UnlikelihoodConfig
else:
    # each name is imported from its module on first use
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".data": ("DialogueCollator", "encode_dialogue", "encode_unlikelihood_example"),
            ".dress": ("DRESSTrainer",),
            ".dress_config": ("DRESSConfig",),
            ".entropy_filtering": (
                "filter_by_target_entropy",
                "target_entropies",
                "threshold_for_fraction",
            ),
            ".frequent_negatives": (
                "frequent_negatives",
                "negative_training_rows",
                "response_ratios",
            ),
            ".losses": (
                "dress_weights",
                "head_cluster_mask",
                "unlikelihood_loss",
                "weighted_nll_loss",
            ),
            ".unlikelihood": ("UnlikelihoodTrainer",),
            ".unlikelihood_config": ("UnlikelihoodConfig",),
        },
    )

__all__ = [
    "DRESSConfig",
    "DRESSTrainer",
    "DialogueCollator",
    "UnlikelihoodConfig",
    "UnlikelihoodTrainer",
    "dress_weights",
    "encode_dialogue",
    "encode_unlikelihood_example",
    "filter_by_target_entropy",
    "frequent_negatives",
    "head_cluster_mask",
    "negative_training_rows",
    "response_ratios",
    "target_entropies",
    "threshold_for_fraction",
    "unlikelihood_loss",
    "weighted_nll_loss",
]
