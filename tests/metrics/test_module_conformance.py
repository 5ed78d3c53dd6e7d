"""Every evaluate module in the registry keeps evaluate's contract (in the spirit of evaluate's own
tests/test_metric_common.py): one parametrized test per property, over metrics.registry.METRICS,
each module called as its tests/metric_cases/<name>.py says (``conformance``).

- compute(inputs) == add_batch in chunks + compute() == add one by one + compute();
- a bad batch is refused naming the user's argument, an input the metric refuses is found on the
  gathered inputs (its index counts every queued input), and after any error nothing stays queued;
- _compute lists its options; an unknown one is a TypeError naming them; evaluate.combine works;
- evaluate's distributed mode (two real processes) gives process 0 the one-process result;
- the docstring examples run as doctests; the folders are Hub-ready (app.py, requirements.txt, card).
"""

from __future__ import annotations

import doctest
import inspect
import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import evaluate
import pytest
import yaml
from conftest import REPO_ROOT
from evaluate_hub_names import published_names_load_locally
from metric_cases import CORPUS, SETS, Case, cases_of

from dialeval.metrics import registry


def _case(name: str, request) -> Case:
    """The module's case, from its tests/metric_cases/<name>.py (found through the registry)."""
    return cases_of(name).conformance(request.getfixturevalue)


@pytest.fixture(params=registry.METRICS, ids=lambda metric: metric.name)
def metric(request):
    return request.param


@pytest.fixture
def case(metric, request) -> Case:
    return _case(metric.name, request)


def load(metric, **kwargs):
    return evaluate.load(str(metric.module_dir), **kwargs)


def chunks(inputs: dict[str, list], size: int):
    length = len(next(iter(inputs.values())))
    for start in range(0, length, size):
        yield {name: column[start : start + size] for name, column in inputs.items()}


def rows(inputs: dict[str, list]):
    """``add``'s keywords for each input: ``prediction`` / ``reference``, other features by name."""
    singular = {"predictions": "prediction", "references": "reference"}
    length = len(next(iter(inputs.values())))
    for index in range(length):
        yield {singular.get(name, name): column[index] for name, column in inputs.items()}


def joined(*parts: dict[str, list]) -> dict[str, list]:
    return {name: [value for part in parts for value in part[name]] for name in parts[0]}


def canonical(result) -> str:
    """A result as exact JSON (NaN included, numpy scalars as Python numbers), for equality."""
    return json.dumps(
        result,
        sort_keys=True,
        default=lambda value: value.item() if hasattr(value, "item") else repr(value),
    )


def test_every_registered_metric_has_a_case(request):
    for metric in registry.METRICS:
        assert isinstance(_case(metric.name, request), Case)


def test_compute_equals_add_batch_in_chunks_equals_add_one_by_one(metric, case):
    module = load(metric)
    direct = module.compute(**case.inputs, **case.options)
    for chunk in chunks(case.inputs, 2):
        module.add_batch(**chunk)
    batched = module.compute(**case.options)
    for row in rows(case.inputs):
        module.add(**row)
    added = module.compute(**case.options)
    assert canonical(batched) == canonical(direct) == canonical(added)
    # Nothing stays queued after a compute: the next one scores only its own inputs.
    assert canonical(module.compute(**case.inputs, **case.options)) == canonical(direct)


def test_bad_batch_names_the_argument_and_nothing_stays_queued(metric, case):
    module = load(metric)
    direct = module.compute(**case.inputs, **case.options)
    first = next(chunks(case.inputs, 2))
    module.add_batch(**first)
    with pytest.raises(ValueError, match=case.bad_batch_error):
        module.add_batch(**case.bad_batch)
    assert canonical(module.compute(**case.inputs, **case.options)) == canonical(direct)
    module.add_batch(**first)
    with pytest.raises(ValueError, match=case.bad_add_error):
        module.add(**list(rows(case.bad_batch))[1])
    assert canonical(module.compute(**case.inputs, **case.options)) == canonical(direct)
    with pytest.raises(ValueError, match=case.bad_batch_error):
        module.compute(**case.bad_batch, **case.options)
    assert canonical(module.compute(**case.inputs, **case.options)) == canonical(direct)


def test_a_missing_input_is_named_as_add_and_add_batch_take_it(metric):
    """``add(prediction=None)`` names ``prediction``, not the batch's ``predictions``."""
    module = load(metric)
    first = module._feature_names()[0]
    singular = {"predictions": "prediction", "references": "reference"}.get(first, first)
    with pytest.raises(ValueError, match=f"^`{singular}` is missing"):
        module.add()
    with pytest.raises(ValueError, match=f"^`{first}` is missing"):
        module.add_batch()


