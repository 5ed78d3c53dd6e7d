"""The fast casual tokenization gives NLTK's tokens exactly (on real corpora and generated text)."""
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nltk.tokenize.casual import TweetTokenizer

from dialeval.text import casual_tokenize_many

NLTK = TweetTokenizer(preserve_case=True, reduce_len=False, strip_handles=False)

PIECES = [
    "I", "don't", "know", "u.s.", "e-mail", "well-known", "'em", "8D", "d8x", ":)", ":-P", "<3", ";p", "D:", "(:",
    "http://example.com/a?b=1", "www.test.org", "example.com", "me@mail.com", "@user", "#tag", "->", "<--",
    "555-123-4567", "+1 (555) 123 4567", "3,000", "1/2", "12:30", "-3.5", "...", ". . .", "!!!!!", "????",
    "\u2019", "\u201cquoted\u201d", "\u2014", "\u2026", "\u00a0", "$5", "\u20ac10", "caf\u00e9", "cafe\u0301",
    "\u00c9T\u00c9", "na\u00efve", "\u0645\u0631\u062d\u0628\u0627", "\u200b", "\u200d", "\U0001f600",
    "\U0001f468\u200d\U0001f469", "\u24b6", "\u203f", "\x1c", "\x1f", "&amp;", "&#769;", "&", "_", "__init__",
    "\t", "\n", "  ", "<b>", "\u212a", "\u017f", "1\u00b2",
]
texts_strategy = st.lists(
    st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=8).map(" ".join)
    | st.lists(st.sampled_from(PIECES), max_size=6).map("".join),
    min_size=1, max_size=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts_strategy)
def test_equals_nltk_on_generated_text(texts):
    assert casual_tokenize_many(texts, num_workers=1) == [tuple(NLTK.tokenize(text)) for text in texts]


def test_equals_nltk_on_dailydialog_pp(shared_data):
    texts = []
    for name in ("dev.json", "test.json", "data_positives.json"):
        for line in (shared_data / "dailydialog-plusplus" / name).read_text(encoding="utf-8").splitlines():
            texts += [text for value in json.loads(line).values() if isinstance(value, list) for text in value if isinstance(text, str)]
    distinct = list(dict.fromkeys(texts))
    assert len(distinct) > 50_000
    assert casual_tokenize_many(distinct, num_workers=1) == [tuple(NLTK.tokenize(text)) for text in distinct]


def test_long_and_adversarial_texts_keep_nltk_behaviour():
    texts = ["9" * 5000, "a " * 1500, "x"]
    assert casual_tokenize_many(texts, num_workers=1) == [tuple(NLTK.tokenize(text)) for text in texts]
