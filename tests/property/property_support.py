"""Strategies and checks shared by the property suite.

The strategies generate what a new user passes by mistake as well as real text: unicode with
emoji, right-to-left scripts, zero-width and combining characters, whitespace-only and empty
strings, numbers, None, bytes, bare strings where lists belong, huge strings and degenerate sets
(identical responses, one response). :func:`outcome` runs a call and lets only ValueError and
TypeError (the documented bad-input errors) through as a refusal; any other exception fails the
property. :func:`covers` records which public names a property exercises, so
``test_property_coverage.py`` can fail when a new public function or metric has none.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st

#: Public names -> the property tests that exercise them (filled by :func:`covers` at import).
COVERED: dict[str, list[str]] = {}


def covers(*names: str):
    """Record that the decorated test exercises the public ``names``."""

    def mark(test):
        for name in names:
            COVERED.setdefault(name, []).append(test.__name__)
        return test

    return mark


def fewer(divisor: int, floor: int = 3) -> settings:
    """The active profile's example count divided by ``divisor`` (model-backed properties)."""
    return settings(max_examples=max(floor, settings.default.max_examples // divisor))


class Refused:
    """A call that raised the documented ValueError / TypeError."""

    def __init__(self, error: Exception):
        self.error = error

    def __repr__(self) -> str:
        return f"Refused({self.error!r:.200})"


def outcome(function, *args, **kwargs):
    """``function(*args, **kwargs)``, or :class:`Refused` for a ValueError / TypeError; anything
    else (AttributeError, IndexError, ZeroDivisionError, a numpy or tokenizer error...) escapes
    and fails the property: a bad input must be told apart from a bug."""
    try:
        return function(*args, **kwargs)
    except (ValueError, TypeError) as error:
        if isinstance(error, (UnicodeError,)):
            raise AssertionError(
                f"a codec error escaped instead of a ValueError naming the argument: {error!r}"
            ) from error
        return Refused(error)


def refused(value) -> bool:
    return isinstance(value, Refused)


def finite(value, name: str = "score") -> float:
    assert isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, bool
    ), f"{name} is {value!r}"
    assert math.isfinite(value), f"{name} is {value!r}"
    return float(value)


def within(value, low: float, high: float, name: str = "score", tolerance: float = 1e-6) -> float:
    value = finite(value, name)
    assert low - tolerance <= value <= high + tolerance, (
        f"{name} = {value!r} outside its documented range [{low}, {high}]"
    )
    return value


def all_finite(result, path: str = "result") -> None:
    """Every number anywhere in ``result`` (dicts, lists, arrays) is finite."""
    if isinstance(result, Mapping):
        for key, value in result.items():
            all_finite(value, f"{path}[{key!r}]")
    elif isinstance(result, (list, tuple)):
        for index, value in enumerate(result):
            all_finite(value, f"{path}[{index}]")
    elif isinstance(result, np.ndarray):
        if result.dtype.kind in "fc":
            assert np.isfinite(result).all(), f"{path} has non-finite values: {result!r:.200}"
    elif isinstance(result, (float, np.floating)):
        assert math.isfinite(result), f"{path} is {result!r}"


# -- text -----------------------------------------------------------------------------------------

SPECIAL_TEXTS = [
    "I don't know.",
    "i don't know",
    "Yes!",
    "no",
    "ok ok ok ok",
    "😀",
    "👍🏽 great",
    "👨‍👩‍👧 family",
    "🇯🇵",  # emoji, skin tone, ZWJ sequence, flag
    "مرحبا، كيف حالك؟",
    "שלום עולם",
    "abc \u202edef\u202c",  # RTL scripts, RTL override
    "a\u200bb",
    "\u200b",
    "\u200d\u200c",
    "\ufeffhello",  # zero-width space / joiners, BOM
    "e\u0301te\u0301",
    "\u0301",
    "Z\u0351\u0362a\u0324\u036clgo",  # combining marks
    "日本語のテキスト",
    "한국어",
    "ⅷ ½ ²",
    "3.14",
    "1 2 3 4 5",
    "....",
    "a.b.c",
    "\n",
    "x\ny",
    "a\u2028b",
    "tab\there",
    "@user #tag http://x.y/z :-) <3",
    "&amp; &lt;",
    "\x00",
    "\x1c\x1d\x1e\x1f",
]
BLANK_TEXTS = ["", " ", "   ", "\t\n", "\u3000", "\n\n"]

#: Characters from every class the tokenizers treat differently.
_ALPHABET = st.one_of(
    st.characters(codec="utf-8", categories=["L", "M", "N", "P", "S", "Z", "Cf"]),
    st.sampled_from(list("abc xyz .,!?'\n\t")),
)

words = st.text(alphabet=st.sampled_from(list("abcde")), min_size=1, max_size=3)
plain_text = st.lists(words, min_size=1, max_size=8).map(" ".join)
unicode_text = st.text(alphabet=_ALPHABET, min_size=0, max_size=40)
huge_text = st.sampled_from(["word " * 5000, "x" * 30000, "ab. " * 4000, "😀" * 5000])
text = st.one_of(
    plain_text,
    plain_text,
    unicode_text,
    st.sampled_from(SPECIAL_TEXTS),
    st.sampled_from(BLANK_TEXTS),
    huge_text,
)
#: Text that passes the default checks (not empty, not whitespace-only).
nonblank_text = st.one_of(
    plain_text, plain_text, unicode_text, st.sampled_from(SPECIAL_TEXTS)
).filter(lambda t: t.strip() != "")

junk = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.binary(max_size=8),
    st.booleans(),
    st.just({}),
    st.just(object()),
    st.just(("tuple", "of", "strings")),
)


def response_set(item=nonblank_text, min_size: int = 2, max_size: int = 6):
    """A valid response set, often degenerate (identical responses)."""
    return st.one_of(
        st.lists(item, min_size=min_size, max_size=max_size),
        st.tuples(item, st.integers(max(min_size, 2), max_size)).map(
            lambda pair: [pair[0]] * pair[1]
        ),
    )


def response_sets(item=nonblank_text, min_size: int = 2, max_size: int = 6, max_sets: int = 4):
    return st.lists(response_set(item, min_size, max_size), min_size=1, max_size=max_sets)


#: Anything a user might pass where a response (a string) belongs.
any_response = st.one_of(text, text, text, junk)
#: Anything where one response set (a list of strings) belongs: valid, degenerate, empty,
#: with junk inside, a bare string, bytes, None.
any_response_set = st.one_of(
    st.lists(any_response, min_size=0, max_size=6),
    response_set(),
    st.lists(text, min_size=0, max_size=2),
    text,
    junk,
)
#: Anything where a list of response sets belongs.
any_response_sets = st.one_of(
    st.lists(any_response_set, min_size=0, max_size=4),
    response_sets(),
    response_set(),  # a flat list: one set where a list of sets belongs (or a corpus)
    text,
    junk,
)
#: Options a user might mistype: wrong types, zero, negative, huge.
any_order = st.one_of(st.integers(-2, 7), st.just(1.5), st.just("2"), st.none(), st.booleans())
any_flag = st.one_of(st.booleans(), st.none(), st.just("yes"), st.integers(0, 1))
