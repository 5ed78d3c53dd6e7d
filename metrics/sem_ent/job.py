"""``dialeval evaluate``'s Sem-Ent step (Han et al. 2022, §3.1): clusters fitted on the reference
corpus, or saved ones."""

from __future__ import annotations

from dataclasses import dataclass, field

from dialeval.metrics.engines.job_steps import (
    JobData,
    JobOptions,
    JobStep,
    Progress,
    Settings,
    StepOutcome,
    StepSkipped,
)
from dialeval.option_fields import option
from dialeval.validation import ArgumentError, arguments_named, check_int


@dataclass
class SemEntOptions:
    """How Sem-Ent gets its clusters: fitted on ``--reference-corpus``, or loaded with
    ``--sem-ent-clusters``."""

    sem_ent_clusters: str | None = field(
        default=None,
        metadata=option(
            "--sem-ent-clusters",
            metavar="DIR",
            reads_path=True,
            help="score Sem-Ent under clusters saved earlier (instead of fitting)",
        ),
    )
    sem_ent_embedder: str = field(
        default="sentence_transformers",
        metadata=option(
            "--sem-ent-embedder",
            metavar="KIND[=MODEL]",
            default_text="sentence_transformers, the embedded MiniLM",
            help="embedder Sem-Ent fits with: sentence_transformers, last_token (the paper's: "
            "microsoft/DialoGPT-large) or mean_pooling; =MODEL picks the model",
        ),
    )
    sem_ent_embedder_model: str | None = None
    sem_ent_max_length: int | None = field(
        default=None,
        metadata=option(
            "--sem-ent-max-length",
            metavar="N",
            default_text="the embedder's: 256 for last_token (the released code's), 512 for "
            "mean_pooling",
            help="tokens of each text the last_token (its last N) or mean_pooling (its first N) "
            "embedder reads; at most the model's positions (a sentence-transformers model cuts "
            "texts itself)",
        ),
    )
    sem_ent_num_clusters: int = field(
        default=20,
        metadata=option(
            "--sem-ent-k",
            metavar="K",
            aliases=("num_clusters",),
            help="number of Sem-Ent clusters, as many as the paper's",
        ),
    )
    sem_ent_seed: int = field(
        default=0, metadata=option("--sem-ent-seed", help="k-means seed of the Sem-Ent fit")
    )
    save_sem_ent_clusters: str | None = field(
        default=None,
        metadata=option(
            "--save-sem-ent-clusters",
            metavar="DIR",
            help="save the fitted Sem-Ent clusters here to reuse them",
        ),
    )

    def __post_init__(self) -> None:
        # before any step runs (clusters.py's bounds)
        check_int(self.sem_ent_num_clusters, "sem_ent_num_clusters", 2)
        check_int(self.sem_ent_seed, "sem_ent_seed", 0)
        # --sem-ent-embedder KIND=MODEL names both
        if "=" in self.sem_ent_embedder:
            kind, _, model = self.sem_ent_embedder.partition("=")
            if model and self.sem_ent_embedder_model is not None:
                raise ArgumentError(
                    "sem_ent_embedder",
                    f"{self.sem_ent_embedder!r} names a model and so does `sem_ent_embedder_model`",
                )
            self.sem_ent_embedder, self.sem_ent_embedder_model = (
                kind,
                model or self.sem_ent_embedder_model,
            )
        if self.sem_ent_max_length is not None:
            check_int(self.sem_ent_max_length, "sem_ent_max_length")
            if self.sem_ent_embedder == "sentence_transformers":
                raise ArgumentError(
                    "sem_ent_max_length",
                    "applies to the last_token and mean_pooling embedders (`sem_ent_embedder`); "
                    "a sentence-transformers model cuts texts at its own max_seq_length",
                )


def _fits(options: Settings) -> bool:
    return options.sem_ent_clusters is not None or options.reference_corpus is not None


def _too_few_references(options: Settings) -> str | None:
    """Why the clusters cannot be fitted: fewer distinct reference texts than clusters (known
    from the settings alone, so ``--metric sem_ent`` is refused before any step runs)."""
    if options.sem_ent_clusters is not None or options.reference_corpus is None:
        return None
    distinct = len(set(options.reference_corpus))
    if distinct >= options.sem_ent_num_clusters:
        return None
    return (
        f"the reference corpus has {distinct} distinct texts, fewer than the "
        f"{options.sem_ent_num_clusters} clusters to fit (--sem-ent-k)"
    )


