"""The casual tokenization reads what it needs of NLTK (the fast path's token pattern, the slow
path's three patterns and timeout) from a cache keyed on the installed NLTK source, so that a
process need not import NLTK (seconds) to tokenize any text; a cache of another NLTK or format, a
corrupt one, an unwritable folder or a slow path that disagrees with NLTK on the probe texts
never changes a token."""

import html.entities
import json
import os
import subprocess
import sys
from pathlib import Path

import nltk.redos
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nltk.tokenize.casual import TweetTokenizer, casual_tokenize

from dialeval import text
from dialeval.text import CASUAL_PATTERN_CACHE, casual_token_ids, casual_tokenize_many

REPO_ROOT = Path(__file__).resolve().parents[2]

TEXTS = [
    "Hello there, how are you?",
    "I'm fine :) thanks... see www.example.com or mail me@mail.com",
    "call 555-123-4567 at 12:30, it's 3,000 $ -- well-known e-mail!!!!",
    "#tag @user <3 ->",
]
#: Texts the fast path does not take: an emoji sequence, an HTML entity, a non-ASCII letter, a
#: zero-width space, an "&" alone and a text over the fast path's length limit.
SLOW_TEXTS = [
    "Love it \U0001f468\u200d\U0001f469\u200d\U0001f467 \U0001f44d\U0001f3fd!!!!!",
    "Tom &amp; Jerry &lt;3 &#169; &#x263A; &#150;",
    "Caf\u00e9 au lait, s'il vous pla\u00eet \u00e9\u00e9\u00e9\u00e9\u00e9",
    "\u200b I have \u200balready made plans.",
    "My favourite, Parks & Recreation.",
    ("call 555-123-4567 or mail me@mail.com :) " * 60)[:2500],
]
NLTK = TweetTokenizer(preserve_case=True, reduce_len=False, strip_handles=False)
NLTK_PATTERN = NLTK.PHONE_WORD_RE.pattern

