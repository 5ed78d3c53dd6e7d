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

import contextlib
import functools
import hashlib
import importlib.util
import json
import math
import os
import re
import sys
import unicodedata
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dialeval.atomic_files import write_atomically
from dialeval.runtimes import cache_root
from dialeval.type_aliases import ResponseSets, Texts, WordTokenizer
from dialeval.validation import ArgumentError, ArgumentTypeError

if TYPE_CHECKING:
    from nltk.tokenize.casual import TweetTokenizer


@functools.cache
def _tweet_tokenizer() -> TweetTokenizer:
    """One tokenizer instance: nltk.casual_tokenize() builds a new TweetTokenizer on every call."""
    # nltk: deferred, importing it loads scikit-learn, scipy and pandas (seconds)
    from nltk.tokenize.casual import TweetTokenizer

    return TweetTokenizer(preserve_case=True, reduce_len=False, strip_handles=False)


# The fast path of casual_tokenize_many: NLTK's own token pattern (phone numbers included, as
# TweetTokenizer's default), compiled once with the standard library's engine, run once over many
# texts joined by a separator token. NLTK runs it per text through the third-party `regex` engine
# under a per-call timeout, which costs more than the matching itself on short responses.
# Exactness: the fast path takes texts whose letters and digits are ASCII and whose other
# characters are printable ASCII but "&" (no HTML entity to replace), the usual whitespace, or
# non-ASCII punctuation, spaces and non-letter symbols (curly quotes, dashes, ellipses, currency).
# There both engines read the pattern alike (\w, \d, \s and case folding agree; they differ on
# combining marks, letter-like symbols, connector punctuation, emoji sequences and the ASCII
# separators \x1c-\x1f, which all take the slow path), HANG_RE's [^\p{L}\p{N}] is [^A-Za-z0-9], and
# no token pattern crosses the whitespace around the separator or starts with it.
# tests/root/test_text.py compares both on DailyDialog++ and on generated text. Every other text
# takes the slow path (:func:`_slow_tokenize`): NLTK's own steps with the `regex` engine.
_FLAGS = re.VERBOSE | re.IGNORECASE | re.UNICODE
# Shortcuts tried before NLTK's alternatives, each matching only where NLTK's pattern would match
# exactly the same text (so the tokens do not change): NLTK tries URLs, phone numbers, emoticons,
# e-mail addresses and more at every token start before its plain-word branch, which makes a plain
# word about 3x as costly to match as this first branch (measured on DailyDialog++, RESULTS.md).
# * A word: ASCII letters, optionally joined by ' - _ runs, ending in a letter, and followed by
#   whitespace, the end, punctuation that no NLTK branch continues a word with (not . - ' _ : ; =
#   * + @ &, which URLs, e-mails, emoticons such as "D:" / "p*;" and hyphenated words use), or a
#   "." that is not followed by a character a URL or an e-mail address could continue with.
#   There NLTK's word branch takes the whole run and no earlier branch matches.
# * A "." that starts no URL, e-mail, ellipsis (". . .") or emoji sequence.
# * One character that starts no multi-character token: not a word character, whitespace or a
#   character that begins a URL, phone number, number, emoticon, HTML tag, arrow, handle,
#   hashtag, e-mail or flag, and not followed by a zero-width joiner or skin-tone modifier.
# tests/root/test_text.py checks every string of up to 3 characters over letters, digits, all
# ASCII punctuation and the relevant non-ASCII characters against NLTK's pattern alone.
_SHORTCUTS = r"""(?-i:
    [A-Za-z]++(?:['\-_]++[A-Za-z]++)*+(?=[\s!"\#$%()\[\]{}<>,/?\\^`|~]|\Z|\.(?![\w.+\-@]))
    |
    \.(?![\w.+\-@\u200d\U0001F3FB-\U0001F3FF])(?![^\S\r\n]*\.)
    |
    [^\w\s.\-+()\[\]{}<>:;=/@|\\\#&\U0001F1E6-\U0001F1FF\U0001F3F4]
    (?![\u200d\U0001F3FB-\U0001F3FF])
)"""
# Possessive quantifiers (~20% faster here) came with Python 3.11; setup.py allows 3.10.
if sys.version_info < (3, 11):
    _SHORTCUTS = _SHORTCUTS.replace("++", "+").replace("*+", "*")


