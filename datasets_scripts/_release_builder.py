"""The base of every released test set's builder (``datasets``' builder, its options checked)."""

from __future__ import annotations

from typing import Any

import datasets

from dialeval.datasets_scripts._sources import check_source_options
from dialeval.validation import check_flag


class ReleaseBuilder(datasets.GeneratorBasedBuilder):
    """A builder of a released test set: its source options are checked when it is made, before
    ``datasets`` creates a folder named after ``cache_dir`` or reads a file."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        check_source_options(
            kwargs.get("data_dir"), kwargs.get("cache_dir"), kwargs.get("verify_checksums", True)
        )
        super().__init__(*args, **kwargs)
        # a config object passed whole carries its own value
        check_flag(getattr(self.config, "verify_checksums", True), "verify_checksums")
