"""TRL's dataset formats (trainers/chat_formats.py): chat models trained as SFTTrainer trains them.

A tiny chat-templated decoder: the tiny GPT-2 whose tokenizer gets a small Jinja chat template,
one with ``{% generation %}`` markers (the assistant mask comes from transformers) and the same
template without them (the mask comes from rendering prefixes). The labels are checked against
masks written by hand, and each trainer takes one training step on each format.
"""

import copy

import datasets
import numpy as np
import pytest
import torch
from test_dress_trainer import CONTEXTS, TopicEmbedder, config, load_gpt2, responses
from test_trainer_inputs import unlikelihood_config
from transformers import AutoTokenizer

from dialeval.trainers import DRESSTrainer, UnlikelihoodTrainer
from dialeval.trainers.chat_formats import (
    encode_messages,
    encode_prompt_completion,
    fit_to_length,
    tokenize_chat_dataset,
)

PLAIN_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}</s>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
MARKED_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{% if m['role'] == 'assistant' %}"
    "{% generation %}{{ m['content'] }}</s>{% endgeneration %}{% else %}{{ m['content'] }}</s>{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
TEMPLATES = {"plain": PLAIN_TEMPLATE, "generation_markers": MARKED_TEMPLATE}
CONVERSATION = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "yes."},
    {"role": "user", "content": "cats?"},
    {"role": "assistant", "content": "no."},
]


def chat_tokenizer(path, template):
    tokenizer = AutoTokenizer.from_pretrained(path)
    tokenizer.chat_template = template
    return tokenizer


@pytest.fixture(scope="module", params=sorted(TEMPLATES))
def tokenizer(request, tiny_gpt2_path):
    return chat_tokenizer(tiny_gpt2_path, TEMPLATES[request.param])


def pieces(tokenizer, parts):
    """(ids, labels) of text pieces tokenized one by one: (text, is_target)."""
    ids, labels = [], []
    for text, target in parts:
        piece = tokenizer(text, add_special_tokens=False)["input_ids"]
        ids += piece
        labels += piece if target else [-100] * len(piece)
    return ids, labels


def test_messages_labels_cover_the_assistant_turns_only(tokenizer):
    expected_ids, expected_labels = pieces(
        tokenizer,
        [
            ("<|user|>\nhi</s><|assistant|>\n", False),
            ("yes.</s>", True),
            ("<|user|>\ncats?</s><|assistant|>\n", False),
            ("no.</s>", True),
        ],
    )
    row = encode_messages(tokenizer, CONVERSATION, max_length=128)
    # the pieces tokenize as the whole (no merge across them)
    assert row["input_ids"] == expected_ids
    assert row["labels"] == expected_labels
    assert (
        tokenizer.decode([token for token in row["labels"] if token != -100]) == "yes.</s>no.</s>"
    )
    assert row["attention_mask"] == [1] * len(expected_ids)


def test_prefix_rendering_agrees_with_the_generation_markers(tiny_gpt2_path):
    marked = chat_tokenizer(tiny_gpt2_path, MARKED_TEMPLATE)
    transformers_mask = marked.apply_chat_template(
        CONVERSATION, return_dict=True, return_assistant_tokens_mask=True
    )
    plain = encode_messages(
        chat_tokenizer(tiny_gpt2_path, PLAIN_TEMPLATE), CONVERSATION, max_length=128
    )
    assert plain["input_ids"] == transformers_mask["input_ids"]
    assert [int(label != -100) for label in plain["labels"]] == transformers_mask["assistant_masks"]


def test_standard_prompt_completion_labels_the_completion_and_adds_eos(tokenizer):
    row = encode_prompt_completion(tokenizer, "Q: hi\nA:", " yes.", False, max_length=128)
    prompt_ids = tokenizer("Q: hi\nA:")["input_ids"]
    completion_ids = tokenizer(" yes.", add_special_tokens=False)["input_ids"] + [
        tokenizer.eos_token_id
    ]
    assert row["input_ids"] == prompt_ids + completion_ids
    assert row["labels"] == [-100] * len(prompt_ids) + completion_ids
    # a completion already ending with eos gets none added
    assert (
        encode_prompt_completion(tokenizer, "Q: hi\nA:", " yes.</s>", False, max_length=128) == row
    )


