from dialeval.datasets_scripts.dailydialog_pp.dailydialog_pp import (
    DailyDialogPlusPlus,
    DailyDialogPlusPlusConfig,
)

__all__ = ["DailyDialogPlusPlus", "DailyDialogPlusPlusConfig"]
