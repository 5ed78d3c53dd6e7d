"""Part-of-speech templates (Shaib et al. 2024, "Detection and Measurement of Syntactic Templates in
Generated Text", arXiv:2407.00211, §3): the ``diversity`` package's template rate and templates per
token.

A *template* is one of the ``top_n`` most frequent part-of-speech n-grams of a corpus (n = 5); its
*spans* are the texts of every token window tagged with it (tokens joined by ``" "``). The template
rate is the fraction of texts that contain any span; templates per token counts, per text, the
character positions where some span starts (overlapping), over its whitespace words.

Extraction tags each sentence once and counts the tag n-grams and collects the spans of the
winning ones in two passes over compact per-sentence token/tag tuples (never the tagger's own
objects); matching compiles every span into one trie-shaped regular expression (a literal prefix
shared by many spans is tried once) and scores each distinct text once. The card lists every
difference from the package.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Literal, overload

from dialeval.metrics.pos_templates.taggers import (
    SentenceSplitter,
    Tagger,
    default_sentence_splitter,
    default_tagger,
)
from dialeval.validation import (
    ArgumentError,
    check_corpus,
    check_int,
    check_response_sets,
    split_scope,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    #: (tokens, tags) of each tagged sentence.
    TaggedSentences = list[tuple[tuple[str, ...], tuple[str, ...]]]

DEFAULT_N = 5
DEFAULT_TOP_N = 100
#: Sentences handed to the tagger per call: the tagger's own objects (spaCy docs) never pile up.
TAGGING_CHUNK = 5_000
#: Nesting depth past which a trie branch is written as a flat alternation (``re``'s parser recurses
#: per group).
_MAX_TRIE_DEPTH = 100

Templates = dict[str, list[str]]


# ---------------------------------------------------------------- extraction


def _tagged_sentences(
    sentences: list[str], tagger: Tagger
) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(tokens, tags) of each sentence; each distinct token and tag string is kept once."""
    interned: dict[str, str] = {}
    out = []
    for start in range(0, len(sentences), TAGGING_CHUNK):
        chunk = sentences[start : start + TAGGING_CHUNK]
        tagged = tagger(chunk)
        if not isinstance(tagged, (list, tuple)) or len(tagged) != len(chunk):
            raise ArgumentError(
                "tagger",
                f"must return one list of (token, tag) pairs per sentence: {len(chunk)} "
                "sentences, got "
                f"{len(tagged) if isinstance(tagged, (list, tuple)) else type(tagged).__name__}",
            )
        for sentence, pairs in zip(chunk, tagged):
            tokens, tags = [], []
            for pair in pairs:
                if not (
                    isinstance(pair, (tuple, list))
                    and len(pair) == 2
                    and all(isinstance(x, str) for x in pair)
                ):
                    raise ArgumentError(
                        "tagger",
                        f"must return (token, tag) string pairs, got {pair!r:.60} for "
                        f"{sentence!r:.60}",
                    )
                token, tag = pair
                if not token or not tag or len(tag.split()) != 1:
                    # An empty token would be a span matching everywhere; a tag with spaces is no
                    # single tag.
                    raise ArgumentError(
                        "tagger",
                        "returned an empty token or a tag that is empty or holds whitespace: "
                        f"{pair!r:.60} for {sentence!r:.60}",
                    )
                tokens.append(interned.setdefault(token, token))
                tags.append(interned.setdefault(tag, tag))
            out.append((tuple(tokens), tuple(tags)))
    return out


def _top_patterns(tagged: TaggedSentences, n: int, top_n: int) -> list[tuple[str, ...]]:
    """The ``top_n`` most frequent tag n-grams within sentences; ties in first-seen order
    (``nltk.FreqDist`` keeps insertion order and ``sorted`` is stable, as in the package)."""
    counts: Counter = Counter()
    for _, tags in tagged:
        if len(tags) >= n:  # before range(n): a huge order costs nothing
            counts.update(zip(*(tags[i:] for i in range(n))))
    return [
        pattern
        for pattern, _ in sorted(counts.items(), key=lambda item: item[1], reverse=True)[:top_n]
    ]


def _sentences(texts: list[str], splitter: SentenceSplitter) -> list[str]:
    sentences = splitter(" ".join(texts))
    if not isinstance(sentences, (list, tuple)) or not all(isinstance(s, str) for s in sentences):
        raise ArgumentError("sentence_splitter", "must return a list of strings")
    return list(sentences)