def test_conversational_prompt_completion_labels_the_completion(tokenizer):
    row = encode_prompt_completion(
        tokenizer, CONVERSATION[:3], CONVERSATION[3:], False, max_length=128
    )
    expected_ids, expected_labels = pieces(
        tokenizer,
        [
            ("<|user|>\nhi</s><|assistant|>\nyes.</s><|user|>\ncats?</s><|assistant|>\n", False),
            ("no.</s>", True),
        ],
    )
    assert (row["input_ids"], row["labels"]) == (expected_ids, expected_labels)
    # a single-turn conversation: `messages` and prompt / completion give the same example
    assert encode_prompt_completion(
        tokenizer, CONVERSATION[:1], CONVERSATION[1:2], False, 128
    ) == encode_messages(tokenizer, CONVERSATION[:2], 128)


def test_truncation_keeps_the_prompts_end_and_the_targets_start():
    ids = list(range(10))
    labels = [-100] * 6 + ids[6:]
    assert fit_to_length(ids, labels, 6) == (
        ids[3:9],
        [-100] * 3 + ids[6:9],
    )  # prompt keeps 6 // 2 = 3
    assert fit_to_length(ids, labels, 8) == (
        ids[2:10],
        [-100] * 4 + ids[6:],
    )  # the whole target fits
    assert fit_to_length(ids, labels, 10) == (ids, labels)


def test_a_template_that_rewrites_earlier_turns_is_refused(tiny_gpt2_path):
    # renders only the last message's role: earlier turns change once a message follows
    rewriting = chat_tokenizer(
        tiny_gpt2_path,
        "{% for m in messages %}{% if loop.last %}<|{{ m['role'] }}|>{% endif %}"
        "{{ m['content'] }}</s>{% endfor %}",
    )
    with pytest.raises(ValueError, match="generation %}"):
        encode_messages(rewriting, CONVERSATION, 128)
    with pytest.raises(ValueError, match="no assistant turn"):
        encode_messages(chat_tokenizer(tiny_gpt2_path, PLAIN_TEMPLATE), CONVERSATION[:1], 128)


def test_refusals_name_the_argument(tiny_gpt2_path):
    plain = AutoTokenizer.from_pretrained(tiny_gpt2_path)
    messages = datasets.Dataset.from_dict({"messages": [CONVERSATION]})
    with pytest.raises(
        ValueError,
        match="`train_dataset` is conversational but `processing_class` has no chat_template",
    ):
        tokenize_chat_dataset(
            messages,
            "train_dataset",
            plain,
            is_encoder_decoder=False,
            max_length=64,
            with_negative=False,
        )
    with pytest.raises(
        ValueError,
        match="`train_dataset` has TRL's `messages` format, with no negative.*`rejected`",
    ):
        tokenize_chat_dataset(
            messages,
            "train_dataset",
            plain,
            is_encoder_decoder=False,
            max_length=64,
            with_negative=True,
        )
    chat = chat_tokenizer(tiny_gpt2_path, PLAIN_TEMPLATE)
    no_assistant = datasets.Dataset.from_dict({"messages": [CONVERSATION, CONVERSATION[:1]]})
    with pytest.raises(
        ValueError, match="`eval_dataset` row 1: the conversation has no assistant turn"
    ):
        tokenize_chat_dataset(
            no_assistant,
            "eval_dataset",
            chat,
            is_encoder_decoder=False,
            max_length=64,
            with_negative=False,
        )
    preference = datasets.Dataset.from_dict({"prompt": ["a"], "chosen": [" b"], "rejected": [" c"]})
    with pytest.raises(
        ValueError, match="preference format, but this trainer trains on no negative"
    ):
        tokenize_chat_dataset(
            preference,
            "train_dataset",
            chat,
            is_encoder_decoder=False,
            max_length=64,
            with_negative=False,
        )


