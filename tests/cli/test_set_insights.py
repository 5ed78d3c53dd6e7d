"""What drives a figure: the least and most diverse sets of each per-set figure, and the rank
agreement between the figures, on tables whose answers are worked out by hand."""

import json
import math

import numpy as np
import pytest
from scipy.stats import spearmanr

from dialeval.cli.set_insights import (
    _end,
    agreement,
    drill_down,
    figure_columns,
    figure_direction,
    format_agreement,
    format_drill_down,
)
from dialeval.validation import ArgumentError

DIVERSITY = "sent_bert_diversity[tiny/model]"  # more is diverse, by the registry
HOMOGENEITY = "homogenization_rougel"  # less is diverse
UNKNOWN = "my_score"  # not in the registry
CONSTANT = "self_repetition"
SPARSE = "mtld"

COLUMNS = {
    DIVERSITY: [0.5, 0.1, 0.9, 0.1, None],
    HOMOGENEITY: [0.2, 0.8, 0.1, 0.6, 0.4],
    UNKNOWN: [3, 1, 2, 4, 5],
    CONSTANT: [0.0, 0.0, 0.0, 0.0, 0.0],
    SPARSE: [math.nan, None, math.inf, 1.0, 2.0],
}
SETS = [[f"set {i} response {j}" for j in range(3)] for i in range(5)]


def rows() -> list[dict]:
    table = []
    for i in range(5):
        row = {"where": f"in.jsonl:{i + 1}", "id": f"q{i}", "context": f"context {i}"}
        row.update({key: values[i] for key, values in COLUMNS.items()})
        row["fields"] = {"topic": "t"}
        row["label"] = "text, not a figure"
        table.append(row)
    return table


def indexes(entries: list[dict]) -> list[int]:
    return [entry["index"] for entry in entries]


def test_direction_comes_from_the_registry():
    assert figure_direction("sent_bert_diversity") is True
    assert figure_direction("sent_bert_diversity[sentence-transformers/all-MiniLM-L6-v2]") is True
    assert figure_direction("homogenization_rougel") is False
    assert figure_direction("compression_ratio") is False
    assert figure_direction("my_score") is None


def test_drill_down_by_hand():
    report = drill_down(rows(), SETS, k=2)
    # the text column and the input's keys are no figures
    assert list(report) == [DIVERSITY, HOMOGENEITY, UNKNOWN, CONSTANT, SPARSE]
    diversity = report[DIVERSITY]
    assert diversity["more_is_diverse"] is True
    # set 4 is undefined; sets 1 and 3 tie at 0.1 and keep their order
    assert indexes(diversity["least"]) == [1, 3]
    assert indexes(diversity["most"]) == [2, 0]
    assert diversity["most"][0] == {
        "index": 2,
        "id": "q2",
        "where": "in.jsonl:3",
        "context": "context 2",
        "responses": SETS[2],
        "value": 0.9,
    }
    # a homogeneity figure: the least diverse sets are its highest
    homogeneity = report[HOMOGENEITY]
    assert homogeneity["more_is_diverse"] is False
    assert indexes(homogeneity["least"]) == [1, 3]
    assert [entry["value"] for entry in homogeneity["least"]] == [0.8, 0.6]
    assert indexes(homogeneity["most"]) == [2, 0]
    # no known direction: lowest and highest, not least and most
    assert report[UNKNOWN] == {
        "more_is_diverse": None,
        "lowest": report[UNKNOWN]["lowest"],
        "highest": report[UNKNOWN]["highest"],
    }
    assert indexes(report[UNKNOWN]["lowest"]) == [1, 2]
    assert indexes(report[UNKNOWN]["highest"]) == [4, 3]
    assert isinstance(report[UNKNOWN]["highest"][0]["value"], float)
    # all tied: both ends in set order
    assert indexes(report[CONSTANT]["least"]) == [0, 1]
    assert indexes(report[CONSTANT]["most"]) == [0, 1]
    # NaN, None and infinity are undefined
    assert indexes(report[SPARSE]["least"]) == [3, 4]
    assert indexes(report[SPARSE]["most"]) == [4, 3]
    json.dumps(report, allow_nan=False)


def test_fewer_sets_than_k_lists_each_defined_set():
    report = drill_down(rows(), SETS, k=10)
    assert indexes(report[SPARSE]["least"]) == [3, 4]
    assert indexes(report[DIVERSITY]["most"]) == [2, 0, 1, 3]


def test_a_figure_defined_nowhere_has_empty_lists():
    table = [{"where": None, "id": None, "context": None, "mtld": None} for _ in range(3)]
    assert drill_down(table, [["a", "b"]] * 3) == {
        "mtld": {"more_is_diverse": True, "least": [], "most": []}
    }
    assert drill_down([], []) == {}


