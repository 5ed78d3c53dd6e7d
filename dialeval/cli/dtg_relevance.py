"""Relevance of DTG's starting and ending sets against the human responses (Stasaski & Hearst 2022,
§6.4, Table 5).

§6.4 compares both sets to DailyDialog++'s five human responses per context with BLEU (the paper
links NLTK's ``bleu_score`` module) and BERTScore (Zhang et al. 2020). The paper does not give the
BLEU variant, tokenization or BERTScore settings; our choices:

- **BLEU**: NLTK's ``corpus_bleu`` (BLEU-4, uniform weights, no smoothing) over every generated
  response of the set collection, each a hypothesis with its context's human responses as
  references; text lowercased and tokenized with NLTK's casual tokenizer. Range 0-1.
- **BERTScore**: F1 of each generated response against each human response of its context with
  :func:`dialeval.metrics.similarity_diversity.bertscore_similarity_matrices` (bert_score's
  conventions; default ``roberta-large`` layer 17, no idf, **not** rescaled: Table 5's 0.86 is the
  raw scale); a response scores its best-matching reference (bert_score's multi-reference rule),
  and the figure is the mean over responses and contexts.
"""

from __future__ import annotations

import warnings

import numpy as np

from dialeval.metrics.similarity_diversity import bertscore_similarity_matrices
from dialeval.text import casual_tokenize
from dialeval.validation import ArgumentError


def _tokens(text: str) -> list[str]:
    return casual_tokenize(text.lower())


def _check(response_sets, references) -> None:
    if len(response_sets) != len(references) or not response_sets:
        raise ArgumentError(
            "response_sets",
            "and `references` must be non-empty and of the same length (one per context)",
        )
    for where, refs in enumerate(references):
        if not refs or not all(isinstance(text, str) for text in refs):
            raise ArgumentError(f"references[{where}]", "must be a non-empty list of strings")


def corpus_bleu_against_references(
    response_sets: list[list[str]], references: list[list[str]]
) -> float:
    """NLTK corpus BLEU-4 of every response, each against its context's human responses (see module
    docstring)."""
    # nltk: importing it loads scikit-learn, scipy and pandas; only this path needs it
    from nltk.translate.bleu_score import corpus_bleu

    _check(response_sets, references)
    hypotheses, reference_lists = [], []
    for responses, refs in zip(response_sets, references):
        tokenized = [_tokens(text) for text in refs]
        for response in responses:
            hypotheses.append(_tokens(response))
            reference_lists.append(tokenized)
    with warnings.catch_warnings():
        # Unsmoothed BLEU-4 is the figure chosen above: a set without a 4-gram in common with its
        # references scores 0, as it should; NLTK warns of it on every call (a `dtg` / `dtg-summary`
        # run printed it raw).
        warnings.filterwarnings(
            "ignore", message=r"\s*The hypothesis contains 0 counts of", category=UserWarning
        )
        return float(corpus_bleu(reference_lists, hypotheses))


def bertscore_against_references(
    response_sets_by_name: dict[str, list[list[str]]],
    references: list[list[str]],
    model: str,
    device=None,
    batch_size: int = 64,
    dtype: str | None = None,
) -> dict[str, float]:
    """Mean best-reference BERTScore F1 (unrescaled) of each named collection of response sets.

    All collections (e.g. ``{"start": initial sets, "end": final sets}``) are scored in one model
    pass per context: the context's responses of every collection and its references form one set.
    """
    names = list(response_sets_by_name)
    for name in names:
        _check(response_sets_by_name[name], references)
    combined, spans = [], []
    for context, refs in enumerate(references):
        members, offsets = [], {}
        for name in names:
            responses = response_sets_by_name[name][context]
            offsets[name] = (len(members), len(members) + len(responses))
            members.extend(responses)
        spans.append((offsets, len(members)))
        combined.append(members + list(refs))
    # A generated response may be empty (the model ended at once): it is what the model said, and
    # scores as such.
    matrices = bertscore_similarity_matrices(
        combined,
        model=model,
        rescale_with_baseline=False,
        batch_size=batch_size,
        device=device,
        dtype=dtype,
        allow_empty=True,
    )
    scores = {name: [] for name in names}
    for matrix, (offsets, num_generated) in zip(matrices, spans):
        for name, (start, end) in offsets.items():
            scores[name].extend(matrix[start:end, num_generated:].max(axis=1).tolist())
    return {name: float(np.mean(values)) for name, values in scores.items()}
