"""Remote clique's and chamfer distance's contract (Cox et al. 2021; the `diversity` package's)."""

from __future__ import annotations

from dialeval.hub import EMBEDDED_SENTENCE_MODEL
from dialeval.metrics.embedding_distances.defaults import FIGURES
from dialeval.metrics.embedding_distances.job import STEPS
from dialeval.metrics.engines.metric_spec import MetricSpec, ModelSpec, SetFigure

SPEC = MetricSpec(
    "embedding_distances",
    "remote clique and chamfer distance of sentence embeddings (Cox et al. 2021; the "
    "`diversity` package's)",
    (
        "embedding_distances",
        "remote_clique",
        "chamfer_distance",
        "remote_clique_from_embeddings",
        "chamfer_distance_from_embeddings",
    ),
    order=120,
    steps=STEPS,
    set_figures=tuple(SetFigure(figure, figure, figure) for figure in FIGURES),
    model=ModelSpec("--sentence-model", EMBEDDED_SENTENCE_MODEL, "sentence-transformers encoder"),
)
