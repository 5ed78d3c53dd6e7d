"""Hostile inputs, as properties: constant and NaN inputs to the statistics, non-finite
weights / logits for the losses, corrupted saved-clusters folders (files truncated at random
offsets, JSON keys dropped, NaN entries in the arrays).

Each gives a result with no NaN anywhere (an undefined figure is None with an ``undefined_reason``)
or a ValueError naming the argument (the folder, for clusters); never another exception, never
a silent NaN or a silent 0.
"""

from __future__ import annotations

import hashlib
import json
import math
import tempfile
from pathlib import Path

import numpy as np
import torch
from axis_embedder import AxisEmbedder, axis_texts
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from property_support import covers, fewer, outcome, refused, within

from dialeval.metrics.diversity_meta_eval import (
    diversity_meta_evaluation,
    pearson,
    spearman,
    subsampled_spearman,
)
from dialeval.metrics.response_selection import (
    random_protocol_correlation,
    system_ranking_correlation,
)
from dialeval.metrics.sem_ent.clusters import CONFIG_FILE, TENSORS_FILE, SemanticClusters, sem_ent
from dialeval.trainers.losses import sequence_nll, unlikelihood_loss, weighted_nll_loss

hostile_float = st.one_of(st.floats(-3, 3), st.sampled_from([math.nan, math.inf, -math.inf]))


@st.composite
def paired_values(draw):
    """Two equal-length lists: varying, constant (one side or both) or holding NaN / inf."""
    size = draw(st.integers(2, 10))
    sides = []
    for _ in range(2):
        kind = draw(st.sampled_from(["varying", "constant", "hostile"]))
        if kind == "constant":
            sides.append([draw(st.floats(-3, 3))] * size)
        elif kind == "hostile":
            sides.append(draw(st.lists(hostile_float, min_size=size, max_size=size)))
        else:
            sides.append(draw(st.lists(st.floats(-3, 3), min_size=size, max_size=size)))
    return sides


def _constant(values) -> bool:
    return np.ptp(np.asarray(values, dtype=np.float64)) == 0


def _finite_or_none(value) -> bool:
    if isinstance(value, dict):
        return all(_finite_or_none(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_finite_or_none(v) for v in value)
    return value is None or not isinstance(value, float) or math.isfinite(value)


@covers("spearman", "pearson", "subsampled_spearman", "diversity_meta_evaluation")
@given(values=paired_values())
def test_statistics_refuse_constant_or_nan_input_naming_it(values):
    scores, parameters = values
    hostile = not (np.isfinite(scores).all() and np.isfinite(parameters).all())
    constant = not hostile and (_constant(scores) or _constant(parameters))
    for function in (spearman, pearson, subsampled_spearman):
        kwargs = {"sample_size": 2, "repeats": 5} if function is subsampled_spearman else {}
        value = outcome(function, scores, parameters, **kwargs)
        if refused(value):
            message = str(value.error)
            assert "`scores`" in message or "`parameters`" in message, message
            assert hostile or constant or "every one of the" in message, message
            continue
        assert not hostile and not constant, f"{function.__name__} accepted {values}"
        within(value[0], -1, 1, function.__name__)
    result = outcome(diversity_meta_evaluation, scores, parameters, bootstrap=True, num_resamples=5)
    if refused(result):
        # Half of 2 sets is fewer than the 2 sets a resample needs.
        assert hostile or (len(scores) < 4 and str(result.error).startswith("`sample_fraction`")), (
            result
        )
        return
    assert _finite_or_none(result), result
    assert (result["spearman"] is None) == constant
    if constant:
        assert "is constant" in result["undefined_reason"] and result["pearson"] is None


@covers("system_ranking_correlation", "random_protocol_correlation")
@given(values=paired_values())
def test_system_ranking_never_returns_nan(values):
    human, metric = values
    hostile = not (np.isfinite(human).all() and np.isfinite(metric).all())
    if len(human) < 3:
        human, metric = human * 2, metric * 2
    value = outcome(system_ranking_correlation, human, metric)
    if refused(value):
        assert hostile, value
    else:
        assert _finite_or_none(value), value
        assert (
            (value["spearman"] is None)
            == (_constant(human) or _constant(metric))
            == (value["undefined_reason"] is not None)
        )
    trials = outcome(random_protocol_correlation, human, [metric, list(reversed(metric))])
    if not refused(trials):
        assert _finite_or_none(trials), trials


@st.composite
def loss_inputs(draw):
    batch, length, vocab = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(2, 5))
    elements = (
        st.one_of(st.floats(-20, 20), st.sampled_from([math.nan, math.inf, -math.inf]))
        if draw(st.booleans())
        else st.floats(-20, 20)
    )
    logits = draw(hnp.arrays(np.float32, (batch, length, vocab), elements=elements))
    labels = draw(
        hnp.arrays(
            np.int64, (batch, length), elements=st.one_of(st.just(-100), st.integers(0, vocab - 1))
        )
    )
    weights = draw(st.one_of(st.none(), hnp.arrays(np.float32, (batch,), elements=hostile_float)))
    count = draw(
        st.one_of(st.none(), st.integers(0, 20), st.sampled_from([math.nan, math.inf, -1.0]))
    )
    return torch.from_numpy(logits), torch.from_numpy(labels), weights, count


