"""Similarity diversity's contract: the §5 reduction over sent-BERT, BERTScore, an STS
cross-encoder or n-gram cosine similarity."""

from __future__ import annotations

from dialeval.hub import EMBEDDED_SENTENCE_MODEL
from dialeval.metrics.engines.metric_spec import MetricSpec, ModelSpec, SetFigure
from dialeval.metrics.similarity_diversity.job import STEPS

SPEC = MetricSpec(
    "similarity_diversity",
    "§5 reduction over sent-BERT, BERTScore, STS cross-encoder or n-gram cosine similarity",
    (
        "similarity_diversity",
        "sent_bert_diversity",
        "bertscore_diversity",
        "similarity_matrices",
    ),
    order=20,
    steps=STEPS,
    set_figures=(
        SetFigure("sent_bert", "sent_bert", "sent_bert_diversity", by_default=True),
        # unrescaled: the baseline rescale is one affine map for every pair of a model, so it
        # moves no rank (rho, OCA) and lets any encoder run, including those bert-score has no
        # baseline for
        SetFigure(
            "bertscore",
            "bertscore",
            "bertscore_diversity",
            settings=(("bertscore_rescale", False),),
        ),
        SetFigure("cross_encoder", "cross_encoder", "cross_encoder_diversity"),
    ),
    model=ModelSpec("--sentence-model", EMBEDDED_SENTENCE_MODEL, "sentence-transformers encoder"),
)
