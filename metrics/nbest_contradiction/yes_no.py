"""Yes/no classifiers for responses to polar questions (Sato et al. 2022, §3.2, App. B, App. C).

A response to a polar question is an affirmation ("yes"), a refutation ("no") or neither
("ambiguous"). Two classifiers:

- :class:`PrefixYesNoClassifier` -- the rule the paper names as "the simplest method" (§3.2):
  does the response begin with *yes* or *no*? It misses every indirect answer ("Why not?",
  "I'd rather stay home"), which it calls ambiguous, so it is the **weaker baseline**.
- :class:`ModelYesNoClassifier` -- a sequence classifier fine-tuned on Circa (App. B: RoBERTa,
  train:valid = 8:2; see ``examples/train_yes_no_classifier.py``). Its labels are mapped to
  yes / no / ambiguous by name: Circa's "Yes", "Probably yes / sometimes yes" and "Yes, subject
  to some conditions" are affirmations, "No" and "Probably no" refutations, and "In the middle,
  neither yes nor no" and "I am not sure how X will interpret Y's answer" ambiguous (App. C,
  footnote 9). "Other" is neither an affirmation nor a refutation, so it is ambiguous too.

A model trained on (question, answer) pairs records ``yes_no_input="question_answer"`` in its
config; it then needs the questions. One trained on answers alone needs none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, cast

import numpy as np

from dialeval.labels import AMBIGUOUS, NO, YES, answer_of_label
from dialeval.metrics.engines.pair_scorer import PairScoringStats, load_pair_classifier, score_pairs
from dialeval.runtimes import check_backend
from dialeval.validation import ArgumentError, arguments_named, check_int, check_unicode_text

if TYPE_CHECKING:
    from dialeval.hub import ModelSource
    from dialeval.type_aliases import DeviceLike

    class YesNoClassifier(Protocol):
        """What N-best contradiction calls on a classifier: the answer of each response."""

        def classify(
            self, responses: Sequence[str], questions: Sequence[str] | None = None
        ) -> list[str]: ...


#: First words that make a response a direct "yes" / "no" for the prefix rule.
YES_PREFIXES = ("yes", "yeah", "yep", "yup", "yea")
NO_PREFIXES = ("no", "nope", "nah")
_FIRST_WORD = re.compile(r"[a-z]+")

#: Values of ``config.yes_no_input`` that a trained classifier may carry.
INPUT_FORMS = ("answer", "question_answer")


def prefix_answer(response: str) -> str:
    """ "yes"/"no" when the response's first word is a direct yes/no word, else "ambiguous"
    (§3.2)."""
    match = _FIRST_WORD.search(response.lower())
    # Only the very first word counts: "I said no" is not a refutation by this rule.
    if match is None or response.lower()[: match.start()].strip(" \t\n\"'([*-") != "":
        return AMBIGUOUS
    word = match.group()
    if word in YES_PREFIXES:
        return YES
    if word in NO_PREFIXES:
        return NO
    return AMBIGUOUS


def _check_texts(texts: object, argument: str) -> list[str]:
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise ArgumentError(argument, f"must be a list of strings, got {type(texts).__name__}")
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise ArgumentError(
                f"{argument}[{index}]", f"must be a string, got {type(text).__name__}: {text!r:.60}"
            )
        check_unicode_text(text, f"{argument}[{index}]")
    return list(texts)


class PrefixYesNoClassifier:
    """The yes/no-prefix rule (§3.2): the weaker baseline; indirect answers come out ambiguous."""

    name = "prefix"
    needs_questions = False

    def classify(
        self, responses: Sequence[str], questions: Sequence[str] | None = None
    ) -> list[str]:
        return [prefix_answer(response) for response in _check_texts(responses, "responses")]


class ModelYesNoClassifier:
    """A fine-tuned sequence classifier (App. B) whose labels map to yes / no / ambiguous.

    Loaded once per (model, device, dtype, runtime ``backend``) through
    :func:`dialeval.metrics.engines.pair_scorer.load_pair_classifier`; scoring is batched
    (length-sorted, dynamic padding, ``inference_mode``). Over-long inputs are truncated to the
    model's maximum length and counted in ``num_truncated``.
    """

    def __init__(
        self,
        model: ModelSource,
        device: DeviceLike = None,
        dtype: str | None = None,
        batch_size: int = 32,
        label_map: dict | None = None,
        backend: str | None = None,
    ) -> None:
        check_int(batch_size, "batch_size")
        self.classifier = load_pair_classifier(model, device=device, dtype=dtype, backend=backend)
        self.batch_size = batch_size
        self.name = self.classifier.name
        self.num_truncated = 0
        id2label = self.classifier.id2label
        if label_map is not None:
            if not isinstance(label_map, dict) or any(
                value not in (YES, NO, AMBIGUOUS) for value in label_map.values()
            ):
                raise ArgumentError(
                    "label_map", "must map the model's label names to 'yes', 'no' or 'ambiguous'"
                )
            missing = sorted(set(id2label.values()) - set(label_map))
            if missing:
                raise ArgumentError("label_map", f"lacks the model's label(s) {missing}")
            self.answers = [label_map[id2label[i]] for i in range(len(id2label))]
        else:
            self.answers = [answer_of_label(id2label[i]) for i in range(len(id2label))]
        input_form = getattr(self.classifier.model.config, "yes_no_input", "answer")
        if input_form not in INPUT_FORMS:
            raise ArgumentError(
                "model", f"has config.yes_no_input={input_form!r}; it must be one of {INPUT_FORMS}"
            )
        self.needs_questions = input_form == "question_answer"

    def probabilities(
        self, responses: Sequence[str], questions: Sequence[str] | None = None
    ) -> np.ndarray:
        """Softmax over the model's labels, one row per response."""
        responses = _check_texts(responses, "responses")
        if self.needs_questions:
            if questions is None:
                raise ArgumentError(
                    "questions",
                    f"is required, one per response: classifier {self.name!r} was trained on "
                    "(question, answer) pairs; pass `questions`",
                )
            questions = _check_texts(questions, "questions")
            if len(questions) != len(responses):
                raise ArgumentError(
                    "questions",
                    f"must hold one question per response: {len(responses)} responses, got "
                    f"{len(questions)}",
                )
            stats = PairScoringStats()
            scores = score_pairs(
                self.classifier, questions, responses, batch_size=self.batch_size, stats=stats
            )
            self.num_truncated += stats.num_truncated
            return scores
        return self._score_texts(responses)

    def _score_texts(self, texts: list[str]) -> np.ndarray:
        # torch: deferred, so importing this module loads no model stack
        import torch

        model, tokenizer = self.classifier.model, self.classifier.tokenizer
        num_labels = cast(int, model.config.num_labels)  # a classifier's config has its labels
        if not texts:
            return np.zeros((0, num_labels))
        unique = list(dict.fromkeys(texts))  # n-best lists repeat responses: score each text once
        limit = self.classifier.max_length
        encoded = tokenizer(unique, truncation=False, verbose=False)
        features = [{key: values[i] for key, values in encoded.items()} for i in range(len(unique))]
        for i, feature in enumerate(features):
            if len(feature["input_ids"]) > limit:
                self.num_truncated += 1
                cut = tokenizer(unique[i], truncation=True, max_length=limit)
                features[i] = dict(cut)
        order = sorted(
            range(len(unique)), key=lambda i: len(features[i]["input_ids"]), reverse=True
        )
        scores = np.empty((len(unique), num_labels))
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                members = order[start : start + self.batch_size]
                batch = tokenizer.pad(
                    [features[i] for i in members], padding_side="right", return_tensors="pt"
                )
                logits = model(
                    **{k: v.to(self.classifier.device) for k, v in batch.items()}
                ).logits.float()
                scores[members] = logits.softmax(dim=-1).cpu().double().numpy()
        row = {text: i for i, text in enumerate(unique)}
        return scores[[row[text] for text in texts]]

    def classify(
        self, responses: Sequence[str], questions: Sequence[str] | None = None
    ) -> list[str]:
        probabilities = self.probabilities(responses, questions)
        return [self.answers[int(index)] for index in probabilities.argmax(axis=1)]