#: What the casual tokenizer needs of NLTK, as last taken from NLTK, in
#: :func:`dialeval.runtimes.cache_root`: ``{"format": 2, "source": {"nltk": VERSION, "casual_py":
#: PATH, "casual_py_sha256": DIGEST}, "pattern": PATTERN, "slow_path": {"entity": PIECE, "hang":
#: PIECE, "word": PIECE, "timeout": SECONDS}}``, each ``PIECE`` ``{"pattern": STRING, "flags":
#: INT}``. ``pattern`` is the token pattern the fast path runs; ``slow_path`` holds NLTK's three
#: compiled patterns (HTML entities, hangs, tokens) and its regex timeout, with which
#: :class:`_CachedCasualTokenizer` tokenizes every other text. It is there only when that
#: tokenizer gave NLTK's tokens on :data:`_PROBE_TEXTS` when the entry was written; without it,
#: those texts are tokenized by NLTK. Importing NLTK costs seconds (its package imports scipy,
#: scikit-learn and pandas); both paths need only these strings and the `regex` engine.
CASUAL_PATTERN_CACHE = "nltk-casual-pattern.json"
_CASUAL_PATTERN_FORMAT = 2
_SLOW_PATH_PATTERNS = ("entity", "hang", "word")
#: NLTK's messages when its tokenizer (the token pattern) or one of its substitutions runs out of
#: time (nltk.tokenize.casual.TweetTokenizer.tokenize, nltk.redos.TimedPattern._fail).
_TOKENIZER_TIMEOUT_MESSAGE = (
    "TweetTokenizer exceeded its {timeout}s time limit; "
    "the input may be adversarial (e.g. a long run of digits)."
)
_PATTERN_TIMEOUT_MESSAGE = (
    "regular-expression match exceeded its {timeout}s time limit; the "
    "pattern {pattern!r} may be pathological for this input "
    "(catastrophic backtracking / ReDoS). Pass timeout=None to disable "
    "the limit for a trusted pattern."
)
#: Texts the cached tokenizer must tokenize exactly as NLTK's TweetTokenizer before its pieces are
#: cached: every step of NLTK's flow (entity replacement, hang shortening, the token pattern) and
#: the characters that send a text off the fast path.
_PROBE_TEXTS = (
    "Tom &amp; Jerry &lt;3 &gt;:( &quot;hi&quot; &nbsp;x &eacute;t&eacute; &AMP; &Eacute;",
    "&#169; &#x263A; &#X263a; &#128512; &#x1F600; &#0; &#xD800; &#1114112; &#99999999999999999;",
    "&#128; &#x80; &#150; &#x9F; &#x81; &#x8D; &#159; &#127; &#160; &#1_0_0; &#x; &#; &#xyz;",
    "&bogus; &amp &; & alone && &&amp; &#x26;amp; &amp;amp; a&b;c &a b; &\u00e9;",
    "Parks & Recreation, Angels & Demons",
    "wow!!!!!! ?????? ...... ------ ,,,, ~~~~~ !!!",
    "\u00e9\u00e9\u00e9\u00e9\u00e9 ooooo 11111 \u2026\u2026\u2026\u2026 \U0001f600" * 5,
    "Caf\u00e9 na\u00efve \u00dcn\u00efc\u00f6d\u00e9 r\u00e9sum\u00e9 \u00c9T\u00c9 stra\u00dfe",
    "cafe\u0301 n\u0303o a\u0308\u0308\u0308\u0308 \u212a \u017f \u24b6 1\u00b2 \u203fx",
    (
        "\u6211\u7231\u81ea\u7136\u8bed\u8a00\u3002\u4f60\u597d\uff01 "
        "\u3053\u3093\u306b\u3061\u306f\u3001\u4e16\u754c \ud55c\uad6d\uc5b4"
    ),
    (
        "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645 "
        "\u05e9\u05dc\u05d5\u05dd \u0928\u092e\u0938\u094d\u0924\u0947"
    ),
    (
        "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 \U0001f44d\U0001f3fd "
        "\U0001f3f3\ufe0f\u200d\U0001f308 \U0001f1eb\U0001f1f7 \u2764\ufe0f "
        "\U0001f600\U0001f600 \U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063"
        "\U000e0074\U000e007f"
    ),
    "call +1 (555) 123-4567 or 555.123.4567, 5551234567 and 12:30, 3,000 \u20ac, -3.5 \u00e9",
    "see https://example.com/caf\u00e9?q=1&r=2 and www.test.org/\u00e9 or example.com. \u00e9",
    "mail me@mail.com, pr\u00e9nom.nom@exemple.fr and @user #tag #caf\u00e9 <b>x</b>",
    ":-) :P <3 D: (: ;-( >:( \\o/ ^_^ -> <-- \u00e9:) :\u00e9",
    "\u200b I wish \u200bto \u00a0 x\x1cy\x1f z\ue000 \ud800 lone \t\n\r end.",
    "&",
    "",
    "n\u00e9ed " + "9" * 40 + " " + "a-" * 30 + "b \u00e9" * 10,
)


