"""All lexical diversity figures of a submission in one call, at the right scope.

* A list of response sets (``list[list[str]]``, one set per context) gets Tevet & Berant's
  set-level metrics, per set and averaged over sets.
* A flat list of responses (``list[str]``, the whole generated corpus) gets the corpus-scope
  metrics of the Sem-Ent paper (Dist-n, Ent-n, LF) and Self-BLEU.

The ``lexical_diversity`` evaluate module and ``dialeval evaluate`` are thin wrappers of this.
"""
from __future__ import annotations

import numpy as np

from .corpus_lexical import corpus_ngram_diversity, lf
from .self_bleu import self_bleu
from .set_lexical import averaged_distinct_n, ngram_cosine_diversity
from .validation import check_corpus, check_response_sets, split_scope

SET_METRICS = ("averaged_distinct_n", "ngram_cosine_diversity")


def set_lexical_diversity(
    response_sets: list[list[str]], max_n: int = 5, tokenizer="tevet", allow_empty: bool = False, progress=None
) -> dict:
    """Set-scope figures: ``per_set`` scores and their means over sets.

    Args:
        progress: optional callable invoked once per scored set (e.g. a tqdm ``update``).
    """
    response_sets = check_response_sets(response_sets, "predictions", min_size=2, allow_empty=allow_empty)
    per_set = []
    for response_set in response_sets:
        per_set.append(
            {
                "averaged_distinct_n": averaged_distinct_n(response_set, max_n, tokenizer=tokenizer, allow_empty=allow_empty),
                "ngram_cosine_diversity": ngram_cosine_diversity(response_set, max_n, tokenizer=tokenizer, allow_empty=allow_empty),
            }
        )
        if progress is not None:
            progress()
    means = {name: float(np.mean([scores[name] for scores in per_set])) for name in SET_METRICS}
    return {**means, "num_sets": len(per_set), "per_set": per_set}


def corpus_lexical_diversity(
    responses: list[str],
    max_n: int = 3,
    lf_threshold: int = 100,
    reference_corpus=None,
    self_bleu_max_n: int = 3,
    allow_empty: bool = False,
) -> dict:
    """Corpus-scope figures: Dist-1..max_n, Ent-1..max_n, LF and Self-BLEU."""
    responses = check_corpus(responses, "predictions", allow_empty=allow_empty)
    result = corpus_ngram_diversity(responses, max_n=max_n, allow_empty=allow_empty)
    result["lf"] = lf(responses, reference=reference_corpus, threshold=lf_threshold, allow_empty=allow_empty)
    result["self_bleu"] = self_bleu(responses, max_n=self_bleu_max_n, allow_empty=allow_empty) if len(responses) > 1 else None
    result["num_responses"] = len(responses)
    return result


def lexical_diversity(predictions, **options) -> dict:
    """Dispatch on scope: response sets -> :func:`set_lexical_diversity`, flat list -> corpus.

    Options for the other scope are rejected rather than ignored.
    """
    scope = split_scope(predictions, "predictions")
    allowed = {
        "sets": {"max_n", "tokenizer", "allow_empty", "progress"},
        "corpus": {"max_n", "lf_threshold", "reference_corpus", "self_bleu_max_n", "allow_empty"},
    }[scope]
    unexpected = sorted(set(options) - allowed)
    if unexpected:
        raise ValueError(
            f"{unexpected} do not apply to {scope}-scope input; options for it are {sorted(allowed)} "
            "(a flat list of strings is a corpus, a list of lists is response sets)"
        )
    if scope == "sets":
        return {"scope": "response_set", **set_lexical_diversity(predictions, **options)}
    return {"scope": "corpus", **corpus_lexical_diversity(predictions, **options)}
