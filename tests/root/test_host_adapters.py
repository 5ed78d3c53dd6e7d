"""Private API of the host libraries: used only behind one adapter per library, each name still
defined by the installed host, and every host capped at its next major release in setup.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
PACKAGE_FOLDERS = ("dialeval", "metrics", "generation", "trainers", "datasets_scripts")
ADAPTERS = {
    "evaluate": "metrics/engines/evaluate_state.py",
    "generate": "generation/generation_settings.py",
    "trainer": "trainers/trainer_hooks.py",
}


def private_names():
    from dialeval.generation.generation_settings import GENERATION_PRIVATE_METHODS
    from dialeval.metrics.engines.evaluate_state import QUEUE_ATTRIBUTES
    from dialeval.trainers.trainer_hooks import OVERRIDDEN_PRIVATE_METHODS

    # "data" / "writer" / "keep_in_memory" are too common to scan for; the rest are evaluate's own names.
    evaluate_names = set(QUEUE_ATTRIBUTES) - {"data", "writer", "keep_in_memory"}
    return {
        "evaluate": evaluate_names,
        "generate": set(GENERATION_PRIVATE_METHODS),
        "trainer": set(OVERRIDDEN_PRIVATE_METHODS) | {"_signature_columns", "_get_output_dir"},
    }


def attribute_names(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
    return names


def test_only_the_adapters_touch_the_hosts_private_api():
    names = private_names()
    offenders = []
    for folder in PACKAGE_FOLDERS:
        for path in sorted((REPO / folder).rglob("*.py")):
            relative = path.relative_to(REPO).as_posix()
            used = attribute_names(path)
            for host, private in names.items():
                if relative != ADAPTERS[host] and used & private:
                    offenders.append(f"{relative}: {sorted(used & private)}")
    assert not offenders, offenders


def test_every_private_name_the_adapters_use_still_exists_in_the_installed_hosts(tmp_path):
    import evaluate
    from transformers import GenerationMixin, Seq2SeqTrainer

    from dialeval.generation.generation_settings import GENERATION_PRIVATE_METHODS
    from dialeval.metrics.engines.evaluate_state import QUEUE_ATTRIBUTES
    from dialeval.trainers.trainer_hooks import OVERRIDDEN_PRIVATE_METHODS

    module = evaluate.load(str(REPO / "metrics" / "lexical_diversity"), cache_dir=str(tmp_path))
    module.add_batch(predictions=[["a b", "c d"]])
    assert [name for name in QUEUE_ATTRIBUTES if not hasattr(module, name)] == []
    assert [name for name in GENERATION_PRIVATE_METHODS if not hasattr(GenerationMixin, name)] == []
    assert [name for name in OVERRIDDEN_PRIVATE_METHODS if not hasattr(Seq2SeqTrainer, name)] == []


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
