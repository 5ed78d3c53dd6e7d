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
import re
import unicodedata
from concurrent.futures import ProcessPoolExecutor

from nltk.tokenize.casual import TweetTokenizer

# One tokenizer instance: nltk.casual_tokenize() builds a new TweetTokenizer on every call.
_TWEET_TOKENIZER = TweetTokenizer(preserve_case=True, reduce_len=False, strip_handles=False)

# The fast path of casual_tokenize_many: NLTK's own token pattern (phone numbers included, as
# TweetTokenizer's default), compiled once with the standard library's engine, run once over many
# texts joined by a separator token. NLTK runs it per text through the third-party `regex` engine
# under a per-call timeout, which costs more than the matching itself on short responses.
# Exactness: the fast path takes texts whose letters and digits are ASCII and whose other
# characters are printable ASCII but "&" (no HTML entity to replace), the usual whitespace, or
# non-ASCII punctuation, spaces and non-letter symbols (curly quotes, dashes, ellipses, currency).
# There both engines read the pattern alike (\w, \d, \s and case folding agree; they differ on
# combining marks, letter-like symbols, connector punctuation, emoji sequences and the ASCII
# separators \x1c-\x1f, which all take NLTK's path), HANG_RE's [^\p{L}\p{N}] is [^A-Za-z0-9], and
# no token pattern crosses the whitespace around the separator or starts with it.
# tests/root/test_text.py compares both on DailyDialog++ and on generated text.
_FAST_WORD_RE = re.compile(_TWEET_TOKENIZER.PHONE_WORD_RE.pattern, re.VERBOSE | re.IGNORECASE | re.UNICODE)
_FAST_HANG_RE = re.compile(r"([^A-Za-z0-9])\1{3,}")
_OUTSIDE_PLAIN_TEXT = re.compile(r"[^\t\n\x0b\x0c\r\x20-\x25\x27-\x7e]")
_FAST_NON_ASCII_CATEGORIES = frozenset({"Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Zs", "Sm", "Sc", "Sk"})
#: A private-use character (category Co, so never on the fast path), matched only by the
#: one-character \S branch of the pattern: it comes back as a token of its own between two texts.
_SEPARATOR = "\ue000"
#: Longer texts take NLTK's path, whose per-call timeout bounds the phone pattern's backtracking
#: on adversarial digit runs.
_FAST_MAX_CHARS = 2000


def _check_text(text: object) -> None:
    if not isinstance(text, str):
        raise ValueError(f"`text` must be a string, got {type(text).__name__}: {text!r:.60}")


def tevet_tokenize(text: str) -> list[str]:
    """Tokenize as Tevet & Berant's ``lines_to_ngrams`` does (see module docstring)."""
    _check_text(text)
    return [word for word in text.replace(".", "").replace("\n", "").split(" ") if word != ""]


def casual_tokenize(text: str) -> list[str]:
    """Tokenize with NLTK's casual tokenizer, exactly as ``nltk.tokenize.casual_tokenize(text)``."""
    _check_text(text)
    return _TWEET_TOKENIZER.tokenize(text)



#: Below this many distinct texts, worker start-up costs more than it saves.
PARALLEL_MIN_TEXTS = 50_000


def _fast_path_applies(text: str) -> bool:
    if len(text) > _FAST_MAX_CHARS:
        return False
    for char in set(_OUTSIDE_PLAIN_TEXT.findall(text)):
        if char.isascii() or unicodedata.category(char) not in _FAST_NON_ASCII_CATEGORIES:
            return False
    return True


def _tokenize_joined(texts: list[str]) -> list[tuple[str, ...]] | None:
    """Casual tokens of fast-path texts from one match over all of them; None if the separators
    did not come back one per gap (then the caller tokenizes text by text)."""
    joined = f" {_SEPARATOR} ".join(texts)
    tokens = _FAST_WORD_RE.findall(_FAST_HANG_RE.sub(r"\1\1\1", joined))
    result, current = [], []
    for token in tokens:
        if token == _SEPARATOR:
            result.append(tuple(current))
            current = []
        else:
            current.append(token)
    result.append(tuple(current))
    return result if len(result) == len(texts) else None


def _tokenize_chunk(texts: list[str]) -> list[tuple[str, ...]]:
    tokenize = _TWEET_TOKENIZER.tokenize
    fast = [i for i, text in enumerate(texts) if _fast_path_applies(text)]
    tokens: list[tuple[str, ...] | None] = [None] * len(texts)
    if fast:
        joined = _tokenize_joined([texts[i] for i in fast])
        if joined is not None:
            for i, token_list in zip(fast, joined):
                tokens[i] = token_list
    return [token_list if token_list is not None else tuple(tokenize(text)) for token_list, text in zip(tokens, texts)]


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