# -- one training step of each trainer on each format ---------------------------------------------


def dress_rows(data_format):
    """The DRESS test's contexts and "t<topic> ..." responses in a TRL format."""
    pairs = list(zip(CONTEXTS, responses()))
    if data_format == "standard_prompt_completion":
        return {
            "prompt": [f"Q: {c}\nA:" for c, _ in pairs],
            "completion": [f" {r}" for _, r in pairs],
        }
    if data_format == "conversational_prompt_completion":
        return {
            "prompt": [[{"role": "user", "content": c}] for c, _ in pairs],
            "completion": [[{"role": "assistant", "content": r}] for _, r in pairs],
        }
    return {
        "messages": [
            [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": c},
                {"role": "assistant", "content": r},
            ]
            for c, r in pairs
        ]
    }


@pytest.mark.parametrize(
    "data_format", ["messages", "standard_prompt_completion", "conversational_prompt_completion"]
)
def test_dress_trains_on_trl_formats(tmp_path, tiny_gpt2_path, tokenizer, data_format):
    caller_tokenizer = copy.deepcopy(tokenizer)
    data = datasets.Dataset.from_dict(dress_rows(data_format))
    trainer = DRESSTrainer(
        load_gpt2(tiny_gpt2_path),
        config(
            tmp_path,
            max_length=64,
            max_steps=1,
            per_device_train_batch_size=2,
            negative_contexts_per_cycle=2,
            negative_generation_batch_size=2,
        ),
        train_dataset=data,
        eval_dataset=data.select(range(2)),
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
    )
    # the clustered texts are the responses, so the weights are those of the raw-text test
    assert trainer.train_response_texts == responses()
    assert sorted(trainer.training_cluster_distribution.round(6).tolist()) == [0.1, 0.3, 0.6]
    for row, response in zip(trainer.train_dataset, responses()):
        targets = tokenizer.decode([token for token in row["labels"] if token != -100])
        assert targets.strip() == response + "</s>"
        start = next(index for index, label in enumerate(row["labels"]) if label != -100)
        # what negative training generates from
        context = tokenizer.decode(row["input_ids"][:start])
        assert context.endswith(
            "<|assistant|>\n" if data_format != "standard_prompt_completion" else "A:"
        )
    trainer.train()
    assert trainer.negative_cycles and trainer.negative_cycles[0]["num_generated"] == 2
    assert np.isfinite(trainer.evaluate()["eval_loss"])
    assert (
        "assistant turns" in trainer.model_card(None).text
        if data_format == "messages"
        else "on the completion only" in trainer.model_card(None).text
    )
    # the caller's tokenizer is only read
    assert tokenizer.chat_template == caller_tokenizer.chat_template and len(tokenizer) == len(
        caller_tokenizer
    )
    assert tokenizer.init_kwargs == caller_tokenizer.init_kwargs


PREFERENCE = [
    ("do you like dogs?", "yes, i love dogs.", "no."),
    ("any plans?", "i will visit my parents.", "no."),
]


def preference_rows(data_format):
    if data_format == "standard":
        return {
            "prompt": [f"Q: {p}\nA:" for p, _, _ in PREFERENCE],
            "chosen": [f" {c}" for _, c, _ in PREFERENCE],
            "rejected": [f" {r}" for _, _, r in PREFERENCE],
        }
    user = [[{"role": "user", "content": p}] for p, _, _ in PREFERENCE]
    chosen = [[{"role": "assistant", "content": c}] for _, c, _ in PREFERENCE]
    rejected = [[{"role": "assistant", "content": r}] for _, _, r in PREFERENCE]
    if data_format == "conversational":
        return {"prompt": user, "chosen": chosen, "rejected": rejected}
    return {
        "chosen": [u + c for u, c in zip(user, chosen)],
        "rejected": [u + r for u, r in zip(user, rejected)],
    }


