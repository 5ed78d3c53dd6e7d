"""``dialeval evaluate``'s part-of-speech template step: template rate and templates per token,
per response set (each set's own templates) or of the whole corpus.

It needs a tagger (spaCy ``en_core_web_sm`` or NLTK's data), which a plain install lacks: on a
machine without one the step is reported under ``skipped`` with how to install it, and
``--metric pos_templates`` is an error saying so.
"""

from __future__ import annotations

from dialeval.metrics.engines.job_steps import (
    JobData,
    JobOptions,
    JobStep,
    Progress,
    Settings,
    StepOutcome,
)

SUMMARY_KEYS = ("template_rate", "templates_per_token")


def _no_tagger(options: Settings) -> str | None:
    """Why the step cannot run on this machine: no tagger installed (a plain install has none)."""
    # the metric's code: deferred so the CLI's --help reads this module alone
    from dialeval.metrics.pos_templates import tagger_available
    from dialeval.metrics.pos_templates.taggers import HOW_TO_INSTALL

    if tagger_available():
        return None
    return f"no part-of-speech tagger and sentence splitter is installed: {HOW_TO_INSTALL}"


def _pos_templates(
    data: JobData, model: str | None, options: Settings, progress: Progress
) -> StepOutcome:
    # the metric's code: deferred so the CLI's --help reads this module alone
    from dialeval.metrics.pos_templates import pos_template_scores

    result = pos_template_scores(
        data.sets if data.sets is not None else data.responses, allow_empty=options.allow_empty
    )
    progress(data.num_units)
    summary = {key: result[key] for key in SUMMARY_KEYS}
    if data.sets is None:
        summary.update(
            num_templates=result["num_templates"], num_template_spans=result["num_template_spans"]
        )
    return StepOutcome(
        summary, result.get("per_set"), kept=result.get("templates_per_token_scores")
    )


#: How a corpus's figures are resampled: re-extracting the templates per resample would tag it
#: again.
METHOD = "mean over the resample's responses, templates extracted once from the whole corpus"


def _resampling(data: JobData, outcome: StepOutcome, options: Settings, model: str | None) -> dict:
    """A corpus's figures with its templates fixed (the mean of per-response values)."""
    if data.sets is not None:
        return {}  # the means of the per-set values
    # the metric's code and the engines: deferred so the CLI's --help reads this module alone
    from dataclasses import replace

    from dialeval.metrics.engines.figure_statistics import (
        constant_statistic,
        response_mean_statistic,
    )
    from dialeval.metrics.pos_templates import pos_template_scores

    per_token = outcome.kept
    if per_token is None:  # taken from a checkpoint: tagged again (no model)
        per_token = pos_template_scores(data.responses, allow_empty=options.allow_empty)[
            "templates_per_token_scores"
        ]
    statistics = {
        "templates_per_token": response_mean_statistic(per_token, data, METHOD),
        "template_rate": response_mean_statistic(
            [float(value > 0) for value in per_token], data, METHOD
        ),
    }
    for key in ("num_templates", "num_template_spans"):
        fixed = constant_statistic(outcome.summary[key], data.num_units, METHOD)
        statistics[key] = replace(fixed, exact=False)
    return statistics


STEPS = (
    JobStep(
        "pos_templates",
        ("response_set", "corpus"),
        _pos_templates,
        options=(JobOptions,),
        blocked=_no_tagger,
        resampling=_resampling,
    ),
)
