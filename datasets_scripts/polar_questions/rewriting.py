"""Rewriting an NLI hypothesis into a polar echo question (Sato et al. 2022, §3.1, App. A).

App. A's four steps, on a POS-tagged hypothesis:

1. find the first verb;
2. front it (auxiliaries: *be*, modals, perfect *have*) or put *Do/Does/Did* in front and put
   the verb back to its base form (*made* -> *Did ... make*);
3. swap first- and second-person pronouns (*my* -> *your*, *you* -> *I*/*me*);
4. replace the final punctuation with "?".

Hypotheses that would give ungrammatical or wrongly-labelled questions are skipped with a
reason (:class:`Unrewritable`): coordination (a ``CC`` tag, App. A), a comma or a second
sentence (other complex syntax), no finite verb, a question or exclamation, and sentential
negation (*not*, *n't*, *never*, *no*) -- negation flips which answer is non-contradictory, so
the expected yes/no label would be wrong.

The negative question form (*Aren't you ...?*, Table 1 CNTQ, Table 7 NegativeQ) attaches
*n't* to the fronted auxiliary; auxiliaries without a standard contraction (*may*, *might*,
*shall*) are skipped in that form.

POS tags come from a pluggable *tagger*: any callable ``text -> list[TaggedToken]`` with Penn
Treebank tags and lemmas. :class:`SpacyTagger` (spaCy ``en_core_web_sm``, the paper's tagger)
is used when spaCy and the model are installed; otherwise it raises
:class:`TaggerNotAvailableError` saying how to install them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

#: Tags of a finite verb (or a base-form verb, as in "I do" fragments); participles and
#: gerunds are not "the verb" of the clause.
FINITE_VERB_TAGS = ("VB", "VBP", "VBZ", "VBD", "MD")
NEGATION_WORDS = ("not", "n't", "never", "no")
FINAL_PUNCTUATION = (".", "!", ";", ":", "...")

#: A contracted auxiliary spelt out, keyed by (lower-cased token, lemma); lemma None = any.
_EXPANDED_AUX = {
    ("'m", None): "am", ("'re", None): "are", ("'s", "be"): "is", ("'s", "have"): "has",
    ("'ve", None): "have", ("'d", "have"): "had", ("'d", None): "would", ("'ll", None): "will",
    ("wo", None): "will", ("ca", None): "can", ("sha", None): "shall",
}
#: Fronted auxiliary -> its negative-question form (Table 1: "Aren't you ...?").
NEGATIVE_AUX = {
    "am": "aren't", "are": "aren't", "is": "isn't", "was": "wasn't", "were": "weren't",
    "do": "don't", "does": "doesn't", "did": "didn't", "have": "haven't", "has": "hasn't",
    "had": "hadn't", "can": "can't", "could": "couldn't", "will": "won't", "would": "wouldn't",
    "should": "shouldn't", "must": "mustn't", "need": "needn't",
}
#: First person -> second person (App. A step 3); "you" is decided by position (subject or not).
_FIRST_TO_SECOND = {
    "i": "you", "me": "you", "my": "your", "mine": "yours", "myself": "yourself",
    "we": "you", "us": "you", "our": "your", "ours": "yours", "ourselves": "yourselves",
}
_SECOND_TO_FIRST = {"your": "my", "yours": "mine", "yourself": "myself", "yourselves": "ourselves"}
#: be-form agreement after a swapped subject: new subject -> {old verb form: agreeing form}.
_AGREEMENT = {
    "you": {"am": "are", "'m": "'re", "was": "were"},
    "I": {"are": "am", "'re": "'m", "were": "was"},
}


class Unrewritable(ValueError):
    """The hypothesis is skipped by App. A's rules; ``reason`` says which."""

    def __init__(self, reason: str, text: str = ""):
        super().__init__(f"{reason}: {text!r}" if text else reason)
        self.reason = reason


class TaggerNotAvailableError(ImportError):
    """spaCy or its ``en_core_web_sm`` pipeline is not installed."""