@pytest.mark.parametrize("data_format", ["standard", "conversational", "implicit_prompt"])
def test_unlikelihood_trains_on_trl_preference_data(
    tmp_path, tiny_gpt2_path, tokenizer, data_format
):
    data = datasets.Dataset.from_dict(preference_rows(data_format))
    trainer = UnlikelihoodTrainer(
        load_gpt2(tiny_gpt2_path),
        unlikelihood_config(tmp_path, max_length=64, max_steps=1),
        train_dataset=data,
        eval_dataset=data,
        processing_class=tokenizer,
    )
    for row, (_, chosen, rejected) in zip(trainer.train_dataset, PREFERENCE):
        for prefix, text in (("", chosen), ("negative_", rejected)):
            targets = tokenizer.decode([token for token in row[prefix + "labels"] if token != -100])
            assert targets.strip() == text + "</s>"
            assert row[prefix + "labels"][0] == -100
    trainer.train()
    assert torch.isfinite(torch.tensor(trainer.evaluate()["eval_loss"]))
    assert "`rejected`'s completion" in trainer.model_card(None).text


def test_unlikelihood_refuses_data_without_a_negative(tmp_path, tiny_gpt2_path, tokenizer):
    with pytest.raises(ValueError, match="no negative.*`prompt`, `chosen`, `rejected`"):
        UnlikelihoodTrainer(
            load_gpt2(tiny_gpt2_path),
            unlikelihood_config(tmp_path),
            train_dataset=datasets.Dataset.from_dict(dress_rows("messages")),
            processing_class=tokenizer,
        )