def _nltk_casual_source() -> dict[str, str] | None:
    """The installed NLTK's version, and the path and sha256 of its ``nltk/tokenize/casual.py``,
    found without importing NLTK (``find_spec("nltk")`` only locates the package); None when any
    of them cannot be read.

    ``casual.py`` builds the pattern from its own string constants, so its digest identifies the
    pattern; the version is part of the key too, for what a release might move out of that file.
    """
    # importlib.metadata: deferred, a few milliseconds, needed only on the fast path's first use
    from importlib import metadata

    try:
        spec = importlib.util.find_spec("nltk")
        version = metadata.version("nltk")
    except (ImportError, ValueError):  # not installed, or a broken install
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    casual_py = Path(spec.submodule_search_locations[0]) / "tokenize" / "casual.py"
    try:
        digest = hashlib.sha256(casual_py.read_bytes()).hexdigest()
    except OSError:
        return None
    return {"nltk": version, "casual_py": str(casual_py), "casual_py_sha256": digest}


def _casual_pattern_cache_path() -> Path | None:
    try:
        return cache_root() / CASUAL_PATTERN_CACHE
    except RuntimeError:  # no home folder to expand "~" in
        return None


def _slow_path_pieces(value: object) -> dict[str, Any] | None:
    """``value`` when it is a well-formed ``slow_path`` of a cache entry, else None."""
    if not isinstance(value, dict) or "timeout" not in value:
        return None
    timeout = value["timeout"]
    if timeout is not None and not (
        isinstance(timeout, (int, float))
        and not isinstance(timeout, bool)
        and math.isfinite(timeout)
        and timeout >= 0
    ):
        return None
    for name in _SLOW_PATH_PATTERNS:
        piece = value.get(name)
        if not (
            isinstance(piece, dict)
            and isinstance(piece.get("pattern"), str)
            and type(piece.get("flags")) is int
        ):
            return None
    return value


def _read_casual_cache(path: Path, source: dict[str, str]) -> dict[str, Any] | None:
    """The entry at ``path`` when it is of this format and of the NLTK source ``source``, with a
    token pattern and, if it has one, a well-formed ``slow_path``; else None."""
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (
        isinstance(entry, dict)
        and entry.get("format") == _CASUAL_PATTERN_FORMAT
        and entry.get("source") == source
        and isinstance(entry.get("pattern"), str)
        and ("slow_path" not in entry or _slow_path_pieces(entry["slow_path"]) is not None)
    ):
        return entry
    return None


