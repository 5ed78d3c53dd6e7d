"""DRESSConfig: the training arguments of :class:`~dialeval.trainers.dress.DRESSTrainer` (Han et al.
2022, §4.2, §5.3)."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

from transformers import Seq2SeqTrainingArguments

from dialeval.trainers.dress_negative_schedule import NORMALIZATIONS
from dialeval.validation import ArgumentError, check_flag

#: The smallest mean Eq. 5 weight the paper trained with: Table 5's strongest setting (gamma 100,
#: k 20), for clusters of similar size, (1 - 1/20)^100.
MEAN_WEIGHT_FLOOR = (1 - 1 / 20) ** 100


def weak_weights_warning(
    mean_weight: float, gamma: float, num_clusters: int, what: str
) -> str | None:
    """The warning for a mean Eq. 5 weight below :data:`MEAN_WEIGHT_FLOOR` (None: within the paper's
    range)."""
    if mean_weight >= MEAN_WEIGHT_FLOOR:
        return None
    largest = math.log(MEAN_WEIGHT_FLOOR) / math.log(1 - 1 / num_clusters)
    shrink = (
        f"about {1 / mean_weight:.3g}-fold"
        if mean_weight > 0
        else "to 0 (the weight underflows float64)"
    )
    return (
        f"`gamma`={gamma} with `num_clusters`={num_clusters}: {what} is {mean_weight:.2g}, so the "
        f"gold loss and its gradient shrink {shrink} (Eq. 5's weights (1 - p)^gamma are not "
        f"normalized); the paper trained down to {MEAN_WEIGHT_FLOOR:.2g} (Table 5: gamma 100, k "
        f"20; its default gamma 30, k 20 gives 0.21). With {num_clusters} similar-size clusters, "
        f"gamma <= {largest:.3g} stays within that range; or raise the learning rate to compensate"
    )


@dataclass
class DRESSConfig(Seq2SeqTrainingArguments):
    """Training arguments plus DRESS's hyperparameters (defaults: the paper's, §4.2 and §5.3, and
    where the paper gives none the authors' released code's: ``negative_max_new_tokens``,
    ``negative_normalization``).

    ``gamma`` and ``num_clusters`` scale the loss together. Eq. 5's weights
    ``(1 - p(cluster))^gamma`` are not normalized, so the gold NLL (and its gradient: in effect its
    learning rate, and its balance against the negative term) is multiplied by their mean,
    ``sum_c p_c (1 - p_c)^gamma``, about ``(1 - 1/k)^gamma ~ exp(-gamma / k)`` when the k clusters
    are of similar size: 0.21 at the paper's gamma 30, k 20, but 0.0012 at gamma 30, k 5 (a loss
    ~170 times smaller). The paper's strongest setting (Table 5: gamma 100, k 20) gives
    ``0.95^100`` = 0.0059 (:data:`MEAN_WEIGHT_FLOOR`); a config below it for similar-size clusters
    warns (``UserWarning``) with the largest gamma that stays within the paper's range, and
    :class:`~dialeval.trainers.DRESSTrainer` warns again with the mean weight of the actual training
    clusters (:attr:`~dialeval.trainers.DRESSTrainer.mean_gold_weight`). Lower ``gamma`` or raise
    the learning rate to compensate.
    """

    gamma: float = field(
        default=30.0, metadata={"help": "Eq. 5's exponent: w(r) = (1 - p(cluster(r)))^gamma."}
    )
    num_clusters: int = field(
        default=20,
        metadata={"help": "k of the semantic clusters fitted on the training responses."},
    )
    head_threshold: float = field(
        default=0.1,
        metadata={
            "help": (
                "A cluster holding more than this share of a cycle's generations is a head cluster."
            )
        },
    )
    negative_training: bool = field(
        default=True, metadata={"help": "False is DRESS(-NT): the weighted NLL only."}
    )
    negative_contexts_per_cycle: int = field(
        default=5000,
        metadata={
            "help": "Training contexts sampled (without replacement) for generation each cycle."
        },
    )
    recluster_every: int | None = field(
        default=None,
        metadata={
            "help": "Run a negative-training cycle (generate, assign to clusters, pick "
            "head-cluster negatives) every this many optimizer steps, starting at step 0; None: "
            "at the start of every epoch (§4.2)."
        },
    )
    negative_max_new_tokens: int = field(
        default=128,
        metadata={
            "help": "Length limit of the generated responses (the released code's "
            "--label-truncate 128; the paper gives none)."
        },
    )
    negative_normalization: str = field(
        default="all_generated",
        metadata={
            "help": "'all_generated' (the released code): each group of total-train-batch-size "
            "generations is divided by all its generated tokens, the non-head ones counting with "
            "weight 0; 'head_only': by the head-cluster generations' tokens only (a stronger "
            "negative term)."
        },
    )
    max_negatives_per_batch: int | None = field(
        default=None,
        metadata={
            "help": "Most negative rows stacked onto one per-device micro-batch (None: "
            "per_device_train_batch_size); training refuses a schedule that could need more."
        },
    )
    negative_generation_batch_size: int = field(
        default=32, metadata={"help": "Contexts per generate() call."}
    )
    negative_no_repeat_ngram_size: int = field(
        default=3,
        metadata={
            "help": "Greedy decoding blocks repeated n-grams of this size in the response and the "
            "context (§5.3: n = 3; encoder-decoders: encoder_no_repeat_ngram_size too); 0 "
            "disables. The checkpoint's own decoding settings (beams, min_length, penalties) are "
            "not applied."
        },
    )
    response_text_column: str | None = field(
        default=None,
        metadata={"help": "Column with the response texts to cluster; None: decode the labels."},
    )
    cluster_seed: int = field(
        default=0, metadata={"help": "Seed of the k-means fit when DRESSTrainer fits the clusters."}
    )
    max_length: int = field(
        default=512,
        metadata={
            "help": "Token limit of an example the trainer tokenizes from raw `context` / "
            "`response` text (capped by the model's positions)."
        },
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if (
            isinstance(self.gamma, bool)
            or not isinstance(self.gamma, (int, float))
            or self.gamma < 0
            or not math.isfinite(self.gamma)
        ):
            raise ArgumentError("gamma", f"must be a finite number >= 0, got {self.gamma!r}")
        for name, minimum in (
            ("num_clusters", 2),
            ("negative_contexts_per_cycle", 1),
            ("negative_max_new_tokens", 1),
            ("negative_generation_batch_size", 1),
            ("negative_no_repeat_ngram_size", 0),
            ("cluster_seed", 0),
            ("max_length", 4),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ArgumentError(name, f"must be an int >= {minimum}, got {value!r}")
        message = weak_weights_warning(
            (1 - 1 / self.num_clusters) ** self.gamma,
            self.gamma,
            self.num_clusters,
            "the mean weight (1 - 1/k)^gamma for clusters of similar size",
        )
        if message is not None:
            warnings.warn(message, UserWarning, stacklevel=3)
        if (
            isinstance(self.head_threshold, bool)
            or not isinstance(self.head_threshold, (int, float))
            or not 0 <= self.head_threshold < 1
        ):
            raise ArgumentError("head_threshold", f"must be in [0, 1), got {self.head_threshold!r}")
        if self.recluster_every is not None and (
            isinstance(self.recluster_every, bool)
            or not isinstance(self.recluster_every, int)
            or self.recluster_every < 1
        ):
            raise ArgumentError(
                "recluster_every", f"must be None or an int >= 1, got {self.recluster_every!r}"
            )
        # A string such as "no" is truthy: read by its truth value it would turn training on.
        self.negative_training = check_flag(self.negative_training, "negative_training")
        if self.response_text_column is not None and (
            not isinstance(self.response_text_column, str) or not self.response_text_column
        ):
            raise ArgumentError(
                "response_text_column",
                f"must be None or a column name (a non-empty string), got "
                f"{type(self.response_text_column).__name__}: {self.response_text_column!r:.60}",
            )
        if self.negative_normalization not in NORMALIZATIONS:
            raise ArgumentError(
                "negative_normalization",
                f"must be one of {NORMALIZATIONS}, got {self.negative_normalization!r}",
            )
        if self.max_negatives_per_batch is not None and (
            isinstance(self.max_negatives_per_batch, bool)
            or not isinstance(self.max_negatives_per_batch, int)
            or self.max_negatives_per_batch < 1
        ):
            raise ArgumentError(
                "max_negatives_per_batch",
                f"must be None or an int >= 1, got {self.max_negatives_per_batch!r}",
            )
