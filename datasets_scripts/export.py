"""Export a test set as Parquet plus its dataset card, so the Hub can serve it to plain
``load_dataset``.

Layout (the Hub's convention for multi-config Parquet repos)::

    DIR/README.md                                  the builder's card, ``configs:`` set to what was written
    DIR/<config>/<split>-00000-of-00001.parquet

``datasets.load_dataset(DIR or REPO, <config>)`` then reads it without dialeval.
"""  # noqa: E501

from __future__ import annotations

import importlib
import io
from pathlib import Path

import yaml

from dialeval.atomic_files import MANIFEST_NAME, write_atomically
from dialeval.datasets_scripts._sources import check_source_options
from dialeval.datasets_scripts.registry import (
    BUILDERS,
    builder_class,
    config_names,
    make_builder,
    prepare,
)
from dialeval.validation import ArgumentError, check_flag, check_path, require_collection

#: The dataset card ``export_dataset`` writes at the top of its folder.
CARD_FILE = "README.md"


def parquet_pattern() -> str:
    """The paths (a glob under the folder) of every Parquet file ``export_dataset`` writes."""
    return "*/*-00000-of-00001.parquet"


def dataset_card_path(name: str) -> Path:
    module_file = importlib.import_module(BUILDERS[name][0]).__file__
    assert module_file is not None  # a builder is a module file, not a namespace package
    return Path(module_file).with_name("README.md")


def _split_front_matter(text: str, path: Path) -> tuple[dict, str]:
    if not text.startswith("---\n"):
        raise ValueError(
            f"{path}: a dataset card must start with a YAML header between '---' lines"
        )
    header, _, body = text[4:].partition("\n---\n")
    return yaml.safe_load(header) or {}, body


def exported_card(name: str, splits_by_config: dict[str, list[str]]) -> str:
    """The builder's card with its ``configs:`` metadata listing the exported Parquet files."""
    path = dataset_card_path(name)
    metadata, body = _split_front_matter(path.read_text(encoding="utf-8"), path)
    default = builder_class(name).DEFAULT_CONFIG_NAME
    metadata["configs"] = [
        {
            "config_name": config,
            **({"default": True} if config == default else {}),
            "data_files": [
                {"split": split, "path": f"{config}/{split}-*.parquet"} for split in splits
            ],
        }
        for config, splits in splits_by_config.items()
    ]
    header = yaml.safe_dump(metadata, sort_keys=False, allow_unicode=True)
    return f"---\n{header}---\n{body}"


def export_dataset(
    name: str,
    to: str | Path,
    configs: list[str] | None = None,
    data_dir: str | None = None,
    cache_dir: str | None = None,
    verify_checksums: bool = True,
    push_to_hub: str | None = None,
    private: bool = False,
    token: str | None = None,
) -> Path:
    """Write every config (or ``configs``) of ``name`` under ``to``; upload to dataset repo
    ``push_to_hub`` if given."""
    builder_class(name)
    check_path(to, "to")
    check_source_options(data_dir, cache_dir, verify_checksums)
    check_flag(private, "private")
    if configs is not None:
        require_collection(configs, "configs", "a list of config names")
    for value, argument in ((push_to_hub, "push_to_hub"), (token, "token")):
        if value is not None and not isinstance(value, str):
            raise ArgumentError(
                argument, f"must be a string or None, got {type(value).__name__}: {value!r:.60}"
            )
    configs = list(configs) if configs else config_names(name)
    unknown = [config for config in configs if config not in config_names(name)]
    if unknown:
        raise ArgumentError(
            "configs", f"has {unknown}, not configs of {name!r} (choose from {config_names(name)})"
        )
    out = Path(to)
    splits_by_config = {}
    for config in configs:
        builder = make_builder(name, config, data_dir, cache_dir, verify_checksums)
        prepare(builder)
        splits_by_config[config] = list(builder.info.splits)
        for split in splits_by_config[config]:
            target = out / config / f"{split}-00000-of-00001.parquet"
            buffer = io.BytesIO()  # whole files only, recorded as dialeval's for a rerun
            builder.as_dataset(split=split).to_parquet(buffer)
            write_atomically(target, buffer.getvalue())
    write_atomically(out / CARD_FILE, exported_card(name, splits_by_config))
    if push_to_hub:
        # huggingface_hub: deferred to the one path that needs it
        from huggingface_hub import HfApi

        api = HfApi(token=token)
        api.create_repo(push_to_hub, repo_type="dataset", private=private, exist_ok=True)
        api.upload_folder(
            repo_id=push_to_hub,
            repo_type="dataset",
            folder_path=str(out),
            commit_message=f"dialeval export-dataset {name}",
            ignore_patterns=[MANIFEST_NAME],  # dialeval's bookkeeping, not the dataset's
        )
    return out
