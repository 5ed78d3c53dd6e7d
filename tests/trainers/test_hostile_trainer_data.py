"""Hostile training data: every malformed row is a ValueError naming the dataset argument,
the row and the column when the dataset is prepared (trainers/example_checks.py), a column the
trainer drops is named (trainers/dropped_columns.py), and a gamma that shrinks DRESS's loss far
below the paper's range is said (trainers/dress_config.py)."""

import re
import warnings

import datasets
import numpy as np
import pytest
import torch
from test_dress_trainer import (
    CONTEXTS,
    TopicEmbedder,
    config,
    load_gpt2,
    responses,
    tokenized,
)
from test_trainer_inputs import dress, unlikelihood_config
from test_unlikelihood_trainer import dataset as unlikelihood_dataset
from transformers import AutoTokenizer

from dialeval.trainers import DialogueCollator, DRESSConfig, DRESSTrainer, UnlikelihoodTrainer
from dialeval.trainers.dress_config import MEAN_WEIGHT_FLOOR
from dialeval.trainers.example_checks import (
    check_example_columns,
    check_example_row,
    model_vocabulary_size,
)

VOCABULARY = 400  # tests/tiny_models.py's VOCAB_SIZE


@pytest.fixture(scope="module")
def tokenizer(tiny_gpt2_path):
    return AutoTokenizer.from_pretrained(tiny_gpt2_path)


def edit_row(data, row, column, edit):
    return data.map(
        lambda example, index: {
            column: edit(list(example[column])) if index == row else example[column]
        },
        with_indices=True,
    )


def test_the_vocabulary_is_the_models(tiny_gpt2_path):
    assert model_vocabulary_size(load_gpt2(tiny_gpt2_path)) == VOCABULARY


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda labels: labels[:-2],
            r"row 3: `labels` has \d+ tokens but `input_ids` has \d+ \(a causal LM's labels",
        ),
        (lambda labels: labels + [5], r"row 3: `labels` has \d+ tokens but `input_ids` has \d+"),
    ],
)
def test_causal_labels_of_another_length_than_the_input_ids_are_refused(
    tmp_path, tiny_gpt2_path, tokenizer, edit, message
):
    data = edit_row(tokenized(tokenizer, False, count=6), 3, "labels", edit)
    with pytest.raises(ValueError, match=rf"`train_dataset` {message}"):
        dress(tmp_path, tiny_gpt2_path, tokenizer, data)
    with pytest.raises(ValueError, match=rf"`eval_dataset` {message}"):
        dress(
            tmp_path,
            tiny_gpt2_path,
            tokenizer,
            tokenized(tokenizer, False, count=6),
            eval_dataset=data,
        )


def test_an_attention_mask_of_another_length_is_refused(tmp_path, tiny_gpt2_path, tokenizer):
    data = edit_row(
        tokenized(tokenizer, False, count=4), 1, "attention_mask", lambda mask: mask[:-1]
    )
    with pytest.raises(
        ValueError, match=r"`train_dataset` row 1: `attention_mask` has \d+ tokens but `input_ids`"
    ):
        dress(tmp_path, tiny_gpt2_path, tokenizer, data)


@pytest.mark.parametrize(
    ("column", "position", "value", "message"),
    [
        (
            "input_ids",
            -1,
            VOCABULARY,
            (
                r"`input_ids` holds 400 at position \d+, outside the model's vocabulary of 400 token "
                r"ids \(0 \.\. 399\)"
            ),
        ),
        (
            "input_ids",
            0,
            -5,
            r"`input_ids` holds -5 at position 0, outside the model's vocabulary of 400",
        ),
        (
            "labels",
            -1,
            10**6,
            (
                r"`labels` holds 1000000 at position \d+, outside the model's vocabulary of 400 token ids "
                r"\(0 \.\. 399\) or -100"
            ),
        ),
        ("labels", -1, -7, r"`labels` holds -7 at position"),
    ],
)
def test_token_ids_outside_the_vocabulary_are_refused_naming_row_and_column(
    tmp_path, tiny_gpt2_path, tokenizer, column, position, value, message
):
    def edit(ids):
        ids[position] = value
        return ids

    data = edit_row(tokenized(tokenizer, False, count=5), 2, column, edit)
    with pytest.raises(ValueError, match=rf"`train_dataset` row 2: {message}"):
        dress(tmp_path, tiny_gpt2_path, tokenizer, data)


