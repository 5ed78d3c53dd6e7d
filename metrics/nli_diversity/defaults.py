"""NLI Diversity's light constants: its default model and its figures (read by ``spec.py`` and
``job.py`` without loading the classifier's code)."""

DEFAULT_NLI_MODEL = "FacebookAI/roberta-large-mnli"

#: Figure names, in the order the module reports them.
NLI_FIGURES = (
    "nli_diversity",
    "nli_diversity_neutral",
    "nli_diversity_confidence",
    "num_contradiction",
    "num_neutral",
    "num_entailment",
)
