"""Every public parameter and return of the type-checked modules is annotated.

`make typecheck` runs mypy over the files that `[tool.mypy] files` in pyproject.toml names (the whole
package); this test reads the same list and counts, from the source alone, the public
functions' and methods' parameters and returns that have no annotation, so an untyped one fails
here too, in the suite, with its file and line.
"""

from __future__ import annotations

import ast
import glob
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: mypy (the test extra) brings tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
#: Folders setup.py maps into the `dialeval` namespace: mypy's `files` name them in the assembled copy.
MAPPED_FOLDERS = ("metrics", "generation", "trainers", "datasets_scripts")


def checked_files() -> list[Path]:
    """The repository files behind `[tool.mypy] files` (paths in the assembled package)."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"][
        "files"
    ]
    files: set[Path] = set()
    for pattern in patterns:
        parts = pattern.split("/")
        if parts[0] == "dialeval" and len(parts) > 1 and parts[1] in MAPPED_FOLDERS:
            parts = parts[1:]
        path = ROOT.joinpath(*parts)
        if parts == ["dialeval"]:  # the whole package: the mapped folders are in it too
            files.update(
                file for folder in MAPPED_FOLDERS for file in (ROOT / folder).rglob("*.py")
            )
        files.update(
            path.rglob("*.py") if path.is_dir() else (Path(name) for name in glob.glob(str(path)))
        )
    return sorted(files)


def _is_public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _definitions(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of ``body``, with those of its ``if`` / ``try`` blocks (not nested functions)."""
    found = []
    for node in body:
        if isinstance(node, ast.If):
            found += _definitions(node.body) + _definitions(node.orelse)
        elif isinstance(node, ast.Try):
            found += (
                _definitions(node.body) + _definitions(node.orelse) + _definitions(node.finalbody)
            )
            for handler in node.handlers:
                found += _definitions(handler.body)
        else:
            found.append(node)
    return found


def _function_gaps(
    function: ast.FunctionDef | ast.AsyncFunctionDef, where: str, method: bool
) -> list[str]:
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    static = any(
        isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list
    )
    if method and not static:
        positional = positional[1:]  # self / cls
    every = (
        positional
        + arguments.kwonlyargs
        + [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    )
    gaps = [
        f"{where}:{function.lineno} {function.name}({argument.arg})"
        for argument in every
        if argument.annotation is None
    ]
    if function.returns is None and function.name != "__init__":
        gaps.append(f"{where}:{function.lineno} {function.name}() -> ?")
    return gaps


def untyped_public(source: str, where: str) -> list[str]:
    """``FILE:LINE name(parameter)`` for each unannotated parameter and ``name() -> ?`` for each
    missing return of the public functions of ``source`` and of the public and dunder methods of
    its public classes."""
    gaps: list[str] = []
    for node in _definitions(ast.parse(source).body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_public(node.name):
            gaps += _function_gaps(node, where, method=False)
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for member in _definitions(node.body):
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_public(
                    member.name
                ):
                    gaps += _function_gaps(member, where, method=True)
    return gaps


def test_the_count_finds_untyped_parameters_and_returns():
    source = """
def typed(a: int, *rest: str, flag: bool = False, **options: object) -> int: ...
def untyped(a, b: int, *rest, key=None, **options): ...
def _private(a): ...
class Public:
    def __init__(self, device=None): ...
    def method(self, x: int): ...
    @staticmethod
    def static(x) -> None: ...
    def _helper(self, y): ...
if True:
    def guarded(z) -> None: ...
class _Private:
    def method(self, x): ...
"""
    assert untyped_public(source, "m.py") == [
        "m.py:3 untyped(a)",
        "m.py:3 untyped(key)",
        "m.py:3 untyped(rest)",
        "m.py:3 untyped(options)",
        "m.py:3 untyped() -> ?",
        "m.py:6 __init__(device)",
        "m.py:7 method() -> ?",
        "m.py:9 static(x)",
        "m.py:12 guarded(z)",
    ]


def test_the_type_checked_modules_are_the_whole_package():
    names = {path.relative_to(ROOT).as_posix() for path in checked_files()}
    assert {
        "dialeval/hub.py",
        "dialeval/io.py",
        "dialeval/type_aliases.py",
        "dialeval/cli/main.py",
        "metrics/engines/lm_scorer.py",
        "metrics/engines/embedders.py",
        "metrics/engines/pair_scorer.py",
        "generation/dtg.py",
        "trainers/dress.py",
        "datasets_scripts/registry.py",
    } <= names


def test_every_public_parameter_and_return_of_the_checked_modules_is_annotated():
    gaps = [
        gap
        for path in checked_files()
        for gap in untyped_public(
            path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix()
        )
    ]
    assert gaps == [], (
        f"{len(gaps)} untyped (annotate them; `make typecheck` checks the types):\n"
        + "\n".join(gaps)
    )
