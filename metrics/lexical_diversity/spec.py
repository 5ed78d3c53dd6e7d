"""lexical diversity's contract: distinct-n and n-gram cosine per set, corpus Dist/Ent-n, LF and
Self-BLEU (see :class:`~dialeval.metrics.engines.metric_spec.MetricSpec`)."""

from __future__ import annotations

from dialeval.metrics.engines.metric_spec import MetricSpec, SetFigure
from dialeval.metrics.lexical_diversity.job import STEPS

SPEC = MetricSpec(
    "lexical_diversity",
    "distinct-n and n-gram cosine per set (Tevet & Berant); Dist/Ent-n, LF, Self-BLEU per corpus",
    (
        "lexical_diversity",
        "set_lexical_diversity",
        "corpus_lexical_diversity",
        "averaged_distinct_n",
        "ngram_cosine_diversity",
        "distinct_n",
        "entropy_n",
        "lf",
        "self_bleu",
    ),
    order=10,
    steps=STEPS,
    set_figures=(
        SetFigure(
            "averaged_distinct_n", "lexical_diversity", "averaged_distinct_n", by_default=True
        ),
        SetFigure("ngram_cosine", "lexical_diversity", "ngram_cosine_diversity", by_default=True),
    ),
)
