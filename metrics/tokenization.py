"""The two tokenizations the papers' lexical metrics were computed with.

* :func:`tevet_tokenize` — Tevet & Berant (2021), released ``utils.lines_to_ngrams``: delete every
  ``.`` and every newline (newlines are removed, not replaced, so ``"a\\nb"`` becomes ``"ab"``),
  split on single spaces and drop empty pieces. Case and all other punctuation are kept. The
  set-level metrics (averaged distinct-n, n-gram cosine) use it so that they reproduce the
  released ``with_metrics`` scores exactly.
* :func:`casual_tokenize` — NLTK's casual (tweet) tokenizer with its defaults (case preserved,
  no length reduction, handles kept), which the Sem-Ent paper (Han et al. 2022, App. A.3) and its
  released code use for Dist-n, Ent-n and LF.
"""
from __future__ import annotations

from nltk.tokenize.casual import TweetTokenizer

# One tokenizer instance: nltk.casual_tokenize() builds a new TweetTokenizer on every call.
_TWEET_TOKENIZER = TweetTokenizer(preserve_case=True, reduce_len=False, strip_handles=False)


def tevet_tokenize(text: str) -> list[str]:
    """Tokenize as Tevet & Berant's ``lines_to_ngrams`` does (see module docstring)."""
    return [word for word in text.replace(".", "").replace("\n", "").split(" ") if word != ""]


def casual_tokenize(text: str) -> list[str]:
    """Tokenize with NLTK's casual tokenizer, exactly as ``nltk.tokenize.casual_tokenize(text)``."""
    return _TWEET_TOKENIZER.tokenize(text)



def casual_tokenize_many(texts: list[str]) -> list[tuple[str, ...]]:
    """Casual-tokenize many texts, tokenizing each distinct text once.

    Generated dialogue responses repeat a lot ("I don't know."), so a per-call memo of
    distinct texts is the main saving on real model output.
    """
    memo: dict[str, tuple[str, ...]] = {}
    tokenize = _TWEET_TOKENIZER.tokenize
    out = []
    for text in texts:
        tokens = memo.get(text)
        if tokens is None:
            tokens = memo[text] = tuple(tokenize(text))
        out.append(tokens)
    return out


TOKENIZERS = {"tevet": tevet_tokenize, "casual": casual_tokenize}


def get_tokenizer(name_or_callable):
    """Resolve ``"tevet"``, ``"casual"`` or a callable ``str -> list[str]``."""
    if callable(name_or_callable):
        return name_or_callable
    try:
        return TOKENIZERS[name_or_callable]
    except (KeyError, TypeError):
        raise ValueError(
            f"`tokenizer` must be one of {sorted(TOKENIZERS)} or a callable str -> list[str], got {name_or_callable!r}"
        ) from None
