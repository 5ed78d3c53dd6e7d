"""Builder registry and ``load``: datasets 5 runs no loading scripts, so builders are instantiated
here."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from dialeval.datasets_scripts._sources import check_source_options
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    import datasets

#: Other names ``load`` takes for a split, as the papers say them (``dialeval dtg --split`` takes
#: the same).
SPLIT_ALIASES = {"dev": "validation"}

#: dataset name -> (module, builder class).
BUILDERS = {
    "diversity_eval": ("dialeval.datasets_scripts.diversity_eval.diversity_eval", "DiversityEval"),
    "dailydialog_pp": (
        "dialeval.datasets_scripts.dailydialog_pp.dailydialog_pp",
        "DailyDialogPlusPlus",
    ),
    "polar_questions": (
        "dialeval.datasets_scripts.polar_questions.polar_questions",
        "PolarQuestions",
    ),
    "circa": ("dialeval.datasets_scripts.circa.circa", "Circa"),
    "response_selection": (
        "dialeval.datasets_scripts.response_selection.response_selection",
        "ResponseSelection",
    ),
    "empathetic_dialogues": (
        "dialeval.datasets_scripts.empathetic_dialogues.empathetic_dialogues",
        "EmpatheticDialogues",
    ),
    "dailydialog": ("dialeval.datasets_scripts.dailydialog.dailydialog", "DailyDialog"),
}


def builder_class(name: str) -> type[datasets.GeneratorBasedBuilder]:
    if not isinstance(name, str) or name not in BUILDERS:
        raise ArgumentError("name", f"must be one of {sorted(BUILDERS)}, got {name!r}")
    module, cls = BUILDERS[name]
    return getattr(importlib.import_module(module), cls)


def config_names(name: str) -> list[str]:
    return [config.name for config in builder_class(name).BUILDER_CONFIGS]


def make_builder(
    name: str,
    config: str | None = None,
    data_dir: str | None = None,
    cache_dir: str | None = None,
    verify_checksums: bool = True,
    **config_kwargs: Any,
) -> datasets.GeneratorBasedBuilder:
    """``config_kwargs``: further fields of the builder's config (e.g. response_selection's
    ``opensubtitles_file``)."""
    cls = builder_class(name)
    check_source_options(data_dir, cache_dir, verify_checksums)
    if config is not None and config not in config_names(name):
        raise ArgumentError(
            "config", f"must be one of {config_names(name)} for {name!r}, got {config!r}"
        )
    return cls(
        config_name=config,
        data_dir=data_dir,
        cache_dir=cache_dir,
        verify_checksums=verify_checksums,
        **config_kwargs,
    )


def prepare(builder: datasets.DatasetBuilder) -> None:
    """``download_and_prepare``, with a bad source file reported as the builder's own ValueError
    (a missing tagger or file as its OSError): datasets wraps generation errors in
    DatasetGenerationError, which hides the file and record."""
    # datasets: deferred to the one path that needs it
    from datasets.exceptions import DatasetGenerationError

    try:
        builder.download_and_prepare()
    except DatasetGenerationError as error:
        if isinstance(error.__cause__, (ValueError, OSError)):
            raise error.__cause__ from None
        raise


def split_name(split: str) -> str:
    """The builders' name of ``split``: ``"dev"`` is ``"validation"`` (:data:`SPLIT_ALIASES`),
    others are unchanged."""
    if not isinstance(split, str):
        raise ArgumentError("split", f"must be a split name (a string), got {split!r}")
    return SPLIT_ALIASES.get(split, split)


def load(
    name: str,
    config: str | None = None,
    data_dir: str | None = None,
    split: str | None = None,
    cache_dir: str | None = None,
    verify_checksums: bool = True,
    **config_kwargs: Any,
) -> datasets.Dataset | datasets.DatasetDict:
    """A ``datasets.Dataset`` (``split`` given) or ``DatasetDict`` of test set ``name``.

    ``data_dir``: a local folder with the released files (else they are downloaded from their
    pinned public URLs); every file is checked against its sha256 unless ``verify_checksums``
    is False. Raises :class:`~dialeval.datasets_scripts._sources.SourceNotAvailableError` with
    the URL to fetch when a file is neither local nor downloadable. ``config_kwargs`` go to the
    builder's config (e.g. ``load("response_selection", opensubtitles_file=...)``). ``split``
    takes the builder's split names and the aliases of :data:`SPLIT_ALIASES` (``"dev"``).
    """
    wanted = split_name(split) if split is not None else None
    builder = make_builder(name, config, data_dir, cache_dir, verify_checksums, **config_kwargs)
    prepare(builder)
    if wanted is not None:
        available = list(builder.info.splits)
        if wanted not in available:
            aliases = [
                f"{alias!r} for {target!r}"
                for alias, target in SPLIT_ALIASES.items()
                if target in available
            ]
            also = f" (or {', '.join(aliases)})" if aliases else ""
            raise ArgumentError(
                "split",
                f"must be one of {available}{also} for {name!r} config {builder.config.name!r}, "
                f"got {split!r}",
            )
    return builder.as_dataset(split=wanted)
