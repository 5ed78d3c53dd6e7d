"""``dialeval evaluate``'s similarity-diversity steps: sent-BERT, BERTScore and STS cross-encoder
(Tevet & Berant §5)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dialeval.metrics.engines.job_steps import (
    JobData,
    JobOptions,
    JobStep,
    Progress,
    SentenceModelOptions,
    Settings,
    StepOutcome,
)
from dialeval.metrics.similarity_diversity.defaults import (
    DEFAULT_BERTSCORE_MODEL,
    DEFAULT_CROSS_ENCODER,
)
from dialeval.option_fields import model_list_field, option


@dataclass
class BERTScoreOptions:
    """The models and rescaling of BERTScore diversity."""

    bertscore_models: list[str] = model_list_field(
        "--bertscore-model",
        DEFAULT_BERTSCORE_MODEL,
        "encoder for BERTScore diversity",
        default_text=f"{DEFAULT_BERTSCORE_MODEL}, layer 17",
    )
    bertscore_rescale: bool = field(
        default=True,
        metadata=option(
            "--bertscore-rescale",
            choices=("on", "off"),
            convert=lambda value: value == "on",
            default_text="on",
            aliases=(
                "rescale_with_baseline",
                ("`rescale_with_baseline=False`", "`--bertscore-rescale off`"),
            ),
            help="rescale BERTScore with the model's baseline (bert_score's "
            "rescale_with_baseline): built in for roberta-large, read from an installed "
            "bert-score's published files for the models it covers",
        ),
    )
    bertscore_baseline: str | None = field(
        default=None,
        metadata=option(
            "--bertscore-baseline",
            metavar="FILE",
            reads_path=True,
            aliases=("baseline", ("`baseline=`", "`--bertscore-baseline FILE`")),
            help="bert_score baseline file (LAYER,P,R,F rows, as "
            "bert_score/rescale_baseline/en/MODEL.tsv) to rescale BERTScore with, for a model "
            "bert-score publishes none for",
        ),
    )


@dataclass
class CrossEncoderOptions:
    """The models of cross-encoder diversity."""

    cross_encoder_models: list[str] = model_list_field(
        "--cross-encoder-model",
        DEFAULT_CROSS_ENCODER,
        "STS cross-encoder for cross-encoder diversity",
    )


def _diversity(kind: str, **extra: Callable[[Settings], object]) -> Callable[..., StepOutcome]:
    """A runner of ``similarity_diversity(kind)``; ``extra(options)`` gives the similarity's own
    options."""

    def run(data: JobData, model: str, options: Settings, progress: Progress) -> StepOutcome:
        # metric code (numpy, model stacks): deferred so the declaration's import stays light
        from dialeval.metrics.similarity_diversity import similarity_diversity

        own: dict[str, Any] = {name: getter(options) for name, getter in extra.items()}
        # The engines report their own work (sentences encoded, pairs scored) to the step's bar.
        result = similarity_diversity(
            data.response_sets(),
            kind,
            model,
            batch_size=options.batch_size,
            device=options.device,
            backend=options.backend,
            allow_empty=options.allow_empty,
            progress=progress,
            **own,
        )
        figure = f"{kind}_diversity"
        return StepOutcome(
            {figure: result["similarity_diversity"], "model": model},
            [{figure: row["similarity_diversity"]} for row in result["per_set"]],
        )

    return run


def _responses_with(data: JobData, options: Settings, model: str) -> list[tuple[str, list[str]]]:
    return [(model, data.responses)]


STEPS = (
    JobStep(
        "sent_bert",
        ("response_set",),
        _diversity("sent_bert"),
        options=(JobOptions, SentenceModelOptions),
        models=lambda options: options.sentence_models,
        model_flag="--sentence-model",
        report_name="sent_bert_diversity",
        sentence_texts=_responses_with,
    ),
    JobStep(
        "bertscore",
        ("response_set",),
        _diversity(
            "bertscore",
            rescale_with_baseline=lambda o: o.bertscore_rescale,
            baseline=lambda o: o.bertscore_baseline,
        ),
        options=(JobOptions, BERTScoreOptions),
        models=lambda options: options.bertscore_models,
        model_flag="--bertscore-model",
        report_name="bertscore_diversity",
    ),
    JobStep(
        "cross_encoder",
        ("response_set",),
        _diversity("cross_encoder"),
        options=(JobOptions, CrossEncoderOptions),
        models=lambda options: options.cross_encoder_models,
        model_flag="--cross-encoder-model",
        report_name="cross_encoder_diversity",
    ),
)
