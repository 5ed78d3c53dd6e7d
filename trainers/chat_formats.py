"""TRL's dataset formats for the diversity trainers: chat models trained as ``SFTTrainer`` trains
them.

Both trainers take, beside dialeval's own ``context`` / ``response`` text and tokenized rows, the
formats of TRL's dataset guide (``trl.data_utils``), standard (strings) or conversational (lists of
``{"role", "content"}`` messages, rendered with the tokenizer's chat template):

* ``prompt`` / ``completion``: the loss is on the completion only (SFTTrainer's
  ``completion_only_loss``). A standard completion gets the eos token appended when it lacks it,
  as SFTTrainer does; a conversational prompt is rendered with the generation prompt (or
  continuing its last message when that is the assistant's), and the completion is the rest of
  ``prompt + completion``'s rendering.
* ``messages``: the loss is on the assistant turns only (SFTTrainer's ``assistant_only_loss``).
  A template with ``{% generation %}`` markers gives the mask itself
  (``apply_chat_template(..., return_assistant_tokens_mask=True)``, as TRL). A template without
  them (most shipped templates) is handled by rendering prefixes: assistant turn ``i`` spans the
  text from the end of ``messages[:i]`` rendered with the generation prompt to the end of
  ``messages[:i + 1]``, both of which must begin the whole conversation's rendering (a
  *prefix-preserving* template; one that renders earlier turns differently once later turns
  follow is refused, with the advice to add the markers). So the span is the turn's content and
  whatever the template writes after it (its end-of-turn token, and e.g. ChatML's newline), the
  same tokens TRL's conversational prompt-completion loss covers.
* ``prompt`` / ``chosen`` / ``rejected`` (TRL's preference format; ``chosen`` / ``rejected``
  alone when they are conversations sharing their first messages, the implicit prompt):
  UnlikelihoodTrainer's examples, ``chosen`` the gold completion and ``rejected`` the negative.

Refused, naming the format and what to give instead: TRL's language-modeling format (``text``:
no context to condition on, no response to cluster) and its unpaired preference format
(``prompt`` / ``completion`` / ``label``: a completion labelled False is no gold response, and an
unpaired negative has no gold row to stack with). A row whose field is not a string or a list of
``{"role": str, "content": ...}`` messages is refused naming the dataset argument, the row and the
field, before anything reads it.

Characters become tokens through the fast tokenizer's offsets: a token is a target when it covers
a character of a target span (transformers' assistant mask does the same with ``char_to_token``),
so a token that straddles the prompt's end is a target. Rendered conversations are tokenized with
``add_special_tokens=False`` (the template writes them, as in ``apply_chat_template``), standard
text with the tokenizer's special tokens, as TRL does. The caller's tokenizer is only read, never
changed: to train with another template, set it on a copy (``copy.deepcopy(tokenizer)``).

Truncation to ``max_length``: the tokens before the first target (the prompt) keep their *last*
tokens and at least ``min(prompt, max_length // 2)`` of them; the rest keeps its first tokens.

What the methods attach to (the model card says it, :func:`with_format_note`): DRESS weights a row
by the semantic cluster of its response, the completion's text (``prompt`` / ``completion``) or its
assistant turns' contents joined by newlines (``messages``); the weight scales the loss on all the
row's target tokens, and negative training generates from the tokens before the first target (the
prompt, or the conversation up to its first assistant turn, with the generation prompt).
Unlikelihood's negative is ``rejected``'s completion tokens after the same prompt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from dialeval.trainers.data import NEGATIVE_PREFIX, encode_dialogue
from dialeval.trainers.losses import IGNORE_INDEX
from dialeval.trainers.text_checks import check_nonblank_targets
from dialeval.type_aliases import Tokenizer
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    import datasets
    from transformers import BatchEncoding

MESSAGES = "messages"
PROMPT_COMPLETION = "prompt_completion"
PREFERENCE = "preference"
UNPAIRED_PREFERENCE = "unpaired_preference"
LANGUAGE_MODELING = "language_modeling"
#: Columns of a TRL row the trainers read besides its format's: the chat template's options.
CHAT_OPTION_COLUMNS = ("chat_template_kwargs", "tools")
#: Every column a TRL row is read from, removed once it is tokenized.
CHAT_READ_COLUMNS = (MESSAGES, "prompt", "completion", "chosen", "rejected", *CHAT_OPTION_COLUMNS)
_GENERATION_MARKER = re.compile(r"\{%-?\s*generation\s*-?%\}")
PREFERENCE_ADVICE = (
    "UnlikelihoodTrainer trains against a negative: give TRL's preference format (`prompt`, "
    "`chosen`, `rejected`; `rejected` is the negative), or dialeval's `context` / `response` / "
    "`negative_response`"
)


def dataset_format(columns: Sequence[str]) -> str | None:
    """Which TRL format ``columns`` hold (:data:`MESSAGES`, :data:`PROMPT_COMPLETION`,
    :data:`PREFERENCE`, and the refused :data:`UNPAIRED_PREFERENCE` and :data:`LANGUAGE_MODELING`),
    or None: dialeval's own ``context`` / ``response`` columns come first."""
    names = set(columns)
    if "input_ids" in names or "response" in names or "context" in names:
        return None
    if MESSAGES in names:
        return MESSAGES
    if {"chosen", "rejected"} <= names:
        return PREFERENCE
    if {"prompt", "completion", "label"} <= names:
        return UNPAIRED_PREFERENCE
    if {"prompt", "completion"} <= names:
        return PROMPT_COMPLETION
    if "text" in names:
        return LANGUAGE_MODELING
    return None


