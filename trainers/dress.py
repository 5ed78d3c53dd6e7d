"""DRESS: Diversifying RESponses Semantically (Han et al., Findings of EMNLP 2022, §4.2, §5.3).

Training responses are embedded and clustered into k semantic clusters (§3.1, the same
:class:`~dialeval.metrics.sem_ent.clusters.SemanticClusters` Sem-Ent uses). DRESS then

1. weights each gold response by ``w(r) = (1 - p(cluster(r)))^gamma`` (Eq. 5), ``p`` being the
   share of the training responses in that cluster, and minimizes the weighted NLL (Eq. 4);
2. (Negative Training) every cycle, generates greedy responses for a sample of training contexts,
   assigns them to the clusters, and trains on those that fall in *head* clusters (clusters
   holding more than ``head_threshold`` = 0.1 of the generations) with weight ``-1``.
   ``negative_training=False`` is the paper's DRESS(-NT) ablation (Table 3).

The clusters are fitted once, on the main process, before training (and the training responses
assigned there); the other processes receive the fitted state and the assignments (accelerate's
``broadcast_object_list``), so they never embed. A cycle's generations are likewise assigned on
the main process only.

Negative term, as the authors' released code computes it
(``negative_normalization="all_generated"``, see :mod:`dialeval.trainers.dress_negative_schedule`):
the cycle's generations, in a seeded random order, are cut into groups of
``per_device_train_batch_size x gradient_accumulation_steps x processes`` (the released code's
``--batchsize``: one optimizer step's worth); a head-cluster generation weighs -1, the others 0, and
each group is divided by *all* its generated tokens. ``"head_only"`` divides by the head
generations' tokens only (stronger by 1 / head share). Only the head rows go through the
model: a weight-0 row adds nothing but its token count.

Schedule. The released code takes each generated batch as its own optimizer step, shuffled
among the epoch's gold steps. Here the negatives are spread evenly over the micro-batches of the
cycle's period (the epoch, or ``recluster_every`` steps): micro-batch slot ``j`` of the ``M`` in
the period (counted over processes) stacks rows ``floor(j N / M)`` to ``floor((j + 1) N / M)`` of
the ``N`` negatives onto its gold rows, in one forward pass. Summed over the period, the update is
the released code's sum of gold and generated steps (to first order); the Trainer's step count,
learning-rate schedule, gradient accumulation and multi-process semantics stay those of plain
training. Memory: a per-device forward pass holds at most ``per_device_train_batch_size +
ceil(negative_contexts_per_cycle / M)`` rows; training refuses a schedule where that bound exceeds
``per_device_train_batch_size + max_negatives_per_batch`` (default: twice the batch). In the
paper's setting (5,000 contexts a cycle, one cycle an epoch over 87K DailyDialog pairs at batch
32, i.e. about 2,700 micro-batches) that is 2 extra rows.

Checkpoints carry the negative-training state (the cycle's negatives, the position in the period,
the cycle statistics, whether a cycle is due) as JSON, so a run resumed from a checkpoint trains
as the uninterrupted run would, on any number of processes.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import torch
from transformers import TrainerCallback
from transformers.trainer_utils import get_last_checkpoint

from dialeval.hub import max_input_length
from dialeval.metrics.sem_ent.clusters import SemanticClusters, distribution_entropy
from dialeval.trainers.chat_formats import with_format_note
from dialeval.trainers.construction import default_config
from dialeval.trainers.dataset_types import map_style_training_set
from dialeval.trainers.decoding import greedy_generation_config
from dialeval.trainers.dress_config import DRESSConfig, weak_weights_warning
from dialeval.trainers.dress_negative_schedule import (
    group_normalizers,
    max_rows_per_slot,
    slot_rows,
)
from dialeval.trainers.losses import (
    IGNORE_INDEX,
    describe_non_finite,
    dress_weights,
    head_cluster_mask,
    sequence_nll,
)
from dialeval.trainers.response_loss_trainer import ResponseLossTrainer
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    import datasets
    from huggingface_hub import ModelCard
    from torch.utils.data import DataLoader
    from transformers import (
        PreTrainedModel,
        TrainerControl,
        TrainerState,
        TrainingArguments,
    )
    from transformers.trainer_utils import TrainOutput

    from dialeval.metrics.engines.embedders import TextEmbedder
    from dialeval.trainers.inputs import TrainerDataset
    from dialeval.type_aliases import Tokenizer

WEIGHT_COLUMN = "dress_weight"
NEGATIVE_WEIGHT = -1.0
STATE_FILE = "dress_negative_state.json"
CLUSTERS_FOLDER = "semantic_clusters"
CITATION = """@inproceedings{han-etal-2022-measuring,
  title = {Measuring and Improving Semantic Diversity of Dialogue Generation},
  author = {Han, Seungju and Kim, Beomsu and Chang, Buru},
  booktitle = {Findings of the Association for Computational Linguistics: EMNLP 2022},
  year = {2022},
  url = {https://aclanthology.org/2022.findings-emnlp.66}
}"""
DIFFERENCES = [
    (
        "Clusters: the released code fits faiss k-means (random initialization, trained on a "
        "sample of at most 256 points per centroid) on MAUVE's L2-normalized, PCA-reduced (0.9 "
        "variance) DialoGPT-large features; dialeval uses scikit-learn's KMeans (k-means++, all "
        "points, 5 restarts, 500 iterations) on the same kind of features, so the partitions "
        "differ; the embedder is the one given (the paper's is "
        '`load_embedder("last_token")`).'
    ),
    (
        "Generated (negative) responses: the released code takes each generated batch as its own "
        "optimizer step, shuffled among the epoch's gold steps; dialeval spreads the negatives "
        "evenly over the micro-batches of the cycle's period and stacks them with gold rows, so "
        "the Trainer's step count and schedule are unchanged."
    ),
    (
        "Contexts of a cycle: a seeded sample without replacement of the training contexts "
        "(duplicates removed), where the released code takes the next `--dm-samples` examples of "
        "its data stream."
    ),
]


class _CycleSchedule(TrainerCallback):
    """Marks when the next negative-training cycle is due; the trainer runs it before the next
    batch."""

    def __init__(self, trainer: DRESSTrainer) -> None:
        self.trainer = trainer

    def on_train_begin(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        train_dataloader: DataLoader | None = None,
        **kwargs: Any,
    ) -> None:
        assert isinstance(args, DRESSConfig)  # the trainer's own config (DRESSTrainer checks it)
        self.trainer.plan_negative_slots(train_dataloader)
        if args.recluster_every is not None and not self.trainer.resumed_negative_state:
            self.trainer.cycle_due = True

    def on_epoch_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        assert isinstance(args, DRESSConfig)  # the trainer's own config (DRESSTrainer checks it)
        resumed_mid_epoch = (
            self.trainer.resumed_negative_state and state.epoch is not None and state.epoch % 1 != 0
        )
        self.trainer.resumed_negative_state = (
            False  # only the first epoch of a resumed run is special
        )
        if args.recluster_every is None and not resumed_mid_epoch:
            self.trainer.cycle_due = True

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        assert isinstance(args, DRESSConfig)  # the trainer's own config (DRESSTrainer checks it)
        if args.recluster_every is not None and state.global_step % args.recluster_every == 0:
            self.trainer.cycle_due = True


def _response_start(labels: Sequence[int]) -> int:
    for position, label in enumerate(labels):
        if label != IGNORE_INDEX:
            return position
    return len(labels)


def _clusters_state(clusters: SemanticClusters) -> dict:
    return {
        "embedder_identity": clusters.embedder_identity,
        "settings": clusters.settings,
        **{
            name: np.asarray(getattr(clusters, name)).tolist()
            for name in ("pca_mean", "pca_components", "centroids", "reference_distribution")
        },
    }


def _clusters_from_state(state: dict, embedder: TextEmbedder | None) -> SemanticClusters:
    arrays = {
        name: np.asarray(state[name], dtype=np.float32)
        for name in ("pca_mean", "pca_components", "centroids")
    }
    return SemanticClusters(
        embedder_identity=state["embedder_identity"],
        settings=state["settings"],
        reference_distribution=np.asarray(state["reference_distribution"]),
        embedder=embedder,
        **arrays,
    )


class DRESSTrainer(ResponseLossTrainer):
    """A drop-in ``Trainer`` / ``Seq2SeqTrainer`` that trains with DRESS (see the module docstring).

    Args (beyond ``Seq2SeqTrainer``'s):
        args: a :class:`DRESSConfig`.
        train_dataset: a ``datasets.Dataset`` (or a torch map-style dataset, read into one) of
            tokenized examples (``input_ids``, ``labels`` with -100 on the context;
            :func:`~dialeval.trainers.encode_dialogue` builds them) or of raw ``context`` /
            ``response`` text, which the trainer tokenizes; a ``dress_weight`` column is added. Not
            an iterable dataset: Eq. 5 needs the whole training set. Or TRL's ``prompt`` /
            ``completion`` (weights from the completion's cluster, loss on the completion) or
            conversational ``messages`` (weights from the assistant turns' cluster, loss on the
            assistant turns), rendered with the tokenizer's chat template
            (:mod:`~dialeval.trainers.chat_formats`).
        semantic_clusters: fitted clusters (their k must equal ``args.num_clusters``), or
        embedder: a :class:`~dialeval.metrics.engines.embedders.TextEmbedder` to fit the clusters on
            the training responses (k = ``args.num_clusters``, seed ``args.cluster_seed``), on the
            main process.

    The clustered texts are the raw ``response`` column when the trainer tokenized raw text, else
    ``args.response_text_column``, else the decoded labels.

    After construction: :attr:`semantic_clusters`, :attr:`training_cluster_distribution` (p of
    Eq. 5), :attr:`mean_gold_weight` (the mean Eq. 5 weight, the factor the gold loss is scaled by;
    a ``UserWarning`` when it is below the paper's range, see :class:`DRESSConfig`), and during
    training :attr:`negative_cycles` (one dict of statistics per cycle, also logged). ``eval_loss``
    is the plain gold NLL (no weights, no negatives). ``save_model`` also writes the clusters
    (``semantic_clusters/``, JSON + safetensors) and a model card (``README.md``).
    """

    extra_columns = (WEIGHT_COLUMN,)
    required_batch_columns = (WEIGHT_COLUMN,)
    args: DRESSConfig
    train_dataset: datasets.Dataset

    def __init__(
        self,
        model: PreTrainedModel | None = None,
        args: DRESSConfig | None = None,
        data_collator: Callable[[list], dict[str, Any]] | None = None,
        train_dataset: TrainerDataset | None = None,
        eval_dataset: TrainerDataset | dict[str, TrainerDataset] | None = None,
        processing_class: Tokenizer | None = None,
        model_init: Callable[..., PreTrainedModel] | None = None,
        *,
        semantic_clusters: SemanticClusters | None = None,
        embedder: TextEmbedder | None = None,
        **kwargs: Any,
    ) -> None:
        if args is None:
            args = default_config(DRESSConfig)
        if not isinstance(args, DRESSConfig):
            raise ArgumentError("args", f"must be a DRESSConfig, got {type(args).__name__}")
        train_set = map_style_training_set(train_dataset)
        if semantic_clusters is None and embedder is None:
            raise ArgumentError(
                "semantic_clusters",
                "is required (fitted), or an `embedder` to fit them on the training responses",
            )
        if semantic_clusters is not None and not isinstance(semantic_clusters, SemanticClusters):
            raise ArgumentError(
                "semantic_clusters",
                f"must be SemanticClusters, got {type(semantic_clusters).__name__}",
            )
        if semantic_clusters is not None and semantic_clusters.num_clusters != args.num_clusters:
            raise ArgumentError(
                "semantic_clusters",
                f"has k={semantic_clusters.num_clusters} but "
                f"`args.num_clusters`={args.num_clusters}",
            )
        if semantic_clusters is not None and embedder is not None:
            raise ArgumentError(
                "embedder",
                "is given along with `semantic_clusters`: pass either, not both (the clusters "
                "carry their embedder)",
            )
        if (
            args.response_text_column is not None
            and args.response_text_column not in train_set.column_names
        ):
            raise ArgumentError(
                "response_text_column",
                f"{args.response_text_column!r} is not a column of `train_dataset` "
                f"({train_set.column_names})",
            )
        model = self.model_for_init(model, args, model_init)
        limit = max_input_length(model.config)
        if (
            args.negative_training
            and not model.config.is_encoder_decoder
            and isinstance(limit, int)
            and limit - args.negative_max_new_tokens < 1
        ):
            raise ArgumentError(
                "negative_max_new_tokens",
                f"={args.negative_max_new_tokens} leaves no room for a context "
                f"within the model's {limit} positions",
            )
        self.tokenizer_for_text = processing_class
        texts = (
            list(train_set[args.response_text_column])
            if args.response_text_column is not None
            else None
        )

        self.negative_cycles: list[dict] = []
        self.start_negative_state()
        callbacks = list(kwargs.pop("callbacks", None) or [])
        super().__init__(
            model=model,
            args=args,
            data_collator=data_collator,
            train_dataset=train_set,
            eval_dataset=eval_dataset,
            processing_class=processing_class,
            model_init=model_init,
            callbacks=callbacks + [_CycleSchedule(self)],
            **kwargs,
        )
        if texts is None:
            texts = self.train_response_texts
        self.semantic_clusters, cluster_ids = self._fit_on_main(texts, semantic_clusters, embedder)
        self.training_cluster_distribution = np.bincount(
            cluster_ids, minlength=args.num_clusters
        ) / len(cluster_ids)
        weights = dress_weights(cluster_ids, self.training_cluster_distribution, args.gamma)
        self.mean_gold_weight = float(weights.mean())
        message = weak_weights_warning(
            self.mean_gold_weight,
            args.gamma,
            args.num_clusters,
            "the mean Eq. 5 weight of the training responses' clusters",
        )
        if message is not None:
            warnings.warn(message, UserWarning, stacklevel=2)
        dataset = self.train_dataset
        if WEIGHT_COLUMN in dataset.column_names:
            dataset = dataset.remove_columns(WEIGHT_COLUMN)
        self.train_dataset = dataset.add_column(WEIGHT_COLUMN, weights.astype(np.float32).tolist())

    def read_columns(self) -> tuple[str, ...]:
        return (self.args.response_text_column,) if self.args.response_text_column else ()

    # -- the clusters, fitted once ---------------------------------------------------------

    def _on_main(self, work: Callable[[], Any]) -> Any:
        """Run ``work()`` on the main process and give its JSON-able result (or its error) to every
        process."""
        # accelerate: deferred, so importing this module loads no model stack
        from accelerate.utils import broadcast_object_list

        if self.accelerator.num_processes == 1:
            return work()
        payload: list[Any] = [None]  # the main process's JSON, filled by the broadcast
        failure = None
        if self.accelerator.is_main_process:
            try:
                payload = [json.dumps({"result": work()})]
            except Exception as error:  # noqa: BLE001 - every process must leave the broadcast, then raise
                failure = error
                payload = [
                    json.dumps({"error": f"{type(error).__name__} on the main process: {error}"})
                ]
        broadcast_object_list(payload, from_process=0)
        message = json.loads(payload[0])
        if failure is not None:
            raise failure
        if "error" in message:
            raise ValueError(message["error"])
        return message["result"]

    def _fit_on_main(
        self,
        texts: list[str] | None,
        semantic_clusters: SemanticClusters | None,
        embedder: TextEmbedder | None,
    ) -> tuple[SemanticClusters, np.ndarray]:
        """Fit (unless given) and assign the training responses on the main process only; the other
        processes rebuild the fitted clusters from their broadcast state."""
        args = self.args
        fitted: dict[str, SemanticClusters] = {}

        def work() -> dict[str, Any]:
            responses = texts if texts is not None else self._training_responses()
            blank = [index for index, text in enumerate(responses) if not text.strip()]
            if blank:
                raise ArgumentError(
                    "train_dataset",
                    f"has {len(blank)} empty responses (first: row {blank[0]}); "
                    "an empty response has no semantic cluster, filter them out",
                )
            clusters = semantic_clusters
            if clusters is None:
                clusters = SemanticClusters.fit(
                    responses, embedder, num_clusters=args.num_clusters, seed=args.cluster_seed
                )
            fitted["clusters"] = clusters
            return {
                "clusters": None if semantic_clusters is not None else _clusters_state(clusters),
                "cluster_ids": clusters.assign(responses).tolist(),
            }

        result = self._on_main(work)
        if "clusters" in fitted:
            clusters = fitted["clusters"]
        elif result["clusters"] is None:
            assert semantic_clusters is not None  # the main process was given them, as every one
            clusters = semantic_clusters
        else:
            clusters = _clusters_from_state(result["clusters"], embedder)
        return clusters, np.asarray(result["cluster_ids"], dtype=int)

    def _decode(self, token_ids: list[int]) -> str:
        if self.tokenizer_for_text is None or not hasattr(self.tokenizer_for_text, "decode"):
            raise ArgumentError(
                "processing_class",
                "must be a tokenizer to decode responses for clustering "
                "(or set `response_text_column`)",
            )
        # one sequence of ids decodes to one string (transformers' annotation adds the batch case)
        text = cast(str, self.tokenizer_for_text.decode(token_ids, skip_special_tokens=True))
        return text.strip()

    def _training_responses(self) -> list[str]:
        return [
            self._decode([token for token in labels if token != IGNORE_INDEX])
            for labels in self.train_dataset["labels"]
        ]

    # -- checkpoints -----------------------------------------------------------------------

    def _negative_state(self) -> dict:
        return {
            "pool": self._negative_pool,
            "slots": self._negative_slots,
            "batches_done": self._negative_batches_done,
            "cycles": self.negative_cycles,
            "cycle_due": self.cycle_due,
        }

    def checkpoint_saved(self, checkpoint_dir: str) -> None:
        """The negative-training state beside the checkpoint, so that resuming continues it."""
        with open(os.path.join(checkpoint_dir, STATE_FILE), "w", encoding="utf-8") as handle:
            json.dump(self._negative_state(), handle)

    def start_negative_state(self) -> None:
        """No cycle run, none due, no negatives: the state every ``train()`` starts from, so that a
        second ``train()`` or ``hyperparameter_search``'s next trial trains as a fresh trainer
        would (the cycles' context samples are seeded by the cycle's number)."""
        self.cycle_due = False
        self.resumed_negative_state = False
        self.negative_cycles = []
        self._negative_pool: list[dict] = []
        self._negative_slots = 1
        self._negative_batches_done = 0

    # Trainer.train's trial and ignore_keys_for_eval reach it by keyword, through **kwargs
    def train(  # type: ignore[override]
        self, resume_from_checkpoint: str | bool | None = None, **kwargs: Any
    ) -> TrainOutput:
        """``Trainer.train`` from the config's negative-training state
        (:meth:`start_negative_state`); resuming restores the state saved with the checkpoint."""
        self.start_negative_state()
        if isinstance(resume_from_checkpoint, bool) and resume_from_checkpoint:
            resume_from_checkpoint = get_last_checkpoint(self.args.output_dir)
            if resume_from_checkpoint is None:
                raise ValueError(
                    f"No valid checkpoint found in output directory ({self.args.output_dir})"
                )
        if resume_from_checkpoint is not None and self.args.negative_training:
            # a path: True was resolved above (Trainer.train itself refuses False alike)
            path = os.path.join(cast(str, resume_from_checkpoint), STATE_FILE)
            if not os.path.isfile(path):
                raise ValueError(
                    f"{resume_from_checkpoint} has no {STATE_FILE}: it was not saved by a "
                    "DRESSTrainer with negative training"
                )
            with open(path, encoding="utf-8") as handle:
                state = json.load(handle)
            self._negative_pool, self._negative_slots = state["pool"], state["slots"]
            self._negative_batches_done = state["batches_done"]
            self.negative_cycles, self.cycle_due = state["cycles"], state["cycle_due"]
            self.resumed_negative_state = True
        return super().train(resume_from_checkpoint=resume_from_checkpoint, **kwargs)

    def save_model(self, output_dir: str | None = None, _internal_call: bool = False) -> None:
        """``Trainer.save_model`` plus the clusters the weights came from and the model card."""
        super().save_model(output_dir, _internal_call=_internal_call)
        if self.args.should_save:
            folder = output_dir or self.args.output_dir
            assert folder is not None  # TrainingArguments gives output_dir a default
            self.semantic_clusters.save(os.path.join(folder, CLUSTERS_FOLDER))

    def model_card(self, model_name: str | None) -> ModelCard:
        args = self.args
        hyperparameters = {
            name: getattr(args, name)
            for name in (
                "gamma",
                "num_clusters",
                "head_threshold",
                "negative_training",
                "negative_contexts_per_cycle",
                "recluster_every",
                "negative_max_new_tokens",
                "negative_no_repeat_ngram_size",
                "negative_normalization",
                "max_negatives_per_batch",
                "cluster_seed",
            )
        }
        hyperparameters["embedder"] = json.dumps(
            self.semantic_clusters.embedder_identity, sort_keys=True
        )
        hyperparameters["training_cluster_distribution"] = [
            round(float(p), 4) for p in self.training_cluster_distribution
        ]
        method = (
            "DRESS (Han et al. 2022, §4.2): the training responses are clustered into k semantic "
            "clusters; each gold response is weighted by `(1 - p(cluster))^gamma` (Eq. 5) in the "
            "NLL (Eq. 4), and every cycle the model's greedy responses to training contexts that "
            "fall in head clusters (share > `head_threshold` of the generations) are trained on "
            "with weight -1 (Negative Training); `negative_training=False` is DRESS(-NT). The "
            "clusters are saved in `semantic_clusters/` beside the weights."
        )
        method = with_format_note(method, self.train_data_format, "dress")
        return self.card(
            model_name,
            tags=["dress", "semantic-diversity"],
            title="DRESS",
            method=method,
            hyperparameters=hyperparameters,
            differences=DIFFERENCES,
            citation=CITATION,
        )

    def card_training_rows(self) -> dict:
        return {
            **super().card_training_rows(),
            "negative_cycles": len(self.negative_cycles),
            "negatives": sum(cycle["num_negatives"] for cycle in self.negative_cycles),
        }

    # -- Eq. 4-5 ---------------------------------------------------------------------------

    def gold_weights(self, inputs: dict) -> torch.Tensor | None:
        if WEIGHT_COLUMN not in inputs:
            raise ValueError(
                f"the batch has no `{WEIGHT_COLUMN}`: without it DRESS would be plain MLE; the "
                "data collator must keep it (dialeval.trainers.DialogueCollator does)"
            )
        weights = inputs.pop(WEIGHT_COLUMN)
        # (batch,): a cheap check; a NaN weight would make the loss NaN
        if not bool(torch.isfinite(weights).all()):
            raise ArgumentError(
                WEIGHT_COLUMN,
                f"{describe_non_finite(weights)}: DRESS's weights (Eq. 5) must be finite",
            )
        return weights

    def negative_loss(
        self,
        logits: torch.Tensor,
        labels: torch.Tensor,
        negative: dict,
        window_count: torch.Tensor | int | None,
    ) -> torch.Tensor:
        """``sum_i w_i NLL_i``, ``w_i = -1 / (tokens of generation i's group)``: already this
        process's share."""
        if "weight" not in negative:
            raise ValueError(
                "DRESS negative rows need `negative_weight` (-1 / their group's token count)"
            )
        return (
            sequence_nll(logits, labels, self.shift_labels) * negative["weight"].to(logits.device)
        ).sum()

    # -- negative training -----------------------------------------------------------------

    def plan_negative_slots(self, train_dataloader: DataLoader | None) -> None:
        """The micro-batch slots of a cycle's period, and the refusal of a schedule past the memory
        bound."""
        args = self.args
        if not args.negative_training:
            return
        world = args.world_size
        micro_batches = (
            args.recluster_every * args.gradient_accumulation_steps
            if args.recluster_every is not None
            # recluster_every=None: Trainer.train hands its dataloader to on_train_begin
            else len(cast("DataLoader", train_dataloader))
        )
        slots = max(micro_batches * world, 1)
        contexts = min(args.negative_contexts_per_cycle, len(self.train_dataset))
        bound = args.max_negatives_per_batch or args.per_device_train_batch_size
        if max_rows_per_slot(contexts, slots) > bound:
            period = (
                f"`recluster_every`={args.recluster_every} steps"
                if args.recluster_every is not None
                else "an epoch"
            )
            raise ArgumentError(
                "negative_contexts_per_cycle",
                f"={args.negative_contexts_per_cycle} generations spread over {period} ({slots} "
                "micro-batches over all processes) could stack "
                f"{max_rows_per_slot(contexts, slots)} negative rows onto a micro-batch, above "
                f"`max_negatives_per_batch`={bound}: lower negative_contexts_per_cycle, raise "
                "recluster_every, or raise max_negatives_per_batch if the memory allows",
            )
        if not self.resumed_negative_state:
            self._negative_slots = slots

    def prepare_window(self, batch_samples: list, device: torch.device) -> None:
        if not self.args.negative_training:
            return
        if self.cycle_due:
            self.cycle_due = False
            self.run_negative_cycle()
        rank, world = self.args.process_index, self.args.world_size
        for batch in batch_samples:
            start, stop = slot_rows(
                len(self._negative_pool),
                self._negative_slots,
                self._negative_batches_done * world + rank,
            )
            self._negative_batches_done += 1
            rows = self._negative_pool[start:stop]
            if not rows:
                continue
            collated = self.negative_collator(
                [
                    {key: row[key] for key in ("input_ids", "attention_mask", "labels")}
                    for row in rows
                ]
            )
            for key in ("input_ids", "attention_mask", "labels"):
                batch["negative_" + key] = collated[key]
            batch["negative_weight"] = torch.tensor(
                [NEGATIVE_WEIGHT / row["normalizer"] for row in rows], dtype=torch.float32
            )

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
    def generate_responses(
        self, prompts: list[list[int]]
    ) -> tuple[list[list[int]], list[list[int]]]:
        """The prompts as generated from (decoder-only: cut from the left to leave room for the
        response) and the greedy responses (token ids, cut after the first eos) of the unwrapped
        model, in batches."""
        model = self.accelerator.unwrap_model(self.model)
        was_training = model.training
        model.eval()
        eos = (
            model.generation_config.eos_token_id
            if model.generation_config.eos_token_id is not None
            else model.config.eos_token_id
        )
        eos_ids = set(eos if isinstance(eos, list) else [eos])
        device = next(model.parameters()).device
        limit = max_input_length(model.config)
        if not self.is_encoder_decoder and isinstance(limit, int):
            room = limit - self.args.negative_max_new_tokens
            if room < 1:
                raise ArgumentError(
                    "negative_max_new_tokens",
                    f"={self.args.negative_max_new_tokens} leaves no room for a "
                    f"context within the model's {limit} positions",
                )
            # Prompt + response must fit the position table: keep the most recent context tokens.
            prompts = [prompt[-room:] for prompt in prompts]
        # Greedy (§4.2, §5.3) whatever the checkpoint's own decoding settings (BlenderBot's
        # min_length 20...).
        generation_config = greedy_generation_config(
            model,
            self.args.negative_max_new_tokens,
            self.args.negative_no_repeat_ngram_size,
            self.pad_token_id,
        )
        responses = []
        try:
            step = self.args.negative_generation_batch_size
            for start in range(0, len(prompts), step):
                chunk = prompts[start : start + step]
                width = max(len(prompt) for prompt in chunk)
                # Decoder-only generation continues from the last position: pad on the left.
                left = not self.is_encoder_decoder
                ids = [
                    ([self.pad_token_id] * (width - len(p)) + p)
                    if left
                    else (p + [self.pad_token_id] * (width - len(p)))
                    for p in chunk
                ]
                mask = [
                    ([0] * (width - len(p)) + [1] * len(p))
                    if left
                    else ([1] * len(p) + [0] * (width - len(p)))
                    for p in chunk
                ]
                output = model.generate(
                    input_ids=torch.tensor(ids, device=device),
                    attention_mask=torch.tensor(mask, device=device),
                    generation_config=generation_config,
                )
                # Encoder-decoder outputs start with the decoder start token; decoder-only ones with
                # the prompt.
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
        return {
            "input_ids": prompt + response,
            "attention_mask": [1] * (len(prompt) + len(response)),
            "labels": [IGNORE_INDEX] * len(prompt) + response,
        }

    def _assign_generations(self, texts: list[str]) -> list[int]:
        """Cluster ids of the non-empty generations, computed on the main process."""

        def work() -> list[int]:
            kept = [text for text in texts if text.strip()]
            return self.semantic_clusters.assign(kept).tolist() if kept else []

        return self._on_main(work)

    def run_negative_cycle(self) -> dict:
        """Generate for sampled training contexts; the head-cluster generations become the cycle's
        negatives.

        Each process generates for its share of the sampled contexts; the generations are gathered
        (in the sampled order, whatever the number of processes), assigned to the clusters on the
        main process, and every process builds the same pool: the head-cluster generations in a
        seeded random order, each with the token count of its group (see the module docstring).
        """
        # accelerate: deferred, so importing this module loads no model stack
        from accelerate.utils import gather_object

        started = time.perf_counter()
        args = self.args
        cycle = len(self.negative_cycles)
        unused = (
            len(self._negative_pool)
            - slot_rows(
                len(self._negative_pool),
                self._negative_slots,
                self._negative_batches_done * args.world_size,
            )[0]
        )
        prompts = self._sample_prompts(cycle)
        rank, world = args.process_index, args.world_size
        mine = list(range(rank, len(prompts), world))
        used_prompts, responses = self.generate_responses([prompts[index] for index in mine])
        generated = list(zip(mine, used_prompts, responses))
        if world > 1:
            generated = sorted(gather_object(generated), key=lambda item: item[0])
        texts = [self._decode(response) for _, _, response in generated]
        # An empty generation (eos at once) has no semantic content to embed: it is not clustered,
        # never a negative.
        cluster_ids = np.asarray(self._assign_generations(texts), dtype=int)
        clustered = [index for index, text in enumerate(texts) if text.strip()]
        is_head = np.zeros(len(generated), dtype=bool)
        if len(cluster_ids):
            is_head[clustered] = head_cluster_mask(
                cluster_ids, self.semantic_clusters.num_clusters, args.head_threshold
            )
        order = np.random.default_rng(args.seed + 2000 + cycle).permutation(len(generated))
        group_size = args.per_device_train_batch_size * args.gradient_accumulation_steps * world
        token_counts = [len(generated[index][2]) for index in order]
        normalizers = group_normalizers(
            token_counts, is_head[order], group_size, args.negative_normalization
        )
        self._negative_pool = [
            {
                **self._negative_example(generated[index][1], generated[index][2]),
                "normalizer": int(normalizer),
            }
            for index, normalizer in zip(order, normalizers)
            if is_head[index]
        ]
        self._negative_batches_done = 0
        shares = np.bincount(cluster_ids, minlength=self.semantic_clusters.num_clusters) / max(
            len(cluster_ids), 1
        )
        stats: dict[str, Any] = {
            "cycle": cycle,
            "global_step": self.state.global_step,
            "num_generated": len(generated),
            "num_empty": len(generated) - len(clustered),
            "num_negatives": len(self._negative_pool),
            "head_clusters": sorted(
                int(index) for index in np.flatnonzero(shares > args.head_threshold)
            ),
            "head_share": float(is_head[clustered].mean()) if clustered else 0.0,
            "generated_sem_ent": distribution_entropy(shares) if len(cluster_ids) else 0.0,
            "max_negatives_per_batch": max_rows_per_slot(
                len(self._negative_pool), self._negative_slots
            ),
            "previous_unused": int(unused),
            "seconds": time.perf_counter() - started,
        }
        self.negative_cycles.append(stats)
        self.log(
            {
                f"dress/{key}": float(value)
                for key, value in stats.items()
                if key not in ("head_clusters", "global_step")
            }
        )
        return stats
