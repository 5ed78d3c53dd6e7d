"""A small deterministic part-of-speech tagger and sentence splitter, and the ``diversity`` package's
template functions loaded with them (tests/metrics/test_pos_templates.py, benchmarks/bench_peers.py).

No spaCy model or NLTK data can be installed on the test machines: the template logic is checked
with this lexicon + suffix-rule tagger (Penn Treebank tags), which tokenizes as spaCy does in the
cases that matter here (punctuation and ``n't`` / ``'s`` clitics are tokens of their own).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import types
from pathlib import Path

LEXICON = {
    **dict.fromkeys(
        ["the", "a", "an", "this", "that", "these", "those", "every", "some", "any", "no"], "DT"
    ),
    **dict.fromkeys(
        ["i", "you", "he", "she", "it", "we", "they", "me", "him", "her", "us", "them"], "PRP"
    ),
    **dict.fromkeys(["my", "your", "his", "its", "our", "their"], "PRP$"),
    **dict.fromkeys(
        [
            "in",
            "on",
            "at",
            "of",
            "for",
            "with",
            "from",
            "by",
            "about",
            "into",
            "over",
            "after",
            "like",
        ],
        "IN",
    ),
    **dict.fromkeys(["and", "or", "but"], "CC"),
    **dict.fromkeys(
        ["can", "could", "will", "would", "should", "may", "might", "must", "shall"], "MD"
    ),
    **dict.fromkeys(
        ["am", "are", "do", "have", "know", "think", "want", "like", "go", "see", "need"], "VBP"
    ),
    **dict.fromkeys(["is", "has", "does", "goes", "wants", "knows"], "VBZ"),
    **dict.fromkeys(
        ["was", "were", "did", "had", "went", "saw", "got", "made", "said", "took"], "VBD"
    ),
    **dict.fromkeys(["be", "get", "make", "take", "come", "say", "tell", "give"], "VB"),
    **dict.fromkeys(
        ["not", "n't", "very", "too", "so", "really", "just", "also", "here", "there", "now"], "RB"
    ),
    **dict.fromkeys(["what", "who"], "WP"),
    **dict.fromkeys(["when", "where", "why", "how"], "WRB"),
    "to": "TO",
    "'s": "POS",
    "'m": "VBP",
    "'re": "VBP",
    "'ll": "MD",
    "'ve": "VBP",
    "'d": "MD",
    "good": "JJ",
    "great": "JJ",
    "nice": "JJ",
    "new": "JJ",
    "old": "JJ",
    "big": "JJ",
    "little": "JJ",
    "sorry": "JJ",
    "yes": "UH",
    "no.": "UH",
    "oh": "UH",
    "well": "UH",
    "ok": "UH",
    "okay": "UH",
    "hello": "UH",
    "hi": "UH",
}
PUNCTUATION = {
    ".": ".",
    "!": ".",
    "?": ".",
    ",": ",",
    ":": ":",
    ";": ":",
    "'": "''",
    '"': "''",
    "(": "-LRB-",
    ")": "-RRB-",
}
SUFFIXES = (
    ("ing", "VBG"),
    ("ed", "VBD"),
    ("ly", "RB"),
    ("ous", "JJ"),
    ("ful", "JJ"),
    ("ive", "JJ"),
    ("able", "JJ"),
    ("est", "JJS"),
    ("s", "NNS"),
)
TOKEN = re.compile(r"\w+(?=n't\b)|n't\b|'(?:s|m|re|ll|ve|d)\b|\w+|[^\w\s]")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def tag_token(token: str, first: bool) -> str:
    lower = token.lower()
    if lower in LEXICON:
        return LEXICON[lower]
    if token in PUNCTUATION:
        return PUNCTUATION[token]
    if not token[0].isalnum() and token[0] != "_":
        return "SYM"
    if token.isdigit():
        return "CD"
    if token[0].isupper() and not first:
        return "NNP"
    for suffix, tag in SUFFIXES:
        if lower.endswith(suffix) and len(lower) > len(suffix) + 2:
            return tag
    return "NN"


def lexicon_tagger(sentences: list[str]) -> list[list[tuple[str, str]]]:
    """The tagger protocol: each sentence's tokens with a PTB tag (lexicon, then suffix rules, then NN)."""
    out = []
    for sentence in sentences:
        tokens = TOKEN.findall(sentence)
        out.append([(token, tag_token(token, index == 0)) for index, token in enumerate(tokens)])
    return out


def regex_sentence_splitter(text: str) -> list[str]:
    """The splitter protocol: a break after ., ! or ? followed by whitespace."""
    return [sentence for sentence in SENTENCE_END.split(text.strip()) if sentence]


def peer_get_pos(sentences: list[str]):
    """The package's ``get_pos`` contract (joined tags, (token, tag) tuples) on :func:`lexicon_tagger`."""
    tuples = lexicon_tagger(sentences)
    return [" ".join(tag for _, tag in pairs) for pairs in tuples], tuples


def load_peer_templates():
    """The ``diversity`` package's ``template`` and ``functions`` modules, with ``get_pos`` and
    ``sent_tokenize`` replaced by :func:`peer_get_pos` / :func:`regex_sentence_splitter`; None when
    the package is not installed (``pip install --no-deps diversity==0.3.1``).

    Loaded file by file under a private package name, with a stand-in ``spacy`` module while its
    ``patterns/part_of_speech.py`` imports (spaCy is not installed here; ``get_pos`` is replaced),
    never running ``diversity/__init__.py`` (it imports qudsim, openai, spaCy).
    """
    spec = importlib.util.find_spec("diversity")
    if spec is None or spec.origin is None:
        return None
    root = Path(spec.origin).parent
    name = "_peer_diversity_templates"
    package = types.ModuleType(name)
    package.__path__ = [str(root)]
    saved = {key: sys.modules.get(key) for key in (name, "spacy")}
    sys.modules[name] = package
    if saved["spacy"] is None:
        sys.modules["spacy"] = types.ModuleType("spacy")
    try:
        template = importlib.import_module(f"{name}.template")
        functions = sys.modules[f"{name}.functions"]
    finally:
        if saved["spacy"] is None:
            del sys.modules["spacy"]
    functions.get_pos = peer_get_pos
    functions.sent_tokenize = regex_sentence_splitter
    return types.SimpleNamespace(
        template_rate=template.template_rate,
        templates_per_token=template.templates_per_token,
        extract_patterns=functions.extract_patterns,
    )