TOKENIZE_AND_REPORT = """
import json, sys
from dialeval.text import casual_token_ids
vocabulary, ids, lengths = casual_token_ids(json.loads(sys.argv[1]), num_workers=1)
print(json.dumps({
    "tokens": [vocabulary[i] for i in ids.tolist()],
    "lengths": lengths.tolist(),
    "nltk_imported": "nltk" in sys.modules,
}))
"""


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """An empty cache folder of this test, and a fast path that builds its pattern again."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("DIALEVAL_CACHE", str(folder))
    _forget_the_entry()
    yield folder
    _forget_the_entry()


def _forget_the_entry() -> None:
    """Make the next tokenization of this process read (or build) the cache entry again."""
    for cached in (text._casual_cache_entry, text._fast_word_re, text._slow_tokenize):
        cached.cache_clear()


def _expected_tokens(texts: list[str]) -> list[tuple[str, ...]]:
    return [tuple(casual_tokenize(item)) for item in texts]


def _cached_entry(folder: Path) -> dict:
    return json.loads((folder / CASUAL_PATTERN_CACHE).read_text(encoding="utf-8"))


def _tokenize_in_a_fresh_process(folder: Path, texts: list[str] = TEXTS) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", TOKENIZE_AND_REPORT, json.dumps(texts)],
        cwd=REPO_ROOT,
        env={**os.environ, "DIALEVAL_CACHE": str(folder)},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_second_process_tokenizes_plain_text_without_importing_nltk(tmp_path):
    folder = tmp_path / "cache"
    expected = [token for tokens in _expected_tokens(TEXTS) for token in tokens]
    first = _tokenize_in_a_fresh_process(folder)
    assert first["nltk_imported"]  # nothing cached yet: the pattern came from NLTK
    assert (folder / CASUAL_PATTERN_CACHE).is_file()
    second = _tokenize_in_a_fresh_process(folder)
    assert not second["nltk_imported"]
    assert second["tokens"] == first["tokens"] == expected
    assert second["lengths"] == [len(tokens) for tokens in _expected_tokens(TEXTS)]


def test_the_cached_pattern_is_the_one_nltk_builds(cache):
    casual_tokenize_many(TEXTS, num_workers=1)
    entry = _cached_entry(cache)
    assert entry["pattern"] == NLTK_PATTERN
    assert entry["source"] == text._nltk_casual_source()
    _forget_the_entry()
    assert text._nltk_casual_pattern() == NLTK_PATTERN  # read back from the file


@pytest.mark.parametrize("field", ["nltk", "casual_py_sha256"])
def test_an_entry_of_another_nltk_is_ignored_and_replaced(cache, field):
    source = dict(text._nltk_casual_source())
    source[field] = "0.0.0" if field == "nltk" else "0" * 64
    cache.mkdir()
    # A pattern that would split every text into characters, were it used.
    stale = {"format": text._CASUAL_PATTERN_FORMAT, "source": source, "pattern": "(.)"}
    (cache / CASUAL_PATTERN_CACHE).write_text(json.dumps(stale), encoding="utf-8")
    assert casual_tokenize_many(TEXTS, num_workers=1) == _expected_tokens(TEXTS)
    entry = _cached_entry(cache)
    assert entry["source"] == text._nltk_casual_source()
    assert entry["pattern"] == NLTK_PATTERN


@pytest.mark.parametrize(
    "content", ['{"format": 2, "source": {', b"\xff\xfe not utf-8", "[]", '{"format": 2}']
)
def test_a_corrupt_cache_file_is_ignored_and_rewritten(cache, content):
    cache.mkdir()
    path = cache / CASUAL_PATTERN_CACHE
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    assert casual_tokenize_many(TEXTS, num_workers=1) == _expected_tokens(TEXTS)
    assert _cached_entry(cache)["pattern"] == NLTK_PATTERN


def test_a_cache_folder_that_cannot_be_created_still_tokenizes_exactly(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("DIALEVAL_CACHE", str(blocker / "cache"))
    _forget_the_entry()
    try:
        vocabulary, ids, lengths = casual_token_ids(TEXTS + SLOW_TEXTS, num_workers=1)
    finally:
        _forget_the_entry()
    expected = _expected_tokens(TEXTS + SLOW_TEXTS)
    assert [vocabulary[i] for i in ids] == [t for ts in expected for t in ts]
    assert lengths.tolist() == [len(tokens) for tokens in expected]


def test_a_read_only_cache_folder_still_tokenizes_exactly(cache, monkeypatch):
    refused = []

    def refuse(path, *args, **kwargs):
        refused.append(Path(path))
        raise PermissionError(13, "Permission denied", str(path))

    # The suite may run as root, which a folder's permissions do not stop: the write is refused.
    monkeypatch.setattr(text, "write_atomically", refuse)
    texts = TEXTS + SLOW_TEXTS
    assert casual_tokenize_many(texts, num_workers=1) == _expected_tokens(texts)
    assert refused == [cache / CASUAL_PATTERN_CACHE]  # one try in a process
    assert not (cache / CASUAL_PATTERN_CACHE).exists()


def test_a_second_process_tokenizes_text_off_the_fast_path_without_importing_nltk(tmp_path):
    folder = tmp_path / "cache"
    texts = TEXTS + SLOW_TEXTS
    expected = _expected_tokens(texts)
    first = _tokenize_in_a_fresh_process(folder, texts)
    assert first["nltk_imported"]  # nothing cached yet: the patterns came from NLTK
    assert "slow_path" in _cached_entry(folder)
    second = _tokenize_in_a_fresh_process(folder, texts)
    assert not second["nltk_imported"]
    assert second["tokens"] == first["tokens"] == [token for tokens in expected for token in tokens]
    assert second["lengths"] == [len(tokens) for tokens in expected]


def test_the_cached_slow_path_is_the_one_nltk_builds(cache):
    casual_tokenize_many(SLOW_TEXTS, num_workers=1)
    slow_path = _cached_entry(cache)["slow_path"]
    casual_module = sys.modules["nltk.tokenize.casual"]
    assert slow_path == {
        "entity": {"pattern": casual_module.ENT_RE.pattern, "flags": casual_module.ENT_RE.flags},
        "hang": {"pattern": casual_module.HANG_RE.pattern, "flags": casual_module.HANG_RE.flags},
        "word": {"pattern": NLTK_PATTERN, "flags": NLTK.PHONE_WORD_RE.flags},
        "timeout": nltk.redos.DEFAULT_TIMEOUT,
    }


def _off_the_fast_path(texts: list[str]) -> list[str]:
    return [item for item in texts if not text._fast_path_mask([item], item)[0]]


@pytest.fixture(scope="module")
def cached_tokenizer() -> text._CachedCasualTokenizer:
    """The slow path's tokenizer from the pieces the cache would hold."""
    pieces = text._checked_slow_path(NLTK)
    assert pieces is not None
    return text._CachedCasualTokenizer(json.loads(json.dumps(pieces)))


