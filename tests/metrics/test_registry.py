"""The registry is the one list of metrics: every entry is a complete, loadable subpackage."""

import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import evaluate
import pytest

import dialeval.metrics
from dialeval.metrics import registry

REPO_ROOT = Path(__file__).resolve().parents[2]
METRIC_FOLDERS = sorted(
    p.name for p in (REPO_ROOT / "metrics").iterdir() if (p / f"{p.name}.py").is_file()
)


def test_registry_lists_every_metric_folder_once():
    assert sorted(metric.name for metric in registry.METRICS) == METRIC_FOLDERS
    assert len(registry.BY_NAME) == len(registry.METRICS)


@pytest.mark.parametrize("metric", registry.METRICS, ids=lambda m: m.name)
def test_each_entry_is_a_complete_subpackage(metric):
    package = importlib.import_module(f"dialeval.metrics.{metric.name}")
    for name in metric.functions:
        assert callable(getattr(package, name)), f"{metric.name}.{name}"
    assert (metric.module_dir / f"{metric.name}.py").is_file()
    assert (metric.module_dir / "README.md").read_text(encoding="utf-8").startswith("---\n")
    assert metric.default_model is None or metric.needs_model
    for scorer in metric.set_scorers:
        assert registry.set_scorer(scorer.name) is scorer


def test_evaluate_module_path_comes_from_the_registry():
    assert dialeval.metrics.evaluate_module_path("nli_diversity") == str(
        registry.get("nli_diversity").module_dir
    )
    with pytest.raises(ValueError, match="compression_ratio"):
        dialeval.metrics.evaluate_module_path("no_such_metric")
    with pytest.raises(ValueError, match="`metric` must be one of"):
        registry.set_scorer("distinct-n")


def test_set_scorers_run_on_the_cli_call():
    sets = [["I went hiking.", "I fixed the sink."], ["Not much.", "Not much."]]
    for name in ("averaged_distinct_n", "ngram_cosine", "compression_ratio"):
        scorer = registry.set_scorer(name)
        result = scorer.run(
            sets, None, batch_size=8, device="cpu", allow_empty=False, progress=None
        )
        assert [set(row) >= {scorer.figure} for row in result["per_set"]] == [True, True]


def test_package_names_stay_functions_after_every_module_is_loaded():
    """``dialeval.metrics.<name>`` is a subpackage that exports a function of the same name; loading
    the evaluate module ``<name>/<name>.py`` must not replace that function."""
    for name in METRIC_FOLDERS:
        evaluate.load(str(registry.get(name).module_dir))
    for name in METRIC_FOLDERS:
        package = importlib.import_module(f"dialeval.metrics.{name}")
        exported = getattr(package, name, None)
        if exported is not None:
            assert inspect.isfunction(exported), (
                f"dialeval.metrics.{name}.{name} is {type(exported)}"
            )
        on_metrics = getattr(dialeval.metrics, name)
        assert inspect.isfunction(on_metrics) or inspect.ismodule(on_metrics)
    assert inspect.isfunction(dialeval.metrics.nli_diversity) and inspect.isfunction(
        dialeval.metrics.sem_ent
    )


def test_every_public_name_is_importable_from_a_fresh_interpreter():
    code = (
        "import dialeval.metrics as m\n"
        "for name in m.__all__:\n"
        "    exec(f'from dialeval.metrics import {name}')\n"
        "    assert not isinstance(eval(name), type(m)), name\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO_ROOT)


#: What a metric's declaration may import at its top: ``dialeval evaluate --help`` reads every
#: spec (and the job steps it names), so none of them may load torch, numpy, scipy, ... there.
LIGHT_MODULES = (
    "dialeval.metrics.engines.job_steps",
    "dialeval.metrics.engines.metric_spec",
    "dialeval.option_fields",
    "dialeval.validation",
    "dialeval.hub",
    "dialeval.io",
)
#: A metric folder's light modules: its declaration and the constants it reads.
DECLARATION_FILES = ("spec", "job", "defaults", "outputs")


def _top_level_imports(path: Path) -> list[str]:
    import ast

    names = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


@pytest.mark.parametrize("name", METRIC_FOLDERS)
def test_a_metric_declaration_imports_only_light_modules_at_its_top(name):
    own = {f"dialeval.metrics.{name}.{module}" for module in DECLARATION_FILES}
    for module in DECLARATION_FILES:
        path = REPO_ROOT / "metrics" / name / f"{module}.py"
        if not path.is_file():
            continue
        heavy = [
            imported
            for imported in _top_level_imports(path)
            if imported.partition(".")[0] not in sys.stdlib_module_names
            and imported not in LIGHT_MODULES
            and imported not in own
        ]
        assert not heavy, f"metrics/{name}/{module}.py imports {heavy} at its top"


# Every module under dialeval.metrics imported first (the evaluate module files excepted: only
# evaluate.load imports them, under their own name), and only then each exported name read: the
# import system binds each submodule on its package, which must not hide a same-named export.
SUBMODULES_FIRST = """
import importlib, inspect, pathlib, sys
import dialeval.metrics as metrics
root = pathlib.Path(metrics.__file__).parent
packages = []
for init in sorted(root.glob("*/__init__.py")):
    package = f"dialeval.metrics.{init.parent.name}"
    packages.append(package)
    for path in sorted(init.parent.glob("*.py")):
        if path.stem not in ("__init__", "app", init.parent.name):
            importlib.import_module(f"{package}.{path.stem}")
lazy = metrics.__dict__["_lazy_exports"]
read = [n for n in lazy if n in vars(metrics) and not inspect.ismodule(vars(metrics)[n])]
assert not read, f"read before the test: {read}"
wrong = [
    f"{package}.{name}"
    for package in ["dialeval.metrics", *packages]
    for name in getattr(sys.modules[package], "__all__", ())
    if inspect.ismodule(getattr(sys.modules[package], name))
]
assert not wrong, wrong
assert inspect.isfunction(metrics.nli_diversity) and inspect.isfunction(metrics.self_bleu)
"""


def test_exported_names_stay_functions_when_their_submodules_are_imported_first():
    subprocess.run([sys.executable, "-c", SUBMODULES_FIRST], check=True, cwd=REPO_ROOT)
