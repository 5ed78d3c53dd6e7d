"""The Trainer plumbing DRESS and unlikelihood training share: their own token-normalized loss.

Both trainers compute the loss themselves from the logits (the model gets no ``labels``, so it
does not compute a second, discarded loss) and normalize it as transformers 5 does:

* gold targets are divided by ``num_items_in_batch``, the target-token count of the whole
  gradient-accumulation window, summed over processes when ``average_tokens_across_devices``
  (then the loss is multiplied by the number of processes, since DDP averages gradients);
  this is counted here for every model, not only those whose ``forward`` takes loss kwargs;
* a batch's negative responses (``negative_*`` keys) are divided by their *own* window count,
  carried in the batch as ``num_negative_items`` (Li et al. 2020 normalize the MLE and the
  unlikelihood term each by its token count; the DRESS code divides by the target-token count);
* ``loss_is_scaled_for_ga = True``: ``training_step`` must not divide by the accumulation steps again.

So per-device batch 1 x 4 accumulation steps gives the same update as batch 4 x 1 step.
Gold and negative rows are padded to one length and go through the model in one forward pass
(one pass, not two, keeps DistributedDataParallel's one-forward-one-backward contract); the
per-row losses are those of two separate passes, since rows never attend to each other.
"""
from __future__ import annotations

import torch
from transformers import Seq2SeqTrainer

from dialeval.trainers.data import NEGATIVE_PREFIX, DialogueCollator
from dialeval.trainers.losses import IGNORE_INDEX, count_target_tokens, weighted_nll_loss

NUM_NEGATIVE_ITEMS = "num_negative_items"
NEGATIVE_COLUMNS = tuple(NEGATIVE_PREFIX + key for key in ("input_ids", "attention_mask", "labels"))


def _pad_to(tensor: torch.Tensor, length: int, value: int) -> torch.Tensor:
    if tensor.shape[1] == length:
        return tensor
    padding = tensor.new_full((tensor.shape[0], length - tensor.shape[1]), value)
    return torch.cat([tensor, padding], dim=1)


def _left_pad(row: torch.Tensor, length: int, value: int) -> torch.Tensor:
    return torch.cat([row.new_full((length - row.shape[0],), value), row])


def stack_rows(first: dict, second: dict, pad_token_id: int) -> dict:
    """Row-concatenate two right-padded batches (same keys), padding to the longer of each key."""
    stacked = {}
    for key, value in first.items():
        other = second[key]
        fill = IGNORE_INDEX if key == "labels" else 0 if key.endswith("attention_mask") else pad_token_id
        length = max(value.shape[1], other.shape[1])
        stacked[key] = torch.cat([_pad_to(value, length, fill), _pad_to(other, length, fill)], dim=0)
    return stacked


class ResponseLossTrainer(Seq2SeqTrainer):
    """Base class: a ``Seq2SeqTrainer`` (so ``predict_with_generate`` works) with its own loss.

    Subclasses set :attr:`extra_columns` (kept through ``remove_unused_columns``) and implement
    :meth:`gold_weights` and :meth:`negative_loss`.
    """

    loss_is_scaled_for_ga = True
    extra_columns: tuple[str, ...] = ()

    def __init__(self, model=None, args=None, data_collator=None, train_dataset=None, eval_dataset=None,
                 processing_class=None, **kwargs):
        if model is None:
            raise ValueError("`model` is required (model_init is not supported by the diversity trainers)")
        if kwargs.get("compute_loss_func") is not None:
            raise ValueError("`compute_loss_func` cannot be combined with a trainer that defines its own loss")
        if args is not None and getattr(args, "label_smoothing_factor", 0.0):
            raise ValueError("`label_smoothing_factor` must be 0: the weighted NLL does no label smoothing")
        if args is not None and args.n_gpu > 1:
            raise ValueError("single-process multi-GPU (DataParallel) is not supported; launch one process per "
                             "device with torchrun / accelerate launch")
        self.is_encoder_decoder = bool(getattr(model.config, "is_encoder_decoder", False))
        self.pad_token_id = self._find_pad_token_id(model, processing_class)
        self.negative_collator = DialogueCollator(self.pad_token_id)
        if data_collator is None:
            data_collator = self.negative_collator
        super().__init__(model=model, args=args, data_collator=data_collator, train_dataset=train_dataset,
                         eval_dataset=eval_dataset, processing_class=processing_class, **kwargs)

    @staticmethod
    def _find_pad_token_id(model, processing_class) -> int:
        for candidate in (getattr(processing_class, "pad_token_id", None), model.config.pad_token_id,
                          getattr(processing_class, "eos_token_id", None), model.config.eos_token_id):
            if isinstance(candidate, int):
                return candidate
        raise ValueError("no pad token id: give `processing_class` a tokenizer with a pad or eos token")

    @property
    def shift_labels(self) -> bool:
        return not self.is_encoder_decoder

    # -- columns ---------------------------------------------------------------------------

    def _set_signature_columns_if_needed(self) -> None:
        super()._set_signature_columns_if_needed()
        # The weights and negatives are not forward() arguments, but the loss needs them.
        for column in self.extra_columns:
            if column not in self._signature_columns:
                self._signature_columns.append(column)

    # -- token counts over the accumulation window -----------------------------------------

    def _sum_over_processes(self, count: torch.Tensor, device) -> torch.Tensor:
        count = torch.as_tensor(count, device=device)
        if self.args.average_tokens_across_devices and self.args.world_size > 1:
            count = self.accelerator.gather(count).sum()
        return count

    def _get_num_items_in_batch(self, batch_samples: list, device) -> torch.Tensor | None:
        if not batch_samples or "labels" not in batch_samples[0]:
            return None
        count = sum(count_target_tokens(batch["labels"], self.shift_labels) for batch in batch_samples)
        return self._sum_over_processes(count, device)

    def attach_negatives(self, batch_samples: list) -> None:
        """Hook: add ``negative_*`` keys to the window's batches (DRESS draws them from its pool)."""

    def get_batch_samples(self, epoch_iterator, num_batches: int, device):
        batch_samples, num_items_in_batch = super().get_batch_samples(epoch_iterator, num_batches, device)
        self.attach_negatives(batch_samples)
        with_negatives = [batch for batch in batch_samples if NEGATIVE_COLUMNS[2] in batch]
        if with_negatives or (self.args.average_tokens_across_devices and self.args.world_size > 1):
            # Every process joins the gather, even one whose window has no negatives.
            count = sum((count_target_tokens(batch[NEGATIVE_COLUMNS[2]], self.shift_labels) for batch in with_negatives),
                        torch.tensor(0))
            count = self._sum_over_processes(count, device)
            for batch in with_negatives:
                batch[NUM_NEGATIVE_ITEMS] = count
        return batch_samples, num_items_in_batch

    # -- the loss --------------------------------------------------------------------------

    def gold_weights(self, inputs: dict) -> torch.Tensor | None:
        """Per-example weights of the gold rows (None: 1)."""
        return None

    def negative_loss(self, logits, labels, num_items) -> torch.Tensor:
        raise NotImplementedError

    def _model_inputs(self, model, batch: dict) -> dict:
        inputs = {"input_ids": batch["input_ids"], "use_cache": False}
        if "attention_mask" in batch:
            inputs["attention_mask"] = batch["attention_mask"]
        if self.is_encoder_decoder:
            unwrapped = self.accelerator.unwrap_model(model)
            if hasattr(unwrapped, "prepare_decoder_input_ids_from_labels"):
                inputs["decoder_input_ids"] = unwrapped.prepare_decoder_input_ids_from_labels(labels=batch["labels"])
            else:  # the model derives its decoder inputs from labels (and computes a loss we ignore)
                inputs["labels"] = batch["labels"]
        return inputs

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        """Gold weighted NLL / gold tokens + the subclass's negative term / negative tokens."""
        inputs = dict(inputs)
        weights = self.gold_weights(inputs)
        for column in self.extra_columns:
            if not column.startswith(NEGATIVE_PREFIX):
                inputs.pop(column, None)
        num_negative_items = inputs.pop(NUM_NEGATIVE_ITEMS, None)
        negative = {key[len(NEGATIVE_PREFIX):]: inputs.pop(key) for key in NEGATIVE_COLUMNS if key in inputs}
        if "labels" not in inputs:
            raise ValueError("the batch has no `labels`: the diversity trainers train on responses")
        gold = {key: inputs[key] for key in ("input_ids", "attention_mask", "labels") if key in inputs}
        num_gold_rows = gold["input_ids"].shape[0]
        if negative:
            if "attention_mask" not in negative and "attention_mask" in gold:
                negative["attention_mask"] = negative["input_ids"].ne(self.pad_token_id).long()
            batch = stack_rows(gold, {key: negative[key] for key in gold}, self.pad_token_id)
        else:
            batch = gold
        outputs = model(**self._model_inputs(model, batch))
        logits, labels = outputs.logits, batch["labels"]
        loss = weighted_nll_loss(logits[:num_gold_rows], labels[:num_gold_rows], weights, num_items_in_batch,
                                 self.shift_labels)
        if negative:
            loss = loss + self.negative_loss(logits[num_gold_rows:], labels[num_gold_rows:], num_negative_items)
        if self.args.average_tokens_across_devices and num_items_in_batch is not None:
            # The counts are global sums; DDP averages the gradients over processes.
            loss = loss * self.accelerator.num_processes
        if return_outputs:
            outputs["logits"] = logits[:num_gold_rows, : gold["labels"].shape[1] if self.is_encoder_decoder else gold["input_ids"].shape[1]]
            outputs.pop("loss", None)
            return loss, outputs
        return loss

    # -- evaluation ------------------------------------------------------------------------

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None, **gen_kwargs):
        if self.args.predict_with_generate and not prediction_loss_only:
            # generate() refuses keys it does not know; the generation path computes its own loss.
            inputs = {key: value for key, value in inputs.items()
                      if key not in self.extra_columns and key != NUM_NEGATIVE_ITEMS}
            if not self.is_encoder_decoder:
                return self._causal_generation_step(model, inputs, gen_kwargs)
        return super().prediction_step(model, inputs, prediction_loss_only, ignore_keys=ignore_keys, **gen_kwargs)

    def _causal_generation_step(self, model, inputs: dict, gen_kwargs: dict):
        """``predict_with_generate`` for a causal LM: generate from each example's context only.

        A causal example holds context + response in ``input_ids`` (right-padded); generating from
        it would continue after the gold response. Each row's context (the tokens before its first
        label) is left-padded and generated from; the predictions are the new tokens only and the
        labels the response tokens only, both starting at the response's first token, so
        ``compute_metrics`` compares like with like. ``generation_max_length`` counts new tokens.
        """
        inputs = self._prepare_inputs(inputs)
        loss = None
        if "labels" in inputs:
            with torch.no_grad(), self.compute_loss_context_manager():
                loss = self.compute_loss(model, inputs).detach()
        labels = inputs.get("labels")
        attention = inputs.get("attention_mask", torch.ones_like(inputs["input_ids"]))
        contexts, responses = [], []
        for row in range(inputs["input_ids"].shape[0]):
            length = int(attention[row].sum())
            targets = labels[row, :length].ne(IGNORE_INDEX).nonzero() if labels is not None else None
            start = int(targets[0]) if targets is not None and len(targets) else length
            contexts.append(inputs["input_ids"][row, :start])
            responses.append(labels[row, start:length] if labels is not None else None)
        width = max(len(context) for context in contexts)
        prompt_ids = torch.stack([_left_pad(context, width, self.pad_token_id) for context in contexts])
        prompt_mask = torch.stack([_left_pad(torch.ones_like(context), width, 0) for context in contexts])
        if not gen_kwargs and hasattr(self, "_gen_kwargs"):
            gen_kwargs = self._gen_kwargs.copy()
        gen_kwargs = {key: value for key, value in gen_kwargs.items() if value is not None}
        if "max_length" in gen_kwargs:
            gen_kwargs["max_new_tokens"] = gen_kwargs.pop("max_length")
        gen_kwargs.setdefault("pad_token_id", self.pad_token_id)
        generator = self.accelerator.unwrap_model(model)
        with torch.no_grad():
            generated = generator.generate(input_ids=prompt_ids, attention_mask=prompt_mask, **gen_kwargs)[:, width:]
        gold = None
        if labels is not None:
            longest = max(len(response) for response in responses)
            gold = torch.stack([_pad_to(response[None], longest, IGNORE_INDEX)[0] for response in responses])
        return loss, generated, gold
