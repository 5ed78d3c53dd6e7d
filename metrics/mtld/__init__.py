"""MTLD, the measure of textual lexical diversity (McCarthy & Jarvis 2010).

MTLD reads the tokens in order and keeps the type-token ratio (TTR) of the running segment; when
it falls to the threshold (0.72) a *factor* is complete and a new segment starts. The rest of the
text counts as the partial factor ``(1 - TTR) / (1 - threshold)``. MTLD is the number of tokens
over the number of factors, the mean length of a stretch of text that keeps its TTR above the
threshold, averaged over a forward and a backward pass (McCarthy & Jarvis 2010, "MTLD, vocd-D, and
HD-D", Behavior Research Methods 42(2), §"MTLD"). Unlike the TTR and Distinct-n it does not fall
as a text gets longer, which is why corpus linguistics reports it.

dialeval follows ``lexicalrichness`` (``LexicalRichness.mtld``, the package users reach for
first): a TTR *at or below* the threshold closes a factor, and a text whose tokens are all
distinct (no factor, not even a partial one) scores its token count. Its tokens are
:func:`mtld_words`' by default, ``lexicalrichness``'s own tokenization. A response set is scored
as its responses read one after the other; a corpus, the same over every response.

The evaluate module is ``mtld.py`` beside this file; its card is ``README.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
    from dialeval.metrics.mtld.scores import (
        DEFAULT_THRESHOLD,
        mtld,
        mtld_scores,
        mtld_words,
    )
else:
    # each name is imported from its module on first use: the metric's declaration (spec.py)
    # is read without loading numpy
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".scores": (
                "DEFAULT_THRESHOLD",
                "mtld",
                "mtld_scores",
                "mtld_words",
            )
        },
    )

__all__ = ["DEFAULT_THRESHOLD", "mtld", "mtld_scores", "mtld_words"]
