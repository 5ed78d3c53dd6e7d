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

import os
from concurrent.futures import ProcessPoolExecutor

from nltk.tokenize.casual import TweetTokenizer

# One tokenizer instance: nltk.casual_tokenize() builds a new TweetTokenizer on every call.
_TWEET_TOKENIZER = TweetTokenizer(preserve_case=True, reduce_len=False, strip_handles=False)


def tevet_tokenize(text: str) -> list[str]:
    """Tokenize as Tevet & Berant's ``lines_to_ngrams`` does (see module docstring)."""
    return [word for word in text.replace(".", "").replace("\n", "").split(" ") if word != ""]


def casual_tokenize(text: str) -> list[str]:
    """Tokenize with NLTK's casual tokenizer, exactly as ``nltk.tokenize.casual_tokenize(text)``."""
    return _TWEET_TOKENIZER.tokenize(text)



#: Below this many distinct texts, worker start-up costs more than it saves.
PARALLEL_MIN_TEXTS = 100_000


def _tokenize_chunk(texts: list[str]) -> list[tuple[str, ...]]:
    tokenize = _TWEET_TOKENIZER.tokenize
    return [tuple(tokenize(text)) for text in texts]


def casual_tokenize_many(texts: list[str], num_workers: int | None = None) -> list[tuple[str, ...]]:
    """Casual-tokenize many texts, tokenizing each distinct text once.

    Generated dialogue responses repeat a lot ("I don't know."), so tokenizing distinct texts
    only is the main saving on real model output; the regex itself (~20 µs a response) is the
    floor on one core.

    Args:
        num_workers: processes to tokenize with. ``None`` (default) uses every core (at most 8)
            when there are at least :data:`PARALLEL_MIN_TEXTS` distinct texts, else 1.
    """
    distinct = list(dict.fromkeys(texts))
    if num_workers is None:
        num_workers = min(os.cpu_count() or 1, 8) if len(distinct) >= PARALLEL_MIN_TEXTS else 1
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1:
        raise ValueError(f"`num_workers` must be a positive int or None, got {num_workers!r}")
    if num_workers == 1 or len(distinct) < 2 * num_workers:
        tokens = _tokenize_chunk(distinct)
    else:
        chunk_size = -(-len(distinct) // (num_workers * 4))
        chunks = [distinct[start : start + chunk_size] for start in range(0, len(distinct), chunk_size)]
        with ProcessPoolExecutor(max_workers=num_workers) as pool:
            tokens = [token_list for part in pool.map(_tokenize_chunk, chunks) for token_list in part]
    memo = dict(zip(distinct, tokens))
    return [memo[text] for text in texts]


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
