"""DRESSConfig: the training arguments of :class:`~dialeval.trainers.dress.DRESSTrainer` (Han et al. 2022, §4.2, §5.3)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from transformers import Seq2SeqTrainingArguments

from dialeval.trainers.negatives import NORMALIZATIONS
from dialeval.validation import ArgumentError


@dataclass
class DRESSConfig(Seq2SeqTrainingArguments):
    """Training arguments plus DRESS's hyperparameters (defaults: the paper's, §4.2 and §5.3, and
    where the paper gives none the authors' released code's: ``negative_max_new_tokens``,
    ``negative_normalization``)."""

    gamma: float = field(default=30.0, metadata={"help": "Eq. 5's exponent: w(r) = (1 - p(cluster(r)))^gamma."})
    num_clusters: int = field(default=20, metadata={"help": "k of the semantic clusters fitted on the training responses."})
    head_threshold: float = field(
        default=0.1, metadata={"help": "A cluster holding more than this share of a cycle's generations is a head cluster."})
    negative_training: bool = field(
        default=True, metadata={"help": "False is DRESS(-NT): the weighted NLL only."})
    negative_contexts_per_cycle: int = field(
        default=5000, metadata={"help": "Training contexts sampled (without replacement) for generation each cycle."})
    recluster_every: int | None = field(
        default=None,
        metadata={"help": "Run a negative-training cycle (generate, assign to clusters, pick head-cluster negatives) "
                  "every this many optimizer steps, starting at step 0; None: at the start of every epoch (§4.2)."})
    negative_max_new_tokens: int = field(
        default=128, metadata={"help": "Length limit of the generated responses (the released code's --label-truncate 128; "
                               "the paper gives none)."})
    negative_normalization: str = field(
        default="all_generated",
        metadata={"help": "'all_generated' (the released code): each group of total-train-batch-size generations is "
                  "divided by all its generated tokens, the non-head ones counting with weight 0; 'head_only': by the "
                  "head-cluster generations' tokens only (a stronger negative term)."})
    max_negatives_per_batch: int | None = field(
        default=None,
        metadata={"help": "Most negative rows stacked onto one per-device micro-batch (None: per_device_train_batch_size); "
                  "training refuses a schedule that could need more."})
    negative_generation_batch_size: int = field(default=32, metadata={"help": "Contexts per generate() call."})
    negative_no_repeat_ngram_size: int = field(
        default=3, metadata={"help": "Greedy decoding blocks repeated n-grams of this size in the response and the "
                             "context (§5.3: n = 3; encoder-decoders: encoder_no_repeat_ngram_size too); 0 disables. "
                             "The checkpoint's own decoding settings (beams, min_length, penalties) are not applied."})
    response_text_column: str | None = field(
        default=None, metadata={"help": "Column with the response texts to cluster; None: decode the labels."})
    cluster_seed: int = field(default=0, metadata={"help": "Seed of the k-means fit when DRESSTrainer fits the clusters."})
    max_length: int = field(
        default=512, metadata={"help": "Token limit of an example the trainer tokenizes from raw `context` / `response` "
                               "text (capped by the model's positions)."})

    def __post_init__(self):
        super().__post_init__()
        if isinstance(self.gamma, bool) or not isinstance(self.gamma, (int, float)) or self.gamma < 0 or not math.isfinite(self.gamma):
            raise ArgumentError("gamma", f"must be a finite number >= 0, got {self.gamma!r}")
        for name, minimum in (("num_clusters", 2), ("negative_contexts_per_cycle", 1), ("negative_max_new_tokens", 1),
                              ("negative_generation_batch_size", 1), ("negative_no_repeat_ngram_size", 0),
                              ("cluster_seed", 0), ("max_length", 4)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ArgumentError(name, f"must be an int >= {minimum}, got {value!r}")
        if isinstance(self.head_threshold, bool) or not isinstance(self.head_threshold, (int, float)) or not 0 <= self.head_threshold < 1:
            raise ArgumentError("head_threshold", f"must be in [0, 1), got {self.head_threshold!r}")
        if self.recluster_every is not None and (
                isinstance(self.recluster_every, bool) or not isinstance(self.recluster_every, int) or self.recluster_every < 1):
            raise ArgumentError("recluster_every", f"must be None or an int >= 1, got {self.recluster_every!r}")
        if self.negative_normalization not in NORMALIZATIONS:
            raise ArgumentError("negative_normalization", f"must be one of {NORMALIZATIONS}, got {self.negative_normalization!r}")
        if self.max_negatives_per_batch is not None and (
                isinstance(self.max_negatives_per_batch, bool) or not isinstance(self.max_negatives_per_batch, int)
                or self.max_negatives_per_batch < 1):
            raise ArgumentError("max_negatives_per_batch", f"must be None or an int >= 1, got {self.max_negatives_per_batch!r}")