def _checked_slow_path(tokenizer: TweetTokenizer) -> dict[str, Any] | None:
    """The slow-path pieces of the imported NLTK, when :class:`_CachedCasualTokenizer` built from
    them gives ``tokenizer``'s tokens on every probe text; else None (this NLTK's tokenizer does
    not work as the cached one does, so NLTK keeps tokenizing the texts off the fast path)."""
    casual = sys.modules.get("nltk.tokenize.casual")
    redos = sys.modules.get("nltk.redos")
    if casual is None or redos is None:
        return None
    try:
        compiled = {
            "entity": casual.ENT_RE,
            "hang": casual.HANG_RE,
            "word": tokenizer.PHONE_WORD_RE,
        }
        pieces = _slow_path_pieces(
            {name: {"pattern": rx.pattern, "flags": rx.flags} for name, rx in compiled.items()}
            | {"timeout": redos.DEFAULT_TIMEOUT}
        )
        cached = _CachedCasualTokenizer(pieces) if pieces is not None else None
    except (AttributeError, ImportError, ValueError):  # a module or attribute this NLTK lacks
        return None
    if cached is None or any(
        cached.tokenize(text) != tokenizer.tokenize(text) for text in _PROBE_TEXTS
    ):
        return None
    return pieces


@functools.cache
def _casual_cache_entry() -> dict[str, Any]:
    """What the casual tokenizer needs of NLTK (see :data:`CASUAL_PATTERN_CACHE`), once per
    process: from the cache when it was taken from the very NLTK source installed, else from NLTK
    itself (imported then), and cached for the next process when the cache folder can be written.
    A cache that is missing, unreadable, corrupt, of another format or of another NLTK is never
    used."""
    source = _nltk_casual_source()
    path = _casual_pattern_cache_path()
    if source is not None and path is not None:
        entry = _read_casual_cache(path, source)
        if entry is not None:
            return entry
    tokenizer = _tweet_tokenizer()
    entry = {
        "format": _CASUAL_PATTERN_FORMAT,
        "source": source,
        "pattern": tokenizer.PHONE_WORD_RE.pattern,
    }
    slow_path = _checked_slow_path(tokenizer)
    if slow_path is not None:
        entry["slow_path"] = slow_path
    casual_module = sys.modules.get("nltk.tokenize.casual")
    imported_from = getattr(casual_module, "__file__", None)
    if (
        source is not None
        and path is not None
        and imported_from is not None
        and os.path.realpath(imported_from) == os.path.realpath(source["casual_py"])
    ):
        # Best effort: a read-only or missing cache folder costs the next run the import, no more.
        with contextlib.suppress(OSError):
            write_atomically(path, json.dumps(entry, indent=1) + "\n", record=False)
    return entry


def _nltk_casual_pattern() -> str:
    """NLTK's casual token pattern (``TweetTokenizer().PHONE_WORD_RE.pattern``), from
    :func:`_casual_cache_entry`."""
    return str(_casual_cache_entry()["pattern"])


def _convert_html_entity(match: Any) -> str:
    """The replacement of one HTML entity matched by NLTK's ``ENT_RE``.

    A copy of the closure ``nltk.tokenize.casual._replace_html_entities`` builds with its
    defaults (no entity kept, illegal ones removed), since importing NLTK to reach it costs
    seconds. NLTK's own is checked against it on :data:`_PROBE_TEXTS` before the slow path is
    cached.
    """
    # html.entities: deferred to the few texts with an entity (a few milliseconds at start-up)
    import html.entities

    entity_body = match.group(3)
    number: int | None
    if match.group(1):
        try:
            number = int(entity_body, 16 if match.group(2) else 10)
            if 0x80 <= number <= 0x9F:
                return bytes((number,)).decode("cp1252")
        except ValueError:  # not a number, or a byte cp1252 leaves undefined
            number = None
    else:
        number = html.entities.name2codepoint.get(entity_body)
    if number is not None:
        try:
            return chr(number)
        except (ValueError, OverflowError):
            pass
    return ""


