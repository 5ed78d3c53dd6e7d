"""Similarity diversity's light constants: the default models of its BERTScore and cross-encoder
similarities (read by ``spec.py`` and ``job.py`` without loading the encoders' code)."""

DEFAULT_BERTSCORE_MODEL = "FacebookAI/roberta-large"
DEFAULT_CROSS_ENCODER = "cross-encoder/stsb-roberta-large"
