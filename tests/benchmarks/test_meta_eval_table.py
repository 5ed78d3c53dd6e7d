"""benchmarks/meta_eval_table.py: which measures run here, the diversity reading of rho, the tables."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from conftest import REPO_ROOT

from dialeval.hub import EMBEDDED_SENTENCE_MODEL
from dialeval.metrics.registry import SET_SCORERS


@pytest.fixture(scope="module")
def table():
    sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location(
        "meta_eval_table", REPO_ROOT / "benchmarks" / "meta_eval_table.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_registered_measure_runs_or_is_skipped_with_a_reason(table):
    specs, skipped = table.metric_specs(list(SET_SCORERS))
    named = {spec.split("=", 1)[0] for spec in specs}
    assert named | set(skipped) == set(SET_SCORERS) and not named & set(skipped)
    assert "ead" in specs and "compression_ratio" in specs  # model-free
    # NLI has no embedded stand-in here; BERTScore takes any encoder
    assert "not on this machine" in skipped["nli"]
    assert f"bertscore={EMBEDDED_SENTENCE_MODEL}" in specs


def _row(rho, oca=0.7):
    return {"spearman": rho, "oca": oca, "spearman_subsets_mean": rho, "num_sets": 10}


def test_homogeneity_measures_are_negated_and_marked(table):
    figures = {
        "skipped": {"nli": "no model"},
        "tables": {
            f"contest/{task}": {
                "config": f"con_test_200_{task}_gen",
                "binary": True,
                "rows": {
                    "compression_ratio": {
                        **_row(-0.4),
                        "diversity_sign": table._diversity_sign("compression_ratio"),
                    },
                    "ead": {**_row(0.3), "diversity_sign": table._diversity_sign("ead")},
                },
            }
            for task in ("story", "resp")
        },
    }
    text = table.markdown(figures, ["contest"], ["story", "resp"], "cmd")
    assert "| `compression_ratio` † | 0.400 / 0.700 | 0.400 / 0.700 | 0.400 / 0.700 |" in text
    assert "| `ead` | 0.300 / 0.700 | 0.300 / 0.700 | 0.300 / 0.700 |" in text
    assert "- `nli`: no model" in text
