"""The command line starts without the numeric and model stacks, and the layers load bottom-up.

Each check runs in a fresh interpreter and reads ``sys.modules`` afterwards: what an earlier test
imported must not hide what a command line imports on its own.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

#: What ``dialeval --version`` and every ``--help`` must not import: the numeric, table and model
#: stacks (seconds of start-up on a 2-core machine).
HEAVY = (
    "torch",
    "numpy",
    "scipy",
    "sklearn",
    "pandas",
    "pyarrow",
    "nltk",
    "transformers",
    "sentence_transformers",
    "datasets",
    "evaluate",
)

RUN_COMMAND_LINE = """
import json, sys
from dialeval.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(name for name in {heavy} if name in sys.modules)), file=sys.stderr)
"""


def _heavy_modules_after(*arguments: str) -> list[str]:
    code = RUN_COMMAND_LINE.format(heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", code, *arguments],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "arguments",
    [
        ("--version",),
        ("--help",),
        ("export-dataset", "--help"),
        ("dtg", "--help"),
        ("dtg-summary", "--help"),
        ("evaluate", "--help"),
        ("meta-eval", "--help"),
        ("push-metrics", "--help"),
    ],
    ids=" ".join,
)
def test_command_line_imports_no_heavy_stack(arguments):
    assert _heavy_modules_after(*arguments) == []


def test_an_engine_loads_no_metric_job_module():
    code = (
        "import sys\n"
        "import dialeval.metrics.engines.pair_scorer\n"
        "print([name for name in sys.modules\n"
        "       if name.startswith('dialeval.metrics.') and name.endswith('.job')])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def test_one_metric_loads_no_other_metric():
    code = (
        "import sys\n"
        "from dialeval.metrics import compression_ratio\n"
        "print(sorted({name.split('.')[2] for name in sys.modules\n"
        "              if name.startswith('dialeval.metrics.')}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "['compression_ratio']"
