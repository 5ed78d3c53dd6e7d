"""The command line starts without the numeric and model stacks, and the layers load bottom-up;
``dialeval evaluate`` opens its input before any model, table or statistics stack loads, and a
job of lexical steps never loads torch.

Each check runs in a fresh interpreter and reads ``sys.modules`` afterwards: what an earlier test
imported must not hide what a command line imports on its own.
"""

import json
import os
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


def test_no_progress_switches_each_library_when_it_is_imported_and_restores_it():
    code = (
        "import sys\n"
        "from dialeval.cli.progress import library_progress_bars\n"
        "with library_progress_bars(False):\n"
        "    imported = sorted({'datasets', 'transformers', 'huggingface_hub'} & set(sys.modules))\n"
        "    import datasets\n"
        "    import huggingface_hub.utils as hub\n"
        "    import transformers.utils.logging as logging\n"
        "    inside = [datasets.is_progress_bar_enabled(), logging.is_progress_bar_enabled(),\n"
        "              not hub.are_progress_bars_disabled()]\n"
        "after = [datasets.is_progress_bar_enabled(), logging.is_progress_bar_enabled(),\n"
        "         not hub.are_progress_bars_disabled()]\n"
        "print(imported, inside, after)\n"
    )
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("HF_DATASETS_DISABLE_PROGRESS_BARS", "HF_HUB_DISABLE_PROGRESS_BARS")
    }
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "[] [False, False, False] [True, True, True]"


#: What ``dialeval evaluate`` must not have imported when it opens its input (the planning, the
#: output checks and the lock come first): the model, table and statistics stacks.
NOT_BEFORE_READING = (
    *(name for name in HEAVY if name != "numpy"),
    "matplotlib",
    "accelerate",
)

STOP_AT_FIRST_READ = """
import json, os, sys
import dialeval.io

def report_and_stop(self, *args, **kwargs):
    loaded = sorted(name for name in {heavy} if name in sys.modules)
    print(json.dumps(loaded), file=sys.stderr, flush=True)
    os._exit(0)

dialeval.io._Utf8File.__init__ = report_and_stop
from dialeval.cli.main import main
main(sys.argv[1:])
print("the input was never opened", file=sys.stderr)
"""


@pytest.mark.parametrize(
    "metrics",
    [
        (),
        ("lexical_diversity", "corpus_lexical_diversity", "sent_bert", "vendi"),
    ],
    ids=["default metrics", "the benchmark's metrics"],
)
def test_evaluate_opens_its_input_before_the_heavy_stacks_load(tmp_path, metrics):
    if not metrics and _machine_wide_nltk_tokenizers():
        pytest.skip(
            "NLTK's tokenizers are installed on this machine: the tagger check imports NLTK"
        )
    sets = tmp_path / "sets.jsonl"
    sets.write_text(json.dumps({"responses": ["a b", "c d"]}) + "\n", encoding="utf-8")
    arguments = [str(sets), "-o", str(tmp_path / "out.json"), "--no-progress"]
    arguments += [part for name in metrics for part in ("--metric", name)]
    environment = {
        **{key: value for key, value in os.environ.items() if key != "NLTK_DATA"},
        "HOME": str(tmp_path),  # no NLTK data of the user's: the tagger check needs no NLTK
    }
    done = subprocess.run(
        [sys.executable, "-c", STOP_AT_FIRST_READ.format(heavy=NOT_BEFORE_READING)]
        + ["evaluate", *arguments],
        cwd=REPO_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []


def _machine_wide_nltk_tokenizers() -> list[str]:
    from dialeval.metrics.pos_templates import taggers

    home = os.path.expanduser("~")
    return [
        folder
        for folder in taggers._nltk_data_folders() or []
        if os.path.isdir(os.path.join(folder, "tokenizers")) and not folder.startswith(home)
    ]


def test_a_job_of_lexical_steps_never_imports_the_model_stack(tmp_path):
    sets = tmp_path / "sets.jsonl"
    sets.write_text(json.dumps({"responses": ["a b", "c d"]}) + "\n", encoding="utf-8")
    arguments = ["evaluate", str(sets), "-o", str(tmp_path / "out.json"), "--no-progress"]
    arguments += ["--metric", "lexical_diversity", "--metric", "corpus_lexical_diversity"]
    code = RUN_COMMAND_LINE.format(heavy=("torch", "transformers", "accelerate"))
    done = subprocess.run(
        [sys.executable, "-c", code, *arguments],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert (tmp_path / "out.json").is_file(), done.stderr
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []
