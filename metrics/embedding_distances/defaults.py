"""Embedding distances' light constants (read by ``spec.py`` and ``job.py`` without loading
numpy)."""

#: The figures, in the order :func:`~dialeval.metrics.embedding_distances.embedding_distances`
#: reports them.
FIGURES = ("remote_clique", "chamfer_distance")