def is_conversation(value: object) -> bool:
    """A list of ``{"role", ...}`` messages (TRL's ``is_conversational`` test on one field)."""
    return (
        isinstance(value, list)
        and bool(value)
        and isinstance(value[0], dict)
        and "role" in value[0]
    )


def message_text(message: dict) -> str:
    """A message's text: its string content, or the text parts of a list content."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def conversation_problem(value: object) -> tuple[str, str] | None:
    """``(where, problem)`` when ``value`` is not a non-empty list of ``{"role": str, "content":
    str | list | None}`` messages (``("[1]", "must be a {'role', 'content'} message ...")``), or
    None."""
    if not isinstance(value, list) or not value:
        what = "an empty list" if isinstance(value, list) else type(value).__name__
        return "", f"must be a non-empty list of {{'role', 'content'}} messages, got {what}"
    for position, message in enumerate(value):
        if not isinstance(message, Mapping):
            return (
                f"[{position}]",
                f"must be a {{'role', 'content'}} message (a dict), got {type(message).__name__}",
            )
        role = message.get("role")
        if not isinstance(role, str):
            problem = f"has no `role` string (a message is {{'role', 'content'}}), got {role!r:.40}"
            return f"[{position}]", problem
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            return (
                f"[{position}]['content']",
                f"must be a string or a list of parts, got {type(content).__name__}",
            )
    return None


def check_chat_row(row: Mapping) -> None:
    """Refuse a TRL row whose fields are not strings or conversations, naming the field (the
    caller adds the dataset argument and the row)."""
    for column in (MESSAGES, "prompt", "completion", "chosen", "rejected"):
        if column not in row:
            continue
        value = row[column]
        if column == "prompt" and value is None and "chosen" in row:
            continue  # the implicit prompt: chosen / rejected conversations share it
        if isinstance(value, str) and column != MESSAGES:
            continue
        if not isinstance(value, list) and column != MESSAGES:
            raise ArgumentError(
                column,
                "must be a string or a non-empty list of {'role', 'content'} messages, got "
                f"{type(value).__name__}",
            )
        problem = conversation_problem(value)
        if problem is not None:
            where, what = problem
            raise ArgumentError(f"{column}{where}", what)


def assistant_text(messages: list) -> str:
    return "\n".join(
        message_text(message) for message in messages if message.get("role") == "assistant"
    )


def _as_text(value: Any) -> str:  # a dataset cell: a string or a conversation
    return assistant_text(value) if is_conversation(value) else value


def _response_column(data_format: str) -> str:
    return {MESSAGES: MESSAGES, PROMPT_COMPLETION: "completion", PREFERENCE: "chosen"}[data_format]


def chat_training_texts(dataset: object) -> tuple[str | None, list[str] | None]:
    """The TRL format of a ``datasets.Dataset`` and the texts DRESS clusters (one per row), or
    (None, None). Read after the dataset is tokenized, whose rows :func:`check_chat_row` checked."""
    data_format = dataset_format(getattr(dataset, "column_names", None) or [])
    if data_format is None:
        return None, None
    # datasets: deferred to the one path that needs it
    import datasets

    if not isinstance(dataset, datasets.Dataset):  # an iterable dataset is read once, by training
        return data_format, None
    # stripped as DRESS strips the responses it decodes: a completion's leading space is no meaning
    return data_format, [
        _as_text(value).strip() for value in dataset[_response_column(data_format)]
    ]


def with_format_note(text: str, data_format: str | None, method: str) -> str:
    """``text`` (a model card's method section) plus what the method's weights or negatives attached
    to."""
    if data_format is None:
        return text
    target = {
        MESSAGES: "the loss was on the assistant turns only",
        PROMPT_COMPLETION: "the loss was on the completion only",
        PREFERENCE: "the loss was on the `chosen` completion",
    }[data_format]
    sentence = f"Training data in TRL's `{data_format.replace('_', '/')}` format: {target}"
    if method == "dress":
        text = "its assistant turns' contents" if data_format == MESSAGES else "its completion"
        sentence += (
            f"; each row's DRESS weight came from the semantic cluster of {text} and scaled the "
            "loss on all its target tokens, and negative training generated from the tokens "
            "before the first target."
        )
    else:
        sentence += "; the negative was `rejected`'s completion after the same prompt."
    return f"{text}\n\n{sentence}"


# -- one row -----------------------------------------------------------------------------------


def _template_kwargs(row: dict) -> dict:
    kwargs = dict(row.get("chat_template_kwargs") or {})
    tools = row.get("tools")
    if isinstance(tools, str):
        tools = json.loads(tools)
    if tools:
        kwargs["tools"] = tools
    return kwargs


def _render(tokenizer: Tokenizer, messages: list, kwargs: dict, **options: Any) -> str:
    # tokenize=False renders the text (transformers' annotation is the union of every mode's result)
    return cast(str, tokenizer.apply_chat_template(messages, tokenize=False, **options, **kwargs))


def _common_prefix(first: str, second: str) -> str:
    length = 0
    for a, b in zip(first, second):
        if a != b:
            break
        length += 1
    return first[:length]


def _labelled(
    tokenizer: Tokenizer, text: str, spans: list[tuple[int, int]], add_special_tokens: bool
) -> tuple[list, list]:
    """``input_ids`` and labels: a token is a target when it covers a character of a span."""
    encoded = tokenizer(text, add_special_tokens=add_special_tokens, return_offsets_mapping=True)
    labels = []
    for token, (start, end) in zip(encoded["input_ids"], encoded["offset_mapping"]):
        covered = start < end and any(start < stop and end > begin for begin, stop in spans)
        labels.append(token if covered else IGNORE_INDEX)
    return list(encoded["input_ids"]), labels


def fit_to_length(input_ids: list, labels: list, max_length: int) -> tuple[list, list]:
    """Cut an example to ``max_length``: the prompt (tokens before the first target) keeps its last
    tokens, at least ``min(prompt, max_length // 2)`` of them; the rest keeps its first tokens."""
    if len(input_ids) <= max_length:
        return input_ids, labels
    start = next(
        (index for index, label in enumerate(labels) if label != IGNORE_INDEX), len(labels)
    )
    rest = min(len(labels) - start, max_length - min(start, max_length // 2))
    first = start - (max_length - rest)
    return input_ids[first : start + rest], labels[first : start + rest]


def _example(input_ids: list, labels: list, max_length: int) -> dict:
    input_ids, labels = fit_to_length(input_ids, labels, max_length)
    return {"input_ids": input_ids, "attention_mask": [1] * len(input_ids), "labels": labels}


def has_generation_markers(tokenizer: Tokenizer, kwargs: dict) -> bool:
    template = tokenizer.get_chat_template(None, kwargs.get("tools"))
    return bool(_GENERATION_MARKER.search(template))


def encode_messages(
    tokenizer: Tokenizer, messages: list, max_length: int, template_kwargs: dict | None = None
) -> dict:
    """A conversation -> ``input_ids`` / ``attention_mask`` / ``labels`` on its assistant turns
    only."""
    kwargs = template_kwargs or {}
    if not is_conversation(messages):
        raise ArgumentError("messages", "must be a non-empty list of {'role', 'content'} messages")
    if not any(message.get("role") == "assistant" for message in messages):
        raise ValueError("the conversation has no assistant turn to train on")
    if has_generation_markers(tokenizer, kwargs):
        # return_dict=True gives a BatchEncoding (transformers' annotation is every mode's union)
        encoded = cast(
            "BatchEncoding",
            tokenizer.apply_chat_template(
                messages,
                tokenize=True,
                return_dict=True,
                return_assistant_tokens_mask=True,
                **kwargs,
            ),
        )
        input_ids = list(encoded["input_ids"])
        labels = [
            token if masked else IGNORE_INDEX
            for token, masked in zip(input_ids, encoded["assistant_masks"])
        ]
        if all(label == IGNORE_INDEX for label in labels):
            raise ValueError(
                "the chat template's {% generation %} markers mark no token of the assistant turns"
            )
        return _example(input_ids, labels, max_length)
    text = _render(tokenizer, messages, kwargs)
    spans = []
    for index, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        through = _render(tokenizer, messages[: index + 1], kwargs)
        before = _common_prefix(
            _render(tokenizer, messages[:index], kwargs, add_generation_prompt=True), through
        )
        if not text.startswith(through):
            raise ValueError(
                f"the chat template renders the conversation's first {index + 1} messages "
                "differently once later messages follow, so its assistant turns cannot be found "
                "by rendering prefixes; give the tokenizer (a copy) a template with "
                "{% generation %} / {% endgeneration %} around the assistant turns (TRL's "
                "get_training_chat_template has them for common models)"
            )
        spans.append((len(before), len(through)))
    return _example(*_labelled(tokenizer, text, spans, add_special_tokens=False), max_length)


def encode_prompt_completion(
    tokenizer: Tokenizer,
    prompt: str | list[dict],
    completion: str | list[dict],
    is_encoder_decoder: bool,
    max_length: int,
    template_kwargs: dict | None = None,
) -> dict:
    """A prompt and its completion (strings, or lists of messages) -> an example with labels on the
    completion."""
    conversational = is_conversation(prompt)
    if conversational != is_conversation(completion):
        raise ArgumentError(
            "prompt", "and `completion` must both be strings or both lists of messages"
        )
    if not conversational:
        if not isinstance(prompt, str) or not isinstance(completion, str):
            raise ArgumentError(
                "prompt",
                "and `completion` must be strings or lists of messages, got "
                f"{type(prompt).__name__} and {type(completion).__name__}",
            )
        if is_encoder_decoder:
            return encode_dialogue(tokenizer, prompt, completion, True, max_length)
        eos = tokenizer.eos_token
        if eos is None:
            raise ArgumentError("processing_class", "has no eos token to end the completions with")
        text = prompt + completion + ("" if completion.endswith(eos) else eos)
        return _example(
            *_labelled(tokenizer, text, [(len(prompt), len(text))], add_special_tokens=True),
            max_length,
        )
    if is_encoder_decoder:
        raise ValueError(
            "conversational `prompt` / `completion` need a decoder-only model (chat templates "
            "render one sequence); give an encoder-decoder model string columns"
        )
    kwargs = template_kwargs or {}
    assert isinstance(prompt, list) and isinstance(completion, list)  # both are conversations
    last_role = prompt[-1].get("role")
    if last_role not in ("user", "tool", "system", "assistant"):
        raise ArgumentError(
            "prompt",
            f"ends with a message of role {last_role!r}, not one of user, tool, system or "
            "assistant",
        )
    text = _render(tokenizer, prompt + completion, kwargs)
    continues = last_role == "assistant"
    prompt_text = _common_prefix(
        _render(
            tokenizer,
            prompt,
            kwargs,
            add_generation_prompt=not continues,
            continue_final_message=continues,
        ),
        text,
    )
    return _example(
        *_labelled(tokenizer, text, [(len(prompt_text), len(text))], add_special_tokens=False),
        max_length,
    )


def _split_implicit_prompt(chosen: list, rejected: list) -> tuple[list, list, list]:
    """TRL's ``extract_prompt``: the messages both conversations begin with are the prompt."""
    shared = 0
    while shared < min(len(chosen), len(rejected)) - 1 and chosen[shared] == rejected[shared]:
        shared += 1
    if shared == 0:
        raise ArgumentError(
            "chosen", "and `rejected` share no first message: give a `prompt` column"
        )
    return chosen[:shared], chosen[shared:], rejected[shared:]


def encode_chat_row(
    row: dict,
    index: int,
    tokenizer: Tokenizer,
    *,
    is_encoder_decoder: bool,
    max_length: int,
    argument: str,
    with_negative: bool = False,
) -> dict:
    """One row of a TRL-format dataset -> a tokenized example (``datasets`` ``map`` function, with
    indices). ``with_negative``: the row is trained against its negative (UnlikelihoodTrainer's
    training set), so an empty ``chosen`` or ``rejected`` is refused."""
    try:
        check_chat_row(row)
        if with_negative:
            check_nonblank_targets(
                {
                    column: _as_text(row[column])
                    for column in ("chosen", "rejected")
                    if column in row
                }
            )
        kwargs = _template_kwargs(row)
        if MESSAGES in row:
            if is_encoder_decoder:
                raise ArgumentError(
                    "messages", "need a decoder-only model (a chat template renders one sequence)"
                )
            return encode_messages(tokenizer, row[MESSAGES], max_length, kwargs)
        if "chosen" not in row:
            return encode_prompt_completion(
                tokenizer, row["prompt"], row["completion"], is_encoder_decoder, max_length, kwargs
            )
        prompt, chosen, rejected = row.get("prompt"), row["chosen"], row["rejected"]
        if prompt is None:
            if not (is_conversation(chosen) and is_conversation(rejected)):
                raise ArgumentError(
                    "chosen",
                    "/ `rejected` without a `prompt` must be conversations sharing their first "
                    "messages",
                )
            prompt, chosen, rejected = _split_implicit_prompt(chosen, rejected)
        gold = encode_prompt_completion(
            tokenizer, prompt, chosen, is_encoder_decoder, max_length, kwargs
        )
        negative = encode_prompt_completion(
            tokenizer, prompt, rejected, is_encoder_decoder, max_length, kwargs
        )
        return {**gold, **{NEGATIVE_PREFIX + key: value for key, value in negative.items()}}
    except ValueError as error:
        raise ArgumentError(argument, f"row {index}: {error}") from error


def tokenize_chat_dataset(
    dataset: datasets.Dataset | datasets.IterableDataset,
    argument: str,
    tokenizer: Tokenizer | None,
    *,
    is_encoder_decoder: bool,
    max_length: int,
    with_negative: bool,
) -> datasets.Dataset | datasets.IterableDataset:
    """Tokenize a ``datasets.Dataset`` or ``IterableDataset`` in a TRL format (see the module
    docstring).

    ``with_negative``: the rows need a negative (UnlikelihoodTrainer's training set): only the
    preference format has one. A preference set where none is trained on (DRESS's training set)
    is refused rather than have ``rejected`` silently dropped; in an evaluation set ``rejected``
    is tokenized as the negative and evaluation scores ``chosen``.
    """
    columns = list(dataset.column_names)
    data_format = dataset_format(columns)
    if data_format is None:
        raise ArgumentError(
            argument,
            "is not in a TRL dataset format (`messages`, `prompt` / `completion`, "
            f"`prompt` / `chosen` / `rejected`): {columns}",
        )
    check_chat_format(data_format, argument, tokenizer, with_negative=with_negative)
    first = next(iter(dataset), None)
    if first is not None:
        check_chat_template(first, argument, tokenizer)
    options: dict[str, Any] = {
        "fn_kwargs": {
            "tokenizer": tokenizer,
            "is_encoder_decoder": is_encoder_decoder,
            "max_length": max_length,
            "argument": argument,
            "with_negative": with_negative,
        },
        "with_indices": True,
        # other columns stay, for Trainer's remove_unused_columns to drop them with a warning
        "remove_columns": [column for column in columns if column in CHAT_READ_COLUMNS],
    }
    # datasets: deferred to the one path that needs it
    import datasets

    if isinstance(dataset, datasets.Dataset):
        options["desc"] = f"Tokenizing {argument}"
    return dataset.map(encode_chat_row, **options)


def check_chat_format(
    data_format: str, argument: str, tokenizer: object, *, with_negative: bool
) -> None:
    """Refuse a TRL format the trainer cannot train on as given, or a tokenizer that cannot place
    its targets."""
    if data_format == UNPAIRED_PREFERENCE:
        raise ArgumentError(
            argument,
            "has TRL's unpaired preference format (`prompt`, `completion`, `label`), which the "
            "diversity trainers do not take: a completion labelled False is no gold response, and "
            "an unpaired negative has no gold row. Give the completions labelled True as "
            "`prompt` / `completion` (DRESSTrainer), or pair each with a rejected completion in "
            "the preference format `prompt` / `chosen` / `rejected` (UnlikelihoodTrainer)",
        )
    if data_format == LANGUAGE_MODELING:
        raise ArgumentError(
            argument,
            "has TRL's language-modeling format (`text`), which the diversity trainers do not "
            "take: they train on responses to a context (DRESS clusters the responses and "
            "generates from the contexts), and a whole text has neither. Give `prompt` / "
            "`completion`, `messages`, or dialeval's `context` / `response` columns",
        )
    if with_negative and data_format != PREFERENCE:
        raise ArgumentError(
            argument,
            f"has TRL's `{data_format.replace('_', '/')}` format, with no negative: "
            f"{PREFERENCE_ADVICE}",
        )
    if not with_negative and data_format == PREFERENCE and argument.startswith("train_dataset"):
        raise ArgumentError(
            argument,
            "has TRL's preference format, but this trainer trains on no negative and would "
            "drop `rejected`: give `prompt` / `completion` (the chosen completions) or `messages`",
        )
    if tokenizer is None or not callable(tokenizer) or not hasattr(tokenizer, "decode"):
        raise ArgumentError(
            "processing_class", f"must be a tokenizer to tokenize `{argument}`'s text columns"
        )
    if not getattr(tokenizer, "is_fast", False):
        raise ArgumentError(
            "processing_class",
            f"must be a fast tokenizer (its offsets place `{argument}`'s targets)",
        )


def check_chat_template(row: Mapping, argument: str, tokenizer: object) -> None:
    """A conversational row needs the tokenizer's chat template."""
    if any(
        is_conversation(row.get(column)) for column in (MESSAGES, "prompt", "chosen")
    ) and not getattr(tokenizer, "chat_template", None):
        raise ArgumentError(
            argument,
            "is conversational but `processing_class` has no chat_template; set one on "
            "a copy of the tokenizer (copy.deepcopy(tokenizer).chat_template = ...)",
        )
