"""The Trainer plumbing DRESS and unlikelihood training share: data checks, their own
token-normalized loss, evaluation, logging and the model card.

Loss. Both trainers compute the loss themselves from the logits (the model gets no ``labels``,
so it does not compute a second, discarded loss) and normalize it as transformers 5 does:

* gold targets are divided by ``num_items_in_batch``, the target-token count of the whole
  gradient-accumulation window, summed over processes when ``average_tokens_across_devices``;
  this is counted here for every model, not only those whose ``forward`` takes loss kwargs;
* the negative term is the subclass's (unlikelihood: divided by the window's negative tokens;
  DRESS: each generated row divided by the tokens of its group of generations, see
  :mod:`dialeval.trainers.dress_negative_schedule`);
* every term is this process's *share* of a sum over all processes, and the loss is multiplied
  by the number of processes, since DistributedDataParallel averages gradients;
* ``loss_is_scaled_for_ga = True``: ``training_step`` must not divide by the accumulation steps
  again.

So per-device batch 1 x 4 accumulation steps gives the same update as batch 4 x 1 step, and 2
processes x batch 2 the same as 1 x batch 4. Gold and negative rows are padded to one length and
go through the model in one forward pass (one pass, not two, keeps DistributedDataParallel's
one-forward-one-backward contract); the per-row losses are those of two separate passes, since
rows never attend to each other.

Logs. Each training log carries, beside Trainer's ``loss`` (the optimized objective):
``gold_nll`` (the plain NLL of the gold responses per gold token), ``weighted_nll`` (the gold
term as optimized: DRESS's Eq. 4 weights; equal to ``gold_nll`` for unlikelihood) and
``negative_loss`` (the negative term), each averaged over the steps since the last log.

Evaluation. ``eval_loss`` (``evaluate`` / ``predict``) is the plain gold NLL per response token,
with no weights and no negative term, so it compares with plain ``Trainer``'s;
``predict_with_generate`` works for causal models (generated from the context only) and
encoder-decoders.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, cast

import torch

from dialeval.hub import max_input_length
from dialeval.trainers.chat_formats import chat_training_texts
from dialeval.trainers.construction import (
    check_model_arguments,
    random_state,
    refuse_shared_model,
    restore_random_state,
    seed_as_trainer,
)
from dialeval.trainers.data import NEGATIVE_PREFIX, DialogueCollator
from dialeval.trainers.dataset_types import prepare_any_dataset
from dialeval.trainers.dropped_columns import ColumnsSaidCollator, warn_dropped_columns
from dialeval.trainers.example_checks import model_vocabulary_size
from dialeval.trainers.inputs import check_label_batch
from dialeval.trainers.losses import (
    IGNORE_INDEX,
    count_target_tokens,
    sequence_nll,
    warn_no_target_tokens,
)
from dialeval.trainers.model_card import base_model_id, build_model_card, save_model_card
from dialeval.trainers.trainer_hooks import TrainerHooks
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    from huggingface_hub import ModelCard
    from torch.utils.data import DataLoader
    from transformers import PreTrainedModel, Seq2SeqTrainingArguments, TrainingArguments

    from dialeval.trainers.dress_config import DRESSConfig
    from dialeval.trainers.inputs import TrainerDataset
    from dialeval.trainers.unlikelihood_config import UnlikelihoodConfig
    from dialeval.type_aliases import Tokenizer

NUM_NEGATIVE_ITEMS = "num_negative_items"
NEGATIVE_COLUMNS = tuple(NEGATIVE_PREFIX + key for key in ("input_ids", "attention_mask", "labels"))
ROW_KEYS = ("input_ids", "attention_mask", "labels")
LOSS_COMPONENTS = ("gold_nll", "weighted_nll", "negative_loss")
EVAL_RAW_COLUMNS = ("context", "response")


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
        fill = (
            IGNORE_INDEX
            if key == "labels"
            else 0
            if key.endswith("attention_mask")
            else pad_token_id
        )
        length = max(value.shape[1], other.shape[1])
        stacked[key] = torch.cat(
            [_pad_to(value, length, fill), _pad_to(other, length, fill)], dim=0
        )
    return stacked


class ResponseLossTrainer(TrainerHooks):
    """Base class: a ``Seq2SeqTrainer`` (so ``predict_with_generate`` works) with its own loss.

    Subclasses set :attr:`extra_columns` (kept through ``remove_unused_columns``),
    :attr:`required_batch_columns` (a collator that drops one is an error), :attr:`raw_text_columns`
    and :attr:`train_label_columns`, and implement :meth:`gold_weights`, :meth:`negative_loss` and
    :meth:`model_card`.
    """

    loss_is_scaled_for_ga = True
    required_batch_columns: tuple[str, ...] = ()
    raw_text_columns: tuple[str, ...] = ("context", "response")
    train_label_columns: tuple[str, ...] = ("labels",)
    args: Seq2SeqTrainingArguments
    processing_class: Tokenizer | None

    def __init__(
        self,
        model: PreTrainedModel | None = None,
        args: DRESSConfig | UnlikelihoodConfig | None = None,
        data_collator: Callable[[list], dict[str, Any]] | None = None,
        train_dataset: TrainerDataset | None = None,
        eval_dataset: TrainerDataset | dict[str, TrainerDataset] | None = None,
        processing_class: Tokenizer | None = None,
        model_init: Callable[..., PreTrainedModel] | None = None,
        **kwargs: Any,
    ) -> None:
        model = self.model_for_init(model, args, model_init)
        refuse_shared_model(model)
        if kwargs.get("compute_loss_func") is not None:
            raise ArgumentError(
                "compute_loss_func", "cannot be combined with a trainer that defines its own loss"
            )
        if args is not None and args.label_smoothing_factor:
            raise ArgumentError(
                "label_smoothing_factor", "must be 0: the weighted NLL does no label smoothing"
            )
        if args is not None and args.n_gpu > 1:
            raise ValueError(
                "single-process multi-GPU (DataParallel) is not supported; launch one process per "
                "device with torchrun / accelerate launch"
            )
        self.is_encoder_decoder = bool(getattr(model.config, "is_encoder_decoder", False))
        self.pad_token_id = self._find_pad_token_id(model, processing_class)
        self.negative_collator = DialogueCollator(self.pad_token_id)
        self.vocabulary_size = model_vocabulary_size(model)
        self._columns_said: set = set()
        self.train_response_texts: list[str] | None = None
        self.train_data_format: str | None = None
        limit = max_input_length(model.config, processing_class)
        assert args is not None  # the subclasses build their config when none is given
        self.max_example_length = (
            min(args.max_length, limit) if isinstance(limit, int) else args.max_length
        )
        if train_dataset is not None:
            raw = self._is_raw(train_dataset)
            if raw:
                self.train_response_texts = list(train_dataset["response"])
            given = train_dataset
            train_dataset = self._prepare(
                train_dataset,
                "train_dataset",
                processing_class,
                self.raw_text_columns,
                self.train_label_columns,
            )
            # TRL's formats: the completions / assistant turns are the responses
            # (trainers.chat_formats), read once preparing has checked every row
            self.train_data_format, chat_texts = chat_training_texts(given)
            self.train_response_texts = self.train_response_texts or chat_texts
        # Evaluation scores the gold responses only: it needs no negatives.
        if isinstance(eval_dataset, dict):
            eval_dataset = {
                name: self._prepare(
                    data, f"eval_dataset[{name!r}]", processing_class, EVAL_RAW_COLUMNS, ("labels",)
                )
                for name, data in eval_dataset.items()
            }
        elif eval_dataset is not None:
            eval_dataset = self._prepare(
                eval_dataset, "eval_dataset", processing_class, EVAL_RAW_COLUMNS, ("labels",)
            )
        if data_collator is None:
            data_collator = self.negative_collator
        # With model_init, Trainer.__init__ calls it: call_model_init hands it the model made above.
        super().__init__(
            model=None if model_init is not None else model,
            args=args,
            data_collator=data_collator,
            train_dataset=train_dataset,
            eval_dataset=eval_dataset,
            processing_class=processing_class,
            model_init=model_init,
            **kwargs,
        )
        self._loss_sums = torch.zeros(len(LOSS_COMPONENTS), device=self.args.device)
        self._loss_steps = 0

    @staticmethod
    def _find_pad_token_id(model: PreTrainedModel, processing_class: object) -> int:
        for candidate in (
            getattr(processing_class, "pad_token_id", None),
            model.config.pad_token_id,
            getattr(processing_class, "eos_token_id", None),
            model.config.eos_token_id,
        ):
            if isinstance(candidate, int):
                return candidate
        raise ArgumentError(
            "processing_class",
            "has no pad token id (nor the model an eos one): give a tokenizer with a pad or eos "
            "token",
        )

    @staticmethod
    def _is_raw(dataset: object) -> bool:
        columns = getattr(dataset, "column_names", None)
        return isinstance(columns, list) and "input_ids" not in columns and "response" in columns

    def _prepare(
        self,
        dataset: TrainerDataset,
        argument: str,
        tokenizer: Tokenizer | None,
        raw_columns: tuple[str, ...],
        label_columns: tuple[str, ...],
    ) -> TrainerDataset:
        return prepare_any_dataset(
            dataset,
            argument,
            tokenizer,
            is_encoder_decoder=self.is_encoder_decoder,
            max_length=self.max_example_length,
            raw_columns=raw_columns,
            label_columns=label_columns,
            vocabulary_size=self.vocabulary_size,
        )

    # -- model_init (see dialeval.trainers.construction) -----------------------------------

    def model_for_init(
        self,
        model: PreTrainedModel | None,
        args: TrainingArguments | None,
        model_init: Callable[..., PreTrainedModel] | None,
    ) -> PreTrainedModel:
        """The model, made from ``model_init`` (seeded as Trainer seeds) when no ``model`` is given;
        a subclass that needs the model earlier calls this first, and the call here returns that
        model."""
        made = getattr(self, "_model_made_by_init", None)
        if made is not None and model is made:
            return model
        check_model_arguments(model, model_init)
        if model is not None:
            return model
        assert args is not None  # the subclasses build their config when none is given
        seed_as_trainer(args)
        # Trainer stores an absent model_init as None itself (its annotation omits None)
        self.model_init = model_init  # type: ignore[assignment]
        self._model_made_by_init: PreTrainedModel | None = self.call_model_init()
        self._random_state_after_init = random_state()
        return self._model_made_by_init

    def call_model_init(self, trial: Any = None) -> PreTrainedModel:
        """Trainer's ``call_model_init``; the first call (in ``Trainer.__init__``) returns the model
        :meth:`model_for_init` made, so ``model_init`` runs once per model as under Trainer."""
        made = getattr(self, "_model_made_by_init", None)
        if made is not None:
            self._model_made_by_init = None
            restore_random_state(
                self._random_state_after_init
            )  # Trainer.__init__ has just seeded again
            return made
        # model_init makes a PreTrainedModel (Trainer's annotation says any module)
        model = cast("PreTrainedModel", super().call_model_init(trial))
        refuse_shared_model(model, "model_init")
        # None: the first model, still being made
        built_for = getattr(self, "is_encoder_decoder", None)
        if (
            built_for is not None
            and bool(getattr(model.config, "is_encoder_decoder", False)) != built_for
        ):
            raise ArgumentError(
                "model_init",
                "made an encoder-decoder model where the trainer was built for a causal LM "
                "(or the reverse): the prepared datasets would not fit it",
            )
        return model

    # -- datasets given after construction (evaluate / predict) ----------------------------

    def get_eval_dataloader(self, eval_dataset: str | TrainerDataset | None = None) -> DataLoader:
        """``evaluate(eval_dataset=...)`` prepares its dataset as the constructor prepares
        ``eval_dataset``."""
        if eval_dataset is not None and not isinstance(eval_dataset, str):
            eval_dataset = self._prepare(
                eval_dataset, "eval_dataset", self.processing_class, EVAL_RAW_COLUMNS, ("labels",)
            )
        return super().get_eval_dataloader(eval_dataset)

    def get_test_dataloader(self, test_dataset: TrainerDataset) -> DataLoader:
        """``predict(test_dataset)`` prepares its dataset as the constructor prepares
        ``eval_dataset``."""
        test_dataset = self._prepare(
            test_dataset, "test_dataset", self.processing_class, EVAL_RAW_COLUMNS, ("labels",)
        )
        return super().get_test_dataloader(test_dataset)

    @property
    def shift_labels(self) -> bool:
        return not self.is_encoder_decoder

    # -- columns ---------------------------------------------------------------------------

    def read_columns(self) -> tuple[str, ...]:
        """Columns beyond :data:`~dialeval.trainers.dropped_columns.TEXT_COLUMNS` that the trainer
        reads before dropping them."""
        return ()

    def dropped_columns_seen(
        self, column_names: list[str], kept: list[str], description: str | None
    ) -> None:
        """A warning naming the columns ``remove_unused_columns`` drops
        (trainers.dropped_columns)."""
        warn_dropped_columns(
            column_names, kept, description, self._columns_said, self.read_columns()
        )

    def collator_for_kept_columns(
        self, collator: Callable[[list], dict[str, Any]], kept: list[str], description: str | None
    ) -> ColumnsSaidCollator:
        """The same warning on the first batch of a torch or iterable dataset."""
        return ColumnsSaidCollator(
            collator, kept, description, self._columns_said, self.read_columns()
        )

    def check_training_batch(self, batch: dict) -> None:
        """Refuse a batch that lost a column the method needs, or whose labels cover the context."""
        if "labels" not in batch:
            raise ValueError(
                "a training batch has no `labels`: the diversity trainers train on responses"
            )
        missing = [column for column in self.required_batch_columns if column not in batch]
        if missing:
            raise ValueError(
                f"a training batch has no {missing}: the data collator dropped them, which would "
                "silently train another objective; use dialeval.trainers.DialogueCollator (the "
                "default) or a collator that keeps them"
            )
        check_label_batch(batch, causal=not self.is_encoder_decoder)

    # -- token counts over the accumulation window -----------------------------------------

    def _sum_over_processes(
        self, count: torch.Tensor | int, device: torch.device
    ) -> torch.Tensor | int:
        count = torch.as_tensor(count, device=device)
        if self.args.average_tokens_across_devices and self.args.world_size > 1:
            count = self.accelerator.gather(count).sum()
        return count

    def window_target_count(
        self, batch_samples: list, device: torch.device
    ) -> torch.Tensor | int | None:
        if not batch_samples or "labels" not in batch_samples[0]:
            return None
        count = sum(
            count_target_tokens(batch["labels"], self.shift_labels) for batch in batch_samples
        )
        return self._sum_over_processes(count, device)

    def divisor(
        self, window_count: torch.Tensor | int | None, labels: torch.Tensor
    ) -> torch.Tensor:
        """What this process divides a term's summed NLL by so that the result is its share of
        the term over all processes: the window's global count, or (per-process normalization,
        or no window) the local count times the number of processes."""
        world = self.accelerator.num_processes
        if window_count is None:
            count = count_target_tokens(labels, self.shift_labels) * world
        elif self.args.average_tokens_across_devices:
            count = torch.as_tensor(window_count, device=labels.device)
        else:
            count = torch.as_tensor(window_count, device=labels.device) * world
        # An all-padding batch contributes 0, not NaN (and is reported once:
        # dialeval.trainers.losses' docstring).
        if bool(count == 0):
            warn_no_target_tokens()
        return count.clamp(min=1).to(torch.float32)

    def prepare_window(self, batch_samples: list, device: torch.device) -> None:
        """Hook: add what the window's batches need beyond the collated columns
        (DRESS: negatives)."""

    def get_batch_samples(
        self, epoch_iterator: Iterator, num_batches: int, device: torch.device
    ) -> tuple[list, torch.Tensor | int | None]:
        batch_samples, num_items_in_batch = super().get_batch_samples(
            epoch_iterator, num_batches, device
        )
        for batch in batch_samples:
            self.check_training_batch(batch)
        self.prepare_window(batch_samples, device)
        self._loss_steps += 1
        return batch_samples, num_items_in_batch

    # -- the loss --------------------------------------------------------------------------

    def gold_weights(self, inputs: dict) -> torch.Tensor | None:
        """Per-example weights of the gold rows (None: 1)."""
        return None

    def negative_loss(
        self,
        logits: torch.Tensor,
        labels: torch.Tensor,
        negative: dict,
        window_count: torch.Tensor | int | None,
    ) -> torch.Tensor:
        """This process's share of the negative term (see :meth:`divisor`)."""
        raise NotImplementedError

    def _model_inputs(self, model: torch.nn.Module, batch: dict) -> dict:
        inputs = {"input_ids": batch["input_ids"], "use_cache": False}
        if "attention_mask" in batch:
            inputs["attention_mask"] = batch["attention_mask"]
        if self.is_encoder_decoder:
            unwrapped = self.accelerator.unwrap_model(model)
            if hasattr(unwrapped, "prepare_decoder_input_ids_from_labels"):
                inputs["decoder_input_ids"] = unwrapped.prepare_decoder_input_ids_from_labels(
                    labels=batch["labels"]
                )
            else:
                # the model derives its decoder inputs from labels (and computes a loss we ignore)
                inputs["labels"] = batch["labels"]
        return inputs

    def _gold_logits(self, logits: torch.Tensor, gold: dict, rows: int) -> torch.Tensor:
        width = gold["labels"].shape[1] if self.is_encoder_decoder else gold["input_ids"].shape[1]
        return logits[:rows, :width]

    def compute_loss(
        self,
        model: torch.nn.Module,
        inputs: dict[str, torch.Tensor | Any],
        return_outputs: bool = False,
        num_items_in_batch: torch.Tensor | int | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, Any]:
        """(weighted gold NLL + the negative term) over the window, times the
        number of processes."""
        inputs = dict(inputs)
        weights = self.gold_weights(inputs)
        window_negative_count = inputs.pop(NUM_NEGATIVE_ITEMS, None)
        negative = {
            key[len(NEGATIVE_PREFIX) :]: inputs.pop(key)
            for key in list(inputs)
            if key.startswith(NEGATIVE_PREFIX)
        }
        if "labels" not in inputs:
            raise ValueError("the batch has no `labels`: the diversity trainers train on responses")
        gold = {key: inputs[key] for key in ROW_KEYS if key in inputs}
        num_gold_rows = gold["input_ids"].shape[0]
        if negative:
            if "attention_mask" not in negative and "attention_mask" in gold:
                negative["attention_mask"] = negative["input_ids"].ne(self.pad_token_id).long()
            batch = stack_rows(gold, {key: negative[key] for key in gold}, self.pad_token_id)
        else:
            batch = gold
        outputs = model(**self._model_inputs(model, batch))
        logits, labels = outputs.logits, batch["labels"]
        gold_sums = sequence_nll(logits[:num_gold_rows], labels[:num_gold_rows], self.shift_labels)
        divisor = self.divisor(num_items_in_batch, labels[:num_gold_rows])
        gold_nll = gold_sums.sum() / divisor
        weighted_nll = (
            gold_nll
            if weights is None
            else (gold_sums * weights.to(gold_sums.dtype)).sum() / divisor
        )
        negative_term = torch.zeros_like(gold_nll)
        if negative:
            negative_term = self.negative_loss(
                logits[num_gold_rows:], labels[num_gold_rows:], negative, window_negative_count
            )
        if model.training:
            self._loss_sums += (
                torch.stack([gold_nll, weighted_nll, negative_term])
                .detach()
                .to(self._loss_sums.device)
            )
        loss = (weighted_nll + negative_term) * self.accelerator.num_processes
        if return_outputs:
            return loss, {"logits": self._gold_logits(logits, gold, num_gold_rows)}
        return loss

    def log(self, logs: dict, start_time: float | None = None) -> None:
        """Trainer's log, plus the loss components averaged over the steps since the last training
        log."""
        if "loss" in logs and self._loss_steps:
            # Every process logs in step (Trainer gathers the loss right before): the sum over
            # processes is collective.
            sums = self._loss_sums
            if self.accelerator.num_processes > 1:
                sums = self.accelerator.reduce(sums.clone(), reduction="sum")
            for name, value in zip(LOSS_COMPONENTS, (sums / self._loss_steps).tolist()):
                logs[name] = value
            self._loss_sums.zero_()
            self._loss_steps = 0
        super().log(logs, start_time)

    # -- evaluation ------------------------------------------------------------------------

    def gold_nll(
        self, model: torch.nn.Module, gold: dict
    ) -> tuple[torch.Tensor | None, torch.Tensor]:
        """The plain NLL per response token of a batch (``eval_loss``) and the logits."""
        with torch.no_grad(), self.compute_loss_context_manager():
            logits = model(**self._model_inputs(model, gold)).logits
        loss = None
        if "labels" in gold:
            sums = sequence_nll(logits, gold["labels"], self.shift_labels)
            loss = (
                sums.sum() / count_target_tokens(gold["labels"], self.shift_labels).clamp(min=1)
            ).detach()
        return loss, logits

    def prediction_step(
        self,
        model: torch.nn.Module,
        inputs: dict[str, torch.Tensor | Any],
        prediction_loss_only: bool,
        ignore_keys: list[str] | None = None,
        **gen_kwargs: Any,
    ) -> tuple[Any, torch.Tensor | None, torch.Tensor | None]:
        """``eval_loss`` is the plain gold NLL; the weights and negative columns play no part in
        evaluation."""
        inputs = self.inputs_on_device(inputs)
        gold = {key: inputs[key] for key in ROW_KEYS if key in inputs}
        if self.args.predict_with_generate and not prediction_loss_only:
            if not self.is_encoder_decoder:
                return self._causal_generation_step(model, gold, gen_kwargs)
            # Seq2SeqTrainer's loss there is the model's own mean token NLL: the same plain gold
            # NLL.
            return super().prediction_step(
                model, gold, prediction_loss_only, ignore_keys=ignore_keys, **gen_kwargs
            )
        loss, logits = self.gold_nll(model, gold)
        if prediction_loss_only:
            return loss, None, None
        return loss, logits.detach(), gold.get("labels")

    def _causal_generation_step(
        self, model: torch.nn.Module, inputs: dict, gen_kwargs: dict
    ) -> tuple[torch.Tensor | None, torch.Tensor, torch.Tensor | None]:
        """``predict_with_generate`` for a causal LM: generate from each example's context only.

        A causal example holds context + response in ``input_ids`` (right-padded); generating from
        it would continue after the gold response. Each row's context (the tokens before its first
        label) is left-padded and generated from; the predictions are the new tokens only and the
        labels the response tokens only, both starting at the response's first token, so
        ``compute_metrics`` compares like with like. ``generation_max_length`` counts new tokens.
        """
        loss = self.gold_nll(model, inputs)[0] if "labels" in inputs else None
        labels = inputs.get("labels")
        attention = inputs.get("attention_mask", torch.ones_like(inputs["input_ids"]))
        contexts: list[torch.Tensor] = []
        responses: list[Any] = []  # each row's response tokens; None without labels
        for row in range(inputs["input_ids"].shape[0]):
            length = int(attention[row].sum())
            targets = (
                labels[row, :length].ne(IGNORE_INDEX).nonzero() if labels is not None else None
            )
            start = int(targets[0]) if targets is not None and len(targets) else length
            contexts.append(inputs["input_ids"][row, :start])
            responses.append(labels[row, start:length] if labels is not None else None)
        width = max(len(context) for context in contexts)
        prompt_ids = torch.stack(
            [_left_pad(context, width, self.pad_token_id) for context in contexts]
        )
        prompt_mask = torch.stack(
            [_left_pad(torch.ones_like(context), width, 0) for context in contexts]
        )
        if not gen_kwargs:
            gen_kwargs = self.evaluation_generate_options()
        gen_kwargs = {key: value for key, value in gen_kwargs.items() if value is not None}
        if "max_length" in gen_kwargs:
            gen_kwargs["max_new_tokens"] = gen_kwargs.pop("max_length")
        gen_kwargs.setdefault("pad_token_id", self.pad_token_id)
        generator = self.accelerator.unwrap_model(model)
        with torch.no_grad():
            generated = generator.generate(
                input_ids=prompt_ids, attention_mask=prompt_mask, **gen_kwargs
            )[:, width:]
        gold = None
        if labels is not None:
            longest = max(len(response) for response in responses)
            gold = torch.stack(
                [_pad_to(response[None], longest, IGNORE_INDEX)[0] for response in responses]
            )
        return loss, generated, gold

    # -- saving ----------------------------------------------------------------------------

    def model_card(self, model_name: str | None) -> ModelCard:
        """The ``huggingface_hub.ModelCard`` of the trained model (subclasses fill it in)."""
        raise NotImplementedError

    def card_training_rows(self) -> dict:
        args = self.args
        return {
            "global_step": self.state.global_step,
            "epoch": self.state.epoch,
            "learning_rate": args.learning_rate,
            "per_device_train_batch_size": args.per_device_train_batch_size,
            "gradient_accumulation_steps": args.gradient_accumulation_steps,
            "num_processes": args.world_size,
            "optimizer": args.optim.value if hasattr(args.optim, "value") else args.optim,
            "lr_scheduler_type": args.lr_scheduler_type.value
            if hasattr(args.lr_scheduler_type, "value")
            else args.lr_scheduler_type,
            "seed": args.seed,
        }

    def card(self, model_name: str | None = None, **sections: Any) -> ModelCard:
        assert self.args.output_dir is not None  # TrainingArguments gives output_dir a default
        name = (
            model_name
            or (self.args.hub_model_id or "").split("/")[-1]
            or self.args.output_dir.rstrip("/").split("/")[-1]
        )
        return build_model_card(
            model_name=name,
            base_model=base_model_id(self.model),
            training=self.card_training_rows(),
            **sections,
        )

    # Trainer's create_model_card takes its card fields positionally; this card is the method's own
    def create_model_card(  # type: ignore[override]
        self, model_name: str | None = None, **kwargs: Any
    ) -> None:
        """Write the method's model card to ``output_dir/README.md``
        (``push_to_hub`` calls this)."""
        if self.is_world_process_zero():
            assert self.args.output_dir is not None  # TrainingArguments gives it a default
            save_model_card(self.model_card(model_name), self.args.output_dir)

    def save_model(self, output_dir: str | None = None, _internal_call: bool = False) -> None:
        """``Trainer.save_model`` plus the model card (``README.md``) in the same folder."""
        super().save_model(output_dir, _internal_call=_internal_call)
        if self.args.should_save:
            folder = output_dir or self.args.output_dir
            assert folder is not None  # TrainingArguments gives output_dir a default
            save_model_card(self.model_card(None), folder)
