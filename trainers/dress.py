"""DRESS: Diversifying RESponses Semantically (Han et al., Findings of EMNLP 2022, §4.2, §5.3).

Training responses are embedded and clustered into k semantic clusters (§3.1, the same
:class:`~dialeval.metrics.sem_ent.clusters.SemanticClusters` Sem-Ent uses). DRESS then

1. weights each gold response by ``w(r) = (1 - p(cluster(r)))^gamma`` (Eq. 5), ``p`` being the
   share of the training responses in that cluster, and minimizes the weighted NLL (Eq. 4);
2. (Negative Training) every cycle, generates greedy responses for a sample of training contexts,
   assigns them to the clusters, and trains on those that fall in *head* clusters (clusters
   holding more than ``head_threshold`` = 0.1 of the generations) with weight ``-1``.
   ``negative_training=False`` is the paper's DRESS(-NT) ablation (Table 3).

Following the authors' released code, generated (negative) responses are batched apart from the
gold ones and each group is divided by its own target-token count (gold: the weighted NLL over
the gold target tokens; negatives: the weight -1 NLL over the generated tokens). Deviation: the
released code takes separate optimizer steps for gold and generated batches; here each gold
micro-batch is paired with one batch of negatives (same per-device size, drawn in order from the
cycle's pool until it is used up; the two go through the model in one forward pass, rows stacked)
and both contribute to the same optimizer step. This keeps the Trainer's step count, learning-rate
schedule, gradient accumulation and multi-process semantics exactly those of plain training; see
:mod:`dialeval.trainers._base` for the normalization. Checkpoints carry the negative-training
state (each process's pool and position in it, the cycle statistics, whether a cycle is due) as
JSON, so a run resumed from a checkpoint trains as the uninterrupted run would.
"""
from __future__ import annotations

import json
import os
import time

import numpy as np
import torch
from dialeval.hub import max_input_length
from dialeval.metrics.sem_ent.clusters import SemanticClusters, distribution_entropy
from transformers import TrainerCallback
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR, get_last_checkpoint

from dialeval.trainers._base import NEGATIVE_COLUMNS, ResponseLossTrainer
from dialeval.trainers.dress_config import DRESSConfig
from dialeval.trainers.losses import IGNORE_INDEX, dress_weights, head_cluster_mask, weighted_nll_loss

WEIGHT_COLUMN = "dress_weight"
NEGATIVE_WEIGHT = -1.0


class _CycleSchedule(TrainerCallback):
    """Marks when the next negative-training cycle is due; the trainer runs it before the next batch."""

    def __init__(self, trainer: DRESSTrainer):
        self.trainer = trainer

    def on_train_begin(self, args, state, control, **kwargs):
        if args.recluster_every is not None and not self.trainer.resumed_negative_state:
            self.trainer.cycle_due = True

    def on_epoch_begin(self, args, state, control, **kwargs):
        resumed_mid_epoch = self.trainer.resumed_negative_state and state.epoch is not None and state.epoch % 1 != 0
        self.trainer.resumed_negative_state = False  # only the first epoch of a resumed run is special
        if args.recluster_every is None and not resumed_mid_epoch:
            self.trainer.cycle_due = True

    def on_step_end(self, args, state, control, **kwargs):
        if args.recluster_every is not None and state.global_step % args.recluster_every == 0:
            self.trainer.cycle_due = True


def _response_start(labels) -> int:
    for position, label in enumerate(labels):
        if label != IGNORE_INDEX:
            return position
    return len(labels)