def test_unlikelihood_checks_the_negatives_too(tmp_path, tiny_gpt2_path, tokenizer):
    gold = unlikelihood_dataset(tokenizer, False)

    def out_of_vocabulary(ids):
        return ids[:-1] + [VOCABULARY + 3]

    for column, message in (
        ("negative_input_ids", r"`negative_input_ids` holds 403"),
        ("negative_labels", r"`negative_labels` holds 403"),
    ):
        with pytest.raises(ValueError, match=rf"`train_dataset` row 1: {message}"):
            UnlikelihoodTrainer(
                load_gpt2(tiny_gpt2_path),
                unlikelihood_config(tmp_path),
                train_dataset=edit_row(gold, 1, column, out_of_vocabulary),
                processing_class=tokenizer,
            )
    short = edit_row(gold, 0, "negative_labels", lambda labels: labels[:-1])
    with pytest.raises(
        ValueError, match=r"row 0: `negative_labels` has \d+ tokens but `negative_input_ids`"
    ):
        UnlikelihoodTrainer(
            load_gpt2(tiny_gpt2_path),
            unlikelihood_config(tmp_path),
            train_dataset=short,
            processing_class=tokenizer,
        )


def test_streams_and_torch_datasets_are_checked_as_their_rows_are_read(
    tmp_path, tiny_gpt2_path, tokenizer
):
    rows = list(unlikelihood_dataset(tokenizer, False))
    rows[1] = {**rows[1], "input_ids": [-1] + rows[1]["input_ids"][1:]}
    stream = datasets.IterableDataset.from_generator(lambda: iter(rows))
    trainer = UnlikelihoodTrainer(
        load_gpt2(tiny_gpt2_path),
        unlikelihood_config(tmp_path, max_steps=2),
        train_dataset=stream,
        processing_class=tokenizer,
    )
    with pytest.raises(
        ValueError, match=r"`train_dataset` row 1: `input_ids` holds -1 at position 0"
    ):
        trainer.train()

    class Rows(torch.utils.data.Dataset):
        def __len__(self):
            return len(rows)

        def __getitem__(self, index):
            return rows[index]

    trainer = UnlikelihoodTrainer(
        load_gpt2(tiny_gpt2_path),
        unlikelihood_config(tmp_path),
        processing_class=tokenizer,
        train_dataset=tokenized_unlikelihood(tokenizer),
        eval_dataset=Rows(),
    )
    with pytest.raises(ValueError, match=r"`eval_dataset` row 1: `input_ids` holds -1"):
        trainer.evaluate()


def tokenized_unlikelihood(tokenizer):
    return unlikelihood_dataset(tokenizer, False)


def test_ids_that_are_not_integer_lists_are_refused(tmp_path, tiny_gpt2_path, tokenizer):
    data = tokenized(tokenizer, False, count=3)
    floats = data.cast_column("input_ids", datasets.List(datasets.Value("float64")))
    with pytest.raises(
        ValueError,
        match=r"`train_dataset` column `input_ids` must hold lists of integer token ids, "
        r"its type is list<.*double",
    ):
        dress(tmp_path, tiny_gpt2_path, tokenizer, floats)
    with pytest.raises(
        ValueError, match=r"row 0: `labels` holds 1.5 at position 0, not an integer token id"
    ):
        check_example_row(
            {"input_ids": [1, 2], "labels": [1.5, 2]},
            0,
            "train_dataset",
            causal=True,
            vocabulary_size=VOCABULARY,
        )


def test_the_column_check_finds_the_first_bad_row_of_a_later_slice(monkeypatch):
    from dialeval.trainers import example_checks

    monkeypatch.setattr(example_checks, "ROWS_PER_SLICE", 3)
    rows = [{"input_ids": [1, 2, 3], "labels": [-100, 2, 3]} for _ in range(10)]
    rows[7]["labels"] = [-100, 2, 400]
    rows[8]["labels"] = [-100, 2]
    data = datasets.Dataset.from_list(rows)
    with pytest.raises(ValueError, match=r"`data` row 7: `labels` holds 400 at position 2"):
        check_example_columns(data, "data", causal=True, vocabulary_size=VOCABULARY)
    check_example_columns(data.select(range(7)), "data", causal=True, vocabulary_size=VOCABULARY)
    with pytest.raises(
        ValueError, match=r"`data` row 1: `labels` has 2 tokens but `input_ids` has 3"
    ):
        check_example_columns(
            data.select([0, 8, 1]), "data", causal=True, vocabulary_size=VOCABULARY
        )
    # an encoder-decoder's labels are the decoder's sequence: any length
    check_example_columns(data.select([0, 8, 1]), "data", causal=False, vocabulary_size=VOCABULARY)