def test_the_ends_break_ties_by_set_order_past_the_partition():
    rng = np.random.default_rng(0)
    values = rng.integers(0, 5, size=2000).astype(float)  # many ties at every cut
    for k in (1, 7, 400, 1999, 2000, 5000):
        assert _end(values, k, highest=False).tolist() == (
            np.argsort(values, kind="stable")[:k].tolist()
        )
        assert _end(values, k, highest=True).tolist() == (
            np.argsort(-values, kind="stable")[:k].tolist()
        )


def test_agreement_by_hand():
    report = agreement(rows())
    names = report["figures"]
    assert names == [DIVERSITY, HOMOGENEITY, UNKNOWN, CONSTANT, SPARSE]
    assert report["method"].startswith("Spearman's rank correlation over the response sets")
    assert "not negated" in report["method"]
    assert report["more_is_diverse"] == [True, False, None, False, True]
    rho = report["rho"]
    at = {name: i for i, name in enumerate(names)}

    def value(a: str, b: str) -> float | None:
        assert rho[at[a]][at[b]] == rho[at[b]][at[a]]
        return rho[at[a]][at[b]]

    # sets 0-3: ranks (3, 1.5, 4, 1.5) against (2, 4, 1, 3): -4.5 / sqrt(4.5 * 5)
    assert value(DIVERSITY, HOMOGENEITY) == pytest.approx(-3 / math.sqrt(10))
    # all five sets, no ties: 1 - 6 * 22 / (5 * 24)
    assert value(HOMOGENEITY, UNKNOWN) == pytest.approx(-0.1)
    # sets 0-3: ranks (3, 1.5, 4, 1.5) against (3, 1, 2, 4): -0.5 / sqrt(4.5 * 5)
    assert value(DIVERSITY, UNKNOWN) == pytest.approx(-0.5 / math.sqrt(22.5))
    assert value(DIVERSITY, DIVERSITY) == 1.0
    assert report["num_sets"][at[DIVERSITY]][at[HOMOGENEITY]] == 4
    assert report["num_sets"][at[HOMOGENEITY]][at[UNKNOWN]] == 5
    json.dumps(report, allow_nan=False)


def test_undefined_agreement_is_none_with_the_reason():
    report = agreement(rows())
    at = {name: i for i, name in enumerate(report["figures"])}
    rho, undefined = report["rho"], report["undefined"]
    for other in (DIVERSITY, HOMOGENEITY, UNKNOWN, CONSTANT):
        first, second = sorted((other, CONSTANT), key=at.get)
        assert rho[at[first]][at[second]] is None
        assert f"`{CONSTANT}` is constant" in undefined[f"{first}|{second}"]
    assert undefined[f"{CONSTANT}|{CONSTANT}"] == (
        f"`{CONSTANT}` is constant over its 5 sets: it ranks no set above another"
    )
    assert undefined[f"{HOMOGENEITY}|{CONSTANT}"] == (
        f"`{CONSTANT}` is constant over the 5 sets where both are defined"
    )
    # mtld is defined on sets 3 and 4 only (NaN, None and infinity elsewhere)
    assert rho[at[SPARSE]][at[SPARSE]] is None
    assert undefined[f"{SPARSE}|{SPARSE}"] == (
        f"`{SPARSE}` is defined on 2 sets only; a rank correlation needs 3"
    )
    assert undefined[f"{DIVERSITY}|{SPARSE}"] == (
        "both are defined on 1 set only; a rank correlation needs 3"
    )
    nowhere = agreement([{"mtld": None, "ead": 1.0}, {"mtld": None, "ead": 2.0}])["undefined"]
    assert nowhere == {
        "mtld|mtld": "`mtld` is defined on no set; a rank correlation needs 3",
        "mtld|ead": "both are defined on no set; a rank correlation needs 3",
        "ead|ead": "`ead` is defined on 2 sets only; a rank correlation needs 3",
    }
    # every None has its reason, every reason its None
    nones = {
        f"{a}|{b}"
        for i, a in enumerate(report["figures"])
        for j, b in enumerate(report["figures"])
        if i <= j and rho[i][j] is None
    }
    assert nones == set(undefined)


def test_agreement_matches_scipy_on_every_pair():
    rng = np.random.default_rng(1)
    data = rng.normal(size=(60, 5))
    data[:, 3] = np.round(data[:, 0] + rng.normal(scale=0.5, size=60))  # ties, correlated
    data[rng.random(size=(60, 5)) < 0.15] = np.nan
    names = [f"figure_{j}" for j in range(5)]
    table = [
        {"where": None, "id": None, "context": None}
        | {name: None if np.isnan(x) else float(x) for name, x in zip(names, row)}
        for row in data
    ]
    report = agreement(table)
    assert report["undefined"] == {}
    for i in range(5):
        for j in range(5):
            both = ~np.isnan(data[:, i]) & ~np.isnan(data[:, j])
            expected = 1.0 if i == j else spearmanr(data[both, i], data[both, j]).statistic
            assert report["rho"][i][j] == pytest.approx(expected, abs=1e-12)
            assert report["num_sets"][i][j] == int(both.sum())