class DRESSTrainer(ResponseLossTrainer):
    """A drop-in ``Trainer`` / ``Seq2SeqTrainer`` that trains with DRESS (see the module docstring).

    Args (beyond ``Seq2SeqTrainer``'s):
        args: a :class:`DRESSConfig`.
        train_dataset: a ``datasets.Dataset`` of tokenized examples (``input_ids``, ``labels``;
            :func:`~dialeval.trainers.encode_dialogue` builds them); a ``dress_weight`` column is added.
        semantic_clusters: fitted clusters (their k must equal ``args.num_clusters``), or
        embedder: a :class:`~dialeval.metrics.engines.embedders.TextEmbedder` to fit the clusters on the
            training responses (k = ``args.num_clusters``, seed ``args.cluster_seed``).

    After construction: :attr:`semantic_clusters`, :attr:`training_cluster_distribution` (p of Eq. 5),
    and during training :attr:`negative_cycles` (one dict of statistics per cycle, also logged).
    """

    extra_columns = (WEIGHT_COLUMN, *NEGATIVE_COLUMNS)

    def __init__(self, model=None, args=None, data_collator=None, train_dataset=None, eval_dataset=None,
                 processing_class=None, *, semantic_clusters: SemanticClusters | None = None, embedder=None, **kwargs):
        if not isinstance(args, DRESSConfig):
            raise ValueError(f"`args` must be a DRESSConfig, got {type(args).__name__}")
        import datasets

        if not isinstance(train_dataset, datasets.Dataset):
            raise ValueError(f"`train_dataset` must be a datasets.Dataset of tokenized examples, got {type(train_dataset).__name__}")
        for column in ("input_ids", "labels"):
            if column not in train_dataset.column_names:
                raise ValueError(f"`train_dataset` must have an {column!r} column, has {train_dataset.column_names}")
        if semantic_clusters is None and embedder is None:
            raise ValueError("pass `semantic_clusters` (fitted) or an `embedder` to fit them on the training responses")
        if semantic_clusters is not None and not isinstance(semantic_clusters, SemanticClusters):
            raise ValueError(f"`semantic_clusters` must be SemanticClusters, got {type(semantic_clusters).__name__}")
        if semantic_clusters is not None and semantic_clusters.num_clusters != args.num_clusters:
            raise ValueError(f"`semantic_clusters` has k={semantic_clusters.num_clusters} but `args.num_clusters`={args.num_clusters}")
        if semantic_clusters is not None and embedder is not None:
            raise ValueError("pass either `semantic_clusters` or `embedder`, not both (the clusters carry their embedder)")
        self.tokenizer_for_text = processing_class
        responses = self._training_responses(train_dataset, args.response_text_column)
        blank = [index for index, text in enumerate(responses) if not text.strip()]
        if blank:
            raise ValueError(f"`train_dataset` has {len(blank)} empty responses (first: row {blank[0]}); "
                             "an empty response has no semantic cluster, filter them out")
        if semantic_clusters is None:
            semantic_clusters = SemanticClusters.fit(responses, embedder, num_clusters=args.num_clusters, seed=args.cluster_seed)
        self.semantic_clusters = semantic_clusters
        cluster_ids = semantic_clusters.assign(responses)
        self.training_cluster_distribution = np.bincount(cluster_ids, minlength=semantic_clusters.num_clusters) / len(cluster_ids)
        weights = dress_weights(cluster_ids, self.training_cluster_distribution, args.gamma)
        if WEIGHT_COLUMN in train_dataset.column_names:
            train_dataset = train_dataset.remove_columns(WEIGHT_COLUMN)
        train_dataset = train_dataset.add_column(WEIGHT_COLUMN, weights.astype(np.float32).tolist())

        self.cycle_due = False
        self.resumed_negative_state = False
        self.negative_cycles: list[dict] = []
        self._negative_pool: list[dict] = []
        self._negative_cursor = 0
        callbacks = list(kwargs.pop("callbacks", None) or [])
        super().__init__(model=model, args=args, data_collator=data_collator, train_dataset=train_dataset,
                         eval_dataset=eval_dataset, processing_class=processing_class,
                         callbacks=callbacks + [_CycleSchedule(self)], **kwargs)

    # -- checkpoints -----------------------------------------------------------------------

    def _negative_state_path(self, checkpoint: str) -> str:
        return os.path.join(checkpoint, f"dress_negative_state-{self.args.process_index}.json")

    def _save_checkpoint(self, model, trial) -> None:
        super()._save_checkpoint(model, trial)
        checkpoint = os.path.join(self._get_output_dir(trial=trial), f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}")
        state = {"pool": self._negative_pool, "cursor": self._negative_cursor, "cycles": self.negative_cycles,
                 "cycle_due": self.cycle_due}
        with open(self._negative_state_path(checkpoint), "w", encoding="utf-8") as handle:
            json.dump(state, handle)

    def train(self, resume_from_checkpoint=None, **kwargs):
        """``Trainer.train``; resuming also restores the negative-training state saved with the checkpoint."""
        if isinstance(resume_from_checkpoint, bool) and resume_from_checkpoint:
            resume_from_checkpoint = get_last_checkpoint(self.args.output_dir)
            if resume_from_checkpoint is None:
                raise ValueError(f"No valid checkpoint found in output directory ({self.args.output_dir})")
        if resume_from_checkpoint is not None and self.args.negative_training:
            path = self._negative_state_path(resume_from_checkpoint)
            if not os.path.isfile(path):
                raise ValueError(f"{resume_from_checkpoint} has no {os.path.basename(path)}: it was not saved by a "
                                 "DRESSTrainer with negative training on the same number of processes")
            with open(path, encoding="utf-8") as handle:
                state = json.load(handle)
            self._negative_pool, self._negative_cursor = state["pool"], state["cursor"]
            self.negative_cycles, self.cycle_due = state["cycles"], state["cycle_due"]
            self.resumed_negative_state = True
        return super().train(resume_from_checkpoint=resume_from_checkpoint, **kwargs)

    # -- Eq. 4-5 ---------------------------------------------------------------------------

    def _decode(self, token_ids: list[int]) -> str:
        if self.tokenizer_for_text is None or not hasattr(self.tokenizer_for_text, "decode"):
            raise ValueError("`processing_class` must be a tokenizer to decode responses for clustering "
                             "(or set `response_text_column`)")
        return self.tokenizer_for_text.decode(token_ids, skip_special_tokens=True).strip()

    def _training_responses(self, dataset, column: str | None) -> list[str]:
        if column is not None:
            if column not in dataset.column_names:
                raise ValueError(f"`response_text_column` {column!r} is not a column of `train_dataset` ({dataset.column_names})")
            return list(dataset[column])
        return [self._decode([token for token in labels if token != IGNORE_INDEX]) for labels in dataset["labels"]]

    def gold_weights(self, inputs: dict) -> torch.Tensor | None:
        return inputs.get(WEIGHT_COLUMN)

    def negative_loss(self, logits, labels, num_items) -> torch.Tensor:
        weights = torch.full((logits.shape[0],), NEGATIVE_WEIGHT, device=logits.device)
        return weighted_nll_loss(logits, labels, weights, num_items, self.shift_labels)

    # -- negative training -----------------------------------------------------------------

    def attach_negatives(self, batch_samples: list) -> None:
        if not self.args.negative_training:
            return
        if self.cycle_due:
            self.cycle_due = False
            self.run_negative_cycle()
        for batch in batch_samples:
            size = batch["input_ids"].shape[0]
            chunk = self._negative_pool[self._negative_cursor : self._negative_cursor + size]
            if not chunk:
                return
            self._negative_cursor += len(chunk)
            collated = self.negative_collator(chunk)
            for key in ("input_ids", "attention_mask", "labels"):
                batch["negative_" + key] = collated[key]

    def _sample_prompts(self, cycle: int) -> list[list[int]]:
        dataset = self.train_dataset
        rng = np.random.default_rng(self.args.seed + 1000 + cycle)
        size = min(self.args.negative_contexts_per_cycle, len(dataset))
        indices = sorted(rng.choice(len(dataset), size=size, replace=False).tolist())
        rows = dataset.select(indices)
        prompts, seen = [], set()
        for input_ids, labels in zip(rows["input_ids"], rows["labels"]):
            prompt = input_ids if self.is_encoder_decoder else input_ids[: _response_start(labels)]
            key = tuple(prompt)
            if prompt and key not in seen:  # DailyDialog++ has several gold responses per context
                seen.add(key)
                prompts.append(list(prompt))
        return prompts

    @torch.no_grad()
    def generate_responses(self, prompts: list[list[int]]) -> tuple[list[list[int]], list[list[int]]]:
        """The prompts as generated from (decoder-only: cut from the left to leave room for the response)
        and the greedy responses (token ids, cut after the first eos) of the unwrapped model, in batches."""
        model = self.accelerator.unwrap_model(self.model)
        was_training = model.training
        model.eval()
        eos = model.generation_config.eos_token_id if model.generation_config.eos_token_id is not None else model.config.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos])
        device = next(model.parameters()).device
        limit = max_input_length(model.config)
        if not self.is_encoder_decoder and isinstance(limit, int):
            room = limit - self.args.negative_max_new_tokens
            if room < 1:
                raise ValueError(f"`negative_max_new_tokens`={self.args.negative_max_new_tokens} leaves no room for a "
                                 f"context within the model's {limit} positions")
            # Prompt + response must fit the position table: keep the most recent context tokens.
            prompts = [prompt[-room:] for prompt in prompts]
        responses = []
        try:
            step = self.args.negative_generation_batch_size
            for start in range(0, len(prompts), step):
                chunk = prompts[start : start + step]
                width = max(len(prompt) for prompt in chunk)
                # Decoder-only generation continues from the last position: pad on the left.
                left = not self.is_encoder_decoder
                ids = [([self.pad_token_id] * (width - len(p)) + p) if left else (p + [self.pad_token_id] * (width - len(p))) for p in chunk]
                mask = [([0] * (width - len(p)) + [1] * len(p)) if left else ([1] * len(p) + [0] * (width - len(p))) for p in chunk]
                output = model.generate(
                    input_ids=torch.tensor(ids, device=device), attention_mask=torch.tensor(mask, device=device),
                    do_sample=False, num_beams=1, max_new_tokens=self.args.negative_max_new_tokens,
                    no_repeat_ngram_size=self.args.negative_no_repeat_ngram_size, pad_token_id=self.pad_token_id,
                )
                # Encoder-decoder outputs start with the decoder start token; decoder-only ones with the prompt.
                new_tokens = output[:, width:] if left else output[:, 1:]
                for row in new_tokens.tolist():
                    kept = []
                    for token in row:
                        kept.append(token)
                        if token in eos_ids:
                            break
                    responses.append(kept)
        finally:
            model.train(was_training)
        return prompts, responses

    def _negative_example(self, prompt: list[int], response: list[int]) -> dict:
        if self.is_encoder_decoder:
            return {"input_ids": prompt, "attention_mask": [1] * len(prompt), "labels": response}
        return {"input_ids": prompt + response, "attention_mask": [1] * (len(prompt) + len(response)),
                "labels": [IGNORE_INDEX] * len(prompt) + response}

    def run_negative_cycle(self) -> dict:
        """Generate for sampled training contexts, keep the head-cluster generations as negatives.

        Each process generates for its share of the sampled contexts; the generations are
        gathered so that every process assigns the same clusters and builds the same pool, then
        takes every ``num_processes``-th negative (equal counts, so no process waits on another).
        """
        from accelerate.utils import gather_object

        started = time.perf_counter()
        cycle = len(self.negative_cycles)
        prompts = self._sample_prompts(cycle)
        rank, world = self.args.process_index, self.args.world_size
        local = prompts[rank::world]
        pairs = list(zip(*self.generate_responses(local)))
        if world > 1:
            pairs = gather_object(pairs)
        texts = [self._decode(response) for _, response in pairs]
        # An empty generation (eos at once) has no semantic content to embed: it is counted, not clustered.
        clustered = [(pair, text) for pair, text in zip(pairs, texts) if text.strip()]
        if clustered:
            cluster_ids = self.semantic_clusters.assign([text for _, text in clustered])
            head = head_cluster_mask(cluster_ids, self.semantic_clusters.num_clusters, self.args.head_threshold)
        else:
            cluster_ids, head = np.zeros(0, dtype=int), np.zeros(0, dtype=bool)
        negatives = [self._negative_example(prompt, response)
                     for ((prompt, response), _), is_head in zip(clustered, head) if is_head]
        order = np.random.default_rng(self.args.seed + 2000 + cycle).permutation(len(negatives))
        negatives = [negatives[index] for index in order]
        negatives = negatives[: len(negatives) - len(negatives) % world]
        self._negative_pool = negatives[rank::world]
        self._negative_cursor = 0
        shares = np.bincount(cluster_ids, minlength=self.semantic_clusters.num_clusters) / max(len(cluster_ids), 1)
        stats = {
            "cycle": cycle,
            "global_step": self.state.global_step,
            "num_generated": len(pairs),
            "num_empty": len(pairs) - len(clustered),
            "num_negatives": len(negatives),
            "head_clusters": sorted(int(index) for index in np.flatnonzero(shares > self.args.head_threshold)),
            "head_share": float(head.mean()) if len(head) else 0.0,
            "generated_sem_ent": distribution_entropy(shares) if len(cluster_ids) else 0.0,
            "seconds": time.perf_counter() - started,
        }
        self.negative_cycles.append(stats)
        self.log({f"dress/{key}": float(value) for key, value in stats.items() if key not in ("head_clusters", "global_step")})
        return stats