def test_a_dropped_column_is_named_never_silent(tmp_path, tiny_gpt2_path, tokenizer):
    """Trainer drops a column its model does not take and logs it at info level: here it is a warning."""
    data = tokenized(tokenizer, False, count=4).add_column("score", [float("nan")] * 4)
    trainer = dress(
        tmp_path, tiny_gpt2_path, tokenizer, data, args=dict(per_device_train_batch_size=4)
    )
    with pytest.warns(
        UserWarning,
        match=r"`train_dataset` has columns \['score'\] that neither the model's forward nor "
        r"the trainer reads: they are dropped",
    ):
        batch = next(iter(trainer.get_train_dataloader()))
    assert set(batch) == {"input_ids", "attention_mask", "labels", "dress_weight"}
    # the documented text column `response` is read, not warned about
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clean = dress(tmp_path, tiny_gpt2_path, tokenizer, tokenized(tokenizer, False, count=4))
        next(iter(clean.get_train_dataloader()))
    kept = dress(
        tmp_path,
        tiny_gpt2_path,
        tokenizer,
        data.remove_columns("response"),
        args=dict(per_device_train_batch_size=4, remove_unused_columns=False),
    )
    with pytest.raises(ValueError, match="column 'score' that DialogueCollator does not know"):
        next(iter(kept.get_train_dataloader()))


def test_a_dropped_column_of_a_torch_dataset_is_named(tmp_path, tiny_gpt2_path, tokenizer):
    rows = [{**row, "note": "x"} for row in tokenized_unlikelihood(tokenizer)]
    trainer = UnlikelihoodTrainer(
        load_gpt2(tiny_gpt2_path),
        unlikelihood_config(tmp_path),
        processing_class=tokenizer,
        train_dataset=tokenized_unlikelihood(tokenizer),
        eval_dataset=rows,
    )
    with pytest.warns(UserWarning, match=r"`eval_dataset` has columns \['note'\]"):
        trainer.evaluate()


def test_lone_surrogates_name_the_row_and_column(tmp_path, tiny_gpt2_path, tokenizer):
    rows = [
        {"context": "hi there", "response": f"t{index % 3} fine reply {index}"}
        for index in range(6)
    ]
    rows[2] = {"context": ["hello", "how are \ud800 you"], "response": "t0 fine"}
    with pytest.raises(
        ValueError,
        match=r"`train_dataset` row 2: `context`\[1\] holds a lone surrogate \(U\+D800\) at "
        r"character 8",
    ):
        dress(tmp_path, tiny_gpt2_path, tokenizer, rows)

    class Raw(torch.utils.data.Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, index):
            return {
                "context": "hi",
                "response": "fine \udcff" if index == 1 else "fine",
                "negative_response": "no",
            }

    trainer = UnlikelihoodTrainer(
        load_gpt2(tiny_gpt2_path),
        unlikelihood_config(tmp_path, max_steps=1),
        train_dataset=Raw(),
        processing_class=tokenizer,
    )
    with pytest.raises(
        ValueError, match=r"`train_dataset` row 1: `response` holds a lone surrogate \(U\+DCFF\)"
    ):
        trainer.train()


def test_rows_that_make_no_table_are_refused_naming_the_argument(
    tmp_path, tiny_gpt2_path, tokenizer
):
    rows = [{"context": "hi", "response": "t0 fine"}, {"context": 3.5, "response": "t1 fine"}]
    with pytest.raises(ValueError, match=r"`train_dataset` rows do not make one table"):
        dress(tmp_path, tiny_gpt2_path, tokenizer, rows)


