"""Homogenization's light constants (read by ``spec.py`` and ``job.py`` without loading its
scorers)."""

#: The ``diversity`` package's BERTScore model.
DEFAULT_HOMOGENIZATION_MODEL = "microsoft/deberta-base-mnli"