class _CachedCasualTokenizer:
    """``TweetTokenizer(preserve_case=True, reduce_len=False, strip_handles=False).tokenize``
    built from the cached ``slow_path`` pieces with the `regex` engine NLTK runs them with, and
    without importing NLTK: HTML entities replaced, runs of 4 or more of one character that is no
    letter or digit shortened to 3, then every match of the token pattern, each of the three under
    NLTK's timeout (``nltk.redos.DEFAULT_TIMEOUT``, read at each call where NLTK is imported, as
    NLTK does) and raising NLTK's TimeoutError when it runs out."""

    def __init__(self, pieces: dict[str, Any]) -> None:
        # regex: deferred, a few tens of milliseconds; a dependency of NLTK, installed with it
        import regex  # type: ignore[import-untyped]

        try:
            self._entity, self._hang, self._word = (
                regex.compile(pieces[name]["pattern"], pieces[name]["flags"])
                for name in _SLOW_PATH_PATTERNS
            )
        except (regex.error, OverflowError) as error:
            raise ValueError(f"a cached casual pattern does not compile: {error}") from None
        self._timeout: float | None = pieces["timeout"]

    def _current_timeout(self) -> float | None:
        redos = sys.modules.get("nltk.redos")
        return getattr(redos, "DEFAULT_TIMEOUT", self._timeout)

    def tokenize(self, text: str) -> list[str]:
        timeout = self._current_timeout()
        for pattern, replacement in ((self._entity, _convert_html_entity), (self._hang, r"\1\1\1")):
            try:
                text = pattern.sub(replacement, text, timeout=timeout)
            except TimeoutError:
                raise TimeoutError(
                    _PATTERN_TIMEOUT_MESSAGE.format(timeout=timeout, pattern=pattern.pattern)
                ) from None
        try:
            tokens: list[str] = self._word.findall(text, timeout=timeout)
            return tokens
        except TimeoutError:
            raise TimeoutError(_TOKENIZER_TIMEOUT_MESSAGE.format(timeout=timeout)) from None


@functools.cache
def _slow_tokenize() -> Callable[[str], list[str]]:
    """How a text off the fast path is tokenized: by :class:`_CachedCasualTokenizer` when the
    cache entry carries the slow path's pieces, else by NLTK's TweetTokenizer (imported then)."""
    pieces = _casual_cache_entry().get("slow_path")
    if pieces is not None:
        with contextlib.suppress(ImportError, ValueError):
            return _CachedCasualTokenizer(pieces).tokenize
    return _tweet_tokenizer().tokenize


@functools.cache
def _fast_word_re() -> re.Pattern[str]:
    """NLTK's token pattern with the shortcuts in front, compiled on first use."""
    nltk_pattern = _nltk_casual_pattern()
    nltk_word_re = re.compile(nltk_pattern, _FLAGS)
    if nltk_pattern.startswith("(") and nltk_word_re.groups == 1:
        # NLTK's pattern is one group around its alternatives: the shortcuts go inside that group,
        # so that findall still returns whole matches.
        # (?=\S): no NLTK branch starts with whitespace; without it, every space between two
        # tokens costs a failed try of every alternative (measured: the match takes 2.9x as long).
        return re.compile(r"(?=\S)(" + _SHORTCUTS + "|" + nltk_pattern[1:], _FLAGS)
    return nltk_word_re  # pragma: no cover - another NLTK layout: its pattern alone, still exact


_FAST_HANG_RE = re.compile(r"([^A-Za-z0-9])\1{3,}")
_FAST_NON_ASCII_CATEGORIES = frozenset({"Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Zs", "Sm", "Sc", "Sk"})
#: A private-use character (category Co, so never on the fast path), matched only by the
#: one-character branches of the pattern: it comes back as a token of its own between two texts.
_SEPARATOR = "\ue000"
_JOINER = f" {_SEPARATOR} "
_OUTSIDE_PLAIN_TEXT_OR_SEPARATOR = re.compile(r"[^\t\n\x0b\x0c\r\x20-\x25\x27-\x7e\ue000]")
#: Longer texts take the slow path, whose per-call timeout bounds the phone pattern's backtracking
#: on adversarial digit runs.
_FAST_MAX_CHARS = 2000