def test_a_gamma_that_shrinks_the_loss_far_below_the_papers_range_is_said(
    tmp_path, tiny_gpt2_path, tokenizer
):
    """DRESSConfig(gamma=30) with 5 clusters: Eq. 5's unnormalized weights scale the loss by ~0.8^30."""
    assert MEAN_WEIGHT_FLOOR == pytest.approx(0.95**100)
    with pytest.warns(
        UserWarning,
        match=r"`gamma`=30 with `num_clusters`=5: .* is 0.0012, so the gold loss and its "
        r"gradient shrink about 808-fold .* gamma <= 23 stays within",
    ):
        DRESSConfig(output_dir=str(tmp_path), report_to="none", gamma=30, num_clusters=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DRESSConfig(output_dir=str(tmp_path), report_to="none")  # the paper's gamma 30, k 20
        DRESSConfig(output_dir=str(tmp_path), report_to="none", gamma=100.0)  # Table 5's strongest
        DRESSConfig(output_dir=str(tmp_path), report_to="none", gamma=2.0, num_clusters=3)
    # The trainer says it with the actual clusters: shares 0.6 / 0.3 / 0.1 (test_dress_trainer's topics).
    with pytest.warns(UserWarning):
        args = config(tmp_path, gamma=50.0)
    with pytest.warns(
        UserWarning, match=r"the mean Eq. 5 weight of the training responses' clusters is 0.00052"
    ):
        trainer = DRESSTrainer(
            load_gpt2(tiny_gpt2_path),
            args,
            train_dataset=tokenized(tokenizer, False),
            processing_class=tokenizer,
            embedder=TopicEmbedder(),
        )
    assert trainer.mean_gold_weight == pytest.approx(0.6 * 0.4**50 + 0.3 * 0.7**50 + 0.1 * 0.9**50)
    assert trainer.mean_gold_weight == pytest.approx(
        np.mean(trainer.train_dataset["dress_weight"]), rel=1e-6
    )


def test_the_default_collator_still_refuses_what_it_cannot_collate():
    with pytest.raises(ValueError, match="column 'score'"):
        DialogueCollator(0)([{"input_ids": [1], "labels": [1], "score": float("nan")}])


def test_encode_dialogue_names_the_turn_with_a_lone_surrogate(tokenizer):
    from dialeval.trainers import encode_dialogue

    with pytest.raises(
        ValueError, match=r"`context\[1\]` holds a lone surrogate \(U\+D800\) at character 3"
    ):
        encode_dialogue(tokenizer, ["hi", "how\ud800"], "fine", False)
    with pytest.raises(ValueError, match=r"`response` holds a lone surrogate \(U\+DC80\)"):
        encode_dialogue(tokenizer, "hi", "\udc80", True)


def raw_unlikelihood_rows(**changes):
    rows = [
        {"context": context, "response": gold, "negative_response": negative}
        for context, gold, negative in [
            ("do you like dogs?", "yes, i love dogs.", "no."),
            ("any plans?", "i will visit my parents.", "no."),
            ("is it sunny?", "yes, and warm.", "no."),
        ]
    ]
    rows[1].update(changes)
    return rows


@pytest.mark.parametrize(
    ("column", "text"), [("response", ""), ("negative_response", "  "), ("response", "\n")]
)
def test_unlikelihood_refuses_an_empty_response_or_negative(
    tmp_path, tiny_gpt2_path, tokenizer, column, text
):
    """DRESS refuses an empty response (it has no cluster); unlikelihood would train the eos token
    alone, or push it down: refused the same, naming the row and column."""
    rows = raw_unlikelihood_rows(**{column: text})
    message = rf"`train_dataset` row 1: `{column}` is empty \({re.escape(repr(text))}\): it has no"
    with pytest.raises(ValueError, match=message):
        UnlikelihoodTrainer(
            load_gpt2(tiny_gpt2_path),
            unlikelihood_config(tmp_path),
            train_dataset=datasets.Dataset.from_list(rows),
            processing_class=tokenizer,
        )
    streamed = UnlikelihoodTrainer(
        load_gpt2(tiny_gpt2_path),
        unlikelihood_config(tmp_path, max_steps=1, per_device_train_batch_size=3),
        train_dataset=datasets.Dataset.from_list(rows).to_iterable_dataset(),
        processing_class=tokenizer,
    )
    with pytest.raises(ValueError, match=message):
        streamed.train()


def test_a_column_beside_raw_text_is_named_when_dropped(tmp_path, tiny_gpt2_path, tokenizer):
    """Tokenizing raw text keeps the other columns, so Trainer's column removal names them as it
    names a tokenized dataset's."""
    rows = [
        {"context": context, "response": response, "score": float("nan")}
        for context, response in zip(CONTEXTS, responses())
    ]
    trainer = dress(tmp_path, tiny_gpt2_path, tokenizer, datasets.Dataset.from_list(rows))
    with pytest.warns(UserWarning, match=r"`train_dataset` has columns \['score'\] that neither"):
        batch = next(iter(trainer.get_train_dataloader()))
    assert set(batch) == {"input_ids", "attention_mask", "labels", "dress_weight"}
    trainer = UnlikelihoodTrainer(
        load_gpt2(tiny_gpt2_path),
        unlikelihood_config(tmp_path),
        train_dataset=[{**row, "note": "x"} for row in raw_unlikelihood_rows()],
        processing_class=tokenizer,
    )
    with pytest.warns(UserWarning, match=r"`train_dataset` has columns \['note'\]"):
        next(iter(trainer.get_train_dataloader()))


@pytest.mark.parametrize("value", ["no", 1, None, np.int64(0)])
def test_negative_training_must_be_a_bool(tmp_path, value):
    with pytest.raises(ValueError, match=r"`negative_training` must be True or False"):
        DRESSConfig(output_dir=str(tmp_path), report_to="none", negative_training=value)
    assert (
        DRESSConfig(
            output_dir=str(tmp_path), report_to="none", negative_training=np.bool_(False)
        ).negative_training
        is False
    )


@pytest.mark.parametrize("value", [3, "", ["response"]])
def test_response_text_column_must_be_a_column_name(tmp_path, value):
    with pytest.raises(ValueError, match=r"`response_text_column` must be None or a column name"):
        DRESSConfig(output_dir=str(tmp_path), report_to="none", response_text_column=value)
