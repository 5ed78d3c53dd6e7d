"""Properties of every evaluate module in the registry (metrics/<name>/<name>.py, loaded as
tests/metrics/test_module_conformance.py loads them).

For each registered module: arbitrary inputs (valid ones, and valid ones with one column
replaced by junk, a bare string, nested junk or a list one item short) give a result or a
ValueError / TypeError, nothing else; every figure of a result is finite and in its range; and
``compute(inputs)`` equals ``add_batch`` in chunks + ``compute()`` and ``add`` one by one +
``compute()``, also after a refused batch. Each module's input strategy, options and figure
ranges come from its tests/metric_cases/<name>.py (``module_property``), found through the registry.
"""

from __future__ import annotations

import json
import math
import uuid
import warnings
from collections.abc import Mapping

import evaluate
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metric_cases import CORPUS, ModuleEntry, cases_of
from property_support import covers, junk, outcome, refused, text, within

from dialeval.metrics import registry

#: Each registered module's entry, from its tests/metric_cases/<name>.py (``module_property``).
MODULES: dict[str, ModuleEntry] = {
    metric.name: cases_of(metric.name).module_property() for metric in registry.METRICS
}
#: Documented ranges of the figures the modules report, by key (the cards' "Output Values").
RANGES: dict[str, tuple[float, float]] = {
    key: span for entry in MODULES.values() for key, span in entry.ranges.items()
}


#: Argument names of the functions the modules wrap, which a module user never passes.
INTERNAL_ARGUMENTS = (
    "`response_sets",
    "`texts",
    "`responses",
    "`scores",
    "`answers",
    "`reference_texts",
    "`response_set`",
)


def check_figures(result, nan_ok: tuple[str, ...], caught: list, path: str = "result") -> None:
    """Every number is finite (or a documented NaN with a warning) and within its key's range."""
    if isinstance(result, Mapping):
        for key, value in result.items():
            where = f"{path}[{key!r}]"
            if isinstance(value, float) and math.isnan(value) and key in nan_ok:
                assert caught, f"silent NaN at {where}"
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                if key in RANGES:
                    within(value, *RANGES[key], where)
                elif key.startswith("distinct_"):
                    within(value, 0, 1, where)
                elif key.startswith(("entropy_", "sem_ent", "max_sem_ent", "compression_ratio")):
                    assert math.isfinite(value) and value >= 0, f"{where} = {value!r}"
                elif key.startswith("vendi_score"):
                    assert math.isfinite(value) and value >= 1 - 1e-6, f"{where} = {value!r}"
                else:
                    assert math.isfinite(value), f"{where} = {value!r}"
            else:
                check_figures(value, nan_ok, caught, where)
    elif isinstance(result, (list, tuple)):
        for index, value in enumerate(result):
            check_figures(value, nan_ok, caught, f"{path}[{index}]")
    elif isinstance(result, float):
        assert math.isfinite(result), f"{path} = {result!r}"


def canonical(result) -> str:
    return json.dumps(
        result,
        sort_keys=True,
        default=lambda value: value.item() if hasattr(value, "item") else repr(value),
    )


def mutated(inputs: dict) -> st.SearchStrategy:
    """``inputs`` with one column made wrong: junk, a bare string, nested junk, one item short or extra."""

    def wrong(column: list) -> st.SearchStrategy:
        return st.one_of(
            junk,
            text,
            st.just(column[:-1]),
            st.just(column + column[:1]),
            st.just([]),
            st.lists(
                st.one_of(junk, text, st.lists(st.one_of(junk, text), max_size=2)),
                min_size=1,
                max_size=3,
            ),
            st.just([[item] if isinstance(item, str) else item for item in column]),
        )

    return st.sampled_from(sorted(inputs)).flatmap(
        lambda name: wrong(inputs[name]).map(lambda column: {**inputs, name: column})
    )


