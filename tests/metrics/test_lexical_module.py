"""The lexical_diversity evaluate module, loaded offline the way users load it."""

import evaluate
import pytest

from dialeval.metrics import corpus_lexical_diversity, evaluate_module_path, set_lexical_diversity

SETS = [
    ["i am going", "i am going", "lets go i i"],
    ["I like tea.", "Coffee, please!", "Water is fine"],
]
CORPUS = ["i am going", "i am going", "lets go i i", "I like tea."]


@pytest.fixture(scope="module")
def lexical():
    return evaluate.load(evaluate_module_path("lexical_diversity"))


def test_loads_by_relative_path_offline(monkeypatch):
    monkeypatch.chdir(evaluate_module_path("lexical_diversity") + "/../..")
    assert evaluate.load("metrics/lexical_diversity").name == "lexical_diversity"


def test_response_set_scope(lexical):
    result = lexical.compute(predictions=SETS)
    expected = set_lexical_diversity(SETS)
    assert result["scope"] == "response_set"
    assert result["per_set"] == expected["per_set"]
    assert result["averaged_distinct_n"] == pytest.approx(
        (0.5 + 5 / 7 + 0.75 + 1.0 + 0.0) / 10 + 0.3
    )


def test_corpus_scope(lexical):
    result = lexical.compute(predictions=CORPUS)
    assert result["scope"] == "corpus"
    expected = corpus_lexical_diversity(CORPUS)
    for key in ("distinct_1", "entropy_2", "lf", "self_bleu", "num_tokens"):
        assert result[key] == expected[key]


def test_options_reach_the_metric(lexical):
    assert lexical.compute(predictions=SETS, max_n=1)["per_set"][1]["averaged_distinct_n"] == 1.0
    with pytest.raises(ValueError, match=r"^`lf_threshold` does not apply to sets-scope input"):
        lexical.compute(predictions=SETS, lf_threshold=5)


@pytest.mark.parametrize(
    "predictions, match",
    [
        (["a", ["b"]], "mixes nesting"),
        ([["a", "b"], "cd"], "mixes nesting"),
        ([["a", "b"], [1, 2]], r"predictions\[1\]\[0\]"),
        ([["only one"]], "at least 2"),
        ([], "non-empty"),
    ],
)
def test_bad_input_is_rejected_before_evaluate_coerces_it(lexical, predictions, match):
    with pytest.raises(ValueError, match=match):
        lexical.compute(predictions=predictions)


def test_references_are_rejected(lexical):
    with pytest.raises(ValueError, match="references"):
        lexical.compute(predictions=SETS, references=SETS)


def test_unknown_module_name():
    with pytest.raises(ValueError, match="lexical_diversity"):
        evaluate_module_path("no_such_metric")
