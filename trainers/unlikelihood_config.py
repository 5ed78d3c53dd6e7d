"""UnlikelihoodConfig: the training arguments of
:class:`~dialeval.trainers.unlikelihood.UnlikelihoodTrainer`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from transformers import Seq2SeqTrainingArguments

from dialeval.validation import ArgumentError

NEGATIVE_LOSSES = ("unlikelihood", "negative_training")


@dataclass
class UnlikelihoodConfig(Seq2SeqTrainingArguments):
    """Training arguments plus the negative term's: alpha (n-best paper App. C: 0, 1, 10) and its
    form."""

    alpha: float = field(
        default=1.0,
        metadata={"help": "Weight of the negative term (the contradiction paper: 0, 1, 10)."},
    )
    negative_loss: str = field(
        default="unlikelihood",
        metadata={
            "help": (
                "'unlikelihood': -log(1 - p) per negative token; 'negative_training': -NLL "
                "(weight -1)."
            )
        },
    )
    min_complement: float = field(
        default=1e-5, metadata={"help": "Lower clamp of 1 - p in the unlikelihood term."}
    )
    max_length: int = field(
        default=512,
        metadata={
            "help": "Token limit of an example the trainer tokenizes from raw `context` / "
            "`response` / `negative_response` text (capped by the model's positions)."
        },
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if (
            isinstance(self.alpha, bool)
            or not isinstance(self.alpha, (int, float))
            or self.alpha < 0
            or not math.isfinite(self.alpha)
        ):
            raise ArgumentError("alpha", f"must be a finite number >= 0, got {self.alpha!r}")
        if self.negative_loss not in NEGATIVE_LOSSES:
            raise ArgumentError(
                "negative_loss", f"must be one of {NEGATIVE_LOSSES}, got {self.negative_loss!r}"
            )
        if not isinstance(self.min_complement, float) or not 0 < self.min_complement < 1:
            raise ArgumentError(
                "min_complement", f"must be a float in (0, 1), got {self.min_complement!r}"
            )
        if (
            isinstance(self.max_length, bool)
            or not isinstance(self.max_length, int)
            or self.max_length < 4
        ):
            raise ArgumentError("max_length", f"must be an int >= 4, got {self.max_length!r}")