@dataclass(frozen=True)
class TaggedToken:
    """One token: its text, Penn Treebank tag, lemma and the whitespace that followed it."""

    text: str
    tag: str
    lemma: str
    whitespace: str = " "


class SpacyTagger:
    """spaCy POS tagger (the paper's ``en_core_web_sm``, App. A); loaded on first use."""

    def __init__(self, model: str = "en_core_web_sm"):
        self.model = model
        self._nlp = None

    def _load(self):
        try:
            import spacy
        except ImportError:
            raise TaggerNotAvailableError(
                "the polar-question rewriting needs a POS tagger: spaCy is not installed. Run "
                f"`pip install spacy && python -m spacy download {self.model}` (the paper's tagger, App. A), "
                "or pass tagger=<callable text -> list[TaggedToken]>"
            ) from None
        try:
            return spacy.load(self.model, disable=["ner"])
        except OSError:
            raise TaggerNotAvailableError(
                f"spaCy is installed but its pipeline {self.model!r} is not: run `python -m spacy download {self.model}` "
                "(it is not on PyPI), or pass tagger=<callable text -> list[TaggedToken]>"
            ) from None

    def __call__(self, text: str) -> list[TaggedToken]:
        if self._nlp is None:
            self._nlp = self._load()
        return [TaggedToken(token.text, token.tag_, token.lemma_, token.whitespace_) for token in self._nlp(text)]

    def __repr__(self) -> str:  # stable across runs: datasets fingerprints builder configs with it
        return f"SpacyTagger({self.model!r})"


def load_tagger(tagger=None):
    """``None`` -> :class:`SpacyTagger`; a callable -> itself."""
    if tagger is None:
        return SpacyTagger()
    if not callable(tagger):
        raise ValueError(f"`tagger` must be None (spaCy en_core_web_sm) or a callable text -> list[TaggedToken], got {tagger!r}")
    return tagger


def _render(tokens: list[TaggedToken]) -> str:
    return "".join(token.text + token.whitespace for token in tokens).strip()


def skip_reason(tokens: list[TaggedToken]) -> str | None:
    """Why App. A's rules skip this hypothesis, or None when it can be rewritten."""
    if not tokens:
        return "empty hypothesis"
    lowered = [token.text.lower() for token in tokens]
    if any(token.tag == "CC" for token in tokens):
        return "coordination (CC)"
    if any(word in NEGATION_WORDS for word in lowered):
        return "negation"
    if "?" in lowered or "!" in lowered:
        return "question or exclamation"
    if "," in lowered or ";" in lowered:
        return "complex syntax (comma)"
    inner_stops = [i for i, word in enumerate(lowered) if word == "."]
    if inner_stops and inner_stops != [len(tokens) - 1]:
        return "more than one sentence"
    if not any(token.tag in FINITE_VERB_TAGS for token in tokens):
        return "no finite verb"
    return None


def _strip_final_punctuation(tokens: list[TaggedToken]) -> list[TaggedToken]:
    while tokens and (tokens[-1].text in FINAL_PUNCTUATION or tokens[-1].tag in {".", ":"}):
        tokens = tokens[:-1]
    return tokens


def _is_verb(token: TaggedToken) -> bool:
    return token.tag.startswith("VB") or token.tag == "MD"


def _swap_pronouns(tokens: list[TaggedToken]) -> list[TaggedToken]:
    swapped = []
    for index, token in enumerate(tokens):
        word = token.text.lower()
        if word in _FIRST_TO_SECOND:
            token = replace(token, text=_FIRST_TO_SECOND[word])
        elif word == "you":
            # Subject "you" (first after the fronted verb, or followed by a verb) -> "I", else "me".
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            is_subject = index == 1 or (following is not None and _is_verb(following))
            token = replace(token, text="I" if is_subject else "me")
        elif word in _SECOND_TO_FIRST:
            token = replace(token, text=_SECOND_TO_FIRST[word])
        swapped.append(token)
    # Agreement of be-forms right after a swapped subject pronoun ("you am" -> "you are").
    for index in range(1, len(swapped)):
        subject, verb = swapped[index - 1].text, swapped[index].text.lower()
        if tokens[index - 1].text != subject and subject in _AGREEMENT and verb in _AGREEMENT[subject]:
            swapped[index] = replace(swapped[index], text=_AGREEMENT[subject][verb])
    return swapped


