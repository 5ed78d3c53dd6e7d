"""``dialeval evaluate``'s NLI Diversity step (Stasaski & Hearst 2022): every NLI figure from one
pass of the pairs."""

from __future__ import annotations

from dataclasses import dataclass

from dialeval.metrics.engines.job_steps import (
    JobData,
    JobOptions,
    JobStep,
    Progress,
    Settings,
    StepOutcome,
)
from dialeval.metrics.nli_diversity.defaults import DEFAULT_NLI_MODEL, NLI_FIGURES
from dialeval.option_fields import model_list_field


@dataclass
class NLIOptions:
    """The NLI classifiers of NLI Diversity."""

    nli_models: list[str] = model_list_field(
        "--nli-model", DEFAULT_NLI_MODEL, "NLI classifier for NLI Diversity"
    )


def _nli(data: JobData, model: str, options: Settings, progress: Progress) -> StepOutcome:
    # metric code (numpy, model stacks): deferred so the declaration's import stays light
    from dialeval.metrics.nli_diversity import nli_diversity

    # Baseline, Neutral and Confidence NLI Diversity come from the same pair probabilities.
    result = nli_diversity(
        data.response_sets(),
        model,
        batch_size=options.batch_size,
        device=options.device,
        backend=options.backend,
        allow_empty=options.allow_empty,
        progress=progress,
    )
    keys = (*NLI_FIGURES, "num_pairs", "num_unique_pairs", "num_truncated")
    return StepOutcome({**{key: result[key] for key in keys}, "model": model}, result["per_set"])


def _resampling(data: JobData, outcome: StepOutcome, options: Settings, model: str) -> dict:
    """The pair counts: ``num_pairs`` exactly (each set's ordered pairs); how many distinct or
    truncated pairs went to the model is the whole input's, the same on every resample."""
    # engines (numpy): deferred so the declaration's import stays light
    from dataclasses import replace

    from dialeval.metrics.engines.figure_statistics import constant_statistic
    from dialeval.resampling import UnitStatistic

    pairs = [len(responses) * (len(responses) - 1) for responses in data.response_sets()]
    statistics = {
        "num_pairs": UnitStatistic(
            data.num_units, lambda counts: counts @ pairs, "each set's ordered pairs, summed"
        )
    }
    for key in ("num_unique_pairs", "num_truncated"):
        fixed = constant_statistic(
            outcome.summary[key], data.num_units, "the whole input's count (work done)"
        )
        statistics[key] = replace(fixed, exact=False)
    return statistics


STEPS = (
    JobStep(
        "nli",
        ("response_set",),
        _nli,
        options=(JobOptions, NLIOptions),
        models=lambda options: options.nli_models,
        model_flag="--nli-model",
        report_name="nli_diversity",
        resampling=_resampling,
    ),
)