def load_yes_no_classifier(
    classifier: str | YesNoClassifier,
    device: DeviceLike = None,
    dtype: str | None = None,
    batch_size: int = 32,
    label_map: dict | None = None,
    backend: str | None = None,
) -> YesNoClassifier:
    """``"prefix"`` -> the prefix rule; an object with ``classify`` -> itself; else a model id or
    directory."""
    backend = check_backend(backend)  # checked even when the rule or a given object makes it moot
    if isinstance(classifier, str) and classifier == "prefix":
        return PrefixYesNoClassifier()
    if hasattr(classifier, "classify"):
        return classifier
    if not isinstance(classifier, str) or not classifier:
        raise ArgumentError(
            "classifier",
            "must be 'prefix', a yes/no classifier id or local directory (e.g. one trained with "
            "examples/train_yes_no_classifier.py), or an object with classify(responses, "
            f"questions); got {classifier!r}",
        )
    with arguments_named({"model": "classifier"}):
        return ModelYesNoClassifier(
            classifier,
            device=device,
            dtype=dtype,
            batch_size=batch_size,
            label_map=label_map,
            backend=backend,
        )


def classify_nbest_lists(
    classifier: YesNoClassifier,
    predictions: Sequence[Sequence[str]],
    questions: Sequence[str] | None = None,
) -> list[list[str]]:
    """The answer of every response of every n-best list (one classifier call for all of them).

    ``questions``: one question (the input's message) per list, repeated for its responses.
    """
    if (
        isinstance(predictions, str)
        or not isinstance(predictions, Sequence)
        or len(predictions) == 0
    ):
        raise ArgumentError(
            "predictions", "must be a non-empty list of n-best lists (lists of strings)"
        )
    flat, flat_questions = [], []
    for index, nbest in enumerate(predictions):
        if isinstance(nbest, str) or not isinstance(nbest, Sequence) or len(nbest) == 0:
            raise ArgumentError(
                f"predictions[{index}]",
                f"must be a non-empty list of responses (an n-best list), got {nbest!r:.60}",
            )
        flat.extend(_check_texts(nbest, f"predictions[{index}]"))
    if questions is not None:
        questions = _check_texts(questions, "questions")
        if len(questions) != len(predictions):
            raise ArgumentError(
                "questions",
                f"must hold one question per input: {len(predictions)} inputs, got "
                f"{len(questions)}",
            )
        for question, nbest in zip(questions, predictions):
            flat_questions.extend([question] * len(nbest))
    answers = classifier.classify(flat, flat_questions if questions is not None else None)
    grouped, start = [], 0
    for nbest in predictions:
        grouped.append(list(answers[start : start + len(nbest)]))
        start += len(nbest)
    return grouped