def _decapitalize_first(tokens: list[TaggedToken]) -> list[TaggedToken]:
    first = tokens[0]
    if first.text == "I" or first.tag in {"NNP", "NNPS"}:
        return tokens
    return [replace(first, text=first.text[:1].lower() + first.text[1:]), *tokens[1:]]


def polar_question(tokens: list[TaggedToken], negative: bool = False) -> str:
    """The polar echo question of a tagged hypothesis (App. A); ``negative``: "Aren't you ...?" form.

    Raises:
        Unrewritable: the hypothesis is skipped (see :func:`skip_reason`), or ``negative`` is asked
            of an auxiliary without a negative contraction.
    """
    text = _render(tokens)
    reason = skip_reason(tokens)
    if reason is not None:
        raise Unrewritable(reason, text)
    tokens = _decapitalize_first(_strip_final_punctuation(list(tokens)))
    index = next(i for i, token in enumerate(tokens) if token.tag in FINITE_VERB_TAGS)
    verb = tokens[index]
    lemma = verb.lemma.lower()
    is_perfect = lemma == "have" and any(token.tag == "VBN" for token in tokens[index + 1 :])
    is_emphatic_do = lemma == "do" and any(token.tag == "VB" for token in tokens[index + 1 :])
    if lemma == "be" or verb.tag == "MD" or is_perfect or is_emphatic_do:
        word = verb.text.lower()
        auxiliary = _EXPANDED_AUX.get((word, lemma), _EXPANDED_AUX.get((word, None), word))
        rest = tokens[:index] + tokens[index + 1 :]
        if index > 0:  # the token before the fronted verb takes its trailing space ("I'm in" -> "you in")
            rest[index - 1] = replace(rest[index - 1], whitespace=verb.whitespace)
    else:
        auxiliary = {"VBD": "did", "VBZ": "does"}.get(verb.tag, "do")
        rest = tokens[:index] + [replace(verb, text=verb.lemma.lower())] + tokens[index + 1 :]
    unswapped = [TaggedToken(auxiliary, "MD", auxiliary, " "), *rest]
    question = _swap_pronouns(unswapped)
    # The fronted auxiliary agrees with the (swapped) subject that now follows it.
    subject = question[1].text if len(question) > 1 else ""
    if subject in _AGREEMENT and unswapped[1].text != subject:
        auxiliary = _AGREEMENT[subject].get(auxiliary, auxiliary)
    if negative:
        if auxiliary not in NEGATIVE_AUX:
            raise Unrewritable(f"no negative contraction of {auxiliary!r}", text)
        auxiliary = NEGATIVE_AUX[auxiliary]
    question[0] = replace(question[0], text=auxiliary[:1].upper() + auxiliary[1:])
    question[-1] = replace(question[-1], whitespace="")
    return _render(question) + "?"


_LOWER_I = re.compile(r"(?<![\w'])i(?=(?:'|\s|$|[.,!?]))")


def history_utterance(premise: str) -> str:
    """The NLI premise as the history utterance (Table 1): capitalized, "i" -> "I", final punctuation."""
    text = " ".join(premise.split())
    if not text:
        raise Unrewritable("empty premise")
    text = _LOWER_I.sub("I", text)
    text = text[:1].upper() + text[1:]
    if text[-1] not in ".!?":
        text += "."
    return text


def answer_sentence(tokens: list[TaggedToken], answer: str) -> str:
    """"Yes, <hypothesis>" / "No, <hypothesis>": a gold or negative response of Table 7."""
    if answer not in ("Yes", "No"):
        raise ValueError(f"`answer` must be 'Yes' or 'No', got {answer!r}")
    body = _render(_decapitalize_first(list(tokens)))
    if body[-1] not in ".!?":
        body += "."
    return f"{answer}, {body}"
