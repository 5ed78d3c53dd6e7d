"""``dialeval evaluate``'s EAD step: per response set (and their mean), or of the whole corpus."""

from __future__ import annotations

from dataclasses import dataclass, field

from dialeval.metrics.engines.job_steps import (
    JobData,
    JobOptions,
    JobStep,
    Progress,
    Settings,
    StepOutcome,
    StepSkipped,
)
from dialeval.option_fields import option
from dialeval.validation import arguments_named, check_int


@dataclass
class EADOptions:
    """Settings of the EAD step."""

    ead_n: int = field(default=1, metadata=option("--ead-n", help="n-gram order of EAD"))
    ead_vocab_size: int | None = field(
        default=None,
        metadata=option(
            "--ead-vocab-size",
            help="EAD's vocabulary size V: the generating model's (50,257 for GPT-2); EAD is "
            "skipped without it",
        ),
    )
    #: V counted from the scored responses themselves (no flag): ``dialeval meta-eval`` scores a
    #: test set, which does not say which model generated it (the reference implementation's
    #: ``dataForVocabCal``).
    ead_vocab_from_responses: bool = False

    def __post_init__(self) -> None:
        check_int(self.ead_n, "ead_n")  # before any step runs
        if self.ead_vocab_size is not None:
            check_int(self.ead_vocab_size, "ead_vocab_size")


#: The report's reason for skipping EAD when no V is given.
NO_VOCABULARY_REASON = (
    "EAD needs --ead-vocab-size V, the vocabulary size of the model that generated the responses "
    "(Liu et al.'s code takes it from the model and refuses to run without one; EAD moves with V)"
)


def _blocked(options: Settings) -> str | None:
    if options.ead_vocab_size is None and not options.ead_vocab_from_responses:
        return NO_VOCABULARY_REASON
    return None


def _ead(data: JobData, model: str | None, options: Settings, progress: Progress) -> StepOutcome:
    reason = _blocked(options)
    if reason is not None:  # the job checks ``blocked`` first; a direct call is refused alike
        raise StepSkipped(reason)
    # the metric's code: deferred so the CLI's --help reads this module alone
    from dialeval.metrics.expectation_adjusted_distinct import expectation_adjusted_distinct_scores

    counted = options.ead_vocab_from_responses and options.ead_vocab_size is None
    with arguments_named({"n": "ead_n", "vocab_size": "ead_vocab_size"}):
        result = expectation_adjusted_distinct_scores(
            data.sets if data.sets is not None else data.responses,
            n=options.ead_n,
            vocab_size=options.ead_vocab_size,
            vocab_texts=data.responses if counted else None,
            allow_empty=options.allow_empty,
        )
    progress(data.num_units)
    summary = {key: result[key] for key in ("ead", "distinct", "n", "vocab_size")}
    if result["scope"] == "corpus":
        return StepOutcome(summary)
    return StepOutcome(
        summary,
        [{"ead": row["ead"]} for row in result["per_set"]],
        kept=[row["distinct"] for row in result["per_set"]],
    )


def _resampling(data: JobData, outcome: StepOutcome, options: Settings, model: str | None) -> dict:
    """A corpus's EAD and Distinct-n recomputed exactly from per-response n-gram counts; on
    response sets, ``distinct`` is the mean of the per-set values (kept by the run, or counted
    again after a checkpoint: no model)."""
    # the metric's code and the engines (numpy, scipy): deferred so --help reads this module alone
    from dialeval.metrics.expectation_adjusted_distinct.resampling import ead_statistics
    from dialeval.resampling import mean_statistic

    if data.sets is None:
        counted = options.ead_vocab_from_responses and options.ead_vocab_size is None
        return ead_statistics(data, options.ead_n, None if counted else options.ead_vocab_size)
    per_set = outcome.kept
    if per_set is None:
        per_set = [
            _ead(JobData("corpus", responses), None, options, lambda n: None).summary["distinct"]
            for responses in data.sets
        ]
    return {"distinct": mean_statistic(per_set)}


STEPS = (
    JobStep(
        "ead",
        ("response_set", "corpus"),
        _ead,
        options=(JobOptions, EADOptions),
        blocked=_blocked,
        resampling=_resampling,
    ),
)
