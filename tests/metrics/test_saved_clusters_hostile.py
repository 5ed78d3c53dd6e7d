"""A corrupt saved-clusters folder is a ValueError naming the folder and the file (and
the key), never a SafetensorError / KeyError, and NaN centroids never give Sem-Ent 0.0."""

import hashlib
import json

import numpy as np
import pytest
from axis_embedder import AxisEmbedder, axis_texts
from safetensors.numpy import load_file, save

from dialeval.metrics.sem_ent.clusters import CONFIG_FILE, TENSORS_FILE, SemanticClusters, sem_ent

TEXTS = axis_texts(10)


@pytest.fixture
def folder(tmp_path):
    SemanticClusters.fit(TEXTS, AxisEmbedder(), num_clusters=3, seed=0).save(tmp_path / "clusters")
    return tmp_path / "clusters"


def rewrite_tensors(folder, change):
    """Replace the arrays and re-record their sha256, as a consistent (but hostile) save would."""
    arrays = load_file(str(folder / TENSORS_FILE))
    change(arrays)
    data = save(arrays)
    (folder / TENSORS_FILE).write_bytes(data)
    config = json.loads((folder / CONFIG_FILE).read_text())
    config["tensors_sha256"] = hashlib.sha256(data).hexdigest()
    (folder / CONFIG_FILE).write_text(json.dumps(config))


def load(folder):
    return SemanticClusters.load(folder, embedder=AxisEmbedder())


def test_the_intact_folder_loads_and_scores(folder):
    assert sem_ent(TEXTS, load(folder))["sem_ent"] == pytest.approx(np.log(3))


def test_nan_centroids_are_refused_naming_the_folder_file_and_array(folder):
    def poison(arrays):
        arrays["centroids"][1, 0] = np.nan

    rewrite_tensors(folder, poison)
    with pytest.raises(
        ValueError,
        match=rf"{folder}: {TENSORS_FILE}: 'centroids' holds 1 non-finite value\(s\), the first nan at \[1, 0\]",
    ):
        load(folder)


def test_nan_clusters_built_in_memory_never_give_zero():
    clusters = SemanticClusters.fit(TEXTS, AxisEmbedder(), num_clusters=3, seed=0)
    clusters.centroids[:] = np.nan
    with pytest.raises(ValueError, match="`clusters` hold non-finite centroids"):
        sem_ent(TEXTS, clusters)


@pytest.mark.parametrize("keep", [0, 7, 100, -1])
def test_a_truncated_safetensors_file_without_a_recorded_hash_is_refused(folder, keep):
    config = json.loads((folder / CONFIG_FILE).read_text())
    del config["tensors_sha256"]  # as clusters saved before the hash was recorded
    (folder / CONFIG_FILE).write_text(json.dumps(config))
    data = (folder / TENSORS_FILE).read_bytes()
    (folder / TENSORS_FILE).write_bytes(data[:keep])
    with pytest.raises(
        ValueError, match=rf"{folder}: {TENSORS_FILE} cannot be read as safetensors"
    ):
        load(folder)


@pytest.mark.parametrize("key", ["format_version", "embedder", "settings"])
def test_a_json_missing_a_key_is_refused_naming_it(folder, key):
    config = json.loads((folder / CONFIG_FILE).read_text())
    del config[key]
    if key == "format_version":
        config["format_version"] = None  # present but wrong: the type is checked too
    (folder / CONFIG_FILE).write_text(json.dumps(config))
    with pytest.raises(ValueError, match=rf"{folder}: {CONFIG_FILE}"):
        load(folder)


def test_a_missing_settings_key_names_the_key(folder):
    config = json.loads((folder / CONFIG_FILE).read_text())
    del config["settings"]
    (folder / CONFIG_FILE).write_text(json.dumps(config))
    with pytest.raises(ValueError, match=rf"{folder}: {CONFIG_FILE} has no key 'settings'"):
        load(folder)


@pytest.mark.parametrize("text", ["{", "[]", '"clusters"', '{"format_version": 1'])
def test_broken_json_is_refused_naming_the_file(folder, text):
    (folder / CONFIG_FILE).write_text(text)
    with pytest.raises(ValueError, match=rf"{folder}: {CONFIG_FILE}"):
        load(folder)


@pytest.mark.parametrize(
    "name", ["pca_mean", "pca_components", "centroids", "reference_distribution"]
)
def test_a_missing_array_is_refused_naming_it(folder, name):
    rewrite_tensors(folder, lambda arrays: arrays.pop(name))
    with pytest.raises(ValueError, match=rf"{TENSORS_FILE} has no array '{name}'"):
        load(folder)


def test_arrays_of_mismatched_shapes_are_refused(folder):
    def shrink(arrays):
        arrays["centroids"] = np.ascontiguousarray(arrays["centroids"][:, :1])

    rewrite_tensors(folder, shrink)
    with pytest.raises(ValueError, match="'centroids' has shape"):
        load(folder)


@pytest.mark.parametrize(
    "embedder, message",
    [
        ({"kind": "bogus", "model": "m"}, "'embedder'.'kind' must be one of"),
        ({"kind": "last_token"}, "'embedder' has no 'model'"),
        ({"kind": "last_token", "model": "m", "max_length": 0}, "'embedder'.'max_length' must be"),
        ({"kind": "last_token", "model": "m", "layer": "top"}, "'embedder'.'layer' must be an int"),
    ],
)
def test_a_recorded_embedder_that_cannot_be_rebuilt_names_the_file_and_key(
    folder, embedder, message
):
    config = json.loads((folder / CONFIG_FILE).read_text())
    config["embedder"] = embedder
    (folder / CONFIG_FILE).write_text(json.dumps(config))
    # without an embedder given, the recorded one is rebuilt: its settings come from the file
    with pytest.raises(ValueError, match=rf"^{folder}: {CONFIG_FILE}'s {message}") as error:
        SemanticClusters.load(folder)
    assert "save the clusters again" in str(error.value)
