"""What drives a figure: the sets at each end of every per-set figure, and how the figures agree.

Both read a report's ``per_set`` rows. A *figure* is every key of a row other than
:data:`~dialeval.cli.report_formats.INPUT_KEYS` whose values are numbers (or None); a key holding
text or lists describes the set rather than scoring it and is left out. A value that is None, NaN
or infinite is *undefined* for that set.

- :func:`drill_down`: per figure, the ``k`` least and ``k`` most diverse sets (their context and
  responses), in the direction the metric registry gives the figure (``more_is_diverse`` of its
  :class:`~dialeval.metrics.engines.metric_spec.SetFigure`; a ``FIGURE[MODEL]`` key is looked up
  as ``FIGURE``). A figure of unknown direction lists its ``lowest`` and ``highest`` sets instead.
- :func:`agreement`: Spearman's rank correlation between every pair of figures over the sets
  where both are defined, None (never NaN) with the reason where it is undefined.

:func:`format_drill_down` and :func:`format_agreement` render them as the console's plain text.
Both stay linear in the sets: one float column per figure, ``argpartition`` for the ends, one
``spearmanr`` call per group of figures defined on the same sets.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from itertools import chain

import numpy as np

from dialeval.cli.report_formats import (
    INPUT_KEYS,
    Table,
    _shortened_cell,
    check_decimals,
    render_table,
)
from dialeval.validation import ArgumentError, check_int, require_collection

#: The fewest shared sets a rank correlation is reported over.
MIN_SHARED_SETS = 3
AGREEMENT_METHOD = (
    "Spearman's rank correlation over the response sets where both figures are defined; "
    "figures as reported: a homogeneity figure (more_is_diverse false) is not negated, so its "
    "agreement with a diversity figure shows as a negative rho"
)
#: The most sets :func:`drill_down` lists at each end: the lists are read, and each entry copies
#: its set's responses into the report once per figure.
MAX_SETS_AT_EACH_END = 1000
#: The names of the two lists of a figure by its direction (``more_is_diverse``).
END_NAMES = {True: ("least", "most"), False: ("least", "most"), None: ("lowest", "highest")}


def figure_direction(key: str) -> bool | None:
    """``more_is_diverse`` of the registry's per-set figure ``key`` (``FIGURE`` or
    ``FIGURE[MODEL]``); None for a figure the registry does not know, or gives two directions."""
    from dialeval.metrics.registry import SPECS  # deferred: discovering the specs imports each

    base = key.split("[", 1)[0] if key.endswith("]") else key
    directions = {
        figure.more_is_diverse
        for spec in SPECS
        for figure in spec.set_figures
        if figure.figure == base
    }
    return directions.pop() if len(directions) == 1 else None


def _is_number_type(kind: type) -> bool:
    return kind is type(None) or (
        issubclass(kind, numbers.Real) and not issubclass(kind, (bool, np.bool_))
    )


def _float_column(column: Sequence) -> np.ndarray:
    try:
        return np.array(column, dtype=np.float64)  # None becomes NaN
    except OverflowError:  # an int past float's range: undefined, as an infinity is
        return np.array([_as_float(value) for value in column], dtype=np.float64)


def _as_float(value: object) -> float:
    try:
        return math.nan if value is None else float(value)  # type: ignore[arg-type]
    except OverflowError:
        return math.nan


def figure_columns(per_set: Sequence[Mapping]) -> dict[str, np.ndarray]:
    """Every per-set figure of ``per_set`` (in the order the rows first name them) as a float
    column, one value per set, NaN where the figure is undefined (None, NaN, infinite, absent)."""
    require_collection(per_set, "per_set", "a list of the report's per-set rows (dicts)")
    if not all(issubclass(kind, Mapping) for kind in set(map(type, per_set))):
        index, row = next((i, r) for i, r in enumerate(per_set) if not isinstance(r, Mapping))
        raise ArgumentError(
            f"per_set[{index}]", f"must be a dict (a per-set row), got {type(row).__name__}"
        )
    keys = [key for key in dict.fromkeys(chain.from_iterable(per_set)) if key not in INPUT_KEYS]
    columns = {}
    for key in keys:
        column = [row.get(key) for row in per_set]
        # each distinct type checked once: a check per value would cost more than the rest
        if all(_is_number_type(kind) for kind in set(map(type, column))):
            values = _float_column(column)
            values[~np.isfinite(values)] = np.nan
            columns[key] = values
    return columns


def _check_sets(sets: Sequence[object], num_rows: int) -> None:
    require_collection(sets, "sets", "a list of response sets (lists of strings)")
    if len(sets) != num_rows:
        raise ArgumentError(
            "sets", f"holds {len(sets)} response sets but `per_set` holds {num_rows} rows"
        )
    for index, responses in enumerate(sets):
        if not isinstance(responses, (list, tuple)) or not all(
            isinstance(response, str) for response in responses
        ):
            raise ArgumentError(
                f"sets[{index}]", f"must be a list of strings, got {responses!r:.60}"
            )


def _end(values: np.ndarray, k: int, highest: bool) -> np.ndarray:
    """Positions of the ``k`` lowest (or highest) of ``values`` (no NaN), the extreme first; ties
    in position order."""
    keys = -values if highest else values
    if k >= len(keys):
        return np.argsort(keys, kind="stable")
    kth = np.partition(keys, k - 1)[k - 1]
    # every value tied with the k-th is a candidate, so ties resolve by position, not by partition
    candidates = np.flatnonzero(keys <= kth)
    return candidates[np.argsort(keys[candidates], kind="stable")[:k]]


def drill_down(per_set: list[dict], sets: list[list[str]], k: int = 3) -> dict:
    """Per per-set figure, the ``k`` least and ``k`` most diverse response sets.

    Args:
        per_set: the report's ``per_set`` rows (``where``, ``id``, ``context``, the figures).
        sets: the responses of each set, in the rows' order.
        k: how many sets at each end (1 to :data:`MAX_SETS_AT_EACH_END`).

    Returns:
        ``{FIGURE: {"more_is_diverse": bool | None, "least": [entry], "most": [entry]}}``, an entry
        being ``{"index", "id", "where", "context", "responses", "value"}`` (``index``: the set's
        position in ``per_set``). Each list starts at its extreme: ``least`` from the least diverse
        set on (the lowest values, or for a homogeneity figure, ``more_is_diverse`` False, the
        highest), ``most`` from the most diverse on. A figure whose direction the registry does
        not know has ``more_is_diverse`` None and the lists ``lowest`` (ascending) and
        ``highest`` (descending) instead. Sets where the figure is undefined are left out; with
        fewer than ``2 * k`` defined sets the two lists share sets. Ties go by set order.
    """
    k = check_int(k, "k", maximum=MAX_SETS_AT_EACH_END)
    columns = figure_columns(per_set)
    _check_sets(sets, len(per_set))
    report = {}
    for key, column in columns.items():
        positions = np.flatnonzero(~np.isnan(column))
        values = column[positions]
        direction = figure_direction(key)
        lowest = positions[_end(values, k, highest=False)]
        highest = positions[_end(values, k, highest=True)]
        least, most = (highest, lowest) if direction is False else (lowest, highest)
        first, second = END_NAMES[direction]
        report[key] = {
            "more_is_diverse": direction,
            first: [_entry(per_set, sets, int(i), float(column[i])) for i in least],
            second: [_entry(per_set, sets, int(i), float(column[i])) for i in most],
        }
    return report


def _entry(
    per_set: Sequence[Mapping], sets: Sequence[Sequence[str]], index: int, value: float
) -> dict:
    row = per_set[index]
    return {
        "index": index,
        "id": row.get("id"),
        "where": row.get("where"),
        "context": row.get("context"),
        "responses": list(sets[index]),
        "value": value,
    }


def agreement(per_set: list[dict]) -> dict:
    """Spearman's rank correlation between every pair of per-set figures of ``per_set``.

    Each pair is correlated over the sets where both are defined, on the figures as reported: a
    homogeneity figure is not negated (``method`` says so; ``more_is_diverse`` gives each
    figure's direction, so a reader can orient a pair).

    Returns:
        ``{"method", "figures": [FIGURE], "more_is_diverse": [bool | None], "rho": [[float |
        None]], "num_sets": [[int]], "undefined": {"A|B": reason}}``: ``rho[i][j]`` between
        ``figures[i]`` and ``figures[j]`` (symmetric; 1.0 on the diagonal) over ``num_sets[i][j]``
        shared sets, None where it is undefined (fewer than 3 shared sets, a figure constant
        over them), with the reason in ``undefined`` under ``"A|B"``, ``A`` the figure listed
        first (``"A|A"`` for the diagonal).

    Pairs whose shared sets are the same sets (all of them when no figure is undefined anywhere)
    are ranked in one ``spearmanr`` call; the cost grows with the number of distinct patterns of
    undefined sets, at worst one call per pair.
    """
    # deferred: scipy costs a second to import, and only a report with per-set figures needs it
    from scipy.stats import spearmanr

    columns = figure_columns(per_set)
    names = list(columns)
    values = list(columns.values())
    size = len(names)
    rho: list[list[float | None]] = [[None] * size for _ in range(size)]
    shared_sets = [[0] * size for _ in range(size)]
    reasons = []
    for mask, pairs in _pairs_by_shared_sets(values):
        count = int(mask.sum())
        involved = sorted({figure for pair in pairs for figure in pair})
        constant = {f for f in involved if count and _constant(values[f][mask])}
        ranked = [f for f in involved if f not in constant] if count >= MIN_SHARED_SETS else []
        matrix = np.eye(len(ranked))
        if len(ranked) >= 2:
            statistic = spearmanr(np.column_stack([values[f][mask] for f in ranked])).statistic
            # two columns give one number, more a matrix
            matrix = (
                np.array(statistic)
                if len(ranked) > 2
                else np.array([[1.0, statistic], [statistic, 1.0]])
            )
        position = {figure: index for index, figure in enumerate(ranked)}
        for i, j in pairs:
            shared_sets[i][j] = shared_sets[j][i] = count
            named_constant = [names[f] for f in sorted({i, j}) if f in constant]
            reason = _undefined_reason(names[i], names[j], count, named_constant)
            if reason is None and i != j:
                rho[i][j] = rho[j][i] = _finite(matrix[position[i], position[j]])
                if rho[i][j] is None:  # not expected once constant columns are left out
                    reason = f"scipy's spearmanr gives no number over these {count} sets"
            elif reason is None:
                rho[i][i] = 1.0
            if reason is not None:
                reasons.append((i, j, reason))
    return {
        "method": AGREEMENT_METHOD,
        "figures": names,
        "more_is_diverse": [figure_direction(name) for name in names],
        "rho": rho,
        "num_sets": shared_sets,
        "undefined": {f"{names[i]}|{names[j]}": reason for i, j, reason in sorted(reasons)},
    }


def _pairs_by_shared_sets(
    columns: list[np.ndarray],
) -> list[tuple[np.ndarray, list[tuple[int, int]]]]:
    """Every pair ``(i, j)``, ``i <= j``, of ``columns`` grouped by the sets where both are defined:
    ``[(mask, pairs)]``; a mask is computed once per pair of distinct defined-set patterns."""
    defined = [~np.isnan(column) for column in columns]
    pattern_of: list[int] = []
    patterns: dict[bytes, int] = {}
    for mask in defined:
        pattern_of.append(patterns.setdefault(np.packbits(mask).tobytes(), len(patterns)))
    shared_key: dict[tuple[int, int], bytes] = {}
    groups: dict[bytes, tuple[np.ndarray, list[tuple[int, int]]]] = {}
    for i in range(len(columns)):
        for j in range(i, len(columns)):
            patterns_pair = (min(pattern_of[i], pattern_of[j]), max(pattern_of[i], pattern_of[j]))
            if patterns_pair not in shared_key:
                mask = defined[i] & defined[j]
                shared_key[patterns_pair] = key = np.packbits(mask).tobytes()
                groups.setdefault(key, (mask, []))
            groups[shared_key[patterns_pair]][1].append((i, j))
    return list(groups.values())


def _constant(values: np.ndarray) -> bool:
    return bool(values.min() == values.max())


def _finite(value: float) -> float | None:
    # rounding can put a perfect correlation a hair past 1
    return float(np.clip(value, -1.0, 1.0)) if np.isfinite(value) else None


def _undefined_reason(first: str, second: str, count: int, constant: list[str]) -> str | None:
    sets = f"{count} set{'' if count == 1 else 's'}"
    if count < MIN_SHARED_SETS:
        where = f"`{first}` is defined on" if first == second else "both are defined on"
        amount = "no set" if count == 0 else f"{sets} only"
        return f"{where} {amount}; a rank correlation needs {MIN_SHARED_SETS}"
    if not constant:
        return None
    if first == second:
        return f"`{first}` is constant over its {sets}: it ranks no set above another"
    named = " and ".join(f"`{name}`" for name in constant)
    verb = "is" if len(constant) == 1 else "are"
    return f"{named} {verb} constant over the {sets} where both are defined"


def _check_report(report: object) -> None:
    if not isinstance(report, Mapping):
        raise ArgumentError("report", f"must be a dict, got {type(report).__name__}")


def format_drill_down(report: dict, width: int = 60) -> str:
    """The printed drill-down (:func:`drill_down`'s ``report``): per figure, its direction and a
    table of its sets at each end (the set's id, its ``where`` or index; value; context;
    responses), each cell cut to at most ``width`` characters."""
    _check_report(report)
    width = check_int(width, "width", minimum=4)
    blocks = []
    for key, figure in report.items():
        direction = figure.get("more_is_diverse")
        ends = END_NAMES[direction]
        about = {
            True: "more is diverse",
            False: "a homogeneity figure: less is diverse",
            None: "direction unknown: its lowest and highest values",
        }[direction]
        rows = []
        for end in ends:
            for rank, entry in enumerate(figure.get(end, []), start=1):
                name = entry.get("id")
                name = name if name is not None else entry.get("where")
                name = name if name is not None else f"#{entry['index']}"
                rows.append(
                    [
                        f"{end} {rank}",
                        _shortened_cell(name, width),
                        _shortened_cell(entry.get("value"), width),
                        _shortened_cell(entry.get("context") or "", width),
                        _shortened_cell(entry.get("responses"), width),
                    ]
                )
        title = f"{key} ({about})"
        if not rows:
            blocks.append(f"{title}: defined on no set")
            continue
        table = Table(["", "set", "value", "context", "responses"], rows)
        blocks.append(f"{title}\n{render_table(table, 'text')}")
    return "\n\n".join(blocks)


def format_agreement(report: dict, decimals: int = 2) -> str:
    """The printed agreement matrix (:func:`agreement`'s ``report``): one row per figure (numbered),
    one column per number, ``-`` where rho is undefined, then the method and each reason."""
    _check_report(report)
    decimals = check_decimals(decimals)
    names = list(report.get("figures", []))
    if not names:
        return "Agreement: no per-set figure"
    texts = [
        ["-" if value is None else f"{value:.{decimals}f}" for value in row]
        for row in report["rho"]
    ]
    widths = [max(len(str(j + 1)), *(len(row[j]) for row in texts)) for j in range(len(names))]
    rows = [
        [str(i + 1), name, *(text.rjust(w) for text, w in zip(texts[i], widths))]
        for i, name in enumerate(names)
    ]
    columns = ["", "figure", *(str(j + 1).rjust(w) for j, w in enumerate(widths))]
    lines = [render_table(Table(columns, rows), "text"), f"({report.get('method', '')})"]
    pairs = {f"{a}|{b}": f"`{a}`" if a == b else f"`{a}` ~ `{b}`" for a in names for b in names}
    lines += [
        f"- {pairs.get(pair, pair)}: {reason}"
        for pair, reason in report.get("undefined", {}).items()
    ]
    return "\n".join(lines)