def _templates_of(tagged: TaggedSentences, n: int, top_n: int) -> Templates:
    patterns = _top_patterns(tagged, n, top_n)
    spans: dict[tuple[str, ...], dict[str, None]] = {pattern: {} for pattern in patterns}
    for tokens, tags in tagged:
        for start in range(len(tags) - n + 1):
            found = spans.get(tags[start : start + n])
            if found is not None:
                found[" ".join(tokens[start : start + n])] = None
    return {" ".join(pattern): list(found) for pattern, found in spans.items()}


def _extract(
    texts: list[str], n: int, top_n: int, tagger: Tagger, splitter: SentenceSplitter
) -> Templates:
    return _templates_of(_tagged_sentences(_sentences(texts, splitter), tagger), n, top_n)


def _extract_per_set(
    sets: list[list[str]], n: int, top_n: int, tagger: Tagger, splitter: SentenceSplitter
) -> Iterator[Templates]:
    """Each set's templates, in order; the sentences of consecutive sets are tagged together, about
    :data:`TAGGING_CHUNK` per tagger call, so a large input never holds more than a chunk's tags."""
    pending: list[list[str]] = []

    def flush() -> Iterator[Templates]:
        tagged = _tagged_sentences(
            [sentence for sentences in pending for sentence in sentences], tagger
        )
        start = 0
        for sentences in pending:
            yield _templates_of(tagged[start : start + len(sentences)], n, top_n)
            start += len(sentences)
        pending.clear()

    waiting = 0
    for texts in sets:
        pending.append(_sentences(texts, splitter))
        waiting += len(pending[-1])
        if waiting >= TAGGING_CHUNK:
            yield from flush()
            waiting = 0
    if pending:
        yield from flush()


def _resolve(
    tagger: Tagger | None, sentence_splitter: SentenceSplitter | None
) -> tuple[Tagger, SentenceSplitter]:
    """The given tagger / splitter, else the defaults (a TaggerNotAvailableError says how to install
    them)."""
    if tagger is not None and not callable(tagger):
        raise ArgumentError(
            "tagger",
            f"must be a callable (list of sentences -> lists of (token, tag)), got {tagger!r:.60}",
        )
    if sentence_splitter is not None and not callable(sentence_splitter):
        raise ArgumentError(
            "sentence_splitter",
            f"must be a callable (text -> list of sentences), got {sentence_splitter!r:.60}",
        )
    return (
        tagger if tagger is not None else default_tagger(),
        sentence_splitter if sentence_splitter is not None else default_sentence_splitter(),
    )


def extract_templates(
    texts: list[str],
    n: int = DEFAULT_N,
    top_n: int = DEFAULT_TOP_N,
    tagger: Tagger | None = None,
    sentence_splitter: SentenceSplitter | None = None,
    allow_empty: bool = False,
) -> Templates:
    """The ``top_n`` most frequent part-of-speech ``n``-grams of ``texts`` and every span tagged
    with each.

    As the package's ``extract_patterns``: the texts joined by spaces are split into sentences,
    each sentence is tagged, the tag n-grams within sentences are counted, and for each of the
    ``top_n`` most frequent (ties in first-seen order) every token window tagged with it is kept,
    its tokens joined by ``" "``.

    Args:
        texts: the corpus (or one response set) to extract the templates from.
        n: the n-gram length (default 5, the paper's).
        top_n: how many of the most frequent tag n-grams are templates (default 100).
        tagger: ``tagger(sentences) -> [[(token, tag), ...], ...]``; default spaCy
            ``en_core_web_sm`` (else NLTK's perceptron), see
            :mod:`dialeval.metrics.pos_templates.taggers`.
        sentence_splitter: ``splitter(text) -> [sentence, ...]``; default NLTK's punkt.
        allow_empty: accept empty / whitespace-only texts.

    Returns:
        ``{"DT NN VBZ IN DT": ["the cat sits on the", ...], ...}``: pattern -> its spans, in
        first-seen order; the patterns most frequent first. A dict the package's ``template_rate``
        and ``templates_per_token`` accept as ``templates=`` too.

    Raises:
        ValueError: bad ``texts`` / ``n`` / ``top_n``, or a tagger or splitter returning malformed
            output.
        TaggerNotAvailableError: no tagger given and none installed (the message says how to install
            one).
    """
    texts = check_corpus(texts, "texts", allow_empty=allow_empty)
    n, top_n = check_int(n, "n"), check_int(top_n, "top_n")
    return _extract(texts, n, top_n, *_resolve(tagger, sentence_splitter))