CHATML = (
    "{% if messages[0]['role'] != 'system' %}<|im_start|>system\nbe kind<|im_end|>\n{% endif %}"
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def test_chatml_turns_end_with_the_templates_text_after_the_turn(tiny_gpt2_path):
    """A ChatML-style template (Qwen's shape: a default system message, a newline after <|im_end|>):
    the assistant span runs to the turn's rendered end, newline included, the tokens TRL's
    conversational prompt-completion loss covers."""
    tokenizer = chat_tokenizer(tiny_gpt2_path, CHATML)
    expected_ids, expected_labels = pieces(
        tokenizer,
        [
            (
                "<|im_start|>system\nbe kind<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
                False,
            ),
            ("yes.<|im_end|>\n", True),
            ("<|im_start|>user\ncats?<|im_end|>\n<|im_start|>assistant\n", False),
            ("no.<|im_end|>\n", True),
        ],
    )
    row = encode_messages(tokenizer, CONVERSATION, max_length=512)
    assert (row["input_ids"], row["labels"]) == (expected_ids, expected_labels)
    completion = encode_prompt_completion(tokenizer, CONVERSATION[:3], CONVERSATION[3:], False, 512)
    assert (
        tokenizer.decode([token for token in completion["labels"] if token != -100])
        == "no.<|im_end|>\n"
    )


def _stream(columns: dict) -> datasets.IterableDataset:
    rows = [dict(zip(columns, values)) for values in zip(*columns.values())]
    return datasets.IterableDataset.from_generator(lambda: iter(rows))


def test_streamed_trl_rows_are_tokenized_as_they_are_read(tmp_path, tiny_gpt2_path, tokenizer):
    """An IterableDataset in a TRL format goes through the same row encoder as a Dataset."""
    stream = _stream(preference_rows("standard"))
    trainer = UnlikelihoodTrainer(
        load_gpt2(tiny_gpt2_path),
        unlikelihood_config(tmp_path, max_length=64, max_steps=1),
        train_dataset=stream,
        processing_class=tokenizer,
    )
    trainer.train()
    assert trainer.state.global_step == 1
    table = UnlikelihoodTrainer(
        load_gpt2(tiny_gpt2_path),
        unlikelihood_config(tmp_path, max_length=64),
        train_dataset=datasets.Dataset.from_dict(preference_rows("standard")),
        processing_class=tokenizer,
    ).train_dataset
    streamed = trainer.get_train_dataloader().dataset
    first = next(iter(streamed))
    assert list(first["labels"]) == list(table[0]["labels"])
    assert list(first["negative_labels"]) == list(table[0]["negative_labels"])
    with pytest.raises(ValueError, match="no negative"):
        list(
            UnlikelihoodTrainer(
                load_gpt2(tiny_gpt2_path),
                unlikelihood_config(tmp_path, max_steps=1),
                train_dataset=_stream(dress_rows("messages")),
                processing_class=tokenizer,
            ).get_train_dataloader()
        )


# -- hostile rows: refused naming the dataset argument, the row and the field ----------------------


@pytest.fixture(scope="module")
def plain_tokenizer(tiny_gpt2_path):
    return chat_tokenizer(tiny_gpt2_path, PLAIN_TEMPLATE)


def _rows_with(columns: dict, row: int, **changes) -> dict:
    edited = {name: list(values) for name, values in columns.items()}
    for name, value in changes.items():
        edited[name][row] = value
    return edited


def _dress(tmp_path, tiny_gpt2_path, tokenizer, data, **kwargs):
    return DRESSTrainer(
        load_gpt2(tiny_gpt2_path),
        config(tmp_path, max_length=64, max_steps=1, negative_contexts_per_cycle=2),
        train_dataset=data,
        processing_class=tokenizer,
        embedder=TopicEmbedder(),
        **kwargs,
    )


def _unlikelihood(tmp_path, tiny_gpt2_path, tokenizer, data, **kwargs):
    return UnlikelihoodTrainer(
        load_gpt2(tiny_gpt2_path),
        unlikelihood_config(tmp_path, max_length=64, max_steps=1),
        train_dataset=data,
        processing_class=tokenizer,
        **kwargs,
    )


@pytest.mark.parametrize(
    ("data_format", "changes", "message"),
    [
        (
            "messages",
            {"messages": []},
            r"`messages` must be a non-empty list of \{'role', 'content'\} .*got an empty list",
        ),
        (
            "messages",
            {"messages": [{"content": "hi"}, {"content": "t0 fine"}]},
            r"`messages\[0\]` has no `role` string",
        ),
        (
            "standard_prompt_completion",
            {"completion": None},
            r"`completion` must be a string or a non-empty list of .*got NoneType",
        ),
    ],
)
def test_dress_names_the_row_and_field_of_a_malformed_trl_row(
    tmp_path, tiny_gpt2_path, plain_tokenizer, data_format, changes, message
):
    data = datasets.Dataset.from_dict(_rows_with(dress_rows(data_format), 3, **changes))
    with pytest.raises(ValueError, match=rf"`train_dataset` row 3: {message}"):
        _dress(tmp_path, tiny_gpt2_path, plain_tokenizer, data)


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"messages": [["hi", "there"]] * 10}, r"`messages\[0\]` must be a .*message \(a dict\)"),
        ({"prompt": CONTEXTS, "completion": list(range(10))}, "`completion` .* got int"),
    ],
)
def test_dress_names_rows_whose_fields_arrow_stores_as_another_type(
    tmp_path, tiny_gpt2_path, plain_tokenizer, columns, message
):
    data = datasets.Dataset.from_dict(columns)
    with pytest.raises(ValueError, match=rf"`train_dataset` row 0: {message}"):
        _dress(tmp_path, tiny_gpt2_path, plain_tokenizer, data)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"chosen": None}, r"`chosen` must be a string .*got NoneType"),
        ({"rejected": None}, r"`rejected` must be a string .*got NoneType"),
    ],
)
def test_unlikelihood_names_the_row_and_field_of_a_malformed_preference_row(
    tmp_path, tiny_gpt2_path, plain_tokenizer, changes, message
):
    data = datasets.Dataset.from_dict(_rows_with(preference_rows("standard"), 1, **changes))
    with pytest.raises(ValueError, match=rf"`train_dataset` row 1: {message}"):
        _unlikelihood(tmp_path, tiny_gpt2_path, plain_tokenizer, data)


def test_a_malformed_message_of_a_torch_dataset_is_named_as_it_is_read(
    tmp_path, tiny_gpt2_path, plain_tokenizer
):
    rows = [
        {key: values[index] for key, values in preference_rows("conversational").items()}
        for index in range(2)
    ]
    rows[1]["rejected"] = [{"role": "assistant", "content": 5}]
    trainer = _unlikelihood(tmp_path, tiny_gpt2_path, plain_tokenizer, rows)
    with pytest.raises(
        ValueError,
        match=r"`train_dataset` row 1: `rejected\[0\]\['content'\]` must be a string or a list of "
        "parts, got int",
    ):
        trainer.train()


