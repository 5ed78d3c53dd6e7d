"""A metric is its folder: a new model-backed metric written into a copy of the package, with no
other file of it edited, gets its flag in ``dialeval evaluate --help``, runs in the evaluate job
(its report key, its output file written through its spec's hook), scores test sets in
``dialeval meta-eval``, and is enumerated by the conformance and property suites."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import REPO_ROOT

#: The package's folders, as setup.py's package_dir (and `make typecheck`) assemble them.
SUBPACKAGES = ("metrics", "generation", "trainers", "datasets_scripts")
NAME = "toy_length"

INIT = '''
"""A toy metric: the mean words per response of each set, times a scale its model holds."""

from pathlib import Path


def toy_length(predictions: list[list[str]], model: str) -> float:
    """The mean over sets of ``scale * mean words per response``, ``scale`` read from the model
    folder's ``scale.txt``."""
    scale = float((Path(model) / "scale.txt").read_text(encoding="utf-8"))
    means = [sum(len(text.split()) for text in texts) / len(texts) for texts in predictions]
    return scale * sum(means) / len(means)
'''

SPEC = '''
"""The toy metric's contract: a flag, a model, a per-set figure and a file it writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dialeval.metrics.engines.job_steps import JobData, JobOptions, JobStep, StepOutcome
from dialeval.metrics.engines.metric_spec import MetricSpec, ModelSpec, OutputHook, SetFigure
from dialeval.option_fields import model_list_field, option


@dataclass
class ToyOptions:
    toy_models: list[str] = model_list_field("--toy-model", "toy/scale", "scale model of toy_length")
    toy_output: str | None = field(
        default=None, metadata=option("--toy-output", metavar="DIR", help="write toy_length.txt")
    )


def _run(data: JobData, model: str, options, progress) -> StepOutcome:
    scale = float((Path(model) / "scale.txt").read_text(encoding="utf-8"))
    per_set = [
        {"toy_length": scale * sum(len(t.split()) for t in texts) / len(texts)}
        for texts in data.sets
    ]
    progress(data.num_units)
    mean = sum(row["toy_length"] for row in per_set) / len(per_set)
    return StepOutcome({"toy_length": mean, "model": model}, per_set)


def _planned(arguments, systems):
    folder = arguments.get("toy_output")
    return [("--toy-output", Path(folder) / "toy_length.txt")] if folder else []


def _write(arguments, system):
    if not arguments.get("toy_output"):
        return []
    path = Path(arguments["toy_output"]) / "toy_length.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    figures = {key: value["toy_length"] for key, value in system.report["metrics"].items()
               if key.startswith("toy_length")}
    path.write_text(json.dumps(figures), encoding="utf-8")
    return [f"toy: {path}"]


import json  # noqa: E402

STEPS = (
    JobStep(
        "toy_length",
        ("response_set",),
        _run,
        options=(JobOptions, ToyOptions),
        models=lambda options: options.toy_models,
        model_flag="--toy-model",
    ),
)
SPEC = MetricSpec(
    "toy_length",
    "mean words per response, scaled",
    ("toy_length",),
    order=155,
    steps=STEPS,
    set_figures=(SetFigure("toy_length", "toy_length", "toy_length"),),
    model=ModelSpec("--toy-model", "toy/scale", "a folder holding scale.txt"),
    outputs=(OutputHook(_planned, write=_write),),
)
'''

CASES = """
from metric_cases import ModuleEntry, sets_case, sets_strategy


def conformance(fixture):
    return sets_case()


def module_property():
    return ModuleEntry(sets_strategy())
"""

SCRIPT = """
import contextlib, io, json, sys
from pathlib import Path

import dialeval
from dialeval.cli import main

root, model = Path(sys.argv[1]), sys.argv[2]
assert Path(dialeval.__file__).is_relative_to(root / "package"), dialeval.__file__
out = {}
help_text = io.StringIO()
with contextlib.redirect_stdout(help_text), contextlib.suppress(SystemExit):
    main(["evaluate", "--help"])
out["help"] = help_text.getvalue()
report = root / "report.json"
assert main([
    "evaluate", str(root / "sets.jsonl"), "--metric", "toy_length", "--toy-model", model,
    "--toy-output", str(root / "toy"), "-o", str(report), "--no-progress",
]) == 0
out["report"] = json.loads(report.read_text(encoding="utf-8"))
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    assert main([
        "meta-eval", "--test", "contest", "--task", "resp", "--metric", f"toy_length={model}",
        "--no-human", "--no-verify", "--no-progress", "--data-dir", str(root / "release"),
        "--cache-dir", str(root / "cache"), "-o", str(root / "meta.json"),
    ]) == 0
out["meta"] = json.loads((root / "meta.json").read_text(encoding="utf-8"))
print(json.dumps(out))
"""


def _copy_package(target: Path) -> Path:
    """The installed layout: dialeval/ with its subpackages from their top-level folders."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    package = target / "dialeval"
    shutil.copytree(REPO_ROOT / "dialeval", package, ignore=ignore)
    for folder in SUBPACKAGES:
        shutil.copytree(REPO_ROOT / folder, package / folder, ignore=ignore)
    return package


