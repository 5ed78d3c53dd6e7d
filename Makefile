# `make demo` and `make test` work on a fresh clone: they create .venv, install torch first, then
# the package. Which torch build pip picks depends on the platform (on Linux x86-64 PyPI serves
# the CUDA build): TORCH_INDEX=https://download.pytorch.org/whl/cpu picks the CPU build (README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.dialeval-installed
TORCH_INDEX ?=
OFFLINE := HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false

.PHONY: install demo test test-fast test-all fuzz lint-imports lint-dead-code bench bench-job meta-eval-table clean dist-check

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Re-installs only when the packaging files change.
$(STAMP): $(BIN)/python setup.py pyproject.toml
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install torch==2.13.0 $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(BIN)/python -m pip install -e ".[test]"
	# the `diversity` package, the peer the tests compare with, pins transformers<5: without its dependencies
	$(BIN)/python -m pip install --no-deps diversity==0.3.1
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(OFFLINE) $(BIN)/dialeval evaluate examples/demo_response_sets.jsonl --per-set --ci --no-progress --output demo_output/demo_report.json

# import-linter reads the package from one folder; setup.py maps five, so it checks an assembled copy.
LINT_TREE := build/import-lint
lint-imports: install
	rm -rf $(LINT_TREE) && mkdir -p $(LINT_TREE)/dialeval
	cp -R dialeval/. $(LINT_TREE)/dialeval/
	for folder in metrics generation trainers datasets_scripts; do cp -R $$folder $(LINT_TREE)/dialeval/$$folder; done
	cd $(LINT_TREE) && PYTHONPATH=. $(CURDIR)/$(BIN)/lint-imports $(CURDIR)/pyproject.toml --no-cache

# The documentation site from docs/ (mkdocs.yml): strict, so a broken link or page fails the build.
.PHONY: docs
docs: install
	$(BIN)/mkdocs build --strict --quiet

# The suite runs in one pytest-xdist worker per usable core (at most 4), each worker's torch and
# BLAS on one thread: the tests run tiny models, whose threads would otherwise wait on each
# other's cores (2 cores: 608 s against 1,076 s in one process). PYTEST_WORKERS=1: one process,
# default threads.
PYTEST_WORKERS ?= $(shell $(PYTHON) -c "import os; n = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count(); print(max(1, min(4, n or 1)))")
PYTEST := $(if $(filter 1,$(PYTEST_WORKERS)),$(BIN)/python -m pytest,OMP_NUM_THREADS=1 $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist load)

test: install lint lint-imports lint-dead-code typecheck docs
	$(OFFLINE) $(PYTEST)

# Dead code (vulture): what nothing in the package, the examples or the benchmarks uses. The tests
# are not scanned, so a public function only they call is reported too; vulture_whitelist.py lists
# what is used where vulture cannot see it (host hooks, result fields), each with its reason.
DEAD_CODE_PATHS := dialeval metrics generation trainers datasets_scripts examples benchmarks vulture_whitelist.py
lint-dead-code: install
	$(BIN)/vulture $(DEAD_CODE_PATHS)

# The suite less its heaviest tests (tests/fast_suite.py), every test module still in it: a quick
# check while working; `make test` stays the check before a commit.
test-fast: install
	$(OFFLINE) $(PYTEST) -m "not slow and not heavy"

test-all: install
	$(OFFLINE) $(PYTEST) -m "slow or not slow"

# The property suite (tests/property/) with hypothesis's "fuzz" profile: hundreds of examples per
# property instead of `make test`'s "ci" few (both registered in tests/conftest.py).
fuzz: install
	HYPOTHESIS_PROFILE=fuzz $(OFFLINE) $(BIN)/python -m pytest tests/property

# diversity==0.3.1 (the `bench` extra's lexical peer) pins transformers<5: installed without its
# dependencies; the bench_peers scripts load single modules of it, never its __init__. bench_peers.py
# runs every bench_peers_<what>.py into its one section (each alone writes only its own rows).
bench: install
	$(BIN)/python -m pip install --no-deps diversity==0.3.1
	$(OFFLINE) $(BIN)/python benchmarks/bench_lexical.py
	$(OFFLINE) $(BIN)/python benchmarks/bench_nli.py
	$(OFFLINE) $(BIN)/python benchmarks/bench_sem_ent.py
	$(OFFLINE) $(BIN)/python benchmarks/bench_dtg.py
	$(OFFLINE) $(BIN)/python benchmarks/bench_selection.py
	$(OFFLINE) $(BIN)/python benchmarks/bench_dress.py
	$(OFFLINE) $(BIN)/python benchmarks/bench_backends.py
	$(OFFLINE) $(BIN)/python benchmarks/bench_peers.py
	$(OFFLINE) $(BIN)/python benchmarks/bench_job.py
	$(OFFLINE) $(BIN)/python benchmarks/bench_startup.py
	$(OFFLINE) $(BIN)/python benchmarks/bench_calibration.py
	$(OFFLINE) $(BIN)/python benchmarks/bench_ci_cost.py
	$(OFFLINE) $(BIN)/python benchmarks/bench_resampling.py

# The whole job (`dialeval evaluate`) against the peers' script at 1k, 10k and 100k responses
# (~20-30 minutes on 2 idle cores, estimated); `bench_job.py --corpus-1m` measures the 1M-response corpus job.
bench-job: install
	$(OFFLINE) $(BIN)/python benchmarks/bench_job.py

# Every registered measure meta-evaluated on decTest / conTest / McDiv (benchmarks/RESULTS.md,
# section meta_eval_table); needs ../shared/data/tevet-diversity-eval.
meta-eval-table: install
	$(OFFLINE) $(BIN)/python benchmarks/meta_eval_table.py --data-dir ../shared/data/tevet-diversity-eval

clean:
	rm -rf $(VENV) demo_output .pytest_cache build

# The release check (docs/releasing.md): sdist and wheel built, `twine check`ed and their files
# checked; the wheel alone installed with torch==2.13.0 in a new virtual environment outside the
# checkout, where tests/release/smoke.py runs every evaluate module, custom_generate and a trainer step.
dist-check: install
	$(BIN)/python -c "import build, twine" 2>/dev/null || $(BIN)/python -m pip install -e ".[release]"
	TORCH_INDEX=$(TORCH_INDEX) bash tests/release/dist_check.sh $(CURDIR)/$(BIN)/python

# ruff with the project's configuration ([tool.ruff] in pyproject.toml; the version is pinned in
# the test extra, since each ruff release changes its default rules).
.PHONY: lint
lint: install
	$(BIN)/python -m ruff check --quiet .
	$(BIN)/python -m ruff format --check --quiet .

# mypy over the whole package ([tool.mypy] in pyproject.toml: its `files`, every function
# typed). Like lint-imports it reads the package from one folder, so it checks an assembled copy; its
# cache stays in build/ (a first run reads torch's and transformers' types: about a minute).
TYPE_TREE := build/typecheck
.PHONY: typecheck
typecheck: install
	rm -rf $(TYPE_TREE) && mkdir -p $(TYPE_TREE)/dialeval
	cp -R dialeval/. $(TYPE_TREE)/dialeval/
	for folder in metrics generation trainers datasets_scripts; do cp -R $$folder $(TYPE_TREE)/dialeval/$$folder; done
	cd $(TYPE_TREE) && $(CURDIR)/$(BIN)/python -m mypy --config-file $(CURDIR)/pyproject.toml --cache-dir $(CURDIR)/build/mypy-cache