@pytest.mark.parametrize("column", ["chosen", "rejected"])
def test_unlikelihood_refuses_an_empty_preference_completion(
    tmp_path, tiny_gpt2_path, plain_tokenizer, column
):
    data = datasets.Dataset.from_dict(_rows_with(preference_rows("standard"), 1, **{column: " "}))
    with pytest.raises(
        ValueError, match=rf"`train_dataset` row 1: `{column}` is empty \(' '\): it has no token"
    ):
        _unlikelihood(tmp_path, tiny_gpt2_path, plain_tokenizer, data)
    conversational = _rows_with(
        preference_rows("conversational"), 0, **{column: [{"role": "assistant", "content": ""}]}
    )
    with pytest.raises(ValueError, match=rf"`train_dataset` row 0: `{column}` is empty"):
        _unlikelihood(
            tmp_path, tiny_gpt2_path, plain_tokenizer, datasets.Dataset.from_dict(conversational)
        )
    # an evaluation set trains nothing: an empty rejected completion is only tokenized
    _unlikelihood(
        tmp_path,
        tiny_gpt2_path,
        plain_tokenizer,
        datasets.Dataset.from_dict(preference_rows("standard")),
        eval_dataset=data,
    )


UNPAIRED = {
    "prompt": ["Q: any plans?\nA:", "Q: dogs?\nA:"],
    "completion": [" t0 hiking.", " t1 no."],
    "label": [True, False],
}


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        (UNPAIRED, "has TRL's unpaired preference format .*labelled False is no gold response"),
        ({"text": ["Q: any plans? A: hiking."] * 2}, "has TRL's language-modeling format"),
    ],
)
def test_trl_formats_the_trainers_do_not_take_are_refused_by_name(
    tmp_path, tiny_gpt2_path, plain_tokenizer, columns, message
):
    data = datasets.Dataset.from_dict(columns)
    with pytest.raises(ValueError, match=rf"`train_dataset` {message}"):
        _dress(tmp_path, tiny_gpt2_path, plain_tokenizer, data)
    with pytest.raises(ValueError, match=rf"`train_dataset` {message}"):
        _unlikelihood(tmp_path, tiny_gpt2_path, plain_tokenizer, data)
    gold = datasets.Dataset.from_dict(dress_rows("standard_prompt_completion"))
    with pytest.raises(ValueError, match=rf"`eval_dataset` {message}"):
        _dress(tmp_path, tiny_gpt2_path, plain_tokenizer, gold, eval_dataset=data)
    streamed = _dress(
        tmp_path, tiny_gpt2_path, plain_tokenizer, gold, eval_dataset=_stream(columns)
    )
    with pytest.raises(ValueError, match=rf"`eval_dataset` {message}"):
        streamed.evaluate()  # a stream is prepared as it is read


def test_a_column_beside_trl_rows_is_named_when_dropped(tmp_path, tiny_gpt2_path, plain_tokenizer):
    data = datasets.Dataset.from_dict(
        {**dress_rows("messages"), "score": [float("nan")] * len(CONTEXTS)}
    )
    trainer = _dress(tmp_path, tiny_gpt2_path, plain_tokenizer, data)
    with pytest.warns(UserWarning, match=r"`train_dataset` has columns \['score'\] that neither"):
        batch = next(iter(trainer.get_train_dataloader()))
    assert set(batch) == {"input_ids", "attention_mask", "labels", "dress_weight"}
    stream = _stream({**preference_rows("standard"), "source": ["a", "b"]})
    trainer = _unlikelihood(tmp_path, tiny_gpt2_path, plain_tokenizer, stream)
    with pytest.warns(UserWarning, match=r"`train_dataset` has columns \['source'\]"):
        next(iter(trainer.get_train_dataloader()))
