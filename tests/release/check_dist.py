"""`make dist-check`'s file check: the wheel holds every file of the folders setup.py maps into
``dialeval`` (modules, evaluate module cards, app.py, requirements.txt, custom_generate/), the sdist
holds them at their checkout paths with what the build needs, and neither ships the test suite.

    python tests/release/check_dist.py DIST.whl DIST.tar.gz
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILD_INPUTS = ("setup.py", "pyproject.toml", "PYPI.md", "README.md", "CHANGELOG.md", "MANIFEST.in")


def package_folders() -> dict[str, str]:
    """setup.py's TOP_LEVEL (package -> folder), read without running setup()."""
    tree = ast.parse((REPO / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            getattr(target, "id", None) == "TOP_LEVEL" for target in node.targets
        ):
            return ast.literal_eval(node.value)
    raise SystemExit("setup.py has no TOP_LEVEL mapping")


def checkout_files(folder: str) -> list[str]:
    """The folder's files git knows of (tracked or new, not ignored): no caches or build leftovers."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", folder],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [path for path in listed if (REPO / path).is_file()]


def main(wheel: str, sdist: str) -> int:
    wheel_names = set(zipfile.ZipFile(wheel).namelist())
    with tarfile.open(sdist) as archive:
        root, *_ = archive.getnames()[0].split("/")
        sdist_names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    missing_wheel, missing_sdist, expected = [], [], 0
    for package, folder in package_folders().items():
        for path in checkout_files(folder):
            expected += 1
            installed = package.replace(".", "/") + path[len(folder) :]
            if installed not in wheel_names:
                missing_wheel.append(f"{path} (as {installed})")
            if path not in sdist_names:
                missing_sdist.append(path)
    missing_sdist += [name for name in BUILD_INPUTS if name not in sdist_names]
    shipped_tests = sorted(name for name in wheel_names | sdist_names if name.startswith("tests/"))
    for label, problems in (
        ("the wheel lacks", missing_wheel),
        ("the sdist lacks", missing_sdist),
        ("the distributions ship the test suite's", shipped_tests),
    ):
        if problems:
            print(f"{label}:\n  " + "\n  ".join(problems))
    if missing_wheel or missing_sdist or shipped_tests:
        return 1
    print(
        f"check_dist: the wheel and the sdist ({root}) hold all {expected} files of the package folders"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
