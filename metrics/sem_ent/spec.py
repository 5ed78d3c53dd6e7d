"""Sem-Ent's contract (Han et al. 2022): the entropy of the semantic-cluster distribution, with
its clusters and plot written through its output hook."""

from __future__ import annotations

from dialeval.hub import EMBEDDED_SENTENCE_MODEL
from dialeval.metrics.engines.metric_spec import MetricSpec, ModelSpec
from dialeval.metrics.sem_ent.job import STEPS
from dialeval.metrics.sem_ent.outputs import OUTPUTS

SPEC = MetricSpec(
    "sem_ent",
    "Sem-Ent: entropy of the semantic-cluster distribution (Han et al. 2022)",
    ("sem_ent", "SemanticClusters"),
    order=50,
    steps=STEPS,
    model=ModelSpec("--sem-ent-embedder", EMBEDDED_SENTENCE_MODEL, "sentence encoder"),
    outputs=(OUTPUTS,),
)
