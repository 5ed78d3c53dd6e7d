"""All lexical diversity figures of a submission in one call, at the right scope.

* A list of response sets (``list[list[str]]``, one set per context) gets Tevet & Berant's
  set-level metrics, per set and averaged over sets.
* A flat list of responses (``list[str]``, the whole generated corpus) gets the corpus-scope
  metrics of the Sem-Ent paper (Dist-n, Ent-n, LF) and Self-BLEU.

The ``lexical_diversity`` evaluate module and ``dialeval evaluate`` are thin wrappers of this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from dialeval.metrics.lexical_diversity.corpus import corpus_ngram_diversity, lf
from dialeval.metrics.lexical_diversity.self_bleu import self_bleu
from dialeval.metrics.lexical_diversity.set_level_batch import batch_set_lexical_diversity
from dialeval.validation import (
    ArgumentError,
    arguments_named,
    check_corpus,
    check_progress,
    split_scope,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from dialeval.type_aliases import Progress, WordTokenizer

SET_METRICS = ("averaged_distinct_n", "ngram_cosine_diversity")


def set_lexical_diversity(
    response_sets: list[list[str]],
    max_n: int = 5,
    tokenizer: str | WordTokenizer = "tevet",
    allow_empty: bool = False,
    progress: Progress | None = None,
) -> dict:
    """Set-scope figures (Tevet & Berant 2021, §6.2): ``per_set`` scores and their means over sets.

    All sets are scored in one vectorized call
    (:func:`.set_level_batch.batch_set_lexical_diversity`), bit for bit equal to the per-set
    functions of :mod:`.set_lexical` but many times faster.

    Args:
        progress: optional callable invoked once with the number of scored sets when they are
            done (e.g. a tqdm bar's ``update``).
    """
    check_progress(progress)
    scores = batch_set_lexical_diversity(
        response_sets, max_n, tokenizer=tokenizer, allow_empty=allow_empty
    )
    per_set = [
        dict(zip(SET_METRICS, values))
        for values in zip(*(scores[name].tolist() for name in SET_METRICS))
    ]
    if progress is not None:
        progress(len(per_set))
    means = {name: float(np.mean(scores[name])) for name in SET_METRICS}
    return {**means, "num_sets": len(per_set), "per_set": per_set}


def corpus_lexical_diversity(
    responses: list[str],
    max_n: int = 3,
    lf_threshold: int = 100,
    reference_corpus: list[str] | Mapping[str, int] | None = None,
    self_bleu_max_n: int = 3,
    allow_empty: bool = False,
) -> dict:
    """Corpus-scope figures: Dist-1..max_n, Ent-1..max_n, LF and Self-BLEU."""
    responses = check_corpus(responses, "responses", allow_empty=allow_empty)
    result = cast(
        "dict[str, float | None]",
        corpus_ngram_diversity(responses, max_n=max_n, allow_empty=allow_empty),
    )
    with arguments_named({"reference": "reference_corpus", "threshold": "lf_threshold"}):
        result["lf"] = lf(
            responses, reference=reference_corpus, threshold=lf_threshold, allow_empty=allow_empty
        )
    with arguments_named({"max_n": "self_bleu_max_n"}):
        result["self_bleu"] = (
            self_bleu(responses, max_n=self_bleu_max_n, allow_empty=allow_empty)
            if len(responses) > 1
            else None
        )
    result["num_responses"] = len(responses)
    return result


def lexical_diversity(
    predictions: list[str] | list[list[str]],
    **options: Any,  # the options of either scope, checked by the function of its scope
) -> dict:
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
        raise ArgumentError(
            unexpected[0],
            f"does not apply to {scope}-scope input (given: {unexpected}); options for it are "
            f"{sorted(allowed)} (a flat list of strings is a corpus, a list of lists is response "
            "sets)",
        )
    if scope == "sets":
        with arguments_named({"response_sets": "predictions"}):
            sets = cast("list[list[str]]", predictions)  # split_scope found response sets
            return {"scope": "response_set", **set_lexical_diversity(sets, **options)}
    with arguments_named({"responses": "predictions"}):
        corpus = cast("list[str]", predictions)  # split_scope found a flat list
        return {"scope": "corpus", **corpus_lexical_diversity(corpus, **options)}