# ---------------------------------------------------------------- matching


def check_templates(templates: object, argument: str = "templates") -> list[str]:
    """The distinct spans of a templates mapping (ours or the package's ``{pattern: iterable of
    spans}``)."""
    if not isinstance(templates, Mapping):
        raise ArgumentError(
            argument,
            "must be a dict of pattern -> spans (extract_templates' output), got "
            f"{type(templates).__name__}",
        )
    spans: dict[str, None] = {}
    for pattern, found in templates.items():
        if isinstance(found, (str, bytes)) or not isinstance(found, Iterable):
            raise ArgumentError(
                f"{argument}[{pattern!r}]",
                f"must be a list or set of span strings, got {type(found).__name__}",
            )
        for span in found:
            if not isinstance(span, str) or not span:
                raise ArgumentError(
                    f"{argument}[{pattern!r}]",
                    f"holds {span!r:.60}: each span must be a non-empty string",
                )
            spans[span] = None
    return list(spans)


def _trie(spans: list[str]) -> dict:
    root: dict = {}
    for span in spans:
        node = root
        for char in span:
            node = node.setdefault(char, {})
        node[""] = {}  # a span ends here
    return root


def _suffixes(node: dict, prefix: str = "") -> list[str]:
    out, stack = [], [(node, prefix)]
    while stack:
        node, text = stack.pop()
        for char, child in node.items():
            if char == "":
                out.append(text)
            else:
                stack.append((child, text + char))
    return out


def _trie_regex(node: dict, depth: int = 0) -> str:
    """The alternation of every string below ``node``, sharing prefixes (``ab(?:c|d)``)."""
    if depth > _MAX_TRIE_DEPTH:
        return (
            "(?:"
            + "|".join(re.escape(s) for s in sorted(_suffixes(node), key=len, reverse=True))
            + ")"
        )
    branches = []
    for char, child in node.items():
        if char == "":
            continue
        literal = char
        while len(child) == 1 and "" not in child:  # a chain: one literal, no group
            ((next_char, child),) = child.items()
            literal += next_char
        rest = _trie_regex(child, depth + 1) if child.keys() - {""} else ""
        tail = f"(?:{rest})?" if rest and "" in child else rest
        branches.append(re.escape(literal) + tail)
    if len(branches) == 1:
        return branches[0]
    return "(?:" + "|".join(branches) + ")"


class SpanMatcher:
    """Every span in one compiled expression: does a text contain one, and at how many positions one
    starts."""

    def __init__(self, spans: list[str]):
        self.spans = spans
        self._body = _trie_regex(_trie(spans)) if spans else None

    @cached_property
    def _any(self) -> re.Pattern:
        return re.compile(self._body)

    @cached_property
    def _starts(self) -> re.Pattern:
        # zero-width: every start position, overlaps included
        return re.compile(f"(?=(?:{self._body}))")

    def contains_any(self, text: str) -> bool:
        return self._body is not None and self._any.search(text) is not None

    def count_starts(self, text: str) -> int:
        return sum(1 for _ in self._starts.finditer(text)) if self._body is not None else 0


@overload
def _rates(
    texts: list[str], matcher: SpanMatcher, per_token: Literal[True] = True
) -> tuple[float, list[float]]: ...


@overload
def _rates(
    texts: list[str], matcher: SpanMatcher, per_token: Literal[False]
) -> tuple[float, None]: ...


def _rates(
    texts: list[str], matcher: SpanMatcher, per_token: bool = True
) -> tuple[float, list[float] | None]:
    """(template rate, templates per token of each text, or None unless ``per_token``); each
    distinct text is matched once."""
    seen: dict[str, tuple[bool, float]] = {}
    for text in texts:
        if text not in seen:
            words = len(text.split())
            if per_token and words:
                count = matcher.count_starts(text)
                seen[text] = (count > 0, count / words)
            else:  # no word: 0.0 per token, as the package
                seen[text] = (matcher.contains_any(text), 0.0)
    rate = sum(seen[text][0] for text in texts) / len(texts)
    return rate, [seen[text][1] for text in texts] if per_token else None


def _templates_for(
    texts: list[str],
    templates: Mapping | None,
    n: int,
    top_n: int,
    tagger: Tagger | None,
    sentence_splitter: SentenceSplitter | None,
) -> Mapping:
    if templates is not None:
        return templates
    return _extract(texts, n, top_n, *_resolve(tagger, sentence_splitter))


