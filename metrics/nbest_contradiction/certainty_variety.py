"""Certainty and Variety of n-best lists (Sato et al. 2022, §2; exclusion rule App. C).

Each input q is a polar question with an expected non-contradictory answer ("yes" for ENTQ,
"no" for CNTQ, §3.1). Its n-best list f(q) is classified response by response into "yes",
"no" or "ambiguous" (a yes/no classifier, §3.2 / App. B); a response is *noncontradictory*
when its answer equals the expected one, and cnt(f(q)) counts those. Then (§2)::

    Certainty = |Q'| / |Q|,   Variety = 1/|Q'| * sum_{q in Q'} cnt(f(q)) / |f(q)|,
    Q' = {q in Q | cnt(f(q)) > 0}

App. C: inputs whose list holds one or more ambiguous responses are left out of Q altogether
("num_excluded"); the paper reports |Q| as "inputs analyzed" (Tables 5-6, "num_analyzed").

This module is the pure core: it takes answers that are already classified. Classifying
responses is :mod:`dialeval.metrics.nbest_contradiction.yes_no`; the evaluate module
``nbest_contradiction`` chains the two.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dialeval.labels import AMBIGUOUS, ANSWER_LABELS, EXPECTED_ANSWERS
from dialeval.metrics.nbest_contradiction.yes_no import (
    classify_nbest_lists,
    load_yes_no_classifier,
)
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    from dialeval.metrics.nbest_contradiction.yes_no import YesNoClassifier
    from dialeval.type_aliases import DeviceLike


def _check_answers(answers: object) -> list[list[str]]:
    if isinstance(answers, str) or not isinstance(answers, Sequence) or len(answers) == 0:
        raise ArgumentError(
            "answers",
            "must be a non-empty list with one list of answers ('yes'/'no'/'ambiguous') per input, "
            f"got {answers!r:.60}",
        )
    checked = []
    for index, answer_list in enumerate(answers):
        if (
            isinstance(answer_list, str)
            or not isinstance(answer_list, Sequence)
            or len(answer_list) == 0
        ):
            raise ArgumentError(
                f"answers[{index}]",
                f"must be a non-empty list of answers (the n-best list), got {answer_list!r:.60}",
            )
        for position, answer in enumerate(answer_list):
            if answer not in ANSWER_LABELS:
                raise ArgumentError(
                    f"answers[{index}][{position}]",
                    f"must be one of {ANSWER_LABELS}, got {answer!r}",
                )
        checked.append(list(answer_list))
    return checked


def _check_references(references: object, num_inputs: int) -> list[str]:
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise ArgumentError(
            "references",
            "must be a list with one expected answer ('yes' or 'no') per input, got "
            f"{references!r:.60}",
        )
    if len(references) != num_inputs:
        raise ArgumentError(
            "references",
            f"must hold one expected answer per input: {num_inputs} inputs, got {len(references)}",
        )
    for index, reference in enumerate(references):
        if reference not in EXPECTED_ANSWERS:
            raise ArgumentError(
                f"references[{index}]",
                f"must be 'yes' or 'no' (the non-contradictory answer), got {reference!r}",
            )
    return list(references)


def _check_types(input_types: object, num_inputs: int) -> list[str] | None:
    if input_types is None:
        return None
    if (
        isinstance(input_types, str)
        or not isinstance(input_types, Sequence)
        or len(input_types) != num_inputs
    ):
        raise ArgumentError(
            "input_types",
            f"must be None or a list of {num_inputs} strings (e.g. 'ENTQ', 'CNTQ'), got "
            f"{input_types!r:.60}",
        )
    for index, input_type in enumerate(input_types):
        if not isinstance(input_type, str) or not input_type:
            raise ArgumentError(
                f"input_types[{index}]", f"must be a non-empty string, got {input_type!r}"
            )
    return list(input_types)


def _aggregate(per_input: list[dict]) -> dict:
    analyzed = [item for item in per_input if not item["excluded"]]
    with_noncontradictory = [item for item in analyzed if item["num_noncontradictory"] > 0]
    # With nothing analyzed (or no list in Q') the ratio is undefined; NaN says so instead of a fake
    # 0.
    certainty = len(with_noncontradictory) / len(analyzed) if analyzed else math.nan
    variety = (
        sum(item["num_noncontradictory"] / item["list_size"] for item in with_noncontradictory)
        / len(with_noncontradictory)
        if with_noncontradictory
        else math.nan
    )
    return {
        "certainty": certainty,
        "variety": variety,
        "num_inputs": len(per_input),
        "num_analyzed": len(analyzed),
        "num_excluded": len(per_input) - len(analyzed),
        "num_with_noncontradictory": len(with_noncontradictory),
    }


def certainty_variety(
    answers: Sequence[Sequence[str]],
    references: Sequence[str],
    input_types: Sequence[str] | None = None,
) -> dict:
    """Certainty and Variety (§2) of classified n-best lists, ambiguous lists excluded (App. C).

    Args:
        answers: one list per input: the answer ("yes", "no" or "ambiguous") of each response of
            its n-best list, as a yes/no classifier gave them.
        references: the expected non-contradictory answer of each input ("yes" or "no").
        input_types: optional label per input (e.g. "ENTQ", "CNTQ"); figures are then also
            reported per type under ``per_type``.

    Returns:
        ``certainty``, ``variety`` (NaN when undefined: no input analyzed, or no list with a
        noncontradictory response), ``num_inputs``, ``num_analyzed`` (|Q|), ``num_excluded``
        (lists with an ambiguous response), ``num_with_noncontradictory`` (|Q'|), ``per_input``
        (``excluded``, ``num_noncontradictory``, ``list_size`` per input) and, when types are
        given, ``per_type`` (type -> the aggregate figures).
    """
    answers = _check_answers(answers)
    references = _check_references(references, len(answers))
    input_types = _check_types(input_types, len(answers))
    per_input = []
    for answer_list, expected in zip(answers, references):
        per_input.append(
            {
                "excluded": AMBIGUOUS in answer_list,
                "num_noncontradictory": sum(answer == expected for answer in answer_list),
                "list_size": len(answer_list),
            }
        )
    result = _aggregate(per_input)
    if result["num_analyzed"] == 0:
        warnings.warn(
            f"all {len(per_input)} n-best lists hold an ambiguous response and are excluded (App. "
            "C): Certainty and Variety are undefined (NaN); num_analyzed is 0",
            UserWarning,
            stacklevel=2,
        )
    elif result["num_with_noncontradictory"] == 0:
        warnings.warn(
            "no analyzed n-best list holds a noncontradictory response: Variety is undefined (NaN)",
            UserWarning,
            stacklevel=2,
        )
    result["per_input"] = per_input
    if input_types is not None:
        result["per_type"] = {
            input_type: _aggregate(
                [item for item, kind in zip(per_input, input_types) if kind == input_type]
            )
            for input_type in dict.fromkeys(input_types)
        }
    return result


def nbest_contradiction(
    predictions: Sequence[Sequence[str]],
    references: Sequence[str],
    classifier: str | YesNoClassifier | None,
    questions: Sequence[str] | None = None,
    input_types: Sequence[str] | None = None,
    device: DeviceLike = None,
    dtype: str | None = None,
    batch_size: int = 32,
    label_map: dict | None = None,
    backend: str | None = None,
) -> dict:
    """Classify every response of every n-best list, then Certainty / Variety (§2, §3.2, App. C).

    Args:
        predictions: one n-best list (list of responses) per input.
        references: the expected non-contradictory answer of each input ("yes" for ENTQ, "no" for
            CNTQ).
        classifier: ``"prefix"`` (the yes/no-prefix rule, the weaker baseline), a yes/no
            classifier's id or local directory (labels named yes/no/ambiguous or Circa's), or an
            object with ``classify(responses, questions) -> list[str]``.
        questions: the input messages, one per input; needed by classifiers trained on
            (question, answer) pairs.
        input_types: optional type per input ("ENTQ", "CNTQ"): adds ``per_type``.
        device, dtype, batch_size, label_map, backend: for a model classifier (see
            :mod:`dialeval.metrics.nbest_contradiction.yes_no`).

    Returns:
        :func:`certainty_variety`'s figures, each input's ``answers`` in ``per_input``, the
        ``classifier`` name and ``num_truncated`` (responses cut to the model's maximum length).
    """
    if classifier is None:
        raise ArgumentError(
            "classifier",
            "is required: 'prefix' (yes/no-prefix rule), the id or directory of a yes/no "
            "classifier (train one with examples/train_yes_no_classifier.py), or an object with "
            "classify()",
        )
    # Cheap checks first: a bad reference should not cost a model load and a classification pass.
    if isinstance(predictions, Sequence) and not isinstance(predictions, str):
        _check_references(references, len(predictions))
        _check_types(input_types, len(predictions))
    loaded = load_yes_no_classifier(
        classifier,
        device=device,
        dtype=dtype,
        batch_size=batch_size,
        label_map=label_map,
        backend=backend,
    )
    truncated_before = getattr(loaded, "num_truncated", 0)
    answers = classify_nbest_lists(loaded, predictions, questions)
    result = certainty_variety(answers, references, input_types)
    for item, answer_list in zip(result["per_input"], answers):
        item["answers"] = answer_list
    result["classifier"] = getattr(loaded, "name", type(loaded).__name__)
    result["num_truncated"] = getattr(loaded, "num_truncated", 0) - truncated_before
    return result