@pytest.fixture(scope="module")
def tiny_clusters_dir(tiny_roberta_nli_path, tmp_path_factory) -> str:
    from dialeval.metrics.engines.embedders import load_embedder
    from dialeval.metrics.sem_ent.clusters import SemanticClusters

    embedder = load_embedder("mean_pooling", tiny_roberta_nli_path, max_length=128, device="cpu")
    clusters = SemanticClusters.fit(CORPUS, embedder, num_clusters=2, n_init=1)
    return str(clusters.save(tmp_path_factory.mktemp("property-clusters") / "clusters"))


@pytest.fixture(scope="module")
def loaded_modules(tmp_path_factory):
    """One loaded module per name for the whole file (evaluate.load copies and imports the script).

    Each gets its own cache folder and experiment id: evaluate names its arrow file
    ``<experiment_id>-1-0.arrow`` under the cache, so two test runs on one machine (``make test``
    beside ``make fuzz``) would otherwise delete each other's queued inputs.
    """
    return {"cache_dir": str(tmp_path_factory.mktemp("evaluate-cache"))}


def _module(loaded_modules, name):
    if name not in loaded_modules:
        loaded_modules[name] = evaluate.load(
            str(registry.get(name).module_dir),
            cache_dir=loaded_modules["cache_dir"],
            experiment_id=f"property-{name}-{uuid.uuid4().hex}",
        )
    return loaded_modules[name]


def _options(entry: ModuleEntry, request) -> dict:
    return {
        **entry.options,
        **{option: request.getfixturevalue(fixture) for option, fixture in entry.fixtures.items()},
    }


@pytest.fixture(params=[metric.name for metric in registry.METRICS])
def name(request):
    return request.param


@covers(*(f"module:{metric.name}" for metric in registry.METRICS))
def test_module_refuses_bad_input_or_gives_figures_in_range(name, loaded_modules, request):
    entry = MODULES[name]
    module = _module(loaded_modules, name)
    options = _options(entry, request)

    @settings(max_examples=max(entry.floor, settings.default.max_examples // entry.divisor))
    @given(inputs=st.one_of(entry.inputs, entry.inputs.flatmap(mutated)))
    def run(inputs):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = outcome(module.compute, **inputs, **options)
        if refused(result):
            # The user passed predictions / references / contexts...: errors name those, not the
            # wrapped functions' own arguments.
            message = str(result.error)
            leaked = [name for name in INTERNAL_ARGUMENTS if name in message]
            assert not leaked, f"the error names internal arguments {leaked}: {message}"
        else:
            check_figures(result, entry.nan_ok, caught)

    run()


@covers(*(f"module:{metric.name}" for metric in registry.METRICS))
def test_module_compute_equals_add_batch_equals_add_even_after_a_refused_batch(
    name, loaded_modules, request
):
    entry = MODULES[name]
    module = _module(loaded_modules, name)
    options = _options(entry, request)

    @settings(max_examples=max(entry.floor, settings.default.max_examples // entry.divisor))
    @given(inputs=entry.inputs, bad=entry.inputs.flatmap(mutated), chunk=st.integers(1, 3))
    def run(inputs, bad, chunk):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            direct = outcome(module.compute, **inputs, **options)
            refused_batch = outcome(module.add_batch, **bad)
            # a batch of valid types: compute must refuse or score it, then forget it
            if not refused(refused_batch):
                outcome(module.compute, **options)
            length = len(next(iter(inputs.values())))
            for start in range(0, length, chunk):
                module.add_batch(
                    **{column: values[start : start + chunk] for column, values in inputs.items()}
                )
            batched = outcome(module.compute, **options)
            singular = {"predictions": "prediction", "references": "reference"}
            for index in range(length):
                module.add(
                    **{
                        singular.get(column, column): values[index]
                        for column, values in inputs.items()
                    }
                )
            added = outcome(module.compute, **options)
        if refused(direct):
            assert refused(batched) and refused(added), (direct, batched, added)
            assert str(batched.error) == str(direct.error)
        else:
            assert canonical(batched) == canonical(direct) == canonical(added)

    run()