def _check_options(n: int, top_n: int) -> tuple[int, int]:
    return check_int(n, "n"), check_int(top_n, "top_n")


def template_rate(
    texts: list[str],
    templates: Mapping | None = None,
    n: int = DEFAULT_N,
    top_n: int = DEFAULT_TOP_N,
    tagger: Tagger | None = None,
    sentence_splitter: SentenceSplitter | None = None,
    allow_empty: bool = False,
) -> float:
    """Fraction of ``texts`` containing at least one template span (the package's
    ``template_rate``).

    Args:
        texts: the texts to score.
        templates: ``{pattern: spans}`` (:func:`extract_templates`' output, or the package's);
            default: extracted from ``texts`` with ``n``, ``top_n``, ``tagger`` and
            ``sentence_splitter``.
        n, top_n, tagger, sentence_splitter, allow_empty: as :func:`extract_templates`.

    Returns:
        A float in [0, 1]; 0.0 when there is no span.
    """
    texts = check_corpus(texts, "texts", allow_empty=allow_empty)
    n, top_n = _check_options(n, top_n)
    spans = check_templates(_templates_for(texts, templates, n, top_n, tagger, sentence_splitter))
    return _rates(texts, SpanMatcher(spans), per_token=False)[0]


def templates_per_token(
    texts: list[str],
    templates: Mapping | None = None,
    n: int = DEFAULT_N,
    top_n: int = DEFAULT_TOP_N,
    tagger: Tagger | None = None,
    sentence_splitter: SentenceSplitter | None = None,
    allow_empty: bool = False,
) -> list[float]:
    """Per text: the positions where a template span starts (overlapping) over its whitespace words.

    The package's ``templates_per_token`` (its ``compute_all_metrics`` reports their mean as
    ``avg_templates_per_token``). Arguments as :func:`template_rate`; a text without words scores
    0.0.
    """
    texts = check_corpus(texts, "texts", allow_empty=allow_empty)
    n, top_n = _check_options(n, top_n)
    spans = check_templates(_templates_for(texts, templates, n, top_n, tagger, sentence_splitter))
    return _rates(texts, SpanMatcher(spans))[1]


def _figures(texts: list[str], templates: Mapping) -> tuple[dict[str, float], list[float]]:
    spans = check_templates(templates)
    rate, per_token = _rates(texts, SpanMatcher(spans))
    return {
        "template_rate": rate,
        "templates_per_token": sum(per_token) / len(per_token),
        "num_templates": len(templates),
        "num_template_spans": len(spans),
    }, per_token


def pos_template_scores(
    predictions: list[str] | list[list[str]],
    templates: Mapping | None = None,
    n: int = DEFAULT_N,
    top_n: int = DEFAULT_TOP_N,
    tagger: Tagger | None = None,
    sentence_splitter: SentenceSplitter | None = None,
    allow_empty: bool = False,
) -> dict:
    """The figures of the evaluate module and the job.

    A corpus (``list[str]``): templates extracted from it (or ``templates``), its ``template_rate``,
    ``templates_per_token`` (the mean over texts, the package's ``avg_templates_per_token``) and
    ``templates_per_token_scores`` (each text's). Response sets (``list[list[str]]``): each set's
    own templates (or the one ``templates`` for every set) and figures in ``per_set``, and their
    means.
    """
    n, top_n = _check_options(n, top_n)
    if split_scope(predictions, "predictions") == "corpus":
        corpus = check_corpus(predictions, "predictions", allow_empty=allow_empty)
        figures, per_token = _figures(
            corpus, _templates_for(corpus, templates, n, top_n, tagger, sentence_splitter)
        )
        return {
            "scope": "corpus",
            **figures,
            "num_responses": len(corpus),
            "templates_per_token_scores": per_token,
        }
    sets = check_response_sets(predictions, "predictions", allow_empty=allow_empty)
    if templates is None:
        set_templates: Iterator[Mapping] = _extract_per_set(
            sets, n, top_n, *_resolve(tagger, sentence_splitter)
        )
    else:
        set_templates = (templates for _ in sets)
    per_set = [_figures(texts, found)[0] for texts, found in zip(sets, set_templates)]
    return {
        "scope": "response_set",
        "template_rate": sum(row["template_rate"] for row in per_set) / len(per_set),
        "templates_per_token": sum(row["templates_per_token"] for row in per_set) / len(per_set),
        "num_sets": len(per_set),
        "per_set": per_set,
    }
