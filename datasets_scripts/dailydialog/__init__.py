from dialeval.datasets_scripts.dailydialog.dailydialog import (
    DailyDialog,
    DailyDialogConfig,
    context_response_pairs,
    parlai_cleanup,
    read_dialogues,
)

__all__ = [
    "DailyDialog",
    "DailyDialogConfig",
    "context_response_pairs",
    "parlai_cleanup",
    "read_dialogues",
]