def test_refused_inputs_are_found_on_the_gathered_inputs_and_discarded(metric, case):
    """The refused input comes in the last batch; its index in the error counts every queued input."""
    module = load(metric)
    direct = module.compute(**case.inputs, **case.options)
    for chunk in chunks(joined(case.inputs, case.refused), 2):
        module.add_batch(**chunk)
    options = case.options if case.refused_options is None else case.refused_options
    with pytest.raises(ValueError, match=case.refused_error):
        module.compute(**options)
    assert canonical(module.compute(**case.inputs, **case.options)) == canonical(direct)


def test_options_are_explicit_and_an_unknown_one_is_a_type_error(metric, case):
    module = load(metric)
    parameters = inspect.signature(module._compute).parameters.values()
    assert not [p for p in parameters if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL)], (
        "_compute hides its options"
    )
    options = module.compute_options()
    assert options and set(case.options) <= set(options)
    # An option's default is the wrapped function's (None: the function's own default, by scope).
    wrapped = inspect.signature(case.wraps).parameters
    for parameter in parameters:
        if (
            parameter.name in wrapped
            and parameter.name not in case.own_meaning
            and parameter.default not in (None, parameter.empty)
        ):
            assert parameter.default == wrapped[parameter.name].default, parameter.name
    with pytest.raises(TypeError, match=rf"no_such_option.*{options[0]}"):
        module.compute(**case.inputs, **case.options, no_such_option=1)
    assert module.compute(**case.inputs, **case.options) is not None


def test_combine_of_the_modules_without_required_options():
    names = ["lexical_diversity", "compression_ratio", "vendi_score", "similarity_diversity"]
    modules = {name: load(registry.get(name)) for name in names}
    each = {name: module.compute(predictions=SETS) for name, module in modules.items()}
    combined = evaluate.combine(list(modules.values()))
    direct = combined.compute(predictions=SETS)
    assert direct["averaged_distinct_n"] == each["lexical_diversity"]["averaged_distinct_n"]
    assert direct["vendi_score"] == each["vendi_score"]["vendi_score"]
    assert direct["similarity_diversity"] == each["similarity_diversity"]["similarity_diversity"]
    assert direct["compression_ratio"] == each["compression_ratio"]["compression_ratio"]
    for chunk in chunks({"predictions": SETS}, 2):
        combined.add_batch(predictions=chunk["predictions"])
    assert canonical(combined.compute()) == canonical(direct)
    for response_set in SETS:
        combined.add(prediction=response_set)
    assert canonical(combined.compute()) == canonical(direct)