def _copy_suites(target: Path) -> Path:
    """The suites that enumerate every metric, and what they import."""
    tests = target / "tests"
    tests.mkdir()
    shutil.copytree(REPO_ROOT / "tests" / "metric_cases", tests / "metric_cases")
    helpers = [path.name for path in (REPO_ROOT / "tests").glob("*.py")]  # conftest and its own
    suites = ["metrics/test_module_conformance.py", "property/test_property_modules.py"]
    for module in [*helpers, *suites, "property/property_support.py"]:
        (tests / module).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / "tests" / module, tests / module)
    return tests


def _tiny_contest(release: Path) -> None:
    """A conTest respGen file of six sets (two classes), read with --no-verify."""
    path = release / "conTest" / "con_test_200_with_hds_resp_gen.csv"
    path.parent.mkdir(parents=True)
    rows = ["sample_id,context,resp_0,resp_1,resp_2,label_value"]
    rows += [f"{i},c{i},a b,a b,a c,0" for i in range(3)]
    rows += [f"{i},c{i},a b c d,c d e f,e f g h i,1" for i in range(3, 6)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_a_new_metric_folder_is_all_a_metric_needs(tmp_path):
    package = _copy_package(tmp_path / "package")
    folder = package / "metrics" / NAME
    folder.mkdir()
    (folder / "__init__.py").write_text(textwrap.dedent(INIT), encoding="utf-8")
    (folder / "spec.py").write_text(textwrap.dedent(SPEC), encoding="utf-8")
    model = tmp_path / "scale_model"
    model.mkdir()
    (model / "scale.txt").write_text("2", encoding="utf-8")
    sets = [["a b", "a b c d"], ["one", "two words"]]
    (tmp_path / "sets.jsonl").write_text(
        "".join(json.dumps({"responses": s}) + "\n" for s in sets), encoding="utf-8"
    )
    _tiny_contest(tmp_path / "release")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "package"), "HF_HUB_OFFLINE": "1"}
    env.update(HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_EVALUATE_OFFLINE="1")
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), str(model)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert "--toy-model" in out["help"] and "--toy-output" in out["help"]
    key = f"toy_length[{model}]"
    assert out["report"]["metrics"][key]["toy_length"] == 2 * (3 + 1.5) / 2
    assert [row["toy_length"] for row in out["report"]["per_set"]] == [6.0, 3.0]
    assert json.loads((tmp_path / "toy" / "toy_length.txt").read_text(encoding="utf-8")) == {
        key: 4.5
    }
    meta = out["meta"][0] if isinstance(out["meta"], list) else out["meta"]
    row = meta["rows"][key]
    assert row["num_sets"] == 6 and row["spearman"] > 0  # longer responses, the diverse class

    # The suites parametrize over the registry: the new metric is among their cases.
    tests = _copy_suites(tmp_path)
    (tests / "metric_cases" / f"{NAME}.py").write_text(textwrap.dedent(CASES), encoding="utf-8")
    collected = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            "-c",
            os.devnull,
            str(tests / "metrics" / "test_module_conformance.py"),
            str(tests / "property" / "test_property_modules.py"),
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    ids = collected.stdout.splitlines()
    assert any("test_module_conformance.py" in i and f"[{NAME}" in i for i in ids), ids[-20:]
    assert any("test_property_modules.py" in i and f"[{NAME}" in i for i in ids), ids[-20:]


#: The metric names the command line may spell, each with its reason: DTG's objectives (``--objective
#: nli|sent_bert``, generation's names, and Table 4's columns), the release's stored score columns
#: that ``meta-eval --metric released:NAME`` reads, and the meta-evaluation statistics that are
#: meta-eval's own computation. Every other mention of a metric comes from its spec.
NAMED_IN_THE_CLI = {
    "dtg_job.py": {"nli", "sent_bert", "nli_diversity"},
    "dtg_options.py": {"nli", "sent_bert", "nli_diversity"},
    "dtg_summary.py": {"nli", "sent_bert", "nli_diversity"},
    "dtg_relevance.py": {"similarity_diversity"},
    "meta_eval_job.py": {
        "averaged_distinct_n",
        "ngram_cosine",
        "sent_bert",
        "bertscore",
        "diversity_meta_eval",
    },
}


def _docstrings(tree: ast.Module) -> set[int]:
    bodies = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef)))]
    return {
        id(body.body[0].value)
        for body in bodies
        if body.body
        and isinstance(body.body[0], ast.Expr)
        and isinstance(body.body[0].value, ast.Constant)
    }


def test_the_command_line_code_names_no_metric():
    from dialeval.metrics import registry

    names = (
        set(registry.BY_NAME)
        | set(registry.SET_SCORERS)
        | {step.name for step in registry.JOB_STEPS}
        | {step.report_name for step in registry.JOB_STEPS if step.report_name}
    )
    found = {}
    for path in sorted((REPO_ROOT / "dialeval" / "cli").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = _docstrings(tree)
        named = {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in names and id(node) not in docstrings
        } | {
            node.module.split(".")[2]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
            and (node.module or "").startswith("dialeval.metrics.")
            and node.module.split(".")[2] in names
        }
        if named - NAMED_IN_THE_CLI.get(path.name, set()):
            found[path.name] = sorted(named - NAMED_IN_THE_CLI.get(path.name, set()))
    assert not found, f"metric names spelled in dialeval/cli/ instead of the metric's spec: {found}"