@covers("weighted_nll_loss", "unlikelihood_loss", "sequence_nll")
@given(inputs=loss_inputs(), shift=st.booleans())
def test_losses_refuse_non_finite_inputs_naming_them(inputs, shift):
    logits, labels, weights, count = inputs
    calls = {
        "weighted_nll_loss": lambda: weighted_nll_loss(
            logits, labels, None if weights is None else torch.from_numpy(weights), count, shift
        ),
        "unlikelihood_loss": lambda: unlikelihood_loss(logits, labels, count, shift),
        "sequence_nll": lambda: sequence_nll(logits, labels, shift),
    }
    for name, call in calls.items():
        value = outcome(call)
        if refused(value):
            message = str(value.error)
            named = [
                argument
                for argument in ("logits", "example_weights", "num_items_in_batch")
                if f"`{argument}`" in message
            ]
            assert named, f"{name}: {message}"
            if named[0] == "logits":
                assert not torch.isfinite(logits).all()
            elif named[0] == "example_weights":
                assert not np.isfinite(weights).all()
            continue
        assert torch.isfinite(value).all(), f"{name} returned {value} silently"
        if (
            name != "sequence_nll"
            and count is not None
            and isinstance(count, (int, float))
            and count >= 0
        ):
            targets = labels[:, 1:] if shift else labels
            if int(targets.ne(-100).sum()) == 0:
                assert value.item() == 0.0


_TEXTS = axis_texts(8)
_SAVED: dict = {}


def _saved_folder(root: Path) -> Path:
    """A fresh copy of one good save (fitted once per session)."""
    if not _SAVED:
        with tempfile.TemporaryDirectory() as scratch:
            folder = SemanticClusters.fit(_TEXTS, AxisEmbedder(dim=6), num_clusters=3, seed=0).save(
                Path(scratch) / "c"
            )
            _SAVED.update(
                {name: (folder / name).read_bytes() for name in (CONFIG_FILE, TENSORS_FILE)}
            )
    folder = root / "clusters"
    folder.mkdir()
    for name, data in _SAVED.items():
        (folder / name).write_bytes(data)
    return folder


@st.composite
def corruptions(draw):
    kind = draw(
        st.sampled_from(
            ["truncate_tensors", "truncate_json", "drop_json_key", "nan_entry", "drop_array"]
        )
    )
    return kind, draw(st.integers(0, 10**6)), draw(st.booleans())


def _corrupt(folder: Path, kind: str, seed: int, keep_hash: bool) -> None:
    from safetensors.numpy import load_file, save

    rng = np.random.default_rng(seed)
    config = json.loads((folder / CONFIG_FILE).read_text())
    tensors = (folder / TENSORS_FILE).read_bytes()
    if kind == "truncate_tensors":
        tensors = tensors[: int(rng.integers(0, len(tensors) + 1))]
    elif kind == "truncate_json":
        text = (folder / CONFIG_FILE).read_text()
        (folder / CONFIG_FILE).write_text(text[: int(rng.integers(0, len(text)))])
        return
    elif kind == "drop_json_key":
        del config[sorted(config)[int(rng.integers(0, len(config)))]]
    else:
        arrays = load_file(str(folder / TENSORS_FILE))
        name = sorted(arrays)[int(rng.integers(0, len(arrays)))]
        if kind == "drop_array":
            del arrays[name]
        else:
            flat = arrays[name].reshape(-1)
            flat[int(rng.integers(0, flat.size))] = rng.choice([np.nan, np.inf, -np.inf])
        tensors = save(arrays)
    (folder / TENSORS_FILE).write_bytes(tensors)
    if keep_hash and "tensors_sha256" in config:
        # a consistent but hostile save
        config["tensors_sha256"] = hashlib.sha256(tensors).hexdigest()
    elif not keep_hash:
        config.pop("tensors_sha256", None)  # as clusters saved before the hash was recorded
    (folder / CONFIG_FILE).write_text(json.dumps(config))


@covers("SemanticClusters", "sem_ent")
@fewer(2)
@given(corruption=corruptions())
def test_a_corrupted_clusters_folder_is_refused_naming_the_folder(corruption):
    with tempfile.TemporaryDirectory() as root:
        folder = _saved_folder(Path(root))
        _corrupt(folder, *corruption)
        clusters = outcome(SemanticClusters.load, folder, embedder=AxisEmbedder(dim=6))
        if refused(clusters):
            assert str(folder) in str(clusters.error), clusters
            return
        # Only a corruption that left the folder intact (a truncation at its full length) may load.
        value = sem_ent(_TEXTS, clusters)
        within(value["sem_ent"], 0, math.log(3) + 1e-9, "sem_ent")
        # 3 well-separated topics: never the silent 0.0 of NaN centroids
        assert value["sem_ent"] > 0
