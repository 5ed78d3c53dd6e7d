from dialeval.datasets_scripts.empathetic_dialogues.empathetic_dialogues import (
    EmpatheticDialogues,
    EmpatheticDialoguesConfig,
    read_conversations,
    split_turn,
)

__all__ = ["EmpatheticDialogues", "EmpatheticDialoguesConfig", "read_conversations", "split_turn"]
