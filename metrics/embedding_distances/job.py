"""``dialeval evaluate``'s remote-clique and chamfer-distance steps: per response set, or of the
whole corpus for a corpus input, on the job's shared sentence embeddings (``--sentence-model``)."""

from __future__ import annotations

from collections.abc import Callable

from dialeval.metrics.embedding_distances.defaults import FIGURES
from dialeval.metrics.engines.job_steps import (
    JobData,
    JobOptions,
    JobStep,
    Progress,
    SentenceModelOptions,
    Settings,
    StepOutcome,
    check_pairwise_corpus,
)


def _distance(figure: str) -> Callable[..., StepOutcome]:
    def run(data: JobData, model: str, options: Settings, progress: Progress) -> StepOutcome:
        # metric code (numpy, model stacks): deferred so the declaration's import stays light
        from dialeval.metrics.embedding_distances import embedding_distances
        from dialeval.metrics.engines.embedders import sentence_vectors
        from dialeval.metrics.engines.shared_outputs import shared_model_outputs

        # a nearest neighbour per response; remote clique has a closed form
        if figure == "chamfer_distance":
            check_pairwise_corpus(figure, data, options)

        # the job's store (or this block's) holds the vectors the figure read: looked up again
        # for the resampling hook, never encoded twice
        with shared_model_outputs():
            result = embedding_distances(
                data.sets if data.sets is not None else data.responses,
                model,
                (figure,),
                batch_size=options.batch_size,
                device=options.device,
                backend=options.backend,
                allow_empty=options.allow_empty,
                progress=progress,
            )
            if data.sets is None:
                kept = sentence_vectors(
                    data.responses,
                    model,
                    options.batch_size,
                    options.device,
                    backend=options.backend,
                )
        if data.sets is None:
            return StepOutcome(
                {figure: result[figure], "num_responses": result["num_responses"], "model": model},
                kept=kept,
            )
        return StepOutcome(
            {figure: result[figure], "model": model},
            [{figure: row[figure]} for row in result["per_set"]],
        )

    return run


def _resampling(figure: str) -> Callable[..., dict]:
    def hook(data: JobData, outcome: StepOutcome, options: Settings, model: str) -> dict:
        """A corpus's figure from the embeddings the run read (none from a checkpoint: no model
        runs again)."""
        if data.sets is not None or outcome.kept is None:
            return {}
        # metric code (numpy): deferred so the declaration's import stays light
        from dialeval.metrics.embedding_distances.distances import STATISTICS

        return {figure: STATISTICS[figure](*outcome.kept)}

    return hook


def _responses_with(data: JobData, options: Settings, model: str) -> list[tuple[str, list[str]]]:
    return [(model, data.responses)]


STEPS = tuple(
    JobStep(
        figure,
        ("response_set", "corpus"),
        _distance(figure),
        options=(JobOptions, SentenceModelOptions),
        models=lambda options: options.sentence_models,
        model_flag="--sentence-model",
        sentence_texts=_responses_with,
        resampling=_resampling(figure),
    )
    for figure in FIGURES
)