def _check_text(text: object) -> None:
    if not isinstance(text, str):
        raise ArgumentError("text", f"must be a string, got {type(text).__name__}: {text!r:.60}")


def tevet_tokenize(text: str) -> list[str]:
    """Tokenize as Tevet & Berant's ``lines_to_ngrams`` does (see module docstring)."""
    _check_text(text)
    return [word for word in text.replace(".", "").replace("\n", "").split(" ") if word != ""]


def casual_tokenize(text: str) -> list[str]:
    """Tokenize with NLTK's casual tokenizer, exactly as ``nltk.tokenize.casual_tokenize(text)``."""
    _check_text(text)
    return _slow_tokenize()(text)


#: Below this many texts, tokenizing in one process is as fast or faster. Measured on 2 shared cores
#: with 83k distinct DailyDialog++ texts: a second process costs ~0.18 s more CPU (fork of a large
#: parent, pickling, a second vocabulary) against ~0.25 s of matching it takes over: it lost a
#: quarter under contention, and on idle cores it can gain at most that difference (RESULTS.md).
PARALLEL_MIN_TEXTS = 100_000


def _fast_path_mask(texts: list[str], joined: str) -> np.ndarray:
    """Which of ``texts`` take the fast path, from one scan of ``joined`` (them joined by
    ``" <separator> "``) for the characters outside it."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    fast = lengths <= _FAST_MAX_CHARS
    if joined.count(_SEPARATOR) != len(texts) - 1:  # some text holds the separator itself
        fast &= np.fromiter(
            (_SEPARATOR not in text for text in texts), dtype=bool, count=len(texts)
        )
    outside = [
        (match.start(), match.group())
        for match in _OUTSIDE_PLAIN_TEXT_OR_SEPARATOR.finditer(joined)
    ]
    barred = {
        char
        for char in {char for _, char in outside}
        if char.isascii() or unicodedata.category(char) not in _FAST_NON_ASCII_CATEGORIES
    }
    if barred:
        positions = np.array(
            [position for position, char in outside if char in barred], dtype=np.int64
        )
        # where each text's joiner starts
        text_ends = np.cumsum(lengths + len(_JOINER)) - len(_JOINER)
        fast[np.searchsorted(text_ends, positions, side="right")] = False
    return fast


def _placements(offsets: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Positions ``offsets[i] .. offsets[i] + lengths[i] - 1`` of every ``i``, concatenated."""
    return np.repeat(offsets - (np.cumsum(lengths) - lengths), lengths) + np.arange(
        int(lengths.sum()), dtype=np.int64
    )


def _dictionary_encode(tokens: list[str]) -> tuple[list[str], np.ndarray]:
    """The distinct tokens (first-occurrence order) and each token's index among them.

    Arrow's hash table: half the time of a ``dict.setdefault`` pass over the ~1M tokens of
    DailyDialog++ (measured, RESULTS.md). Fast-path tokens only: they are valid UTF-8 (no lone
    surrogates), which Arrow requires.
    """
    # pyarrow: deferred to the one path that needs it
    import pyarrow as pa

    encoded = pa.array(tokens, type=pa.large_string()).dictionary_encode()
    vocabulary, ids = encoded.dictionary.to_pylist(), encoded.indices.to_numpy().astype(np.int64)
    del encoded
    # Arrow's pool keeps freed buffers for reuse: ~80 MB after a 1M-response corpus, never reused
    # here.
    pa.default_memory_pool().release_unused()
    return vocabulary, ids


