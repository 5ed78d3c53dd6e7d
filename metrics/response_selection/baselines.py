"""The TF-IDF selection baseline of Sato et al. (2020, §3.2, "Preliminary experiments").

§3.2 checks that content words alone cannot tell the false candidates of their test set from
the ground truth: "the TF-IDF model (Lowe et al., 2015), which simply compares between content
words of a given context and each candidate" reaches 0.461 on the test set and 0.671 with random
false candidates. Lowe et al. (2015, §5.1) represent the context and each candidate by TF-IDF
vectors (term frequency in the text, inverse document frequency over the training corpus) and
select the candidate with the highest cosine similarity to the context.

Here: scikit-learn's ``TfidfVectorizer`` (lower-cased word tokens of 2+ characters, smoothed
idf, l2-normalized rows, so the dot product is the cosine), fitted on ``fit_texts`` (default:
every context and candidate of the questions, since the paper's training corpus is not given),
the context's turns joined by spaces. Selection is the strict argmax, ties counted as wrong, as
for the models (:func:`~dialeval.metrics.response_selection.selection.select_by_loss` on the
negated similarities).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from dialeval.metrics.engines.lm_scorer import check_questions
from dialeval.metrics.response_selection.selection import select_by_loss
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from dialeval.metrics.engines.lm_scorer import Contexts
    from dialeval.type_aliases import ResponseSets


def tfidf_selection(
    contexts: Contexts,
    candidates: ResponseSets,
    labels: Sequence[int],
    fit_texts: Sequence[str] | None = None,
    **vectorizer_options: Any,  # TfidfVectorizer's keywords (scikit-learn is untyped)
) -> dict:
    """Accuracy of the TF-IDF baseline; the dict of ``select_by_loss`` plus per-question
    ``similarities``.

    ``fit_texts``: the corpus the idf is computed on (a list of strings; Lowe et al.: the
    training set); ``vectorizer_options`` go to ``TfidfVectorizer``.
    """
    # sklearn: deferred to the one path that needs it
    from sklearn.feature_extraction.text import TfidfVectorizer

    turns, candidates, labels = check_questions(contexts, candidates, labels)
    context_texts = [" ".join(context) for context in turns]
    if fit_texts is None:
        fit_texts = context_texts + [candidate for options in candidates for candidate in options]
    elif (
        isinstance(fit_texts, str)
        or not hasattr(fit_texts, "__len__")
        or not all(isinstance(text, str) for text in fit_texts)
        or not len(fit_texts)
    ):
        raise ArgumentError("fit_texts", "must be a non-empty list of strings")
    vectorizer = TfidfVectorizer(**vectorizer_options).fit(fit_texts)
    context_vectors = vectorizer.transform(context_texts)
    similarities = []
    for i, options in enumerate(candidates):
        similarities.append(
            (vectorizer.transform(options) @ context_vectors[i].T).toarray().ravel()
        )
    result = select_by_loss([-np.asarray(row) for row in similarities], labels, tie_rtol=1e-12)
    for row, values in zip(result["per_question"], similarities):
        row["similarities"] = values.tolist()
    return result
