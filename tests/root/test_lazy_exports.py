"""Packages that export lazily: what type checkers read is what runs, and a submodule named as an
export never hides it."""

import ast
import importlib
import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dialeval.metrics
from dialeval.lazy_exports import subpackage_exports

REPO_ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {
    "dialeval": "dialeval",
    "dialeval.metrics": "metrics",
    "dialeval.generation": "generation",
    "dialeval.trainers": "trainers",
    "dialeval.datasets_scripts": "datasets_scripts",
}


def _lazy_packages() -> list[tuple[str, Path]]:
    found = []
    for package, folder in FOLDERS.items():
        for init in sorted((REPO_ROOT / folder).glob("**/__init__.py")):
            if "export_lazily(" in init.read_text(encoding="utf-8"):
                parts = init.parent.relative_to(REPO_ROOT / folder).parts
                found.append((".".join((package, *parts)), init))
    return found


LAZY_PACKAGES = _lazy_packages()


def _type_checking_names(init: Path) -> set[str]:
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            return {
                alias.asname or alias.name
                for statement in node.body
                if isinstance(statement, ast.ImportFrom)
                for alias in statement.names
            }
    return set()


def test_the_lazy_packages_are_found():
    names = [package for package, _ in LAZY_PACKAGES]
    assert {
        "dialeval.metrics",
        "dialeval.metrics.nli_diversity",
        "dialeval.metrics.lexical_diversity",
        "dialeval.generation",
        "dialeval.trainers",
    } <= set(names)


@pytest.mark.parametrize("package, init", LAZY_PACKAGES, ids=[p for p, _ in LAZY_PACKAGES])
def test_type_checkers_see_the_names_that_run(package, init):
    module = importlib.import_module(package)
    # names found in the subpackages' __all__, read first: the declared map must not grow with them
    for name in subpackage_exports(package) if package == "dialeval.metrics" else ():
        getattr(module, name)
    lazy = set(module.__dict__["_lazy_exports"])
    # what the TYPE_CHECKING block imports for type checkers is what __getattr__ imports
    assert _type_checking_names(init) - {"ArgumentError"} == lazy
    defined = {name for name, value in vars(module).items() if not inspect.ismodule(value)}
    assert set(module.__all__) <= lazy | defined
    assert set(module.__all__) <= set(dir(module))


def test_an_export_resolves_to_the_object_its_module_defines():
    from dialeval.metrics.nli_diversity.nli import nli_diversity

    assert dialeval.metrics.nli_diversity is nli_diversity
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        dialeval.metrics.no_such_name  # noqa: B018 - the attribute access is the test


def test_a_submodule_named_as_an_export_does_not_hide_it(tmp_path):
    """A package ``pack`` exporting ``thing`` from its submodule ``pack.thing``: importing the
    submodule before reading the name still gives the function."""
    package = tmp_path / "pack"
    package.mkdir()
    (package / "thing.py").write_text("def thing():\n    return 1\n", encoding="utf-8")
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            from dialeval.lazy_exports import export_lazily

            __getattr__, __dir__ = export_lazily(__name__, {".thing": ("thing",)})
            __all__ = ["thing"]
            """
        ),
        encoding="utf-8",
    )
    code = (
        "import inspect, sys\n"
        "import pack, pack.thing\n"
        "assert inspect.isfunction(pack.thing), pack.thing\n"
        "assert sys.modules['pack.thing'].thing is pack.thing\n"
        "assert 'thing' in dir(pack)\n"
    )
    subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        cwd=tmp_path,
        env={"PYTHONPATH": f"{tmp_path}"},
    )


def test_a_folder_not_listed_exports_its_subpackage_names(tmp_path):
    """``more_exports``: a metric folder the package does not list exports its ``__all__``."""
    from dialeval.lazy_exports import subpackage_exports

    package = tmp_path / "host"
    (package / "newmetric").mkdir(parents=True)
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            from dialeval.lazy_exports import export_lazily, subpackage_exports

            __getattr__, __dir__ = export_lazily(
                __name__, {}, more_exports=lambda: subpackage_exports(__name__)
            )
            """
        ),
        encoding="utf-8",
    )
    (package / "newmetric" / "__init__.py").write_text(
        'def newmetric():\n    return 2\n\n__all__ = ["newmetric"]\n', encoding="utf-8"
    )
    code = (
        "import inspect, host, host.newmetric\n"
        "assert inspect.isfunction(host.newmetric), host.newmetric\n"
        "from host import newmetric\n"
        "assert newmetric() == 2\n"
    )
    subprocess.run(
        [sys.executable, "-c", code], check=True, cwd=tmp_path, env={"PYTHONPATH": f"{tmp_path}"}
    )
    assert subpackage_exports("dialeval.metrics")["mtld_words"] == "dialeval.metrics.mtld"
