from dialeval.datasets_scripts.diversity_eval.diversity_eval import (
    DiversityEval,
    DiversityEvalConfig,
)

__all__ = ["DiversityEval", "DiversityEvalConfig"]
