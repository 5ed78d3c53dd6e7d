"""The protocol a DTG objective meets (:mod:`dialeval.generation.objectives` has the paper's three).

Its own module, below both the objectives and the threshold calibration
(:mod:`dialeval.generation.dtg_thresholds`), which take an objective and are imported by them.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np


class DiversityObjective(Protocol):
    """What DTG calls on an objective: one of :mod:`dialeval.generation.objectives`, or one of your
    own (its state any object it likes). DTG also uses ``start_many`` / ``replace_many`` (one
    model call for several sets), ``report`` and ``name`` where an objective has them."""

    #: Pairs (or other units) scored so far, for DTG's cost counts.
    pair_evaluations: int
    #: The threshold DTG uses when none is given.
    default_threshold: float

    def start(self, responses: list[str]) -> Any: ...

    def value(self, state: Any) -> float: ...

    def leave_one_out(self, state: Any) -> np.ndarray: ...

    def replace(self, state: Any, index: int, response: str) -> None: ...


__all__ = ["DiversityObjective"]
