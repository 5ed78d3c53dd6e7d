"""The model card the diversity trainers write beside a saved model (as TRL's trainers do).

A ``README.md`` with the Hub's metadata (``library_name``, ``base_model``, ``tags``) and the
method, its paper, the hyperparameters, what training did and how it differs from the paper.
Built with ``huggingface_hub.ModelCard``, so ``ModelCard.load`` reads it back.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from dialeval.type_aliases import StrPath

if TYPE_CHECKING:
    from huggingface_hub import ModelCard

PACKAGE_TAGS = ("dialeval", "dialogue", "generated_from_trainer")


def _value(value: object) -> str:
    return "None" if value is None else str(value).replace("|", "\\|")


def _table(rows: dict) -> str:
    lines = ["| name | value |", "|---|---|"]
    lines += [f"| `{name}` | {_value(value)} |" for name, value in rows.items()]
    return "\n".join(lines)


def base_model_id(model: object) -> str | None:
    """The Hub id the model was loaded from; None for a local folder or a model built in code."""
    name = getattr(getattr(model, "config", None), "name_or_path", None)
    if not name or os.path.isdir(name) or os.path.isabs(name) or name.startswith("."):
        return None
    return name


def build_model_card(
    *,
    model_name: str,
    base_model: str | None,
    tags: list[str],
    title: str,
    method: str,
    hyperparameters: dict,
    training: dict,
    differences: list[str],
    citation: str,
) -> ModelCard:
    """A ``huggingface_hub.ModelCard`` (front matter + Markdown)."""
    # huggingface_hub: deferred to the one path that needs it
    from huggingface_hub import ModelCard, ModelCardData

    data = ModelCardData(
        library_name="transformers",
        base_model=base_model,
        tags=[*tags, *PACKAGE_TAGS],
        model_name=model_name,
    )
    origin = (
        f"a fine-tuned version of [{base_model}](https://huggingface.co/{base_model})"
        if base_model
        else "a model"
    )
    body = [
        f"# {model_name}",
        f"This model is {origin} trained with {title} by `dialeval.trainers`.",
        "## Method",
        method,
        "## Hyperparameters",
        _table(hyperparameters),
        "## Training",
        _table(training),
    ]
    if differences:
        body += [
            "## Differences from the paper and the authors' code",
            "\n".join(f"- {line}" for line in differences),
        ]
    body += ["## Citation", f"```bibtex\n{citation.strip()}\n```"]
    return ModelCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n\n".join(body) + "\n")


def save_model_card(card: ModelCard, directory: StrPath) -> Path:
    path = Path(directory) / "README.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    card.save(str(path))
    return path
