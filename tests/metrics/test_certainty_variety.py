"""Certainty / Variety (Sato et al. 2022, §2, App. C) on hand-made n-best lists, the yes/no
classifiers (prefix rule, tiny RoBERTa) and the evaluate module."""

from __future__ import annotations

import math

import evaluate
import numpy as np
import pytest

from dialeval.labels import answer_of_label
from dialeval.metrics import evaluate_module_path
from dialeval.metrics.nbest_contradiction.certainty_variety import (
    certainty_variety,
    nbest_contradiction,
)
from dialeval.metrics.nbest_contradiction.yes_no import (
    ModelYesNoClassifier,
    PrefixYesNoClassifier,
    classify_nbest_lists,
    prefix_answer,
)


def test_all_contradictory_list_counts_against_certainty_and_is_not_in_variety():
    result = certainty_variety([["no", "no", "no"], ["yes", "no"]], ["yes", "yes"])
    assert result["certainty"] == 0.5
    assert result["variety"] == 0.5  # only the second list is in Q'
    assert (
        result["num_analyzed"],
        result["num_excluded"],
        result["num_with_noncontradictory"],
    ) == (2, 0, 1)


def test_only_contradictory_lists_leave_variety_undefined():
    result = certainty_variety([["no", "no"]], ["yes"])
    assert result["certainty"] == 0.0 and math.isnan(result["variety"])


def test_mixed_lists_by_the_formulas():
    answers = [["yes", "no", "no"], ["no", "no"], ["yes", "yes"], ["no", "yes", "no", "no"]]
    references = ["yes", "yes", "yes", "no"]
    result = certainty_variety(answers, references)
    # Q' = {0, 2, 3}; cnt/|f| = 1/3, 1, 3/4.
    assert result["certainty"] == pytest.approx(3 / 4)
    assert result["variety"] == pytest.approx((1 / 3 + 1 + 3 / 4) / 3)
    assert [item["num_noncontradictory"] for item in result["per_input"]] == [1, 0, 2, 3]


def test_lists_with_an_ambiguous_response_are_excluded():
    answers = [["yes", "ambiguous"], ["yes", "no"], ["ambiguous", "ambiguous"]]
    result = certainty_variety(answers, ["yes", "yes", "no"])
    assert (result["num_inputs"], result["num_analyzed"], result["num_excluded"]) == (3, 1, 2)
    assert result["certainty"] == 1.0 and result["variety"] == 0.5
    assert [item["excluded"] for item in result["per_input"]] == [True, False, True]
    everything_ambiguous = certainty_variety([["ambiguous"]], ["yes"])
    assert (
        math.isnan(everything_ambiguous["certainty"]) and everything_ambiguous["num_analyzed"] == 0
    )


def test_per_type_figures():
    answers = [["yes", "yes"], ["no", "yes"], ["yes", "yes"], ["no", "ambiguous"]]
    result = certainty_variety(
        answers, ["yes", "yes", "no", "no"], input_types=["ENTQ", "ENTQ", "CNTQ", "CNTQ"]
    )
    assert result["per_type"]["ENTQ"]["certainty"] == 1.0
    assert result["per_type"]["ENTQ"]["variety"] == pytest.approx(0.75)
    assert (
        result["per_type"]["CNTQ"]["certainty"] == 0.0
        and result["per_type"]["CNTQ"]["num_excluded"] == 1
    )
    assert result["certainty"] == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("answers", "references", "types", "message"),
    [
        ([["yes", "maybe"]], ["yes"], None, r"`answers\[0\]\[1\]` must be one of"),
        ([["yes"]], ["Yes"], None, r"`references\[0\]` must be 'yes' or 'no'"),
        ([["yes"], ["no"]], ["yes"], None, "one expected answer per input: 2 inputs, got 1"),
        ([[]], ["yes"], None, r"`answers\[0\]` must be a non-empty list"),
        ([["yes"]], ["yes"], ["ENTQ", "CNTQ"], "`input_types` must be None or a list of 1"),
    ],
)
def test_bad_input_is_a_value_error(answers, references, types, message):
    with pytest.raises(ValueError, match=message):
        certainty_variety(answers, references, types)


@pytest.mark.parametrize(
    ("response", "answer"),
    [
        ("Yes, I am.", "yes"),
        ("yeah sure", "yes"),
        ('"Yep!"', "yes"),
        ("No way.", "no"),
        ("Nope.", "no"),
        ("nah", "no"),
        ("I said no.", "ambiguous"),
        ("Why not?", "ambiguous"),
        ("Nobody knows.", "ambiguous"),
        ("Yesterday I was.", "ambiguous"),
        ("", "ambiguous"),
    ],
)
def test_prefix_rule(response, answer):
    assert prefix_answer(response) == answer


def test_circa_label_names_map_to_answers():
    assert answer_of_label("Probably yes / sometimes yes") == "yes"
    assert answer_of_label("Yes, subject to some conditions") == "yes"
    assert answer_of_label("probably no") == "no"
    assert answer_of_label("In the middle, neither yes nor no") == "ambiguous"
    assert answer_of_label("I am not sure how X will interpret Y\u2019s answer") == "ambiguous"
    with pytest.raises(ValueError, match="label_map"):
        answer_of_label("LABEL_0")


