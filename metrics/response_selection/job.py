"""``dialeval evaluate``'s response-selection step (Sato et al. 2020): LMs scored on a question
file.

The step reads its own input (``--selection-questions``), not the response sets, and runs on any
input once that file and at least one ``--selection-model`` are given.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dialeval.metrics.engines.job_steps import (
    JobData,
    JobOptions,
    JobStep,
    Progress,
    Settings,
    StepOutcome,
)
from dialeval.option_fields import option
from dialeval.validation import ArgumentError, ArgumentProblem, arguments_named


def _read_questions(path: str) -> dict:
    # metric code (numpy, model stacks): deferred so the declaration's import stays light
    from dialeval.metrics.response_selection.selection import read_selection_questions

    try:
        with arguments_named({"path": "selection_questions"}):
            return read_selection_questions(path)
    except ArgumentProblem:
        raise
    except ValueError as error:  # FILE:LINE: what is wrong in the file
        raise ArgumentError("selection_questions", f": {error}") from error


@dataclass
class SelectionOptions:
    """Response selection: the LMs to evaluate and the questions they answer."""

    selection_models: list[str] = field(
        default_factory=list,
        metadata=option(
            "--selection-model",
            metavar="MODEL",
            repeatable=True,
            help="causal or seq2seq LM to evaluate via response selection (Sato et al. 2020) on "
            "--selection-questions",
        ),
    )
    selection_questions: dict | None = field(
        default=None,
        metadata=option(
            "--selection-questions",
            metavar="FILE",
            reads_path=True,
            convert=_read_questions,
            help="response-selection questions: .jsonl/.json "
            '({"context": [...], "candidates": [...], "label": i} per line) '
            "or, under any other name, the authors' create_test.sh output (7 tab-separated "
            "fields: 3 context turns, ground truth, 3 false candidates)",
        ),
    )
    selection_reduction: str = field(
        default="sum",
        metadata=option(
            "--selection-reduction",
            choices=("sum", "mean"),
            help="candidate loss: summed or mean token NLL",
        ),
    )
    selection_batch_size: int = field(
        default=16, metadata=option("--selection-batch-size", help="questions per forward pass")
    )

    def __post_init__(self) -> None:
        if bool(self.selection_models) != (self.selection_questions is not None):
            raise ValueError(
                "response selection needs both `selection_models` and `selection_questions`"
            )


def _selection(data: JobData, model: str, options: Settings, progress: Progress) -> StepOutcome:
    # metric code (numpy, model stacks): deferred so the declaration's import stays light
    from dialeval.metrics.response_selection import response_selection

    questions = options.selection_questions
    with arguments_named(
        {"batch_size": "selection_batch_size", "reduction": "selection_reduction"}
    ):
        result = response_selection(
            questions["contexts"],
            questions["candidates"],
            questions["labels"],
            model=model,
            reduction=options.selection_reduction,
            batch_size=options.selection_batch_size,
            device=options.device,
            backend=options.backend,
            progress=progress,
        )
    keys = (
        "accuracy",
        "num_correct",
        "num_questions",
        "num_ties",
        "num_truncated_contexts",
        "reduction",
        "per_question",
    )
    return StepOutcome({**{key: result[key] for key in keys}, "model": model}, scope="questions")


def _resampling(data: JobData, outcome: StepOutcome, options: Settings, model: str) -> dict:
    """The figures are scored on --selection-questions, not on the evaluated responses: the same
    on every resample of them."""
    # engines (numpy): deferred so the declaration's import stays light
    from dialeval.metrics.engines.figure_statistics import constant_statistic

    method = "scored on the selection questions, not the evaluated responses: no resampling"
    return {
        key: constant_statistic(value, data.num_units, method)
        for key, value in outcome.summary.items()
        if isinstance(value, (int, float)) and not isinstance(value, bool)
    }


STEPS = (
    JobStep(
        "response_selection",
        ("response_set", "corpus"),
        _selection,
        options=(JobOptions, SelectionOptions),
        models=lambda options: options.selection_models,
        model_flag="--selection-model",
        applies=lambda options: options.selection_questions is not None,
        needs="--selection-questions FILE and --selection-model MODEL",
        unit="question",
        total=lambda data, options: len(options.selection_questions["contexts"]),
        resampling=_resampling,
    ),
)
