"""Progress bars: a job step's bar as its engines see it (:class:`StepBar`), and ``--no-progress``
for the libraries' own bars too: transformers ("Loading weights"), huggingface_hub (downloads) and
datasets ("Generating test split")."""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tqdm import tqdm


@contextmanager
def library_progress_bars(enabled: bool) -> Iterator[None]:
    """Turn the libraries' bars off for the block when not ``enabled``; each is restored
    afterwards."""
    if enabled:
        yield
        return
    # datasets: deferred to the one path that needs it
    import datasets
    import huggingface_hub.utils as hub_utils
    import transformers.utils.logging as transformers_logging

    switches = [
        (
            transformers_logging.is_progress_bar_enabled(),
            transformers_logging.enable_progress_bar,
            transformers_logging.disable_progress_bar,
        ),
        (
            datasets.is_progress_bar_enabled(),
            datasets.enable_progress_bars,
            datasets.disable_progress_bars,
        ),
        (
            not hub_utils.are_progress_bars_disabled(),
            hub_utils.enable_progress_bars,
            hub_utils.disable_progress_bars,
        ),
    ]
    for _, _, disable in switches:
        disable()
    try:
        yield
    finally:
        # in order: transformers' switch also flips huggingface_hub's, which is set last
        for was_enabled, enable, disable in switches:
            (enable if was_enabled else disable)()


class StepBar:
    """A step's progress bar as the step and its engines see it: ``bar(n)`` counts work done,
    ``restart(total, unit)`` switches to the engine's own unit (sentences, pairs), and the bar is
    full when the step ends (work read from the job's shared vectors needs no counting)."""

    def __init__(self, bar: tqdm) -> None:
        self.bar = bar

    def __call__(self, count: int) -> None:
        self.bar.update(count)

    def restart(self, total: int, unit: str) -> None:
        if hasattr(self.bar, "reset"):
            self.bar.reset(total=total)
            self.bar.unit = unit

    def finish(self) -> None:
        left = (getattr(self.bar, "total", None) or 0) - getattr(self.bar, "n", 0)
        if left > 0 and hasattr(self.bar, "n"):
            self.bar.update(left)
