"""Packages that re-export their submodules' names without importing them until first use.

A package calls :func:`export_lazily` with the names it exports from each of its modules; a
name is imported on first access (module ``__getattr__``, PEP 562) and kept on the package.
Type checkers and IDEs read the same names from the package's ``if TYPE_CHECKING:`` imports and
its ``__all__``.

Several metric subpackages export a function named as the subpackage itself
(``dialeval.metrics.nli_diversity``). Python binds a submodule on its parent package once it is
imported, which would hide the exported function behind the module; the package's module class
refuses that binding for an exported name, so the name always resolves to the export.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path


class _LazyExportsModule(types.ModuleType):
    """A package module whose exported names win over same-named submodules."""

    def __setattr__(self, name: str, value: object) -> None:
        if (
            isinstance(value, types.ModuleType)
            and value.__name__ == f"{self.__name__}.{name}"
            and (
                name in self.__dict__.get("_lazy_exports", {})
                or name in getattr(value, "__all__", ())
            )
        ):
            # the import system binding a submodule over a name the package exports
            return
        super().__setattr__(name, value)


def subpackage_exports(package: str) -> dict[str, str]:
    """Each name in the ``__all__`` of ``package``'s subpackages, mapped to its subpackage, read
    from their ``__init__.py`` files without importing them (the first subpackage in name order
    wins a name two of them export)."""
    found: dict[str, str] = {}
    for folder in sorted(Path(p) for p in sys.modules[package].__path__):
        for init in sorted(folder.glob("*/__init__.py")):
            for name in _literal_all(init):
                found.setdefault(name, f"{package}.{init.parent.name}")
    return found


def _literal_all(path: Path) -> list[str]:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            value = ast.literal_eval(node.value)
            return [name for name in value if isinstance(name, str)]
    return []


def export_lazily(
    package: str,
    exports_by_module: Mapping[str, Iterable[str]],
    more_exports: Callable[[], Mapping[str, str]] | None = None,
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` (its ``__name__``), exporting the names
    listed under each module of ``exports_by_module`` (absolute, or relative to ``package``:
    ``".nli"``) from that module.

    A name not listed is looked up, once, in ``more_exports()`` (name -> module; e.g.
    :func:`subpackage_exports`: what the package's folders export).
    ``package``'s module becomes a :class:`_LazyExportsModule`, so importing a submodule named as
    one of its exports never shadows the export.
    """
    known = {
        name: importlib.util.resolve_name(module, package)
        for module, names in exports_by_module.items()
        for name in names
    }
    module = sys.modules[package]
    module.__dict__["_lazy_exports"] = known
    module.__class__ = _LazyExportsModule
    namespace = module.__dict__
    extra: dict[str, str] = {}

    def __getattr__(name: str) -> object:
        if name not in known and more_exports is not None and not extra:
            extra.update(more_exports())
        # the declared map stays as declared: what the package's TYPE_CHECKING block lists
        source = known.get(name) or extra.get(name)
        if source is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(known))

    return __getattr__, __dir__
