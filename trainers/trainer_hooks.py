"""The one place dialeval's trainers override or read ``transformers.Trainer``'s private API.

Trainer has no public hook for four things the diversity trainers need: keeping their loss
columns (DRESS's weights, the negatives) through ``remove_unused_columns``, warning about the
columns it drops, counting the window's target tokens for every model (not only those whose
``forward`` takes loss kwargs), and saving their own state beside each checkpoint. This class
overrides exactly those private methods and turns each into a named hook of
:class:`~dialeval.trainers.response_loss_trainer.ResponseLossTrainer`, reading the columns
Trainer keeps in ``_signature_columns`` and the folder ``_get_output_dir`` names. Two more have
no public equivalent for an overridden ``prediction_step``: ``_prepare_inputs`` (the batch on
the device, as Trainer's own step feeds the model) and ``_gen_kwargs`` (where
``Seq2SeqTrainer.evaluate`` / ``predict`` keep the call's ``generate`` options); they are
:meth:`TrainerHooks.inputs_on_device` and :meth:`TrainerHooks.evaluation_generate_options`.
Nothing else in dialeval calls, reads or overrides a private Trainer name. setup.py caps
transformers below 6; a transformers that renames one of them fails
tests/root/test_host_adapters.py, which checks that each still exists.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from transformers import Seq2SeqTrainer
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

if TYPE_CHECKING:
    import datasets
    import torch

#: Trainer's private methods overridden below (tests check that transformers still defines each).
OVERRIDDEN_PRIVATE_METHODS = (
    "_set_signature_columns_if_needed",
    "_remove_unused_columns",
    "_get_collator_with_removed_columns",
    "_get_num_items_in_batch",
    "_save_checkpoint",
)

#: Trainer's private methods called and instance attributes read below (tests check that
#: transformers still defines each).
READ_PRIVATE_NAMES = ("_signature_columns", "_get_output_dir", "_prepare_inputs", "_gen_kwargs")


class TrainerHooks(Seq2SeqTrainer):
    """``Seq2SeqTrainer`` with its private column, token-count and checkpoint steps as hooks."""

    #: Columns the loss reads that are not ``forward()`` arguments (kept through
    #: ``remove_unused_columns``).
    extra_columns: tuple[str, ...] = ()

    def forward_columns(self) -> list[str]:
        """The columns ``remove_unused_columns`` keeps: ``forward()``'s arguments plus
        :attr:`extra_columns`."""
        self._set_signature_columns_if_needed()
        assert self._signature_columns is not None  # set by the call above
        return list(self._signature_columns)

    def dropped_columns_seen(
        self, column_names: list[str], kept: list[str], description: str | None
    ) -> None:
        """Hook: ``remove_unused_columns`` is about to drop ``column_names`` not in ``kept``."""

    def collator_for_kept_columns(
        self, collator: Callable[[list], dict[str, Any]], kept: list[str], description: str | None
    ) -> Callable[[list], dict[str, Any]]:
        """Hook: the collator Trainer built for an iterable / torch dataset (default: unchanged)."""
        return collator

    def window_target_count(
        self, batch_samples: list, device: torch.device
    ) -> torch.Tensor | int | None:
        """Hook: the accumulation window's target-token count (default: Trainer's own count)."""
        return Seq2SeqTrainer._get_num_items_in_batch(self, batch_samples, device)

    def checkpoint_saved(self, checkpoint_dir: str) -> None:
        """Hook: Trainer has just written ``checkpoint_dir`` (on the saving process)."""

    # -- Trainer's private state, read -----------------------------------------------------

    def inputs_on_device(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """The batch as Trainer's own ``prediction_step`` feeds it to the model (tensors on the
        device)."""
        prepared: dict[str, Any] = self._prepare_inputs(inputs)
        return prepared

    def evaluation_generate_options(self) -> dict[str, Any]:
        """A copy of the ``generate`` options given to the running ``evaluate`` / ``predict``
        call (empty before the first)."""
        options: dict[str, Any] = getattr(self, "_gen_kwargs", {}).copy()
        return options

    # -- Trainer's private methods ---------------------------------------------------------

    def _set_signature_columns_if_needed(self) -> None:
        super()._set_signature_columns_if_needed()
        assert self._signature_columns is not None  # set by the call above
        for column in self.extra_columns:
            if column not in self._signature_columns:
                self._signature_columns.append(column)

    def _remove_unused_columns(
        self, dataset: datasets.Dataset, description: str | None = None
    ) -> datasets.Dataset:
        if self.args.remove_unused_columns:
            self.dropped_columns_seen(dataset.column_names, self.forward_columns(), description)
        return super()._remove_unused_columns(dataset, description)

    def _get_collator_with_removed_columns(
        self, data_collator: Callable, description: str | None = None
    ) -> Callable:
        collator = super()._get_collator_with_removed_columns(data_collator, description)
        if not self.args.remove_unused_columns:
            return collator
        return self.collator_for_kept_columns(collator, self.forward_columns(), description)

    def _get_num_items_in_batch(
        self, batch_samples: list, device: torch.device
    ) -> torch.Tensor | int | None:
        return self.window_target_count(batch_samples, device)

    # trial: an optuna trial or a dict of hyperparameters (Trainer's hyperparameter search), or None
    def _save_checkpoint(self, model: torch.nn.Module, trial: Any) -> None:
        super()._save_checkpoint(model, trial)
        if self.args.should_save:
            folder = f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}"
            self.checkpoint_saved(os.path.join(self._get_output_dir(trial=trial), folder))