def test_the_cached_slow_path_equals_nltk_on_dailydialog_pp(shared_data, cached_tokenizer):
    texts = []
    for name in ("dev.json", "test.json", "data_positives.json"):
        for line in (
            (shared_data / "dailydialog-plusplus" / name).read_text(encoding="utf-8").splitlines()
        ):
            texts += [
                item
                for value in json.loads(line).values()
                if isinstance(value, list)
                for item in value
                if isinstance(item, str)
            ]
    slow = _off_the_fast_path(list(dict.fromkeys(texts)))
    assert len(slow) >= 6
    assert [cached_tokenizer.tokenize(item) for item in slow] == [
        NLTK.tokenize(item) for item in slow
    ]


ENTITY_NAMES = sorted(html.entities.name2codepoint)
entities = st.one_of(
    st.sampled_from(ENTITY_NAMES).map("&{};".format),
    st.sampled_from(ENTITY_NAMES).map(str.upper).map("&{};".format),
    st.integers(0, 0x110010).map("&#{};".format),
    st.integers(0x7E, 0xA0).map("&#{};".format),
    st.integers(0, 0x110010).map("&#x{:x};".format),
    st.integers(0x7E, 0xA0).map("&#X{:X};".format),
    st.sampled_from(["&", "&;", "&#;", "&#x;", "&amp", "&#12a;", "&nosuch;", "&#xzz;", "&&amp;"]),
)
NON_ASCII = [
    "\u00e9",
    "\u00c9",
    "\u00df",
    "\u0301",
    "\u0308",
    "\u0645",
    "\u6211",
    "\u3053",
    "\ud55c",
    "\u212a",
    "\u200b",
    "\u200d",
    "\ufe0f",
    "\u00a0",
    "\u2019",
    "\u2026",
    "\U0001f600",
    "\U0001f44d",
    "\U0001f3fd",
    "\U0001f1eb",
    "\U0001f1f7",
    "\U0001f468",
    "\U000e0067",
]
hangs = st.tuples(
    st.sampled_from(list("!?.-,~*&#@:;") + NON_ASCII + ["a", "9"]), st.integers(2, 9)
).map(lambda pair: pair[0] * pair[1])
pieces = st.one_of(
    entities,
    hangs,
    st.sampled_from(NON_ASCII),
    st.sampled_from(["Caf\u00e9", "na\u00efve", ":-)", "<3", "555-123-4567", "me@mail.com"]),
    st.sampled_from(["www.t\u00e9st.org", "https://x.com/?a=1&b=2", "#tag", "@user", "D:"]),
    st.text(max_size=4),
)
slow_texts = st.lists(pieces, max_size=10).flatmap(
    lambda parts: st.sampled_from(["", " "]).map(lambda glue: glue.join(parts))
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(slow_texts, min_size=1, max_size=8))
def test_the_cached_slow_path_equals_nltk_on_generated_text(cached_tokenizer, texts):
    assert [cached_tokenizer.tokenize(item) for item in texts] == [
        NLTK.tokenize(item) for item in texts
    ]


def _keep_entities(match) -> str:
    return match.group(0)


def _drop_the_last_token(tokenize):
    return lambda self, item: tokenize(self, item)[:-1]


@pytest.mark.parametrize(
    "disagree",
    [
        # a copy of NLTK's entity replacement that differs from NLTK's
        lambda monkeypatch: monkeypatch.setattr(text, "_convert_html_entity", _keep_entities),
        # an NLTK release whose tokenize does one more step than the cached ones
        lambda monkeypatch: monkeypatch.setattr(
            TweetTokenizer, "tokenize", _drop_the_last_token(TweetTokenizer.tokenize)
        ),
    ],
    ids=["entities", "tokenize-flow"],
)
def test_a_slow_path_that_disagrees_with_nltk_on_a_probe_is_not_cached(
    cache, monkeypatch, disagree
):
    with monkeypatch.context() as patched:
        disagree(patched)
        text._casual_cache_entry()
    entry = _cached_entry(cache)
    assert entry["pattern"] == NLTK_PATTERN  # the fast path still needs no NLTK
    assert "slow_path" not in entry
    _forget_the_entry()
    assert text._slow_tokenize() == text._tweet_tokenizer().tokenize
    fresh = _tokenize_in_a_fresh_process(cache, TEXTS + SLOW_TEXTS)
    assert fresh["nltk_imported"]  # the slow path asked NLTK
    expected = _expected_tokens(TEXTS + SLOW_TEXTS)
    assert fresh["tokens"] == [token for tokens in expected for token in tokens]
    assert _cached_entry(cache) == entry  # a usable entry is not written again


