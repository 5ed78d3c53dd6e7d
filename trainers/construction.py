"""``args=None`` and ``model_init=`` as ``transformers.Trainer.__init__`` does them.

* ``args=None``: Trainer builds ``TrainingArguments(output_dir="tmp_trainer")`` (and logs it); the
  diversity trainers build their own config class the same way (:func:`default_config`), so the
  method's hyperparameters take their (the paper's) defaults.
* ``model_init``: Trainer seeds (``args.seed``, ``full_determinism``) and calls ``model_init()``
  to make the model, which needs neither ``model`` nor both; ``train(trial=...)`` seeds and calls it
  again (hyperparameter search). The diversity trainers read the model's config before
  ``Trainer.__init__`` (encoder-decoder or not, pad token, positions), so
  ``ResponseLossTrainer.model_for_init`` makes the model at that point, with Trainer's checks, seed
  and call, and hands that same model to ``Trainer.__init__``'s own ``call_model_init``, restoring
  the random state the call left (:func:`random_state`), which Trainer's second seeding reset: one
  model, made once, and the random streams after construction are plain Trainer's.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import torch
from transformers.trainer_utils import enable_full_determinism, set_seed

from dialeval.hub import is_shared_model
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    from transformers import PreTrainedModel, TrainingArguments

DEFAULT_OUTPUT_DIR = "tmp_trainer"

logger = logging.getLogger(__name__)

_Config = TypeVar("_Config", bound="TrainingArguments")


def default_config(config_class: type[_Config]) -> _Config:
    """What ``Trainer`` does with ``args=None``, with the trainer's own config class."""
    logger.info(f"No `{config_class.__name__}` passed, using `output_dir={DEFAULT_OUTPUT_DIR}`.")
    return config_class(output_dir=DEFAULT_OUTPUT_DIR)


def check_model_arguments(
    model: PreTrainedModel | torch.nn.Module | None,
    model_init: Callable[..., PreTrainedModel] | None,
) -> None:
    """Trainer's rule (and its errors): a ``model`` or a ``model_init``, not both."""
    if model is None and model_init is None:
        raise RuntimeError("`Trainer` requires either a `model` or `model_init` argument")
    if model is not None and model_init is not None:
        raise ArgumentError(
            "Trainer", "requires either a `model` or `model_init` argument, but not both."
        )


def refuse_shared_model(model: object, argument: str = "model") -> None:
    """A trainer never trains the instance :func:`dialeval.hub.load_model` shares with every metric
    and DTG call of the process: training it would change what they compute from then on."""
    if is_shared_model(model):
        raise ArgumentError(
            argument,
            "is the shared, read-only instance from `dialeval.hub.load_model` (its "
            "cache hands it to every metric and DTG call of this process): train a private copy, "
            "`load_model(..., cached=False).model` or `AutoModel...from_pretrained(...)`",
        )


def seed_as_trainer(args: TrainingArguments) -> None:
    """Trainer seeds before every ``model_init`` call."""
    enable_full_determinism(args.seed) if args.full_determinism else set_seed(args.seed)


def random_state() -> tuple:
    """The state of every random stream ``set_seed`` seeds (Python, numpy, torch, CUDA)."""
    return (
        random.getstate(),
        np.random.get_state(),
        torch.get_rng_state(),
        torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
    )


def restore_random_state(state: tuple) -> None:
    python_state, numpy_state, torch_state, cuda_states = state
    random.setstate(python_state)
    np.random.set_state(numpy_state)
    torch.set_rng_state(torch_state)
    if cuda_states is not None:
        torch.cuda.set_rng_state_all(cuda_states)
