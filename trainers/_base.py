"""Deprecated: renamed :mod:`dialeval.trainers.response_loss_trainer` (removed in
dialeval 0.3.0)."""

from dialeval.deprecation import warn_renamed

warn_renamed("dialeval.trainers._base", "dialeval.trainers.response_loss_trainer")

from dialeval.trainers.response_loss_trainer import *
from dialeval.trainers.response_loss_trainer import (  # noqa: F401
    NEGATIVE_COLUMNS,
    NUM_NEGATIVE_ITEMS,
    ResponseLossTrainer,
)