def _embedded_texts(
    data: JobData, options: Settings, model: str | None
) -> list[tuple[str, list[str]]]:
    """What the fit embeds with a sentence-transformers model: the reference corpus, then the
    responses."""
    # engines (numpy): deferred so the declaration imports only light modules
    from dialeval.metrics.engines.embedders import DEFAULT_MODELS

    if (
        options.sem_ent_clusters is not None
        or options.sem_ent_embedder != "sentence_transformers"
        or _empty(data)
    ):
        return []
    return [
        (
            options.sem_ent_embedder_model or DEFAULT_MODELS["sentence_transformers"],
            [*options.reference_corpus, *data.responses],
        )
    ]


def _empty(data: JobData) -> list[int]:
    """The positions of the responses without text (there only under --allow-empty)."""
    return [index for index, response in enumerate(data.responses) if not response.strip()]


def _sem_ent(
    data: JobData, model: str | None, options: Settings, progress: Progress
) -> StepOutcome:
    # distributed, engines, metric code (numpy): deferred; the declaration stays light
    from dialeval.distributed import process_state
    from dialeval.metrics.engines.embedders import load_embedder
    from dialeval.metrics.sem_ent.clusters import SemanticClusters, sem_ent_from_labels

    empty = _empty(data)
    if empty:
        # --allow-empty reaches the metrics that can score a response without tokens; Sem-Ent cannot
        # place one in a cluster of meanings, and no figure of it would count what was generated.
        raise StepSkipped(
            f"{len(empty)} of the {len(data.responses)} responses are empty or white space only: "
            "--allow-empty scores them in the other metrics, but Sem-Ent embeds each response to "
            "place it in a cluster, and an empty one has no meaning to place; leave them out of "
            "the input to get Sem-Ent"
        )
    runtime = {
        "batch_size": options.batch_size,
        "device": options.device,
        "backend": options.backend,
    }
    if options.sem_ent_clusters is not None:
        with arguments_named({"directory": "sem_ent_clusters"}):
            clusters = SemanticClusters.load(options.sem_ent_clusters, **runtime)
        source = f"saved clusters {options.sem_ent_clusters}"
    else:
        length = (
            {} if options.sem_ent_max_length is None else {"max_length": options.sem_ent_max_length}
        )
        with arguments_named(
            {
                "kind": "sem_ent_embedder",
                "model": "sem_ent_embedder",
                "max_length": "sem_ent_max_length",
                "reference_texts": "reference_corpus",
                "num_clusters": "sem_ent_num_clusters",
                "seed": "sem_ent_seed",
            }
        ):
            embedder = load_embedder(
                options.sem_ent_embedder, options.sem_ent_embedder_model, **runtime, **length
            )
            clusters = SemanticClusters.fit(
                options.reference_corpus,
                embedder,
                num_clusters=options.sem_ent_num_clusters,
                seed=options.sem_ent_seed,
            )
        source = f"fitted on the reference corpus ({len(options.reference_corpus)} texts)"
        if options.save_sem_ent_clusters and process_state().is_main_process:
            # every process holds the same clusters (the main one fitted them); one writes them
            with arguments_named({"directory": "save_sem_ent_clusters"}):
                clusters.save(options.save_sem_ent_clusters)
    progress(1)
    labels = clusters.assign(data.responses)  # kept: a resample's clusters are counted from them
    result = sem_ent_from_labels(labels, clusters.num_clusters)
    progress(1)
    return StepOutcome(
        {
            **result,
            "num_clusters": clusters.num_clusters,
            "clusters": source,
            "embedder": clusters.embedder_identity,
            "reference_distribution": [float(v) for v in clusters.reference_distribution],
        },
        kept=labels,
    )


def _resampling(data: JobData, outcome: StepOutcome, options: Settings, model: str | None) -> dict:
    """Sem-Ent recomputed exactly from each response's cluster (none from a checkpoint: placing
    the responses would run the embedder again)."""
    if outcome.kept is None:
        return {}
    # engines and metric code (numpy): deferred; the declaration stays light
    from dialeval.metrics.engines.figure_statistics import constant_statistic
    from dialeval.metrics.sem_ent.resampling import sem_ent_statistic

    return {
        "sem_ent": sem_ent_statistic(data, outcome.kept, outcome.summary["num_clusters"]),
        "max_sem_ent": constant_statistic(
            outcome.summary["max_sem_ent"], data.num_units, "ln k: the same on every resample"
        ),
    }


STEPS = (
    JobStep(
        "sem_ent",
        ("response_set", "corpus"),
        _sem_ent,
        options=(JobOptions, SemEntOptions),
        applies=_fits,
        blocked=_too_few_references,
        model_flag="--sem-ent-embedder",
        needs="--reference-corpus (to fit the clusters on) or --sem-ent-clusters",
        sentence_texts=_embedded_texts,
        unit="step",
        total=lambda data, options: 2,
        resampling=_resampling,
    ),
)
