"""``dialeval evaluate``'s lexical steps: set-level distinct-n / n-gram cosine, corpus Dist/Ent/LF,
Self-BLEU."""

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
class LexicalOptions:
    """Settings of the lexical steps."""

    max_n: int = field(
        default=5,
        metadata=option(
            "--max-n",
            help="highest n-gram order of the set-level metrics (at most the longest response's "
            "length in characters, or 5)",
        ),
    )
    corpus_max_n: int = 3
    lf_threshold: int = field(
        default=100, metadata=option("--lf-threshold", help="LF low-frequency count threshold")
    )

    def __post_init__(self) -> None:
        # refused before any step runs (a bad value must not cost the metrics before it, nor a
        # checkpoint)
        check_int(self.max_n, "max_n")
        check_int(self.corpus_max_n, "corpus_max_n")
        check_int(self.lf_threshold, "lf_threshold", 0)


def _check_max_n(response_sets: list[list[str]], max_n: int) -> None:
    """Refuse a ``--max-n`` above ``max(longest response in characters, 5)`` before scoring: a
    token holds at least one character, so higher orders are all no-n-gram orders (a mistyped
    ``--max-n 1000000000`` is refused rather than averaged into a score of ~0)."""
    # the metric's code: deferred so the CLI's --help reads this module alone
    from dialeval.metrics.lexical_diversity.order_bounds import check_listed_orders

    longest = max(
        (len(response) for responses in response_sets for response in responses), default=0
    )
    check_listed_orders("max_n", max_n, longest, LexicalOptions.max_n, "length in characters")


def _set_level(
    data: JobData, model: str | None, options: Settings, progress: Progress
) -> StepOutcome:
    # the metric's code: deferred so the CLI's --help reads this module alone
    from dialeval.metrics.lexical_diversity.by_scope import SET_METRICS, set_lexical_diversity

    sets = data.response_sets()
    _check_max_n(sets, options.max_n)
    result = set_lexical_diversity(
        sets, max_n=options.max_n, allow_empty=options.allow_empty, progress=progress
    )
    return StepOutcome({name: result[name] for name in SET_METRICS}, result["per_set"])


def _corpus(data: JobData, model: str | None, options: Settings, progress: Progress) -> StepOutcome:
    # the metric's code: deferred so the CLI's --help reads this module alone
    from dialeval.metrics.lexical_diversity.corpus import corpus_ngram_diversity, lf

    result: dict[str, object] = {
        **corpus_ngram_diversity(
            data.responses, max_n=options.corpus_max_n, allow_empty=options.allow_empty
        )
    }
    with arguments_named({"reference": "reference_corpus", "threshold": "lf_threshold"}):
        result["lf"] = lf(
            data.responses,
            reference=options.reference_corpus,
            threshold=options.lf_threshold,
            allow_empty=options.allow_empty,
        )
    result["lf_counted_against"] = (
        "reference corpus" if options.reference_corpus is not None else "the evaluated responses"
    )
    progress(data.num_units)
    return StepOutcome(result)


def _corpus_resampling(
    data: JobData, outcome: StepOutcome, options: Settings, model: str | None
) -> dict:
    """Dist-n, Ent-n, LF and the token count, recomputed exactly from per-unit n-gram counts
    (built here from the data: the run keeps nothing)."""
    # the metric's code (numpy, scipy): deferred so the CLI's --help reads this module alone
    from dialeval.metrics.lexical_diversity.corpus import token_counts
    from dialeval.metrics.lexical_diversity.resampling import corpus_statistics

    reference = options.reference_corpus
    return corpus_statistics(
        data,
        options.corpus_max_n,
        None if reference is None else token_counts(reference, argument="reference_corpus"),
        options.lf_threshold,
    )


def _self_bleu(
    data: JobData, model: str | None, options: Settings, progress: Progress
) -> StepOutcome:
    # the metric's code: deferred so the CLI's --help reads this module alone
    from dialeval.metrics.lexical_diversity.self_bleu import self_bleu

    if len(data.responses) < 2:
        raise StepSkipped(
            "Self-BLEU needs at least 2 responses (each is scored against the others)"
        )
    score, per_response = self_bleu(
        data.responses, max_n=3, allow_empty=options.allow_empty, return_per_response=True
    )
    progress(data.num_units)
    return StepOutcome({"self_bleu": score, "max_n": 3}, kept=per_response)


#: How Self-BLEU's interval is computed (its exact recomputation is O(n^2) per resample).
SELF_BLEU_METHOD = "mean of per-response Self-BLEU against the whole input (references fixed)"


def _self_bleu_resampling(
    data: JobData, outcome: StepOutcome, options: Settings, model: str | None
) -> dict:
    # the metric's code and the engines (numpy): deferred so the CLI's --help reads this alone
    from dialeval.metrics.engines.figure_statistics import response_mean_statistic
    from dialeval.metrics.lexical_diversity.self_bleu import self_bleu

    per_response = outcome.kept
    if per_response is None:  # taken from a checkpoint: recomputed, model-free
        _, per_response = self_bleu(
            data.responses, max_n=3, allow_empty=options.allow_empty, return_per_response=True
        )
    return {"self_bleu": response_mean_statistic(per_response, data, SELF_BLEU_METHOD)}


STEPS = (
    JobStep(
        "lexical_diversity", ("response_set",), _set_level, options=(JobOptions, LexicalOptions)
    ),
    JobStep(
        "corpus_lexical_diversity",
        ("response_set", "corpus"),
        _corpus,
        options=(JobOptions, LexicalOptions),
        resampling=_corpus_resampling,
    ),
    JobStep(
        "self_bleu",
        ("response_set", "corpus"),
        _self_bleu,
        options=(JobOptions,),
        resampling=_self_bleu_resampling,
    ),
)
