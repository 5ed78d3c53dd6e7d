"""Deprecated: renamed :mod:`dialeval.trainers.dress_negative_schedule` (removed in
dialeval 0.3.0)."""

from dialeval.deprecation import warn_renamed

warn_renamed("dialeval.trainers.negatives", "dialeval.trainers.dress_negative_schedule")

from dialeval.trainers.dress_negative_schedule import *
from dialeval.trainers.dress_negative_schedule import (  # noqa: F401
    NORMALIZATIONS,
    group_normalizers,
    max_rows_per_slot,
    slot_rows,
)
