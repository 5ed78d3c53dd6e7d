"""Every public function and every evaluate module has a property (like the conformance test's
``_case``): a new metric, or a new public name of an existing one, fails here until it is added
to the property suite (``@covers`` in tests/property/) or listed in ``NOT_FUZZED`` with the reason."""

from __future__ import annotations

import importlib
from pathlib import Path

import property_support

from dialeval import text, validation
from dialeval.metrics import registry

#: The sibling modules whose ``@covers`` marks are counted (imported here so this test alone passes or fails alike):
#: every test_property_*.py beside this file, so a new property file counts without an edit here.
PROPERTY_MODULES = tuple(
    sorted(
        path.stem
        for path in Path(__file__).parent.glob("test_property_*.py")
        if path.stem != Path(__file__).stem
    )
)

#: Public names without a property, and why (each has example-based tests in tests/metrics/).
NOT_FUZZED = {
    "read_selection_questions": "reads a JSONL file: its bad lines are tests/metrics/test_response_selection_metric.py's",
    "scoring_sheet": "writes the crowd-scoring sheet of retrieved pools (file output)",
    "random_protocol_figure": "draws a matplotlib figure",
    "random_protocol_accuracies": "the RANDOM protocol's loop over trials of response_selection, which is fuzzed",
    "retrieve_candidate_pools": "retrieval over a repository with BM25 / an embedder (dataset construction, not a metric)",
    "BM25Retriever": "dataset construction (retrieval), not a metric",
    "EmbeddingRetriever": "dataset construction (retrieval), not a metric",
    "CandidatePool": "a dataclass of dataset construction",
    "assemble_questions": "dataset construction from crowd-scored pools",
    "random_trial": "dataset construction: samples false candidates from a repository",
    "SpacyTagger": "needs spaCy's en_core_web_sm (not installable here): faked at the import in tests/metrics/test_pos_templates.py",
    "NLTKTagger": "needs NLTK's tagger data (not installable here): faked at the import in tests/metrics/test_pos_templates.py",
    "tagger_available": "no input: what is installed (tests/metrics/test_pos_templates.py fakes each case)",
    "TaggerNotAvailableError": "an exception class",
}


def public_names() -> set[str]:
    names = set()
    metrics = importlib.import_module("dialeval.metrics")
    names.update(name for name in metrics.__all__ if callable(getattr(metrics, name)))
    for metric in registry.METRICS:
        package = importlib.import_module(f"dialeval.metrics.{metric.name}")
        names.update(
            name for name in getattr(package, "__all__", ()) if callable(getattr(package, name))
        )
        names.update(metric.functions)
        names.add(f"module:{metric.name}")
    names.update(
        {"tevet_tokenize", "casual_tokenize", "casual_tokenize_many", "get_tokenizer"}
        & set(dir(text))
    )
    names.update(
        name for name in dir(validation) if name.startswith("check_") or name == "split_scope"
    )
    return names


def test_every_public_function_and_module_has_a_property():
    for module in PROPERTY_MODULES:
        importlib.import_module(module)
    missing = public_names() - set(property_support.COVERED) - set(NOT_FUZZED)
    assert not missing, (
        f"no property exercises {sorted(missing)}: add one in tests/property/ (or a reason to NOT_FUZZED)"
    )


def test_not_fuzzed_lists_only_public_names():
    assert set(NOT_FUZZED) <= public_names()
