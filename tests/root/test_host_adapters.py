"""Private API of the host libraries: used only in the adapter modules, each name still defined
by the installed host, and every host capped at its next major release in setup.py.

The scan does not know which names are private to a host: it parses the whole package and takes
every ``x._name`` (also ``getattr(x, "_name")`` and ``from host import _name``) whose ``_name``
dialeval itself never defines (no function, class, parameter, variable, ``self._name``
assignment or module of that name) as a host's private name, wherever it appears. The standard
library's own private names (typeshed's ``argparse._MutuallyExclusiveGroup``, reached through an
imported standard-library module) come with Python, not with a host release, and are left out.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import gc
import inspect
import re
import sys
from collections.abc import Collection
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
PACKAGE_FOLDERS = ("dialeval", "metrics", "generation", "trainers", "datasets_scripts")
#: The only modules that may touch a host's private API; each names it in its docstring.
ADAPTER_MODULES = (
    "dialeval/host_adapters.py",
    "metrics/engines/evaluate_state.py",
    "generation/generation_settings.py",
    "trainers/trainer_hooks.py",
)
ATTRIBUTE_FUNCTIONS = frozenset({"getattr", "hasattr", "setattr", "delattr"})


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@functools.cache
def package_trees() -> dict[str, ast.Module]:
    sources = {
        path.relative_to(REPO).as_posix(): path.read_bytes()
        for folder in PACKAGE_FOLDERS
        for path in sorted((REPO / folder).rglob("*.py"))
    }
    # The parser's hundreds of thousands of nodes would run the cyclic collector over and over
    # (half the scan's time); none of them is garbage.
    gc.disable()
    try:
        return {path: ast.parse(source, filename=path) for path, source in sources.items()}
    finally:
        gc.enable()


@dataclasses.dataclass
class ModuleNames:
    """What one module defines, and the private names of other objects it reaches for."""

    defined: set[str] = dataclasses.field(default_factory=set)
    #: ``(line, name)`` of each ``x._name`` / ``getattr(x, "_name")`` on an object that is not
    #: ``self`` (private unless some dialeval module defines the name).
    attributes: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    #: ``(line, dotted name)`` of each import of another library's private module or name.
    imports: list[tuple[int, str]] = dataclasses.field(default_factory=list)


def scan(tree: ast.Module) -> ModuleNames:
    """One pass over a module. Defined: functions, classes, parameters, variables (module, class
    and local), ``self._x`` / ``cls._x`` attributes, import aliases, ``setattr(self, "_x", ...)``.
    """
    names = ModuleNames()
    standard_library = set()
    for node in ast.walk(tree):
        kind = type(node)
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            names.defined.add(node.name)
        elif kind is ast.arg:
            names.defined.add(node.arg)
        elif kind is ast.Name:
            if type(node.ctx) is not ast.Load:
                names.defined.add(node.id)
        elif kind is ast.Attribute:
            base = node.value
            if type(node.ctx) is not ast.Load and is_name(base, ("self", "cls")):
                names.defined.add(node.attr)
            elif is_private(node.attr):
                names.attributes.append((node.lineno, node.attr, base))
        elif kind is ast.Call:
            if is_name(node.func, ATTRIBUTE_FUNCTIONS) and len(node.args) > 1:
                name = node.args[1]
                if type(name) is ast.Constant and isinstance(name.value, str):
                    if node.func.id == "setattr" and is_name(node.args[0], ("self", "cls")):
                        names.defined.add(name.value)
                    elif is_private(name.value):
                        names.attributes.append((node.lineno, name.value, node.args[0]))
        elif kind is ast.Import:
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top in sys.stdlib_module_names:
                    standard_library.add(alias.asname or top)
                elif top != "dialeval":
                    names.imports += private_parts(node.lineno, [alias.name])
                if alias.asname:
                    names.defined.add(alias.asname)
        elif kind is ast.ImportFrom:
            if node.level == 0 and str(node.module).split(".")[0] != "dialeval":
                module = str(node.module)
                dotted = [module, *(f"{module}.{alias.name}" for alias in node.names)]
                names.imports += private_parts(node.lineno, dotted)
            names.defined.update(alias.asname for alias in node.names if alias.asname)
        elif kind is ast.ExceptHandler:
            if node.name:
                names.defined.add(node.name)
        elif kind in (ast.Global, ast.Nonlocal):
            names.defined.update(node.names)
    # Python's own private names (typeshed's ``argparse._MutuallyExclusiveGroup``) are no host's.
    names.attributes = [
        (line, name) for line, name, base in names.attributes if not is_name(base, standard_library)
    ]
    return names


def is_name(node: ast.expr, names: Collection[str]) -> bool:
    return type(node) is ast.Name and node.id in names


def private_parts(line: int, dotted_names: list[str]) -> list[tuple[int, str]]:
    return [
        (line, dotted)
        for dotted in dotted_names
        if any(is_private(part) for part in dotted.split("."))
    ]


def host_private_uses(
    scanned: dict[str, ModuleNames], defined: set[str]
) -> dict[str, list[tuple[int, str]]]:
    """Per module, ``(line, name)`` of each private name of another library it uses."""
    uses = {}
    for path, names in scanned.items():
        found = [use for use in names.attributes if use[1] not in defined] + names.imports
        if found:
            uses[path] = sorted(set(found))
    return uses


@functools.cache
def package_private_uses() -> dict[str, list[tuple[int, str]]]:
    scanned = {path: scan(tree) for path, tree in package_trees().items()}
    # Every module and folder name too: ``dialeval.datasets_scripts._sources`` is dialeval's.
    defined = {part.removesuffix(".py") for path in scanned for part in path.split("/")}
    for names in scanned.values():
        defined |= names.defined
    return host_private_uses(scanned, defined)


def test_only_the_adapters_touch_a_hosts_private_api():
    offenders = [
        f"{path}:{line}: {name}"
        for path, found in package_private_uses().items()
        if path not in ADAPTER_MODULES
        for line, name in found
    ]
    assert offenders == []


def test_each_adapter_names_the_private_api_it_wraps_in_its_docstring():
    uses = package_private_uses()
    unnamed = {}
    for path in ADAPTER_MODULES:
        docstring = ast.get_docstring(package_trees()[path]) or ""
        names = {name for _, name in uses.get(path, [])}
        named = {name for name in names if re.search(rf"``(\w+\.)*{re.escape(name)}``", docstring)}
        unnamed[path] = sorted(names - named)
    assert unnamed == {path: [] for path in ADAPTER_MODULES}


SCAN_EXAMPLE = """
import argparse
import torch._dynamo
from accelerate.state import _private_helper
from dialeval.hub import _own_helper