def _token_ids_of_chunk(texts: list[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``(vocabulary, ids, lengths)``: the casual tokens of ``texts``, concatenated, as indices into
    ``vocabulary``, and each text's token count."""
    joined = _JOINER.join(texts)
    fast = _fast_path_mask(texts, joined)
    fast_indices = np.flatnonzero(fast)
    lengths = np.zeros(len(texts), dtype=np.int64)
    vocabulary: list[str] = []
    fast_ids = np.zeros(0, dtype=np.int64)
    if fast_indices.size:
        if fast_indices.size < len(texts):
            joined = _JOINER.join([texts[i] for i in fast_indices])
        vocabulary, ids = _dictionary_encode(
            _fast_word_re().findall(_FAST_HANG_RE.sub(r"\1\1\1", joined))
        )
        separator = (
            vocabulary.index(_SEPARATOR)
            if fast_indices.size > 1 and _SEPARATOR in vocabulary
            else -1
        )
        is_separator = ids == separator
        bounds = np.flatnonzero(is_separator)
        if bounds.size == fast_indices.size - 1:
            lengths[fast_indices] = np.diff(np.concatenate(([-1], bounds, [ids.size]))) - 1
            fast_ids = ids[~is_separator]
            if separator >= 0:
                del vocabulary[separator]
                fast_ids -= fast_ids > separator
        else:  # a separator did not come back as one token per gap: the slow path text by text
            fast[:] = False
            fast_indices = fast_indices[:0]
            vocabulary = []
    slow_indices = np.flatnonzero(~fast)
    if slow_indices.size == 0:
        return vocabulary, fast_ids, lengths
    index = dict(zip(vocabulary, range(len(vocabulary))))
    lookup = index.setdefault
    slow_ids: list[int] = []
    tokenize = _slow_tokenize()
    for i in slow_indices:
        tokens = tokenize(texts[i])
        lengths[i] = len(tokens)
        slow_ids += [lookup(token, len(index)) for token in tokens]
    offsets = np.cumsum(lengths) - lengths
    ids = np.empty(int(lengths.sum()), dtype=np.int64)
    ids[_placements(offsets[fast_indices], lengths[fast_indices])] = fast_ids
    ids[_placements(offsets[slow_indices], lengths[slow_indices])] = np.array(
        slow_ids, dtype=np.int64
    )
    return list(index), ids, lengths


def casual_token_ids(
    texts: list[str], num_workers: int | None = None
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Casual tokens of ``texts`` as integer ids: ``(vocabulary, ids, lengths)``.

    ``ids`` (int64) holds the tokens of every text, concatenated in input order, as indices into
    ``vocabulary`` (the distinct tokens, in no particular order); ``lengths[i]`` is the token
    count of ``texts[i]``. Each text is tokenized as it is (pass distinct texts to save work).
    Tokens equal :func:`casual_tokenize`'s.

    Args:
        num_workers: processes to tokenize with. ``None`` (default) uses every core (at most 8)
            when there are at least :data:`PARALLEL_MIN_TEXTS` texts, else 1. The calling process
            tokenizes one share itself, so ``num_workers=2`` starts one worker process.
    """
    if (
        isinstance(num_workers, bool)
        or not (num_workers is None or isinstance(num_workers, int))
        or (num_workers is not None and num_workers < 1)
    ):
        raise ArgumentError("num_workers", f"must be a positive int or None, got {num_workers!r}")
    if num_workers is None:
        num_workers = min(os.cpu_count() or 1, 8) if len(texts) >= PARALLEL_MIN_TEXTS else 1
    if num_workers == 1 or len(texts) < 2 * num_workers:
        return _token_ids_of_chunk(texts)
    import pyarrow  # noqa: F401 - once here, before the fork, not once in every worker

    chunk_size = -(-len(texts) // num_workers)
    chunks = [texts[start : start + chunk_size] for start in range(0, len(texts), chunk_size)]
    with ProcessPoolExecutor(max_workers=len(chunks) - 1) as pool:
        others = [pool.submit(_token_ids_of_chunk, chunk) for chunk in chunks[1:]]
        parts = [_token_ids_of_chunk(chunks[0])] + [future.result() for future in others]
    # One vocabulary over the chunks: each chunk's ids are remapped.
    vocabulary: dict[str, int] = {}
    lookup = vocabulary.setdefault
    ids, lengths = [], []
    for chunk_vocabulary, chunk_ids, chunk_lengths in parts:
        remap = np.fromiter(
            (lookup(token, len(vocabulary)) for token in chunk_vocabulary),
            dtype=np.int64,
            count=len(chunk_vocabulary),
        )
        ids.append(remap[chunk_ids])
        lengths.append(chunk_lengths)
    return list(vocabulary), np.concatenate(ids), np.concatenate(lengths)


def casual_tokenize_many(texts: list[str], num_workers: int | None = None) -> list[tuple[str, ...]]:
    """Casual-tokenize many texts, tokenizing each distinct text once.

    Generated dialogue responses repeat a lot ("I don't know."), so tokenizing distinct texts
    only is the main saving on real model output.

    Args:
        num_workers: as :func:`casual_token_ids` (counted over the distinct texts).
    """
    distinct = list(dict.fromkeys(texts))
    vocabulary, ids, lengths = casual_token_ids(distinct, num_workers)
    tokens = np.array(vocabulary, dtype=object)[ids].tolist() if vocabulary else []
    ends = np.cumsum(lengths).tolist()
    starts = [0] + ends[:-1]
    memo = {text: tuple(tokens[start:end]) for text, start, end in zip(distinct, starts, ends)}
    return [memo[text] for text in texts]


TOKENIZERS = {"tevet": tevet_tokenize, "casual": casual_tokenize}


def get_tokenizer(
    name_or_callable: str | WordTokenizer,
    texts: Texts | ResponseSets | None = None,
    argument: str = "responses",
) -> WordTokenizer:
    """Resolve ``"tevet"``, ``"casual"`` or a callable ``str -> list[str]``.

    A callable comes back wrapped (:class:`CheckedTokenizer`): each of its outputs must be a list
    (or tuple) of non-empty strings, else a TypeError / ValueError naming ``tokenizer`` and the
    text, as ``argument[i]`` when the text is found in ``texts`` (the user's texts: a list, or a
    list of lists), instead of n-grams of characters or of ints counted silently.
    """
    if isinstance(name_or_callable, CheckedTokenizer):
        name_or_callable = name_or_callable.tokenize
    if callable(name_or_callable):
        return CheckedTokenizer(name_or_callable, texts, argument)
    try:
        return TOKENIZERS[name_or_callable]
    except (KeyError, TypeError):
        raise ArgumentError(
            "tokenizer",
            f"must be one of {sorted(TOKENIZERS)} or a callable str -> list[str], got "
            f"{name_or_callable!r}",
        ) from None


class CheckedTokenizer:
    """A user's tokenizer whose every output is checked (see :func:`get_tokenizer`): one pass over
    the tokens of each call; the caller's texts are searched only to name a bad output."""

    def __init__(
        self,
        tokenize: WordTokenizer,
        texts: Texts | ResponseSets | None = None,
        argument: str = "responses",
    ) -> None:
        self.tokenize = tokenize
        self.texts = texts
        self.argument = argument

    def __call__(self, text: str) -> Sequence[str]:
        tokens = self.tokenize(text)
        if not isinstance(tokens, (list, tuple)):
            raise ArgumentTypeError(
                "tokenizer",
                f"must return a list of strings, but for {self._which(text)} it returned "
                f"{type(tokens).__name__}: {tokens!r:.60}",
            )
        for position, token in enumerate(tokens):
            if not isinstance(token, str):
                raise ArgumentTypeError(
                    "tokenizer",
                    f"must return a list of strings, but for {self._which(text)} token {position} "
                    f"is {type(token).__name__}: {token!r:.60}",
                )
            if not token:
                raise ArgumentError(
                    "tokenizer",
                    f"returned an empty token (position {position}) for {self._which(text)}: an "
                    "empty token would count as a word; drop empty pieces in the tokenizer",
                )
        return tokens

    def _which(self, text: str) -> str:
        """``"`responses[3]`"`` when ``text`` is one of the caller's texts, else the text itself."""
        if isinstance(self.texts, (list, tuple)):
            for index, item in enumerate(self.texts):
                if item == text:
                    return f"`{self.argument}[{index}]`"
                if isinstance(item, (list, tuple)) and text in item:
                    return f"`{self.argument}[{index}][{list(item).index(text)}]`"
        return f"the text {text!r:.60}"
