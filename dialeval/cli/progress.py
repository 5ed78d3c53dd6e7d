"""Progress bars: a job step's bar as its engines see it (:class:`StepBar`), and ``--no-progress``
for the libraries' own bars too: transformers ("Loading weights"), huggingface_hub (downloads) and
datasets ("Generating test split")."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

    from tqdm import tqdm

#: Per library whose bars ``--no-progress`` turns off, in the order they are restored
#: (transformers' switch also flips huggingface_hub's, which is set last): the package, the module
#: holding its switches, and the names of its (is enabled, enable, disable) functions.
LIBRARIES = (
    (
        "transformers",
        "transformers.utils.logging",
        ("is_progress_bar_enabled", "enable_progress_bar", "disable_progress_bar"),
    ),
    (
        "datasets",
        "datasets",
        ("is_progress_bar_enabled", "enable_progress_bars", "disable_progress_bars"),
    ),
    (
        "huggingface_hub",
        "huggingface_hub.utils",
        ("are_progress_bars_disabled", "enable_progress_bars", "disable_progress_bars"),
    ),
)

#: A library whose bars start, when it is imported, as another's are (transformers reads
#: huggingface_hub's switch at import).
_STARTS_AS = {"transformers": "huggingface_hub"}


class _LibrarySwitches:
    """The libraries' bars turned off for a block: a library already imported at once, the others
    as soon as something imports them (each costs up to seconds to import, and a job that runs no
    model needs none of them); each is restored to what it was before, or right after its
    import."""

    def __init__(self) -> None:
        self.was_enabled: dict[str, bool] = {}

    def switch_off(self, package: str) -> None:
        """Record ``package``'s bars, then turn them off."""
        if package in self.was_enabled:
            return
        enabled, _, disable = self._functions(package)
        followed = _STARTS_AS.get(package)
        # imported after the block turned the bars it starts from off: it was as they were
        self.was_enabled[package] = (
            self.was_enabled.get(followed, enabled()) if followed else enabled()
        )
        disable()

    def restore(self) -> None:
        for package, _, _ in LIBRARIES:
            if package in self.was_enabled:
                _, enable, disable = self._functions(package)
                (enable if self.was_enabled[package] else disable)()

    @staticmethod
    def _functions(
        package: str,
    ) -> tuple[Callable[[], bool], Callable[[], None], Callable[[], None]]:
        module_name, (asked, enable, disable) = next(
            (module, names) for name, module, names in LIBRARIES if name == package
        )
        module = importlib.import_module(module_name)
        query = getattr(module, asked)
        enabled = (lambda: not query()) if asked.startswith("are_") else query
        return enabled, getattr(module, enable), getattr(module, disable)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls ``then(package)`` once each of ``packages`` has been imported, whoever imports it
    (the import system's finders find it as usual; only its loader's ``exec_module`` is
    followed)."""

    def __init__(self, packages: Sequence[str], then: Callable[[str], None]) -> None:
        self.packages = set(packages)
        self.then = then

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name not in self.packages:
            return None
        self.packages.discard(name)  # the lookup below must not find this finder again
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader, then = spec.loader, self.then

        class _Followed(importlib.abc.Loader):
            """``loader``, calling ``then`` after the module has run; the rest is ``loader``'s."""

            def __getattr__(self, attribute: str) -> object:
                return getattr(loader, attribute)

            def create_module(self, spec: ModuleSpec) -> ModuleType | None:
                return loader.create_module(spec)

            def exec_module(self, module: ModuleType) -> None:
                loader.exec_module(module)
                then(name)

        spec.loader = _Followed()
        return spec


@contextmanager
def library_progress_bars(enabled: bool) -> Iterator[None]:
    """Turn the libraries' bars off for the block when not ``enabled``; each is restored
    afterwards. A library not yet imported is switched when it is imported, not imported here."""
    if enabled:
        yield
        return
    switches = _LibrarySwitches()
    packages = [package for package, _, _ in LIBRARIES]
    follower = _AfterImport([p for p in packages if p not in sys.modules], switches.switch_off)
    sys.meta_path.insert(0, follower)
    try:
        for package in packages:
            if package in sys.modules:
                switches.switch_off(package)
        yield
    finally:
        sys.meta_path.remove(follower)
        switches.restore()


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
