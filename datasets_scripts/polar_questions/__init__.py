from dialeval.datasets_scripts.polar_questions.polar_questions import (
    PolarQuestions,
    PolarQuestionsConfig,
    build_polar_question_sets,
    read_multinli,
)
from dialeval.datasets_scripts.polar_questions.rewriting import (
    MissingDependencyLabels,
    SpacyTagger,
    TaggedToken,
    TaggerNotAvailableError,
    Unrewritable,
    answer_sentence,
    history_utterance,
    polar_question,
    premise_skip_reason,
    skip_reason,
)

__all__ = [
    "MissingDependencyLabels",
    "PolarQuestions",
    "PolarQuestionsConfig",
    "SpacyTagger",
    "TaggedToken",
    "TaggerNotAvailableError",
    "Unrewritable",
    "answer_sentence",
    "build_polar_question_sets",
    "history_utterance",
    "polar_question",
    "premise_skip_reason",
    "read_multinli",
    "skip_reason",
]