def test_prefix_classifier_end_to_end():
    predictions = [["Yes, I am.", "No.", "Why not?"], ["No, I'm not.", "Yes."], ["Yeah.", "Nope."]]
    result = nbest_contradiction(predictions, ["yes", "no", "no"], "prefix")
    # Input 0 holds an ambiguous response ("Why not?"): excluded. Inputs 1, 2: one of two each.
    assert (result["num_analyzed"], result["num_excluded"]) == (2, 1)
    assert result["certainty"] == 1.0 and result["variety"] == 0.5
    assert result["per_input"][0]["answers"] == ["yes", "no", "ambiguous"]
    assert result["classifier"] == "prefix"


def test_classifier_is_required():
    with pytest.raises(ValueError, match="`classifier` is required"):
        nbest_contradiction([["Yes."]], ["yes"], None)


def test_model_classifier_maps_argmax_labels(tiny_roberta_yes_no_path):
    classifier = ModelYesNoClassifier(tiny_roberta_yes_no_path, device="cpu", batch_size=2)
    responses = [
        "Yes, I am.",
        "No.",
        "I don't know what to say about that.",
        "Sure, that sounds nice.",
        "No.",
    ]
    probabilities = classifier.probabilities(responses)
    assert probabilities.shape == (5, 3) and np.allclose(probabilities.sum(axis=1), 1.0)
    labels = ["yes", "no", "ambiguous"]
    assert classifier.classify(responses) == [labels[i] for i in probabilities.argmax(axis=1)]
    # Batched with dynamic padding = one response per forward.
    one_by_one = ModelYesNoClassifier(
        tiny_roberta_yes_no_path, device="cpu", batch_size=1
    ).probabilities(responses)
    assert np.allclose(probabilities, one_by_one, atol=1e-5)


def test_model_classifier_through_the_metric(tiny_roberta_yes_no_path):
    predictions = [
        ["Yes, I am.", "No."],
        ["I love sunny days.", "What are you going to cook?", "Nope."],
    ]
    classifier = ModelYesNoClassifier(tiny_roberta_yes_no_path, device="cpu")
    expected = certainty_variety(classify_nbest_lists(classifier, predictions), ["yes", "no"])
    result = nbest_contradiction(predictions, ["yes", "no"], tiny_roberta_yes_no_path, device="cpu")
    for key in ("certainty", "variety", "num_analyzed", "num_excluded"):
        assert (result[key] == expected[key]) or (
            math.isnan(result[key]) and math.isnan(expected[key])
        )


def test_circa_labelled_model_and_label_map(tmp_path, tiny_tokenizer_path):
    from tiny_models import save_tiny_roberta_yes_no

    circa = {
        0: "Yes",
        1: "No",
        2: "Probably yes / sometimes yes",
        3: "Probably no",
        4: "Yes, subject to some conditions",
        5: "In the middle, neither yes nor no",
        6: "I am not sure how X will interpret Y\u2019s answer",
    }
    path = save_tiny_roberta_yes_no(tmp_path / "circa7", tiny_tokenizer_path, labels=circa)
    assert ModelYesNoClassifier(path, device="cpu").answers == [
        "yes",
        "no",
        "yes",
        "no",
        "yes",
        "ambiguous",
        "ambiguous",
    ]
    generic = save_tiny_roberta_yes_no(
        tmp_path / "generic", tiny_tokenizer_path, labels={0: "LABEL_0", 1: "LABEL_1"}
    )
    with pytest.raises(ValueError, match="label_map"):
        ModelYesNoClassifier(generic, device="cpu")
    mapped = ModelYesNoClassifier(
        generic, device="cpu", label_map={"LABEL_0": "no", "LABEL_1": "yes"}
    )
    assert mapped.answers == ["no", "yes"]


def test_question_answer_classifier_needs_questions(tmp_path, tiny_tokenizer_path):
    from tiny_models import save_tiny_roberta_yes_no
    from transformers import AutoConfig

    path = save_tiny_roberta_yes_no(tmp_path / "qa", tiny_tokenizer_path)
    config = AutoConfig.from_pretrained(path)
    config.yes_no_input = "question_answer"
    config.save_pretrained(path)
    classifier = ModelYesNoClassifier(path, device="cpu")
    with pytest.raises(ValueError, match="pass `questions`"):
        classifier.classify(["Yes."])
    answers = classify_nbest_lists(classifier, [["Yes.", "No."]], questions=["Are you in Ohio?"])
    assert len(answers[0]) == 2 and set(answers[0]) <= {"yes", "no", "ambiguous"}


def test_evaluate_module():
    metric = evaluate.load(evaluate_module_path("nbest_contradiction"))
    result = metric.compute(
        predictions=[["Yes, I am.", "No."], ["No, never.", "No!"], ["Yes.", "Yeah."]],
        references=["yes", "no", "no"],
        classifier="prefix",
        input_types=["ENTQ", "CNTQ", "CNTQ"],
    )
    assert result["certainty"] == pytest.approx(2 / 3) and result["variety"] == pytest.approx(0.75)
    assert result["per_type"]["CNTQ"]["certainty"] == 0.5
    with pytest.raises(ValueError, match="`references` must be a list of strings"):
        metric.compute(predictions=[["Yes."]], references=[1], classifier="prefix")
    with pytest.raises(ValueError, match=r"`predictions\[0\]`"):
        metric.compute(predictions=["Yes."], references=["yes"], classifier="prefix")


def test_prefix_classifier_object_passes_through():
    classifier = PrefixYesNoClassifier()
    assert nbest_contradiction([["Yes."]], ["yes"], classifier)["certainty"] == 1.0