def test_distributed_mode_gives_process_0_the_one_process_result(request, tmp_path):
    """Process 1 is a real second process (evaluate_worker.py); this one is process 0."""
    cases = {metric.name: _case(metric.name, request) for metric in registry.METRICS}
    halves = {}
    for name, case in cases.items():
        length = len(next(iter(case.inputs.values())))
        first = {column: values[: length // 2] for column, values in case.inputs.items()}
        second = {column: values[length // 2 :] for column, values in case.inputs.items()}
        halves[name] = (first, second)
    cache_dir = str(tmp_path / "evaluate-cache")
    job = {
        "num_process": 2,
        "process_id": 1,
        "cache_dir": cache_dir,
        "timeout": 120,
        "out": str(tmp_path / "process1.json"),
        "modules": [
            {
                "name": name,
                "path": str(registry.get(name).module_dir),
                "experiment_id": f"conformance-{name}",
                "inputs": halves[name][1],
            }
            for name in cases
        ],
    }
    job_file = tmp_path / "job.json"
    job_file.write_text(json.dumps(job), encoding="utf-8")
    worker = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("evaluate_worker.py")), str(job_file)],
        cwd=REPO_ROOT,
        env=dict(os.environ),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        gathered = {}
        for name, case in cases.items():
            module = load(
                registry.get(name),
                num_process=2,
                process_id=0,
                experiment_id=f"conformance-{name}",
                cache_dir=cache_dir,
                timeout=120,
            )
            module.add_batch(**halves[name][0])
            gathered[name] = module.compute(**case.options)
        _, stderr = worker.communicate(timeout=180)
    finally:
        if worker.poll() is None:
            worker.kill()
    assert worker.returncode == 0, stderr[-3000:]
    assert json.loads(Path(job["out"]).read_text(encoding="utf-8")) == {
        name: None for name in cases
    }
    for name, case in cases.items():
        alone = load(registry.get(name)).compute(**case.inputs, **case.options)
        assert canonical(gathered[name]) == canonical(alone), name
    assert not list(Path(cache_dir).rglob("*.arrow")), (
        "process 0 removes every process's cache file"
    )


def test_docstring_examples_run_as_doctests(metric):
    """The examples of ``_KWARGS_DESCRIPTION`` (the module's inputs_description) carry their outputs;
    lines needing a model that is not on the machine are marked ``+SKIP``, at least one runs."""
    module = load(metric)
    test = doctest.DocTestParser().get_doctest(
        module.inputs_description, {}, metric.name, str(metric.module_dir), 0
    )
    report = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with published_names_load_locally():  # the examples load "dialeval/<name>", the published Space
        result = runner.run(test, out=report.append)
    assert result.failed == 0, "".join(report)
    assert result.attempted >= 1


def front_matter(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), path
    return yaml.safe_load(text[4:].split("\n---\n", 1)[0])


def test_folder_is_hub_ready(metric, monkeypatch):
    folder = metric.module_dir
    card = front_matter(folder / "README.md")
    assert (
        card["sdk"] == "gradio"
        and card["app_file"] == "app.py"
        and card["title"]
        and card["description"]
    )
    # evaluate's launch_gradio_widget builds gradio 3 components (gr.inputs), gone in gradio 4.
    assert str(card["sdk_version"]).startswith("3.")
    assert {"evaluate", "metric"} <= set(card["tags"])
    requirements = [
        line.split(">=")[0].strip()
        for line in (folder / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert {"dialeval", "evaluate"} <= set(requirements)
    launched = []
    monkeypatch.setattr("evaluate.utils.launch_gradio_widget", launched.append)
    runpy.run_path(str(folder / "app.py"), run_name="__main__")
    assert [module.name for module in launched] == [metric.name]


def test_documented_evaluate_snippet_runs(capsys):
    """The evaluate section of docs/hf_contracts.md is runnable as written (its asserts included)."""
    section = (
        (REPO_ROOT / "docs" / "hf_contracts.md")
        .read_text(encoding="utf-8")
        .split("## evaluate modules", 1)[1]
    )
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "docs/hf_contracts.md: evaluate modules", "exec"), {})  # noqa: S102 (the repository's own docs)
    printed = capsys.readouterr().out
    assert "['max_ngram']" in printed and "'max_n'" in printed


# -- arrays and tensors: evaluate's base takes numpy arrays, torch tensors and pandas Series (datasets
# casts them when it encodes a batch); the modules take them too, through every entry point.


def as_arrays(column):
    """A column as a user holding arrays passes it: numbers as a float64 / int64 torch tensor, strings
    as a numpy array, response sets (and list-of-turns contexts) as a list of numpy arrays."""
    import numpy as np
    import torch

    if all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in column):
        return torch.tensor(
            column,
            dtype=torch.float64
            if any(isinstance(value, float) for value in column)
            else torch.int64,
        )
    if all(isinstance(value, str) for value in column):
        return np.array(column)
    return [np.array(value) if isinstance(value, list) else np.str_(value) for value in column]


def test_arrays_and_tensors_are_accepted_as_evaluate_accepts_them(metric, case):
    """compute, add_batch and add (one array row / 0-d tensor / numpy string each) give the list figures."""
    arrays = {name: as_arrays(column) for name, column in case.inputs.items()}
    options = dict(case.options)
    # sem_ent's reference corpus, an option evaluate's users pass as an array too
    if "references" in options:
        options["references"] = as_arrays(options["references"])
    module = load(metric)
    direct = canonical(module.compute(**case.inputs, **case.options))
    assert canonical(module.compute(**arrays, **options)) == direct
    module.add_batch(**arrays)
    assert canonical(module.compute(**options)) == direct
    length = len(next(iter(arrays.values())))
    singular = {"predictions": "prediction", "references": "reference"}
    for index in range(length):
        module.add(**{singular.get(name, name): column[index] for name, column in arrays.items()})
    assert canonical(module.compute(**options)) == direct


def test_diversity_meta_eval_takes_torch_tensors_and_pandas_series():
    """A float32 tensor is a number (not "must be a number, got Tensor")."""
    import pandas as pd
    import torch

    module = load(registry.get("diversity_meta_eval"))
    scores, labels = torch.tensor([0.1, 0.4, 0.35, 0.8, 0.5, 0.9]), torch.tensor([0, 0, 1, 1, 0, 1])
    expected = module.compute(predictions=scores.tolist(), references=labels.tolist())
    assert module.compute(predictions=scores, references=labels) == expected
    assert (
        module.compute(
            predictions=pd.Series(scores.tolist()), references=pd.Series(labels.tolist())
        )
        == expected
    )
    # bools stay refused: evaluate would read True as 1.0 silently
    with pytest.raises(ValueError, match=r"`references\[0\]` must be a number"):
        module.compute(predictions=scores[:2], references=torch.tensor([True, False]))


def test_sem_ent_takes_numpy_arrays_of_strings():
    """sem_ent takes a numpy array of strings (predictions and the reference corpus)."""
    import numpy as np

    module = load(registry.get("sem_ent"))
    predictions = ["Pizza again?", "More rain today.", "Sushi!", "A storm."]
    expected = module.compute(predictions=predictions, references=CORPUS, num_clusters=2)
    assert (
        module.compute(
            predictions=np.array(predictions), references=np.array(CORPUS), num_clusters=2
        )
        == expected
    )
    with pytest.raises(ValueError, match=r"`predictions\[1\]` must be a string"):
        module.compute(
            predictions=np.array(["fine", 3], dtype=object), references=CORPUS, num_clusters=2
        )