def test_agreement_of_figures_defined_on_the_same_sets_matches_scipy():
    # one group of figures, ranked in one call: three or more columns, and exactly two
    rng = np.random.default_rng(2)
    data = rng.normal(size=(30, 3))
    for width in (2, 3):
        table = [{f"f{j}": float(row[j]) for j in range(width)} for row in data]
        report = agreement(table)
        for i in range(width):
            for j in range(width):
                expected = 1.0 if i == j else spearmanr(data[:, i], data[:, j]).statistic
                assert report["rho"][i][j] == pytest.approx(expected, abs=1e-12)


def test_no_figures():
    assert agreement([{"where": "a:1", "id": None, "context": "c"}]) == {
        "method": agreement([])["method"],
        "figures": [],
        "more_is_diverse": [],
        "rho": [],
        "num_sets": [],
        "undefined": {},
    }


def test_columns_keep_numbers_and_leave_text_out():
    table = [{"a": 1, "b": "x", "c": np.float32(0.5), "d": True}, {"a": 10**400, "c": None}]
    columns = figure_columns(table)
    assert list(columns) == ["a", "c"]
    assert np.isnan(columns["a"][1])  # past float's range: undefined
    assert columns["c"][0] == 0.5 and np.isnan(columns["c"][1])


@pytest.mark.parametrize("k", [0, -1, 2.5, "3", True, None, 1001, 10**12])
def test_k_is_checked(k):
    with pytest.raises(ArgumentError) as error:
        drill_down(rows(), SETS, k=k)
    assert error.value.argument == "k"


def test_bad_tables_are_named():
    with pytest.raises(ArgumentError) as error:
        drill_down("per set", SETS)
    assert error.value.argument == "per_set"
    with pytest.raises(ArgumentError) as error:
        agreement([{"mtld": 1.0}, ["not", "a", "row"]])
    assert error.value.argument == "per_set[1]"
    with pytest.raises(ArgumentError) as error:
        drill_down(rows(), SETS[:4])
    assert error.value.argument == "sets"
    assert "holds 4 response sets but `per_set` holds 5 rows" in str(error.value)
    with pytest.raises(ArgumentError) as error:
        drill_down(rows(), [*SETS[:2], "one string", *SETS[3:]])
    assert error.value.argument == "sets[2]"


def test_format_drill_down():
    long_set = [["word " * 40, "b"]] + SETS[1:]
    text = format_drill_down(drill_down(rows(), long_set, k=1), width=30)
    assert f"{DIVERSITY} (more is diverse)" in text
    assert f"{HOMOGENEITY} (a homogeneity figure: less is diverse)" in text
    assert f"{UNKNOWN} (direction unknown: its lowest and highest values)" in text
    lines = text.splitlines()
    least = next(line for line in lines if line.startswith("least 1"))
    assert "q1" in least and "0.1000" in least and "context 1" in least
    assert "lowest 1" in text and "highest 1" in text
    # a cell is cut to the width: the long response set is the constant figure's first
    constant = lines[lines.index(f"{CONSTANT} (a homogeneity figure: less is diverse)") + 3]
    assert constant.endswith(("word " * 40)[:28] + "..")
    empty = format_drill_down({"mtld": {"more_is_diverse": True, "least": [], "most": []}})
    assert empty == "mtld (more is diverse): defined on no set"
    with pytest.raises(ArgumentError) as error:
        format_drill_down({}, width=0)
    assert error.value.argument == "width"


def test_format_agreement():
    report = agreement(rows())
    text = format_agreement(report, decimals=3)
    lines = text.splitlines()
    assert lines[0].split() == ["figure", "1", "2", "3", "4", "5"]
    diversity = next(line for line in lines if line.startswith("1 "))
    assert diversity.split()[1:5] == [DIVERSITY, "1.000", "-0.949", "-0.105"]
    assert diversity.split()[5] == "-"  # the constant figure
    assert "not negated" in text
    assert f"- `{CONSTANT}`: `{CONSTANT}` is constant over its 5 sets" in text
    assert f"- `{DIVERSITY}` ~ `{SPARSE}`: both are defined on 1 set only" in text
    assert format_agreement(agreement([])) == "Agreement: no per-set figure"
    with pytest.raises(ArgumentError) as error:
        format_agreement(report, decimals=-1)
    assert error.value.argument == "decimals"


def test_a_rho_scipy_leaves_undefined_is_none_with_a_reason(monkeypatch):
    import scipy.stats

    class NoNumber:
        statistic = math.nan

    monkeypatch.setattr(scipy.stats, "spearmanr", lambda *arrays: NoNumber())
    report = agreement([{"a": float(i), "b": float(-i)} for i in range(4)])
    assert report["rho"] == [[1.0, None], [None, 1.0]]
    assert report["undefined"] == {"a|b": "scipy's spearmanr gives no number over these 4 sets"}
    json.dumps(report, allow_nan=False)