def test_a_cache_of_the_previous_format_is_ignored_and_rewritten(cache):
    cache.mkdir()
    # The fast path's entry as the previous format held it, with a pattern that would split every
    # text into characters, were it used.
    old = {"format": 1, "source": text._nltk_casual_source(), "pattern": "(.)"}
    (cache / CASUAL_PATTERN_CACHE).write_text(json.dumps(old), encoding="utf-8")
    texts = TEXTS + SLOW_TEXTS
    assert casual_tokenize_many(texts, num_workers=1) == _expected_tokens(texts)
    entry = _cached_entry(cache)
    assert entry["format"] == text._CASUAL_PATTERN_FORMAT == 2
    assert entry["pattern"] == NLTK_PATTERN
    assert "slow_path" in entry


@pytest.mark.parametrize(
    "slow_path",
    [
        [],
        {"entity": {"pattern": "&", "flags": 0}},  # pieces missing
        {"entity": 1, "hang": 2, "word": 3, "timeout": 5.0},
        {
            **{name: {"pattern": "(.)", "flags": "0"} for name in text._SLOW_PATH_PATTERNS},
            "timeout": 5.0,
        },
        {
            **{name: {"pattern": "(.)", "flags": 0} for name in text._SLOW_PATH_PATTERNS},
            "timeout": "5",
        },
        {
            **{name: {"pattern": "(.)", "flags": 0} for name in text._SLOW_PATH_PATTERNS},
            "timeout": -1,
        },
    ],
)
def test_a_corrupt_slow_path_is_ignored_and_rewritten(cache, slow_path):
    cache.mkdir()
    corrupt = {
        "format": text._CASUAL_PATTERN_FORMAT,
        "source": text._nltk_casual_source(),
        "pattern": NLTK_PATTERN,
        "slow_path": slow_path,
    }
    (cache / CASUAL_PATTERN_CACHE).write_text(json.dumps(corrupt), encoding="utf-8")
    assert casual_tokenize_many(SLOW_TEXTS, num_workers=1) == _expected_tokens(SLOW_TEXTS)
    assert _cached_entry(cache)["slow_path"] == text._checked_slow_path(NLTK)


def test_casual_tokenize_takes_the_cached_slow_path(cache):
    for item in TEXTS + SLOW_TEXTS:
        assert text.casual_tokenize(item) == casual_tokenize(item)
    assert isinstance(text._slow_tokenize().__self__, text._CachedCasualTokenizer)


def _timeout_message(tokenize, item: str) -> str:
    with pytest.raises(TimeoutError) as raised:
        tokenize(item)
    return str(raised.value)


def test_a_substitution_out_of_time_raises_nltks_timeout_error(cached_tokenizer, monkeypatch):
    # No time at all: the entity replacement, NLTK's first step, runs out at once.
    monkeypatch.setattr(nltk.redos, "DEFAULT_TIMEOUT", 0)
    item = "Tom &amp; Jerry \u00e9"
    message = _timeout_message(NLTK.tokenize, item)
    assert message.startswith("regular-expression match exceeded its 0s time limit")
    assert _timeout_message(cached_tokenizer.tokenize, item) == message


class _OutOfTime:
    def findall(self, *args, **kwargs):
        raise TimeoutError("regex timed out")


def test_the_token_pattern_out_of_time_raises_nltks_timeout_error(cached_tokenizer, monkeypatch):
    monkeypatch.setattr(TweetTokenizer, "_PHONE_WORD_RE", _OutOfTime())
    monkeypatch.setattr(cached_tokenizer, "_word", _OutOfTime())
    item = "Tom &amp; Jerry \u00e9"
    message = _timeout_message(NLTK.tokenize, item)
    assert message.startswith(
        f"TweetTokenizer exceeded its {nltk.redos.DEFAULT_TIMEOUT}s time limit"
    )
    assert _timeout_message(cached_tokenizer.tokenize, item) == message


def test_without_nltk_loaded_the_cached_timeout_applies(cache):
    casual_tokenize_many(SLOW_TEXTS, num_workers=1)
    entry = _cached_entry(cache)
    entry["slow_path"]["timeout"] = 0
    (cache / CASUAL_PATTERN_CACHE).write_text(json.dumps(entry), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", TOKENIZE_AND_REPORT, json.dumps(["Caf\u00e9 &amp; more"])],
        cwd=REPO_ROOT,
        env={**os.environ, "DIALEVAL_CACHE": str(cache)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert "TimeoutError: regular-expression match exceeded its 0s time limit" in done.stderr
