"""``dialeval evaluate``'s EAD step: per response set (and their mean), or of the whole corpus."""

from __future__ import annotations

from dataclasses import dataclass, field

from dialeval.metrics.engines.job_steps import JobData, JobOptions, JobStep, StepOutcome
from dialeval.metrics.expectation_adjusted_distinct import (
    DEFAULT_VOCAB_SIZE,
    expectation_adjusted_distinct_scores,
)
from dialeval.option_fields import option
from dialeval.validation import arguments_named, check_int


@dataclass
class EADOptions:
    """Settings of the EAD step."""

    ead_n: int = field(default=1, metadata=option("--ead-n", help="n-gram order of EAD"))
    ead_vocab_size: int = field(
        default=DEFAULT_VOCAB_SIZE,
        metadata=option(
            "--ead-vocab-size",
            help="EAD's vocabulary size V (BERT's 30,522 by default; use your generator's)",
        ),
    )

    def __post_init__(self):
        check_int(self.ead_n, "ead_n")  # before any step runs
        check_int(self.ead_vocab_size, "ead_vocab_size")


def _ead(data: JobData, model, options, progress) -> StepOutcome:
    with arguments_named({"n": "ead_n", "vocab_size": "ead_vocab_size"}):
        result = expectation_adjusted_distinct_scores(
            data.sets if data.sets is not None else data.responses,
            n=options.ead_n,
            vocab_size=options.ead_vocab_size,
            allow_empty=options.allow_empty,
        )
    progress(data.num_units)
    summary = {key: result[key] for key in ("ead", "distinct", "n", "vocab_size")}
    if result["scope"] == "corpus":
        return StepOutcome(summary)
    return StepOutcome(summary, [{"ead": row["ead"]} for row in result["per_set"]])


STEPS = (JobStep("ead", ("response_set", "corpus"), _ead, options=(JobOptions, EADOptions)),)
