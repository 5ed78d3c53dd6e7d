"""diversity_meta_eval's cases for the registry-wide suites (tests/metric_cases/__init__.py)."""

import math

from metric_cases import Case, ModuleEntry


def conformance(fixture):
    from dialeval.metrics.diversity_meta_eval.statistics import diversity_meta_evaluation

    return Case(
        inputs={"predictions": [0.1, 0.4, 0.35, 0.8, 0.5, 0.9], "references": [0, 0, 1, 1, 0, 1]},
        bad_batch={"predictions": [0.1, "0.4"], "references": [0, 1]},
        bad_batch_error=r"`predictions\[1\]` must be a number",
        bad_add_error="`prediction` must be a number",
        refused={"predictions": [math.nan], "references": [1]},
        refused_error=r"`predictions\[6\]` must be a finite number",
        wraps=diversity_meta_evaluation,
    )


def module_property():
    from hypothesis import strategies as st

    size = st.integers(2, 8)
    inputs = size.flatmap(
        lambda n: st.fixed_dictionaries(
            {
                "predictions": st.lists(st.floats(-5, 5), min_size=n, max_size=n),
                "references": st.one_of(
                    st.lists(st.sampled_from([0, 1]), min_size=n, max_size=n),
                    st.lists(st.floats(0, 2), min_size=n, max_size=n),
                ),
            }
        )
    )
    # rho and r are NaN for a constant side, with scipy's ConstantInputWarning saying so
    return ModuleEntry(
        inputs,
        nan_ok=("spearman", "spearman_pvalue", "pearson", "pearson_pvalue"),
        ranges={
            "oca": (0.5, 1),
            "spearman": (-1, 1),
            "pearson": (-1, 1),
            "spearman_pvalue": (0, 1),
            "pearson_pvalue": (0, 1),
        },
    )


def lone_surrogate_calls(fixture, bad):
    from dialeval.metrics import registry

    # scores and labels: no text
    return {name: None for name in registry.get("diversity_meta_eval").functions}


LONE_SURROGATE_MODULE = None  # no text
