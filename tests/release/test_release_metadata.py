"""The release's static facts; `make dist-check` builds and smoke-tests the wheel.

- the version has one source, ``dialeval/__init__.py``: setup.py reads it, `dialeval --version`
  prints it, and no other file of the packaging states one;
- the evaluate modules' and the DTG recipe's requirements name the published distribution with a
  version bound that admits this version;
- CHANGELOG.md has an entry for it; the release workflow publishes by trusted publishing only.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys

import pytest
import yaml
from conftest import REPO_ROOT
from packaging.requirements import Requirement

import dialeval
from dialeval.cli.main import main

RECIPE_REQUIREMENTS = REPO_ROOT / "generation" / "custom_generate" / "requirements.txt"


def setup_keyword(name: str) -> ast.expr:
    """The expression setup.py passes as ``setup(name=...)``."""
    tree = ast.parse((REPO_ROOT / "setup.py").read_text(encoding="utf-8"))
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setup"
    ]
    (call,) = calls
    return next(keyword.value for keyword in call.keywords if keyword.arg == name)


def distribution_name() -> str:
    return ast.literal_eval(setup_keyword("name"))


def test_setup_py_takes_its_version_from_the_package():
    assert not isinstance(setup_keyword("version"), ast.Constant), (
        "setup.py states a version of its own"
    )
    printed = subprocess.run(
        [sys.executable, "setup.py", "--version"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[-1]
    assert printed == dialeval.__version__


def test_no_other_packaging_file_states_a_version():
    version = re.escape(dialeval.__version__)
    for name in ("setup.py", "pyproject.toml", "MANIFEST.in"):
        text = (REPO_ROOT / name).read_text(encoding="utf-8")
        assert not re.search(rf"version\s*[=:]\s*['\"]{version}", text, re.IGNORECASE), name


def test_cli_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"dialeval {dialeval.__version__}"


@pytest.mark.parametrize(
    "path",
    sorted(REPO_ROOT.glob("metrics/*/requirements.txt")) + [RECIPE_REQUIREMENTS],
    ids=lambda path: str(path.relative_to(REPO_ROOT)),
)
def test_requirements_name_the_published_package_with_a_bound_admitting_this_version(path):
    lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    requirements = [Requirement(line) for line in lines if line and not line.startswith("#")]
    ours = [requirement for requirement in requirements if requirement.name == distribution_name()]
    assert len(ours) == 1, f"{path} must name {distribution_name()!r} once: {lines}"
    specifier = ours[0].specifier
    assert specifier and any(spec.operator in ("<", "<=", "~=", "==") for spec in specifier), (
        f"{path}: {ours[0]} needs an upper bound"
    )
    assert specifier.contains(dialeval.__version__), (
        f"{path}: {ours[0]} refuses this version {dialeval.__version__}"
    )


def test_the_recipe_requirements_are_shipped_beside_the_recipe():
    assert (RECIPE_REQUIREMENTS.parent / "generate.py").is_file()


def test_changelog_has_an_entry_for_this_version():
    changelog = (REPO_ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## [Unreleased]" in changelog
    assert re.search(rf"^## \[{re.escape(dialeval.__version__)}\]", changelog, re.MULTILINE)


def test_release_workflow_publishes_by_trusted_publishing_only():
    workflow_text = (REPO_ROOT / ".github" / "workflows" / "release.yml").read_text(
        encoding="utf-8"
    )
    workflow = yaml.safe_load(workflow_text)
    triggers = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads `on` as True
    assert triggers["push"]["tags"]
    publish = [
        job
        for job in workflow["jobs"].values()
        if any(
            str(step.get("uses", "")).startswith("pypa/gh-action-pypi-publish@")
            for step in job["steps"]
        )
    ]
    assert len(publish) == 1 and publish[0]["permissions"]["id-token"] == "write"
    (step,) = [
        step
        for step in publish[0]["steps"]
        if str(step.get("uses", "")).startswith("pypa/gh-action-pypi-publish@")
    ]
    assert not {"password", "user"} & set(step.get("with", {})), (
        "trusted publishing takes no API token"
    )
    assert "secrets." not in workflow_text


def test_the_pypi_description_speaks_of_the_package_only():
    """PyPI shows ``long_description`` to users: the package's own page, not the contributor's
    README (which speaks of the checkout, the test suite and the build machine)."""
    long_description = setup_keyword("long_description")
    assert "PYPI.md" in ast.unparse(long_description)
    manifest = (REPO_ROOT / "MANIFEST.in").read_text(encoding="utf-8")
    assert re.search(r"^include .*\bPYPI\.md\b", manifest, re.MULTILINE), "the sdist needs it"
    text = (REPO_ROOT / "PYPI.md").read_text(encoding="utf-8")
    for contributor_only in ("../shared", "make test", "2-core", "tests/", ".venv"):
        assert contributor_only not in text, contributor_only
    # a relative link resolves on the repository, not on PyPI
    assert not re.findall(r"\]\((?!https?://|#)[^)]*\)", text)


def readme_test_command() -> str:
    """The command the README's opening block gives for running the tests (``make test``)."""
    block = re.search(
        r"```bash\n(.*?)```", (REPO_ROOT / "README.md").read_text(encoding="utf-8"), re.DOTALL
    )
    commands = [line.split("#", 1)[0].strip() for line in block.group(1).splitlines()]
    (command,) = [command for command in commands if command.split()[:2] == ["make", "test"]]
    return command


def ci_script_commands() -> list[str]:
    """The commands `.ci/run` runs, less its shell set-up (``set``, ``cd``) and comments."""
    lines = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [line.split("#", 1)[0].strip() for line in lines]
    return [command for command in commands if command and command.split()[0] not in {"set", "cd"}]


def test_workflow_runs_the_readme_test_command_on_push_and_pull_request():
    path = REPO_ROOT / ".github" / "workflows" / "test.yml"
    assert path.is_file(), "no workflow runs the tests on a push or pull request"
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    triggers = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads `on` as True
    assert {"push", "pull_request"} <= set(triggers)
    assert workflow["concurrency"]["cancel-in-progress"] is True
    (job,) = workflow["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest" and job["timeout-minutes"] > 0
    assert job["env"]["TORCH_INDEX"] == "https://download.pytorch.org/whl/cpu"
    runs = [step["run"].strip() for step in job["steps"] if "run" in step]
    # the workflow and .ci/run run the same commands, the README's test command among them
    assert readme_test_command() in runs
    assert runs == ci_script_commands()
