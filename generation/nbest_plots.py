"""Fig. 2 of Sato et al. (2022): Certainty and Variety of beam-search n-best lists against the beam
size.

Four panels as in the paper: (a) Certainty on ENTQ, (b) Certainty on CNTQ, (c) Variety on ENTQ,
(d) Variety on CNTQ; one line per model. Built on ``matplotlib.figure.Figure`` directly, so no
pyplot state or GUI backend is touched.
"""

from __future__ import annotations

import math
from pathlib import Path

from matplotlib.figure import Figure

from dialeval.type_aliases import StrPath
from dialeval.validation import ArgumentError

PANELS = (("certainty", "ENTQ"), ("certainty", "CNTQ"), ("variety", "ENTQ"), ("variety", "CNTQ"))


def _value(point: dict, figure: str, input_type: str) -> float:
    per_type = point.get("per_type")
    if per_type is None or input_type not in per_type:
        raise ValueError(
            f"sweep point for beam size {point.get('beam_size')!r} has no "
            f"per_type[{input_type!r}]: run beam_size_sweep with input_types (e.g. 'ENTQ' / "
            "'CNTQ' per input)"
        )
    return per_type[input_type][figure]


def plot_beam_size_sweep(sweeps: dict, path: StrPath, title: str | None = None) -> Path:
    """Write Fig. 2 as a PNG at ``path`` and return its path.

    Args:
        sweeps: model name -> :func:`dialeval.generation.nbest.beam_size_sweep` result (list of
            per-beam-size dicts with ``beam_size`` and ``per_type``).
        path: the PNG to write (parent folders are created).
    """
    if not isinstance(sweeps, dict) or not sweeps:
        raise ArgumentError(
            "sweeps", "must be a non-empty dict: model name -> beam_size_sweep(...) result"
        )
    figure = Figure(figsize=(10, 7.5), layout="constrained")
    axes = figure.subplots(2, 2)
    for axis, (name, input_type), letter in zip(axes.flat, PANELS, "abcd"):
        for model_name, points in sweeps.items():
            if not points:
                raise ArgumentError(f"sweeps[{model_name!r}]", "is empty")
            points = sorted(points, key=lambda point: point["beam_size"])
            sizes = [point["beam_size"] for point in points]
            values = [_value(point, name, input_type) for point in points]
            axis.plot(sizes, values, marker="o", label=model_name)
        axis.set_xscale("log", base=2)
        axis.set_xlabel("beam size B")
        axis.set_ylabel(name.capitalize())
        axis.set_title(f"({letter}) {name.capitalize()} on {input_type}")
        axis.grid(alpha=0.3)
        if name == "variety":
            axis.axhline(0.5, color="grey", linestyle=":", linewidth=1)  # chance rate (§4.2)
        lows = [
            v
            for points in sweeps.values()
            for v in (_value(p, name, input_type) for p in points)
            if not math.isnan(v)
        ]
        if lows:
            axis.set_ylim(min(0.0, min(lows) - 0.05), 1.02)
    axes.flat[0].legend(loc="lower right", fontsize="small")
    if title:
        figure.suptitle(title)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    return path
