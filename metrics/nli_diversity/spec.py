"""NLI Diversity's contract (Stasaski & Hearst 2022)."""

from __future__ import annotations

from dialeval.metrics.engines.metric_spec import MetricSpec, ModelSpec, SetFigure
from dialeval.metrics.nli_diversity.defaults import DEFAULT_NLI_MODEL
from dialeval.metrics.nli_diversity.job import STEPS

SPEC = MetricSpec(
    "nli_diversity",
    "NLI Diversity: Baseline, Neutral and Confidence (Stasaski & Hearst 2022)",
    ("nli_diversity", "nli_pair_matrices", "iter_nli_pair_matrices"),
    order=30,
    steps=STEPS,
    # Baseline, Neutral and Confidence come from one run of the step
    set_figures=(
        SetFigure("nli", "nli", "nli_diversity"),
        SetFigure("nli_neutral", "nli", "nli_diversity_neutral"),
        SetFigure("nli_confidence", "nli", "nli_diversity_confidence"),
    ),
    model=ModelSpec("--nli-model", DEFAULT_NLI_MODEL, "NLI classifier"),
)
