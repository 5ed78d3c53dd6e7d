"""What `dialeval evaluate` reports, derived from the registry: the CLI tests compare a report's
figures with this instead of a hand-kept list, so a metric added to the registry needs no edit
there (tests/cli/test_default_job_order.py pins the order a user sees)."""

from __future__ import annotations

from dialeval.metrics import registry


def expected_figures(scope: str, options, models: dict[str, list[str]] | None = None) -> list[str]:
    """The report keys of the registry's steps on a ``scope`` input, in job order: every model-free
    step that fits the input (its ``applies(options)`` holds and nothing ``blocked`` it), and every
    model-backed one once per model of ``models[flag]`` (its model flag; none when the flag is not
    given)."""
    models = models or {}
    figures = []
    for step in registry.JOB_STEPS:
        if scope not in step.scopes or (step.applies is not None and not step.applies(options)):
            continue
        if step.blocked is not None and step.blocked(options) is not None:
            continue
        figures += (
            [step.label(None)]
            if step.models is None
            else [step.label(model) for model in models.get(step.model_flag, [])]
        )
    return figures


#: ``dialeval evaluate`` flags that turn off every large model the machine lacks (the embedded
#: MiniLM too), so a CLI test runs the model-free steps alone; ``--no-progress`` first.
MODELS_OFF = [
    "--no-progress",
    "--no-sentence-model",
    "--nli-model",
    "none",
    "--bertscore-model",
    "none",
    "--cross-encoder-model",
    "none",
]
