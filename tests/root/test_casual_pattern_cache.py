"""The fast casual tokenization reads NLTK's token pattern from a cache keyed on the installed
NLTK source, so that a process need not import NLTK (seconds) to tokenize plain text; a cache of
another NLTK, a corrupt one or an unwritable folder never changes a token."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
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
NLTK_PATTERN = TweetTokenizer().PHONE_WORD_RE.pattern

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
    text._fast_word_re.cache_clear()
    yield folder
    text._fast_word_re.cache_clear()


def _expected_tokens(texts: list[str]) -> list[tuple[str, ...]]:
    return [tuple(casual_tokenize(item)) for item in texts]


def _cached_entry(folder: Path) -> dict:
    return json.loads((folder / CASUAL_PATTERN_CACHE).read_text(encoding="utf-8"))


def _tokenize_in_a_fresh_process(folder: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", TOKENIZE_AND_REPORT, json.dumps(TEXTS)],
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
    assert text._nltk_casual_pattern() == NLTK_PATTERN  # read back from the file


@pytest.mark.parametrize("field", ["nltk", "casual_py_sha256"])
def test_an_entry_of_another_nltk_is_ignored_and_replaced(cache, field):
    source = dict(text._nltk_casual_source())
    source[field] = "0.0.0" if field == "nltk" else "0" * 64
    cache.mkdir()
    # A pattern that would split every text into characters, were it used.
    stale = {"format": 1, "source": source, "pattern": "(.)"}
    (cache / CASUAL_PATTERN_CACHE).write_text(json.dumps(stale), encoding="utf-8")
    assert casual_tokenize_many(TEXTS, num_workers=1) == _expected_tokens(TEXTS)
    entry = _cached_entry(cache)
    assert entry["source"] == text._nltk_casual_source()
    assert entry["pattern"] == NLTK_PATTERN


@pytest.mark.parametrize(
    "content", ['{"format": 1, "source": {', b"\xff\xfe not utf-8", "[]", '{"format": 1}']
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
    text._fast_word_re.cache_clear()
    try:
        vocabulary, ids, lengths = casual_token_ids(TEXTS, num_workers=1)
    finally:
        text._fast_word_re.cache_clear()
    assert [vocabulary[i] for i in ids] == [t for ts in _expected_tokens(TEXTS) for t in ts]
    assert lengths.tolist() == [len(tokens) for tokens in _expected_tokens(TEXTS)]


def test_a_read_only_cache_folder_still_tokenizes_exactly(cache, monkeypatch):
    refused = []

    def refuse(path, *args, **kwargs):
        refused.append(Path(path))
        raise PermissionError(13, "Permission denied", str(path))

    # The suite may run as root, which a folder's permissions do not stop: the write is refused.
    monkeypatch.setattr(text, "write_atomically", refuse)
    assert casual_tokenize_many(TEXTS, num_workers=1) == _expected_tokens(TEXTS)
    assert refused == [cache / CASUAL_PATTERN_CACHE]
    assert not (cache / CASUAL_PATTERN_CACHE).exists()
