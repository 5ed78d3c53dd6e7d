"""The HTML report's plots: matplotlib figures rendered as inline SVG (no file, no network).

Each plot is one per-set figure's distribution, one box per system with each set's value drawn
over it. The SVG's text stays text (``svg.fonttype`` none: the browser's own sans-serif font, so
no font is embedded or fetched), its XML prolog, DOCTYPE and metadata are dropped (they name
W3C and Dublin Core URLs), each plot's referenced ids (clip paths, markers) get their own salt
and its groups' ids (the same in every plot, referenced by nothing) go, so that no two elements
of the page share an id.
"""

from __future__ import annotations

import io
import math
import re
from html import escape

import numpy as np
from matplotlib import rc_context
from matplotlib.figure import Figure

_BEFORE_SVG = re.compile(r"\A.*?(?=<svg\b)", re.DOTALL)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.DOTALL)
_GROUP_ID = re.compile(r'<g id="[^"]*"')
BOX_COLOUR, POINT_COLOUR = "#1f4e79", "#2b7bba"
#: The most dots a plot draws per system (more sets: that many evenly spaced quantiles).
MAX_DOTS = 400


#: The longest system name a plot's axis shows whole (the page's tables show every name whole).
MAX_LABEL = 24


def _plain(text: str, width: int = 200) -> str:
    """``text`` as matplotlib draws it literally (``$`` would start mathtext), cut at ``width``."""
    text = text if len(text) <= width else text[: width - 1] + "…"
    return text.replace("$", r"\$")


def svg_of(figure: Figure, salt: str, label: str) -> str:
    """``figure`` as an inline ``<svg>`` element labelled ``label`` for screen readers."""
    buffer = io.StringIO()
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        figure.savefig(
            buffer,
            format="svg",
            metadata={"Creator": None, "Date": None, "Format": None, "Type": None},
        )
    svg = _METADATA.sub("", _BEFORE_SVG.sub("", buffer.getvalue(), count=1))
    # matplotlib names its groups figure_1, axes_1, ... in every plot; nothing refers to them
    svg = _GROUP_ID.sub("<g", svg)
    return svg.replace(
        "<svg ", f'<svg role="img" aria-label="{escape(label)}" class="plot-svg" ', 1
    )


def finite_values(rows: list[dict], figure: str) -> list[float]:
    """The numbers ``figure`` has in ``rows`` (per-set rows), undefined sets left out."""
    return [
        float(row[figure])
        for row in rows
        if isinstance(row.get(figure), (int, float))
        and not isinstance(row.get(figure), bool)
        and math.isfinite(row[figure])
    ]


def _dots(values: list[float]) -> np.ndarray:
    """The values drawn as dots: all of them, or :data:`MAX_DOTS` evenly spaced quantiles of many
    (an SVG element per dot: 10,000 sets would make a page of megabytes per plot)."""
    ordered = np.sort(np.asarray(values, dtype=float))
    if len(ordered) <= MAX_DOTS:
        return ordered
    return ordered[np.linspace(0, len(ordered) - 1, MAX_DOTS).round().astype(int)]


def distribution_svg(figure_name: str, values_by_system: dict[str, list[float]], salt: str) -> str:
    """One per-set figure's values, a box per system (in order) with its sets' values over it."""
    names = list(values_by_system)
    figure = Figure(figsize=(1.6 + 0.9 * len(names), 2.8), layout="constrained")
    axes = figure.add_subplot()
    for position, name in enumerate(names, start=1):
        values = values_by_system[name]
        if not values:
            continue
        axes.boxplot(
            [values],
            positions=[position],
            widths=0.55,
            showfliers=False,
            medianprops={"color": "black"},
            boxprops={"color": BOX_COLOUR},
        )
        dots = _dots(values)
        # seeded: the same report draws the same page
        jitter = np.random.default_rng(position).uniform(-0.16, 0.16, len(dots))
        axes.scatter(position + jitter, dots, s=6, alpha=0.55, color=POINT_COLOUR, linewidths=0)
    axes.set_xticks(range(1, len(names) + 1))
    axes.set_xticklabels([_plain(name, MAX_LABEL) for name in names], fontsize=8)
    axes.set_xlim(0.4, len(names) + 0.6)
    axes.tick_params(axis="x", labelrotation=30 if len(names) > 3 else 0)
    axes.tick_params(axis="y", labelsize=8)
    axes.set_title(_plain(figure_name), fontsize=9)
    axes.grid(axis="y", color="#dddddd", linewidth=0.6)
    axes.set_axisbelow(True)
    counts = ", ".join(f"{name}: {len(values)} sets" for name, values in values_by_system.items())
    return svg_of(figure, salt, f"{figure_name} per set, by system ({counts})")
