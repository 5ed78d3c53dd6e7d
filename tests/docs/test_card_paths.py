"""Every dotted ``dialeval.…`` path a metric card writes resolves as a user would reach it."""

import importlib
import re
import types

import pytest
from conftest import REPO_ROOT

CARDS = sorted((REPO_ROOT / "metrics").glob("*/README.md"))
_DOTTED = re.compile(r"\bdialeval(?:\.[A-Za-z_]\w*)+")
# ``from dialeval.a.b import c`` and ``import dialeval.a.b`` name modules through the import
# system, where a submodule is found even when a function of its name shadows it on the package.
_IMPORTED = re.compile(r"(?:^|`)\s*(?:from|import)\s+(dialeval[\w.]*)", re.MULTILINE)


def _paths(card) -> tuple[list[str], list[str]]:
    """The card's import statements' modules and its other dotted paths."""
    text = card.read_text()
    imported = sorted(set(_IMPORTED.findall(text)))
    prose = _DOTTED.findall(_IMPORTED.sub("", text))
    # a sentence's full stop is not part of the path
    return imported, sorted({match.rstrip(".") for match in prose})


def resolve(path: str) -> object:
    """``path`` walked attribute by attribute from ``dialeval``, importing a submodule only
    where the walk stands on a module that lacks the attribute (as ``import a.b`` then
    ``a.b.c`` would): a package attribute shadowed by a function of its name does not resolve."""
    parts = path.split(".")
    current: object = importlib.import_module(parts[0])
    for depth, name in enumerate(parts[1:], start=2):
        if not hasattr(current, name) and isinstance(current, types.ModuleType):
            importlib.import_module(".".join(parts[:depth]))
        current = getattr(current, name)
    return current


@pytest.mark.parametrize("card", CARDS, ids=lambda card: card.parent.name)
def test_every_dotted_path_in_a_card_resolves(card):
    imported, written = _paths(card)
    unresolved = []
    for path, find in [(path, importlib.import_module) for path in imported] + [
        (path, resolve) for path in written
    ]:
        try:
            find(path)
        except (AttributeError, ImportError) as error:
            unresolved.append(f"{path}: {type(error).__name__}: {error}")
    assert not unresolved, unresolved


def test_every_registered_metric_has_a_page_of_its_own_in_the_nav_and_is_named_in_the_readme():
    """A card's page includes that card alone; the README names each metric's page."""
    from dialeval.metrics import registry

    include = re.compile(r"^<!-- include: metrics/(\w+)/README\.md -->$", re.MULTILINE)
    pages = {
        page.name: include.findall(page.read_text()) for page in (REPO_ROOT / "docs").glob("*.md")
    }
    nav = (REPO_ROOT / "mkdocs.yml").read_text()
    readme = (REPO_ROOT / "README.md").read_text()
    for metric in registry.METRICS:
        own = [name for name, cards in pages.items() if cards == [metric.name]]
        assert len(own) == 1, f"{metric.name}: pages of its own {own}"
        assert f": {own[0]}" in nav, f"{own[0]} is not in mkdocs.yml's nav"
        assert f"(docs/{own[0]})" in readme, f"the README does not link docs/{own[0]}"
