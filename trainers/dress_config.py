"""DRESSConfig: the training arguments of :class:`~dialeval.trainers.dress.DRESSTrainer` (Han et al. 2022, §4.2, §5.3)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from transformers import Seq2SeqTrainingArguments


@dataclass
class DRESSConfig(Seq2SeqTrainingArguments):
    """Training arguments plus DRESS's hyperparameters (defaults: the paper's, §4.2 and §5.3)."""

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
    negative_max_new_tokens: int = field(default=32, metadata={"help": "Length limit of the generated responses."})
    negative_generation_batch_size: int = field(default=32, metadata={"help": "Contexts per generate() call."})
    negative_no_repeat_ngram_size: int = field(
        default=3, metadata={"help": "Greedy decoding blocks repeated n-grams of this size (§5.3: n = 3); 0 disables."})
    response_text_column: str | None = field(
        default=None, metadata={"help": "Column with the response texts to cluster; None: decode the labels."})
    cluster_seed: int = field(default=0, metadata={"help": "Seed of the k-means fit when DRESSTrainer fits the clusters."})

    def __post_init__(self):
        super().__post_init__()
        if isinstance(self.gamma, bool) or not isinstance(self.gamma, (int, float)) or self.gamma < 0 or not math.isfinite(self.gamma):
            raise ValueError(f"`gamma` must be a finite number >= 0, got {self.gamma!r}")
        for name, minimum in (("num_clusters", 2), ("negative_contexts_per_cycle", 1), ("negative_max_new_tokens", 1),
                              ("negative_generation_batch_size", 1), ("negative_no_repeat_ngram_size", 0),
                              ("cluster_seed", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ValueError(f"`{name}` must be an int >= {minimum}, got {value!r}")
        if isinstance(self.head_threshold, bool) or not isinstance(self.head_threshold, (int, float)) or not 0 <= self.head_threshold < 1:
            raise ValueError(f"`head_threshold` must be in [0, 1), got {self.head_threshold!r}")
        if self.recluster_every is not None and (
                isinstance(self.recluster_every, bool) or not isinstance(self.recluster_every, int) or self.recluster_every < 1):
            raise ValueError(f"`recluster_every` must be None or an int >= 1, got {self.recluster_every!r}")
