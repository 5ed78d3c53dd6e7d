"""Rewriting an NLI hypothesis into a polar echo question (Sato et al. 2022, §3.1, App. A).

App. A's four steps, on a POS-tagged hypothesis:

1. find the first verb;
2. front it (auxiliaries: *be*, modals, perfect *have*) or put *Do/Does/Did* in front and put
   the verb back to its base form (*made* -> *Did ... make*);
3. swap first- and second-person pronouns (*my* -> *your*, *you* -> *I*/*me*);
4. replace the final punctuation with "?".

Hypotheses that would give ungrammatical or wrongly-labelled questions are skipped with a
reason (:class:`Unrewritable`), with the filters of the authors' ``make_question_for_mnli.py``
(``should_skip``) in its order: no finite verb, a question or exclamation, sentential negation
(*not*, *n't*, *never*, *no*: it flips which answer is non-contradictory), more than 30 words,
a comma, coordination (a ``CC`` tag, App. A), a first word that cannot start the subject (an
adverb, interjection, preposition, verb...: "Maybe he likes it." would become "Does maybe he
like it?"), a second sentence, *here* / *there* as adverbs, and more than one subject before
the verb. A question of more than 30 words is skipped too. Premises have their own filters
(:func:`premise_skip_reason`, the authors' ``main``): a subject, no question mark, a verb, no
quote tokens, at most 30 tokens, no immediately repeated words or phrases.

The negative question form (*Aren't you ...?*, Table 1 CNTQ, Table 7 NegativeQ) attaches
*n't* to the fronted auxiliary; auxiliaries without a standard contraction (*may*, *might*,
*shall*) are skipped in that form.

POS tags come from a pluggable *tagger*: any callable ``text -> list[TaggedToken]`` with Penn
Treebank tags, lemmas and dependency labels (spaCy's ``dep_``; the subject and object filters
and the choice of *I* / *me* read them). :class:`SpacyTagger` (spaCy ``en_core_web_sm``, the
paper's tagger) is used when spaCy and the model are installed; otherwise it raises
:class:`TaggerNotAvailableError` saying how to install them. A tagger that gives no dependency
labels is a :class:`MissingDependencyLabels` error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from dialeval.hub import ModelNotAvailableError
from dialeval.validation import ArgumentError

#: Tags of a finite verb (or a base-form verb, as in "I do" fragments); participles and
#: gerunds are not "the verb" of the clause.
FINITE_VERB_TAGS = ("VB", "VBP", "VBZ", "VBD", "MD")
NEGATION_WORDS = ("not", "n't", "never", "no")
FINAL_PUNCTUATION = (".", "!", ";", ":", "...")
#: The authors' length limit (words) on hypotheses, questions and premises.
MAX_WORDS = 30
#: Tags a hypothesis may start with (the authors' ``init_tags``; its Universal POS entries
#: never match a fine-grained tag and are left out).
INITIAL_TAGS = frozenset(
    {"CD", "DT", "EX", "JJ", "JJR", "JJS", "NN", "NNP", "NNPS", "NNS", "PDT", "PRP", "PRP$", "VBG"}
)
#: Dependency labels (spaCy, ClearNLP style) of a subject, and of an object (the authors' sets).
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass"})
PREMISE_SUBJECT_DEPS = SUBJECT_DEPS | {"expl"}
OBJECT_DEPS = frozenset({"iobj", "obj", "dobj", "pobj", "attr", "oprd", "dative"})

#: A contracted auxiliary spelt out, keyed by (lower-cased token, lemma); lemma None = any.
_EXPANDED_AUX = {
    ("'m", None): "am",
    ("'re", None): "are",
    ("'s", "be"): "is",
    ("'s", "have"): "has",
    ("'ve", None): "have",
    ("'d", "have"): "had",
    ("'d", None): "would",
    ("'ll", None): "will",
    ("wo", None): "will",
    ("ca", None): "can",
    ("sha", None): "shall",
}
#: Fronted auxiliary -> its negative-question form (Table 1: "Aren't you ...?").
NEGATIVE_AUX = {
    "am": "aren't",
    "are": "aren't",
    "is": "isn't",
    "was": "wasn't",
    "were": "weren't",
    "do": "don't",
    "does": "doesn't",
    "did": "didn't",
    "have": "haven't",
    "has": "hasn't",
    "had": "hadn't",
    "can": "can't",
    "could": "couldn't",
    "will": "won't",
    "would": "wouldn't",
    "should": "shouldn't",
    "must": "mustn't",
    "need": "needn't",
}
#: First person -> second person (App. A step 3); "you" is decided by position (subject or not).
_FIRST_TO_SECOND = {
    "i": "you",
    "me": "you",
    "my": "your",
    "mine": "yours",
    "myself": "yourself",
    "we": "you",
    "us": "you",
    "our": "your",
    "ours": "yours",
    "ourselves": "yourselves",
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


class TaggerNotAvailableError(ModelNotAvailableError):
    """spaCy or its ``en_core_web_sm`` pipeline is not installed; the message says how to install
    them. A :class:`~dialeval.hub.ModelNotAvailableError` (an ``OSError``), as the metrics' own
    missing-tagger error is, so ``dialeval export-dataset`` prints it in one line (exit 2)."""


class MissingDependencyLabels(ValueError):
    """The tagger gave no dependency labels, which the subject and object rules need."""


@dataclass(frozen=True)
class TaggedToken:
    """One token: its text, Penn Treebank tag, lemma, the whitespace that followed it, and its
    dependency label (spaCy's ``dep_``: ``nsubj``, ``dobj``, ``pobj``, ...)."""

    text: str
    tag: str
    lemma: str
    whitespace: str = " "
    dep: str = ""


#: A POS tagger: text -> its tagged tokens (:class:`SpacyTagger`, or any callable alike).
Tagger: TypeAlias = Callable[[str], list[TaggedToken]]


class SpacyTagger:
    """spaCy POS tagger (the paper's ``en_core_web_sm``, App. A); loaded on first use."""

    def __init__(self, model: str = "en_core_web_sm") -> None:
        self.model = model
        self._nlp: Any = None  # a spaCy Language once loaded (spaCy ships no types)

    def _load(self) -> Any:
        try:
            # spacy is optional: imported only when its tagger is asked for
            import spacy
        except ImportError:
            raise TaggerNotAvailableError(
                "the polar-question rewriting needs a POS tagger: spaCy is not installed. Run "
                f"`pip install spacy && python -m spacy download {self.model}` (the paper's "
                "tagger, App. A), or pass tagger=<callable text -> list[TaggedToken]>"
            ) from None
        try:
            return spacy.load(self.model, disable=["ner"])  # the parser stays: its labels are read
        except OSError:
            raise TaggerNotAvailableError(
                f"spaCy is installed but its pipeline {self.model!r} is not: run `python -m spacy "
                f"download {self.model}` (it is not on PyPI), or pass tagger=<callable text -> "
                "list[TaggedToken]>"
            ) from None

    def __call__(self, text: str) -> list[TaggedToken]:
        if self._nlp is None:
            self._nlp = self._load()
        return [
            TaggedToken(token.text, token.tag_, token.lemma_, token.whitespace_, token.dep_)
            for token in self._nlp(text)
        ]

    def __repr__(self) -> str:  # stable across runs: datasets fingerprints builder configs with it
        return f"SpacyTagger({self.model!r})"


def load_tagger(tagger: Tagger | None = None) -> Tagger:
    """``None`` -> :class:`SpacyTagger`; a callable -> itself."""
    if tagger is None:
        return SpacyTagger()
    if not callable(tagger):
        raise ArgumentError(
            "tagger",
            "must be None (spaCy en_core_web_sm) or a callable text -> list[TaggedToken], got "
            f"{tagger!r}",
        )
    return tagger


def _render(tokens: list[TaggedToken]) -> str:
    return "".join(token.text + token.whitespace for token in tokens).strip()


def _words(tokens: list[TaggedToken]) -> list[TaggedToken]:
    return [token for token in tokens if token.text.strip()]


def _check_dependencies(tokens: list[TaggedToken]) -> None:
    if tokens and not any(token.dep for token in tokens):
        raise MissingDependencyLabels(
            f"the tagger gave no dependency labels for {_render(tokens)!r}; the subject and "
            "object rules of the authors' code need them (TaggedToken.dep, spaCy's dep_)"
        )


def _first_verb(tokens: list[TaggedToken]) -> int | None:
    return next((i for i, token in enumerate(tokens) if token.tag in FINITE_VERB_TAGS), None)


def skip_reason(tokens: list[TaggedToken]) -> str | None:
    """Why the rules skip this hypothesis, or None when it can be rewritten.

    The checks of the authors' ``should_skip`` in their order, plus a semicolon (ours). Raises
    :class:`MissingDependencyLabels` when the tokens carry no dependency labels.
    """
    tokens = _words(tokens)
    if not tokens:
        return "empty hypothesis"
    _check_dependencies(tokens)
    lowered = [token.text.lower() for token in tokens]
    verb = _first_verb(tokens)
    if verb is None:
        return "no finite verb"
    if "?" in _render(tokens) or "!" in _render(tokens):
        return "question or exclamation"
    if any(word in NEGATION_WORDS for word in lowered):
        return "negation"
    if len(_render(tokens).split()) > MAX_WORDS:
        return f"longer than {MAX_WORDS} words"
    if "," in lowered or ";" in lowered:
        return "complex syntax (comma)"
    if any(token.tag == "CC" for token in tokens):
        return "coordination (CC)"
    if tokens[0].tag not in INITIAL_TAGS:
        return f"sentence-initial {tokens[0].tag}"
    inner_stops = [i for i, word in enumerate(lowered) if word == "."]
    if inner_stops and inner_stops != [len(tokens) - 1]:
        return "more than one sentence"
    if any(token.lemma.lower() in ("here", "there") and token.tag == "RB" for token in tokens):
        return "here/there"
    if sum(token.dep in SUBJECT_DEPS for token in tokens[:verb]) > 1:
        return "more than one subject before the verb"
    return None


def _simplified(words: list[str]) -> list[str]:
    """The authors' ``simplify_str``: lower-cased, without . ? , um uh yeah (as their string
    replacements do it: a word directly after a removed one is kept)."""
    text = " " + " ".join(" ".join(words).split()) + " "
    text = text.lower()
    for old in (" . ", " ? ", " , ", " um ", " uh ", " . ", " yeah "):
        text = text.replace(old, " ")
    return text.strip().split()


def has_repeated_words(words: list[str]) -> bool:
    """The authors' ``have_duplicate``: some n-gram is immediately repeated ("i i", "you know you
    know")."""
    words = _simplified(words)
    for n in range(1, len(words) // 2 + 1):
        for start in range(n, len(words) - n + 1):
            if words[start - n : start] == words[start : start + n]:
                return True
    return False


def premise_skip_reason(tokens: list[TaggedToken]) -> str | None:
    """Why the authors' code (``main`` of ``make_question_for_mnli.py``) drops a pair for its
    premise, or None: no subject (nsubj/nsubjpass/csubj/csubjpass/expl), a question mark, no
    finite verb, a quote token, more than 30 tokens (with the final full stop it is given), or an
    immediately repeated word or phrase."""
    tokens = _words(tokens)
    if not tokens:
        return "empty premise"
    _check_dependencies(tokens)
    if not any(token.dep in PREMISE_SUBJECT_DEPS for token in tokens):
        return "premise without a subject"
    if "?" in _render(tokens):
        return "premise is a question"
    if _first_verb(tokens) is None:
        return "premise without a finite verb"
    if any(token.text in ("'", '"') for token in tokens):
        return "premise with quotes"
    words = [token.text for token in tokens]
    if words[-1][-1] not in ".!":
        words.append(".")
    if len(words) > MAX_WORDS:
        return f"premise longer than {MAX_WORDS} tokens"
    if has_repeated_words(words):
        return "premise with a repeated word or phrase"
    return None


def _strip_final_punctuation(tokens: list[TaggedToken]) -> list[TaggedToken]:
    while tokens and (tokens[-1].text in FINAL_PUNCTUATION or tokens[-1].tag in {".", ":"}):
        tokens = tokens[:-1]
    return tokens


def _swap_pronouns(tokens: list[TaggedToken]) -> list[TaggedToken]:
    swapped = []
    for index, token in enumerate(tokens):
        word = token.text.lower()
        if word in _FIRST_TO_SECOND:
            token = replace(token, text=_FIRST_TO_SECOND[word])
        elif word == "you":
            # An object "you" becomes "me", any other "I" (the authors' object marking).
            token = replace(token, text="me" if token.dep in OBJECT_DEPS else "I")
        elif word in _SECOND_TO_FIRST:
            token = replace(token, text=_SECOND_TO_FIRST[word])
        swapped.append(token)
    # Agreement of be-forms right after a swapped subject pronoun ("you am" -> "you are").
    for index in range(1, len(swapped)):
        subject, verb = swapped[index - 1].text, swapped[index].text.lower()
        if (
            tokens[index - 1].text != subject
            and subject in _AGREEMENT
            and verb in _AGREEMENT[subject]
        ):
            swapped[index] = replace(swapped[index], text=_AGREEMENT[subject][verb])
    return swapped


def _decapitalize_first(tokens: list[TaggedToken]) -> list[TaggedToken]:
    first = tokens[0]
    if first.text == "I" or first.tag in {"NNP", "NNPS"}:
        return tokens
    return [replace(first, text=first.text[:1].lower() + first.text[1:]), *tokens[1:]]


def polar_question(tokens: list[TaggedToken], negative: bool = False) -> str:
    """The polar echo question of a tagged hypothesis (App. A); ``negative``: "Aren't you ...?"
    form.

    Raises:
        Unrewritable: the hypothesis is skipped (see :func:`skip_reason`), or ``negative`` is asked
            of an auxiliary without a negative contraction.
    """
    text = _render(tokens)
    reason = skip_reason(tokens)
    if reason is not None:
        raise Unrewritable(reason, text)
    tokens = _decapitalize_first(_strip_final_punctuation(_words(tokens)))
    index = _first_verb(tokens)
    assert index is not None  # skip_reason refused a hypothesis without a finite verb
    verb = tokens[index]
    lemma = verb.lemma.lower()
    word = verb.text.lower()
    following = tokens[index + 1].text.lower() if index + 1 < len(tokens) else ""
    # "She's been" is "She has been" whatever the tagger's lemma of 's (the authors' rule).
    is_has_been = word == "'s" and following == "been"
    is_perfect = lemma == "have" and any(token.tag == "VBN" for token in tokens[index + 1 :])
    is_emphatic_do = lemma == "do" and any(token.tag == "VB" for token in tokens[index + 1 :])
    if is_has_been or lemma == "be" or verb.tag == "MD" or is_perfect or is_emphatic_do:
        if is_has_been:
            auxiliary = "has"
        else:
            auxiliary = _EXPANDED_AUX.get((word, lemma), _EXPANDED_AUX.get((word, None), word))
        rest = tokens[:index] + tokens[index + 1 :]
        # the token before the fronted verb takes its trailing space ("I'm in" -> "you in")
        if index > 0:
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
    # The authors count the question's words with "?" as one, and "n't" as one more.
    if len(question) + 1 + int(negative) > MAX_WORDS:
        raise Unrewritable(f"question longer than {MAX_WORDS} words", text)
    question[0] = replace(question[0], text=auxiliary[:1].upper() + auxiliary[1:])
    question[-1] = replace(question[-1], whitespace="")
    return _render(question) + "?"


_LOWER_I = re.compile(r"(?<![\w'])i(?=(?:'|\s|$|[.,!?]))")


def history_utterance(premise: str) -> str:
    """The NLI premise as the history utterance (Table 1): capitalized, "i" -> "I", final
    punctuation."""
    text = " ".join(premise.split())
    if not text:
        raise Unrewritable("empty premise")
    text = _LOWER_I.sub("I", text)
    text = text[:1].upper() + text[1:]
    if text[-1] not in ".!?":
        text += "."
    return text


def answer_sentence(tokens: list[TaggedToken], answer: str) -> str:
    """ "Yes, <hypothesis>" / "No, <hypothesis>": a gold or negative response of Table 7."""
    if answer not in ("Yes", "No"):
        raise ArgumentError("answer", f"must be 'Yes' or 'No', got {answer!r}")
    body = _render(_decapitalize_first(list(tokens)))
    if body[-1] not in ".!?":
        body += "."
    return f"{answer}, {body}"
