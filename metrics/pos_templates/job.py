"""``dialeval evaluate``'s part-of-speech template step: template rate and templates per token,
per response set (each set's own templates) or of the whole corpus.

It needs a tagger (spaCy ``en_core_web_sm`` or NLTK's data), which a plain install lacks: the
step runs by default only where one is installed; ``--metric pos_templates`` on a machine without
one is an error saying how to install it.
"""

from __future__ import annotations

from dialeval.metrics.engines.job_steps import JobData, JobOptions, JobStep, StepOutcome
from dialeval.metrics.pos_templates import pos_template_scores, tagger_available
from dialeval.metrics.pos_templates.taggers import HOW_TO_INSTALL

SUMMARY_KEYS = ("template_rate", "templates_per_token")


def _pos_templates(data: JobData, model, options, progress) -> StepOutcome:
    result = pos_template_scores(
        data.sets if data.sets is not None else data.responses, allow_empty=options.allow_empty
    )
    progress(data.num_units)
    summary = {key: result[key] for key in SUMMARY_KEYS}
    if data.sets is None:
        summary.update(
            num_templates=result["num_templates"], num_template_spans=result["num_template_spans"]
        )
    return StepOutcome(summary, result.get("per_set"))


STEPS = (
    JobStep(
        "pos_templates",
        ("response_set", "corpus"),
        _pos_templates,
        options=(JobOptions,),
        applies=lambda options: tagger_available(),
        needs=f"a part-of-speech tagger and sentence splitter: {HOW_TO_INSTALL}",
    ),
)