class Example:
    _cache = None

    def __init__(self, model):
        self._lock = None
        setattr(self, "_token", 1)

    def run(self, model, config):
        parsers: argparse._SubParsersAction
        model._modules["encoder"] = None
        self._lock, self._cache, self._token, _own_helper(), self.__dict__
        return getattr(config, "_attn_implementation", None), model._prepare_inputs({})
"""


def test_the_scan_finds_other_libraries_private_names_and_not_dialevals_own():
    names = scan(ast.parse(SCAN_EXAMPLE))
    found = host_private_uses({"example.py": names}, names.defined)["example.py"]
    assert sorted(name for _, name in found) == [
        "_attn_implementation",
        "_modules",
        "_prepare_inputs",
        "accelerate.state._private_helper",
        "torch._dynamo",
    ]


#: The private names dialeval/host_adapters.py reads, by the class that defines them.
HOST_ADAPTER_NAMES = {
    "PartialState": ("_shared_state",),
    "PretrainedConfig": ("_attn_implementation",),
}


def adapters_checked_names() -> set[str]:
    from dialeval.generation.generation_settings import GENERATION_PRIVATE_METHODS
    from dialeval.metrics.engines.evaluate_state import QUEUE_ATTRIBUTES
    from dialeval.trainers.trainer_hooks import OVERRIDDEN_PRIVATE_METHODS, READ_PRIVATE_NAMES

    names = {*QUEUE_ATTRIBUTES, *GENERATION_PRIVATE_METHODS, *OVERRIDDEN_PRIVATE_METHODS}
    names |= {
        *READ_PRIVATE_NAMES,
        *(name for names in HOST_ADAPTER_NAMES.values() for name in names),
    }
    return names


def test_every_private_name_an_adapter_uses_is_checked_against_the_installed_host():
    uses = package_private_uses()
    found = {name for path in ADAPTER_MODULES for _, name in uses.get(path, [])}
    assert sorted(found - adapters_checked_names()) == []


def test_every_private_name_the_adapters_use_still_exists_in_the_installed_hosts(tmp_path):
    import evaluate
    from accelerate import PartialState
    from transformers import GenerationMixin, PretrainedConfig, Seq2SeqTrainer

    from dialeval.generation.generation_settings import GENERATION_PRIVATE_METHODS
    from dialeval.metrics.engines.evaluate_state import QUEUE_ATTRIBUTES
    from dialeval.trainers.trainer_hooks import OVERRIDDEN_PRIVATE_METHODS, READ_PRIVATE_NAMES

    module = evaluate.load(str(REPO / "metrics" / "lexical_diversity"), cache_dir=str(tmp_path))
    module.add_batch(predictions=[["a b", "c d"]])
    assert [name for name in QUEUE_ATTRIBUTES if not hasattr(module, name)] == []
    assert [name for name in GENERATION_PRIVATE_METHODS if not hasattr(GenerationMixin, name)] == []
    assert [name for name in OVERRIDDEN_PRIVATE_METHODS if not hasattr(Seq2SeqTrainer, name)] == []
    # Instance attributes (``_gen_kwargs``) exist once Trainer's own code has assigned them.
    trainer_sources = "".join(
        inspect.getsource(cls)
        for cls in Seq2SeqTrainer.__mro__
        if cls.__module__.startswith("transformers.")
    )
    unassigned = [
        name
        for name in READ_PRIVATE_NAMES
        if not hasattr(Seq2SeqTrainer, name) and f"self.{name} =" not in trainer_sources
    ]
    assert unassigned == []
    hosts = {"PartialState": PartialState, "PretrainedConfig": PretrainedConfig()}
    assert [
        f"{owner}.{name}"
        for owner, names in HOST_ADAPTER_NAMES.items()
        for name in names
        if not hasattr(hosts[owner], name)
    ] == []


def install_requires() -> list[Requirement]:
    tree = ast.parse((REPO / "setup.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and getattr(node.targets[0], "id", None) == "INSTALL_REQUIRES"
        ):
            return [Requirement(ast.literal_eval(item)) for item in node.value.elts]
    raise AssertionError("setup.py has no INSTALL_REQUIRES")


@pytest.mark.parametrize(
    "host", ["torch", "transformers", "accelerate", "datasets", "evaluate", "sentence-transformers"]
)
def test_each_host_library_is_capped_below_its_next_major_and_allows_the_installed_one(host):
    from importlib.metadata import version

    requirement = next(r for r in install_requires() if r.name == host)
    caps = [spec for spec in requirement.specifier if spec.operator == "<"]
    assert len(caps) == 1, f"{host}: {requirement}"
    installed = Version(re.sub(r"\+.*", "", version(host)))
    assert installed in requirement.specifier
    cap = Version(caps[0].version)
    # The next major (0.x: the next minor), never a tighter pin that blocks a compatible release.
    expected = (
        Version(f"0.{installed.minor + 1}")
        if installed.major == 0
        else Version(f"{installed.major + 1}")
    )
    assert cap == expected, f"{host}: cap {cap}, expected {expected}"
