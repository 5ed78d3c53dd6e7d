"""Shared model engines the metrics are built on; each loads its model through :mod:`dialeval.hub`.

- :mod:`~dialeval.metrics.engines.pair_scorer`: a sequence-pair classifier over many text pairs
  (NLI, STS cross-encoders, yes/no answer classifiers);
- :mod:`~dialeval.metrics.engines.embedders`: text embedders (sentence-transformers, mean
  pooling, last token);
- :mod:`~dialeval.metrics.engines.lm_scorer`: the loss of candidate responses under a causal or
  seq2seq language model;
- :mod:`~dialeval.metrics.engines.reduction`: Tevet & Berant's §5 similarity-to-diversity reduction.
"""
