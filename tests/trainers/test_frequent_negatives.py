"""He & Glass (2020) frequent-response negatives: ratios by hand, strict threshold, the
gold + negative rows, and that those rows train through UnlikelihoodTrainer's negative term."""

import pytest

from dialeval.trainers import encode_dialogue, encode_unlikelihood_example
from dialeval.trainers.frequent_negatives import (
    FrequentNegative,
    frequent_negatives,
    negative_training_rows,
    response_ratios,
)

CONTEXTS = ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"]
# "i don't know." 5 of 10 (0.5), "ok" 2 of 10 (0.2, one written with extra spaces), 3 singletons (0.1)
GENERATIONS = [
    "i don't know.",
    "ok",
    "i don't know.",
    "yes, at noon.",
    "i  don't know.",
    "ok ",
    "i don't know.",
    "the red one.",
    "i don't know.",
    "we could go.",
]


def test_ratios_are_counts_over_the_generations():
    assert response_ratios(GENERATIONS) == pytest.approx(
        {
            "i don't know.": 0.5,
            "ok": 0.2,
            "yes, at noon.": 0.1,
            "the red one.": 0.1,
            "we could go.": 0.1,
        }
    )


def test_negatives_are_the_generations_above_r_thres_for_their_own_contexts():
    result = frequent_negatives(CONTEXTS, GENERATIONS, r_thres=0.1)
    assert [(n.context_index, n.context, n.response) for n in result.examples] == [
        (0, "c0", "i don't know."),
        (1, "c1", "ok"),
        (2, "c2", "i don't know."),
        (4, "c4", "i don't know."),
        (5, "c5", "ok"),
        (6, "c6", "i don't know."),
        (8, "c8", "i don't know."),
    ]
    assert result.share == pytest.approx(0.7)
    assert result.frequent == pytest.approx({"i don't know.": 0.5, "ok": 0.2})
    # strictly above: at 0.2 "ok" is not frequent (released: ratio > R_THRES)
    assert [
        n.context_index for n in frequent_negatives(CONTEXTS, GENERATIONS, r_thres=0.2).examples
    ] == [0, 2, 4, 6, 8]
    assert frequent_negatives(CONTEXTS, GENERATIONS, r_thres=0.5).examples == []


def test_rows_pair_every_gold_pair_with_a_cycled_negative():
    negatives = frequent_negatives(CONTEXTS, GENERATIONS, r_thres=0.2).examples  # 5 negatives
    pairs = [([f"gold context {i}"], f"gold {i}") for i in range(7)]
    rows = negative_training_rows(pairs, negatives, seed=3)
    assert [(row["context"], row["response"]) for row in rows] == pairs
    used = [row["negative_context"] for row in rows]
    assert sorted(used[:5]) == [
        "c0",
        "c2",
        "c4",
        "c6",
        "c8",
    ]  # each negative once before any repeats
    assert used[5:] == used[:2]
    assert all(row["negative_response"] == "i don't know." for row in rows)
    assert negative_training_rows(pairs, negatives, seed=3) == rows


def test_a_negative_is_encoded_with_its_own_context(tiny_tokenizer_path):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_tokenizer_path)
    example = encode_unlikelihood_example(
        tokenizer,
        "hi there!",
        "hello.",
        "i don't know.",
        False,
        64,
        negative_context="do you have any pets at home?",
    )
    negative = encode_dialogue(
        tokenizer, "do you have any pets at home?", "i don't know.", False, 64
    )
    assert example["negative_input_ids"] == negative["input_ids"]
    assert example["negative_labels"] == negative["labels"]
    assert (
        example["input_ids"]
        == encode_dialogue(tokenizer, "hi there!", "hello.", False, 64)["input_ids"]
    )


def test_raw_rows_train_each_negative_with_its_own_context(tiny_gpt2_path, tmp_path):
    import datasets
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from dialeval.trainers import UnlikelihoodConfig, UnlikelihoodTrainer

    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_path)
    negatives = frequent_negatives(
        ["do you have any pets at home?"] * 2, ["i don't know."] * 2, r_thres=0.1
    ).examples
    rows = negative_training_rows(
        [("hi there!", "hello."), ("what is your favourite book?", "mine is about the sea.")],
        negatives,
    )
    config = UnlikelihoodConfig(
        str(tmp_path / "nt"), negative_loss="negative_training", report_to="none", use_cpu=True
    )
    trainer = UnlikelihoodTrainer(
        AutoModelForCausalLM.from_pretrained(tiny_gpt2_path),
        config,
        train_dataset=datasets.Dataset.from_list(rows),
        processing_class=tokenizer,
    )
    negative = encode_dialogue(
        tokenizer,
        "do you have any pets at home?",
        "i don't know.",
        False,
        trainer.max_example_length,
    )
    assert trainer.train_dataset["negative_input_ids"] == [negative["input_ids"]] * 2
    assert (
        trainer.train_dataset["input_ids"][0]
        == encode_dialogue(tokenizer, "hi there!", "hello.", False, trainer.max_example_length)[
            "input_ids"
        ]
    )


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: frequent_negatives(CONTEXTS, GENERATIONS, r_thres=1.0), "r_thres"),
        (lambda: frequent_negatives(CONTEXTS[:3], GENERATIONS, r_thres=0.1), "contexts"),
        (lambda: frequent_negatives(CONTEXTS, [], r_thres=0.1), "generations"),
        (lambda: frequent_negatives(CONTEXTS, [1] * 10, r_thres=0.1), "generations"),
        (lambda: negative_training_rows([("c", "r")], []), "negatives"),
        (lambda: negative_training_rows([("c", "r")], ["i don't know."]), "FrequentNegative"),
        (
            lambda: negative_training_rows([("c", 1)], [FrequentNegative(0, "c", "x", 0.5)]),
            "pairs` item 0",
        ),
    ],
)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
