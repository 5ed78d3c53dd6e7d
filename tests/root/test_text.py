"""The fast casual tokenization gives NLTK's tokens exactly (on real corpora and generated text)."""

import itertools
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nltk.tokenize.casual import TweetTokenizer

from dialeval.text import casual_token_ids, casual_tokenize_many

NLTK = TweetTokenizer(preserve_case=True, reduce_len=False, strip_handles=False)

PIECES = [
    "I",
    "don't",
    "know",
    "u.s.",
    "e-mail",
    "well-known",
    "'em",
    "8D",
    "d8x",
    ":)",
    ":-P",
    "<3",
    ";p",
    "D:",
    "(:",
    "http://example.com/a?b=1",
    "www.test.org",
    "example.com",
    "me@mail.com",
    "@user",
    "#tag",
    "->",
    "<--",
    "555-123-4567",
    "+1 (555) 123 4567",
    "3,000",
    "1/2",
    "12:30",
    "-3.5",
    "...",
    ". . .",
    "!!!!!",
    "????",
    "\u2019",
    "\u201cquoted\u201d",
    "\u2014",
    "\u2026",
    "\u00a0",
    "$5",
    "\u20ac10",
    "caf\u00e9",
    "cafe\u0301",
    "\u00c9T\u00c9",
    "na\u00efve",
    "\u0645\u0631\u062d\u0628\u0627",
    "\u200b",
    "\u200d",
    "\U0001f600",
    "\U0001f468\u200d\U0001f469",
    "\u24b6",
    "\u203f",
    "\x1c",
    "\x1f",
    "&amp;",
    "&#769;",
    "&",
    "_",
    "__init__",
    "\t",
    "\n",
    "  ",
    "<b>",
    "\u212a",
    "\u017f",
    "1\u00b2",
    "D*:",
    "p'=",
    "well-known.",
    "U.S.",
    "a_b",
    "x.",
    ".y",
    "http:",
    "Do;",
    "it's",
    "\ue000",
]
texts_strategy = st.lists(
    st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=8).map(" ".join)
    | st.lists(st.sampled_from(PIECES), max_size=6).map("".join),
    min_size=1,
    max_size=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts_strategy)
def test_equals_nltk_on_generated_text(texts):
    assert casual_tokenize_many(texts, num_workers=1) == [
        tuple(NLTK.tokenize(text)) for text in texts
    ]


def test_equals_nltk_on_dailydialog_pp(shared_data):
    texts = []
    for name in ("dev.json", "test.json", "data_positives.json"):
        for line in (
            (shared_data / "dailydialog-plusplus" / name).read_text(encoding="utf-8").splitlines()
        ):
            texts += [
                text
                for value in json.loads(line).values()
                if isinstance(value, list)
                for text in value
                if isinstance(text, str)
            ]
    distinct = list(dict.fromkeys(texts))
    assert len(distinct) > 50_000
    assert casual_tokenize_many(distinct, num_workers=1) == [
        tuple(NLTK.tokenize(text)) for text in distinct
    ]


def test_long_and_adversarial_texts_keep_nltk_behaviour():
    texts = ["9" * 5000, "a " * 1500, "x"]
    assert casual_tokenize_many(texts, num_workers=1) == [
        tuple(NLTK.tokenize(text)) for text in texts
    ]


# Every string of up to 3 characters over letters that start emoticons ("D:", "p*;") or URLs
# ("http:"), digits (8 is an emoticon's eyes), all ASCII punctuation, whitespace and non-ASCII
# punctuation: the word, "." and one-character shortcuts tried before NLTK's alternatives must
# never change a token, whatever follows them.
ALPHABET = (
    list("aDpoht8 \n\t")
    + [chr(c) for c in range(0x21, 0x7F) if not chr(c).isalnum()]
    + [
        "0",
        "\u2019",
        "\u2026",
        "\u00a0",
        "\u2014",
        "\u20ac",
        "\u200d",
        "\U0001f3fb",
    ]
)


def test_equals_nltk_on_every_short_string():
    strings = [
        a + b + c
        for a in ALPHABET
        for b in [""] + ALPHABET
        for c in ([""] + ALPHABET if b else [""])
    ]
    assert len(strings) > 100_000
    assert casual_tokenize_many(strings, num_workers=1) == [
        tuple(NLTK.tokenize(text)) for text in strings
    ]


def test_equals_nltk_on_four_character_words_and_punctuation():
    alphabet = list("aDh81 .-':;*@/(<") + ["\u2019"]
    strings = ["".join(chars) for chars in itertools.product(alphabet, repeat=4)]
    assert casual_tokenize_many(strings, num_workers=1) == [
        tuple(NLTK.tokenize(text)) for text in strings
    ]


@pytest.mark.parametrize(
    "texts",
    [
        ["", "a", "", ""],  # empty texts between separators
        [" ", "\n\n", "a .", ". b"],  # whitespace only; dots next to the separator
        [
            "555",
            "1234",
            "a...",
            "...b",
            ". .",
            ".",
        ],  # phone numbers / ellipses never join across texts
        [
            "x \ue000 y",
            "plain text",
            "\ue000",
        ],  # a text holding the separator itself takes NLTK's path
        [
            "caf\u00e9 ok",
            "fine",
            "\U0001f468\u200d\U0001f469",
            "&amp; more",
            "ok",
        ],  # texts NLTK's path takes
        ["\u00e9", "\ud800 lone surrogate"],  # every text on NLTK's path
        ["9" * 2001, "short one"],  # too long for the fast path
    ],
)
def test_separator_and_fallback_edge_cases(texts):
    assert casual_tokenize_many(texts, num_workers=1) == [
        tuple(NLTK.tokenize(text)) for text in texts
    ]


def test_token_ids_rebuild_the_tokens_and_agree_across_workers():
    texts = [
        "I don't know.",
        "caf\u00e9 :) ok",
        "",
        "I don't know.",
        "Hello , world !",
        "\ue000 x",
    ] * 5
    expected = [tuple(NLTK.tokenize(text)) for text in texts]
    for workers in (1, 2):
        vocabulary, ids, lengths = casual_token_ids(texts, num_workers=workers)
        assert (
            len(set(vocabulary))
            == len(vocabulary)
            == len({t for tokens in expected for t in tokens})
        )
        assert lengths.tolist() == [len(tokens) for tokens in expected]
        ends = np.cumsum(lengths)
        assert [
            tuple(vocabulary[i] for i in ids[end - length : end])
            for end, length in zip(ends, lengths)
        ] == expected


def test_bad_num_workers():
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="num_workers"):
            casual_token_ids(["a"], num_workers=bad)
