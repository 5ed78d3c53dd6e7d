"""dialeval.datasets_scripts: ``datasets`` builders for the papers' test sets, and one way in.

``load(name, config=None, data_dir=None, split=None)`` builds (and caches) a set with its
builder; ``export_dataset`` writes Parquet plus a dataset card, ready for the Hub. datasets 5
does not run loading scripts, so the builders are classes instantiated here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
    from dialeval.datasets_scripts.export import export_dataset
    from dialeval.datasets_scripts.registry import (
        BUILDERS,
        SPLIT_ALIASES,
        builder_class,
        config_names,
        load,
        make_builder,
        prepare,
        split_name,
    )
else:
    # each name is imported from its module on first use
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".export": ("export_dataset",),
            ".registry": (
                "BUILDERS",
                "SPLIT_ALIASES",
                "builder_class",
                "config_names",
                "load",
                "make_builder",
                "prepare",
                "split_name",
            ),
        },
    )

__all__ = [
    "BUILDERS",
    "SPLIT_ALIASES",
    "builder_class",
    "config_names",
    "export_dataset",
    "load",
    "make_builder",
    "prepare",
    "split_name",
]
