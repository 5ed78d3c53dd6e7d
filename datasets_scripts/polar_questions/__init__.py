from dialeval.datasets_scripts.polar_questions.polar_questions import (
    PolarQuestions,
    PolarQuestionsConfig,
    build_polar_question_sets,
    read_multinli,
)
from dialeval.datasets_scripts.polar_questions.rewriting import (
    SpacyTagger,
    TaggedToken,
    TaggerNotAvailableError,
    Unrewritable,
    answer_sentence,
    history_utterance,
    polar_question,
)

__all__ = [
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
    "read_multinli",
]
