"""Reading a saved clusters folder (``SemanticClusters.save``) as hostile input.

Every way such a folder can be broken (unreadable or truncated JSON, a key missing or of the
wrong type, a truncated or foreign safetensors file, an array missing, of the wrong shape or
holding NaN / inf) is a ValueError naming the folder and the file (and the key): a NaN centroid
would otherwise put every response in cluster 0 and give Sem-Ent 0.0 silently.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

#: What ``SemanticClusters.save`` writes in its JSON (``tensors_sha256`` is optional: older saves
#: lack it).
CONFIG_KEYS = {"format_version": int, "embedder": dict, "settings": dict}
#: The arrays of the safetensors file and their number of dimensions.
TENSOR_DIMENSIONS = {
    "pca_mean": 1,
    "pca_components": 2,
    "centroids": 2,
    "reference_distribution": 1,
}


def read_config(path: Path) -> dict:
    """The folder's JSON, with every key :data:`CONFIG_KEYS` names, of its type."""
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise ValueError(
            f"{path.parent}: {path.name} is not valid JSON ({error}): save the clusters again"
        ) from None
    if not isinstance(config, dict):
        raise ValueError(
            f"{path.parent}: {path.name} must hold a JSON object, got {type(config).__name__}"
        )
    for key, kind in CONFIG_KEYS.items():
        if key not in config:
            raise ValueError(
                f"{path.parent}: {path.name} has no key {key!r}: save the clusters again"
            )
        if isinstance(config[key], bool) or not isinstance(config[key], kind):
            raise ValueError(
                f"{path.parent}: {path.name}'s {key!r} must be a JSON {kind.__name__}, got "
                f"{config[key]!r}"
            )
    if not isinstance(config.get("tensors_sha256", ""), str):
        raise ValueError(
            f"{path.parent}: {path.name}'s 'tensors_sha256' must be a string, got "
            f"{config['tensors_sha256']!r}"
        )
    return config


def read_tensors(path: Path) -> dict[str, np.ndarray]:
    """The folder's arrays, checked by :func:`check_cluster_arrays`."""
    # safetensors: deferred to the one path that needs it
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    try:
        arrays = load_file(str(path))
    except (
        SafetensorError,
        OSError,
        ValueError,
        TypeError,
    ) as error:  # truncated, foreign or unreadable
        raise ValueError(
            f"{path.parent}: {path.name} cannot be read as safetensors ({error}): save the "
            "clusters again"
        ) from None
    check_cluster_arrays(arrays, f"{path.parent}: {path.name}")
    return arrays


def check_cluster_arrays(arrays: dict, where: str) -> None:
    """Every array present, of the right shape (mean (d,), components (m, d), centroids (k, m),
    reference distribution (k,)) and finite; ``where`` starts each message ("FOLDER: FILE")."""
    for name, dimensions in TENSOR_DIMENSIONS.items():
        if name not in arrays:
            raise ValueError(f"{where} has no array {name!r}: save the clusters again")
        array = arrays[name]
        if (
            array.ndim != dimensions
            or array.size == 0
            or not np.issubdtype(array.dtype, np.floating)
        ):
            raise ValueError(
                f"{where}: {name!r} must be a non-empty {dimensions}-D float array, got "
                f"{array.dtype} {array.shape}"
            )
        bad = ~np.isfinite(array)
        if bad.any():
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(
                f"{where}: {name!r} holds {int(bad.sum())} non-finite value(s), the first "
                f"{float(array[first])!r} at {list(first)}: these clusters would put every "
                "response in one cluster"
            )
    dim, kept = arrays["pca_mean"].shape[0], arrays["pca_components"].shape[0]
    k = arrays["centroids"].shape[0]
    expected = {
        "pca_components": (kept, dim),
        "centroids": (k, kept),
        "reference_distribution": (k,),
    }
    for name, shape in expected.items():
        if arrays[name].shape != shape:
            raise ValueError(
                f"{where}: {name!r} has shape {arrays[name].shape}, the other arrays need {shape}"
            )
