"""Renamed public names keep working for one release, with a ``DeprecationWarning`` that names
the new one (the rule: CONTRIBUTING.md, "Renaming").

A module that renamed attributes ends with ``__getattr__ = renamed_attributes(__name__, {...})``
(PEP 562: only names the module does not define reach it); a renamed module is a file that
calls :func:`warn_renamed` and re-exports the new module's names.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable

#: The release that drops the old names.
REMOVED_IN = "0.3.0"


def warn_renamed(
    old: str, new: str, stacklevel: int = 3, category: type[Warning] = DeprecationWarning
) -> None:
    """``category``: DeprecationWarning for code (shown to its developer), FutureWarning for a
    name a user types (a CLI flag's value: Python hides DeprecationWarning from them)."""
    warnings.warn(
        f"`{old}` is renamed `{new}`; `{old}` will be removed in dialeval {REMOVED_IN}",
        category,
        stacklevel=stacklevel,
    )


def renamed_attributes(module_name: str, renames: dict[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` serving each old name of ``renames`` (old -> new, both attributes of
    ``module_name``) with a warning; any other missing name is the usual AttributeError."""

    def __getattr__(name: str) -> object:
        if name not in renames:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        new = renames[name]
        warn_renamed(f"{module_name}.{name}", f"{module_name}.{new}")
        return getattr(importlib.import_module(module_name), new)

    return __getattr__
