"""Hostile text: lone surrogates inserted at random places in otherwise valid text, and
custom tokenizers returning junk.

* Every model-free metric refuses a response holding a lone surrogate with a ValueError naming
  the argument, the response's index and the surrogate (never a UnicodeEncodeError from zlib,
  NLTK or Arrow), and scores the same input without it.
* The input reader refuses such a record (JSON's "\\udXXX" escape) naming ``FILE:LINE``, and
  reads the same file without it back as written.
* A custom ``tokenizer`` returning anything but a list of non-empty strings is refused naming
  ``tokenizer`` (TypeError / ValueError); a well-behaved one gives a finite score.
"""

from __future__ import annotations

import json
import re
import tempfile
from importlib import import_module
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from pos_tagging_fixtures import lexicon_tagger, regex_sentence_splitter
from property_support import all_finite, covers, junk, nonblank_text, outcome, refused

from dialeval import io
from dialeval.validation import check_response_sets, check_texts, check_unicode_text

lexical = import_module("dialeval.metrics.lexical_diversity")
compression = import_module("dialeval.metrics.compression_ratio")
ead = import_module("dialeval.metrics.expectation_adjusted_distinct")
repetition = import_module("dialeval.metrics.self_repetition")
homogenization = import_module("dialeval.metrics.homogenization")
templates = import_module("dialeval.metrics.pos_templates")

surrogate = st.integers(0xD800, 0xDFFF).map(chr)


@st.composite
def with_lone_surrogate(draw, texts=nonblank_text):
    """A valid text with one lone surrogate inserted at a random place: (text, position, surrogate)."""
    text = draw(texts)
    position = draw(st.integers(0, len(text)))
    char = draw(surrogate)
    return text[:position] + char + text[position:], position, char


@st.composite
def corpus_with_a_surrogate(draw):
    """``(corpus, index, position, char)``: a corpus of at least two valid texts, one of which holds a
    lone surrogate at ``position`` (the first surrogate of the corpus)."""
    corpus = draw(st.lists(nonblank_text, min_size=2, max_size=6))
    index = draw(st.integers(0, len(corpus) - 1))
    bad, position, char = draw(with_lone_surrogate())
    corpus[index] = bad
    return corpus, index, position, char


def _sets(corpus):
    """The corpus as response sets of two (the last set padded), and where text ``i`` lands."""
    padded = corpus + corpus[-1:] if len(corpus) % 2 else corpus
    return [padded[start : start + 2] for start in range(0, len(padded), 2)]


POS = {"tagger": lexicon_tagger, "sentence_splitter": regex_sentence_splitter}
#: Every model-free metric on a corpus: name -> (call, argument the error names).
CORPUS_CALLS = {
    "distinct_n": (lambda c: lexical.distinct_n(c), "responses"),
    "entropy_n": (lambda c: lexical.entropy_n(c), "responses"),
    "averaged_distinct_n": (lambda c: lexical.averaged_distinct_n(c), "responses"),
    "ngram_cosine_diversity": (lambda c: lexical.ngram_cosine_diversity(c), "responses"),
    "self_bleu": (lambda c: lexical.self_bleu(c), "responses"),
    "lf": (lambda c: lexical.lf(c), "responses"),
    "corpus_lexical_diversity": (
        lambda c: lexical.corpus_lexical_diversity(c),
        "(responses|predictions)",
    ),
    "lexical_diversity": (lambda c: lexical.lexical_diversity(c), "(responses|predictions)"),
    "compression_ratio": (lambda c: compression.compression_ratio(c), "texts"),
    "expectation_adjusted_distinct": (
        lambda c: ead.expectation_adjusted_distinct(c, vocab_size=9),
        "responses",
    ),
    "expectation_adjusted_distinct_scores": (
        lambda c: ead.expectation_adjusted_distinct_scores(c, vocab_size=9),
        "predictions",
    ),
    "self_repetition": (lambda c: repetition.self_repetition(c), "texts"),
    "self_repetition_scores": (lambda c: repetition.self_repetition_scores(c), "predictions"),
    "homogenization": (lambda c: homogenization.homogenization(c), "texts"),
    "homogenization_score": (
        lambda c: homogenization.homogenization_score(c, measure="bleu"),
        "predictions",
    ),
    "template_rate": (lambda c: templates.template_rate(c, **POS), "texts"),
    "templates_per_token": (lambda c: templates.templates_per_token(c, **POS), "texts"),
    "extract_templates": (lambda c: templates.extract_templates(c, **POS), "texts"),
    "pos_template_scores": (lambda c: templates.pos_template_scores(c, **POS), "predictions"),
}
#: The same metrics' response-set forms: name -> (call, argument).
SET_CALLS = {
    "set_lexical_diversity": (
        lambda s: lexical.set_lexical_diversity(s),
        "(response_sets|predictions)",
    ),
    "compression_ratio_per_set": (
        lambda s: compression.compression_ratio_per_set(s),
        "response_sets",
    ),
    "self_repetition_per_set": (lambda s: repetition.self_repetition_per_set(s), "response_sets"),
    "homogenization_per_set": (lambda s: homogenization.homogenization_per_set(s), "response_sets"),
}


def _refusal(argument: str, indices: str, position: int, char: str) -> str:
    return (
        rf"^`{argument}{re.escape(indices)}` holds a lone surrogate \(U\+{ord(char):04X}\) at character {position}: "
        "not valid Unicode"
    )


@covers(*CORPUS_CALLS, "check_unicode_text")
@given(case=corpus_with_a_surrogate(), name=st.sampled_from(sorted(CORPUS_CALLS)))
def test_a_lone_surrogate_anywhere_in_a_corpus_is_refused_by_index_and_position(case, name):
    corpus, index, position, char = case
    call, argument = CORPUS_CALLS[name]
    result = outcome(call, corpus)
    assert refused(result) and isinstance(result.error, ValueError), result
    assert re.match(_refusal(argument, f"[{index}]", position, char), str(result.error)), str(
        result.error
    )
    # without the surrogate: a result (or a refusal about something else), never a codec error
    clean = [text.replace(char, "") for text in corpus]
    if clean[index].strip():
        cleaned = outcome(call, clean)
        assert refused(cleaned) or all_finite(cleaned) is None


@covers(*SET_CALLS, "check_response_sets")
@given(case=corpus_with_a_surrogate(), name=st.sampled_from(sorted(SET_CALLS)))
def test_a_lone_surrogate_in_a_response_set_is_refused_by_set_and_index(case, name):
    corpus, index, position, char = case
    call, argument = SET_CALLS[name]
    result = outcome(call, _sets(corpus))
    assert refused(result) and isinstance(result.error, ValueError), result
    assert re.match(
        _refusal(argument, f"[{index // 2}][{index % 2}]", position, char), str(result.error)
    ), str(result.error)
    assert refused(outcome(check_response_sets, _sets(corpus), "sets")), (
        "the shared check must refuse it too"
    )


@covers("check_texts")
@given(
    nested=st.recursive(
        st.one_of(nonblank_text, junk), lambda inner: st.lists(inner, max_size=3), max_leaves=8
    ),
    bad=with_lone_surrogate(),
)
def test_check_texts_finds_the_surrogate_at_any_depth_and_ignores_other_items(nested, bad):
    assert outcome(check_texts, nested, "x") is None
    text, position, char = bad
    result = outcome(check_texts, [nested, [text]], "x")
    assert refused(result) and re.match(_refusal("x", "[1][0]", position, char), str(result.error))
    assert refused(outcome(check_unicode_text, text, "x"))


@st.composite
def records_with_a_surrogate(draw):
    """JSON-lines records, one response of one record holding a lone surrogate (or in its context)."""
    records = draw(
        st.lists(
            st.fixed_dictionaries(
                {"responses": st.lists(nonblank_text, min_size=1, max_size=3)},
                optional={
                    "context": st.one_of(
                        nonblank_text, st.lists(nonblank_text, min_size=1, max_size=2)
                    )
                },
            ),
            min_size=1,
            max_size=4,
        )
    )
    line = draw(st.integers(0, len(records) - 1))
    bad, position, char = draw(with_lone_surrogate())
    key = draw(st.sampled_from(["responses", "context"]))
    if key == "context":
        records[line]["context"] = [bad]
        item = 0
    else:
        item = draw(st.integers(0, len(records[line]["responses"]) - 1))
        records[line]["responses"][item] = bad
    return records, line, key, item, position, char


@covers("read_response_sets")
@given(case=records_with_a_surrogate(), file_format=st.sampled_from(["jsonl", "json"]))
def test_the_reader_names_file_line_key_and_item_of_a_lone_surrogate(case, file_format):
    records, line, key, item, position, char = case
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"sets.{file_format}"
        if file_format == "jsonl":
            path.write_text(
                "".join(json.dumps(record) + "\n" for record in records), encoding="utf-8"
            )
        else:  # one element per line inside the array
            path.write_text(
                "[\n" + ",\n".join(json.dumps(record) for record in records) + "\n]\n",
                encoding="utf-8",
            )
        result = outcome(io.read_response_sets, path)
        assert refused(result), result
        number = line + 1 if file_format == "jsonl" else line + 2
        expected = re.escape(
            f'{path}:{number}: "{key}"[{item}] holds a lone surrogate (U+{ord(char):04X}) at character '
            f"{position}: not valid Unicode"
        )
        assert re.match(expected, str(result.error)), str(result.error)
        # the same file without the surrogate reads back as written
        for record in records:
            record["responses"] = [text.replace(char, "") for text in record["responses"]]
            if isinstance(record.get("context"), list):
                record["context"] = [text.replace(char, "") or "x" for text in record["context"]]
        path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
        read = io.read_response_sets(path, "jsonl")
        assert [response_set.responses for response_set in read] == [
            record["responses"] for record in records
        ]


#: What a broken tokenizer may return for one text, and the error type that must come back.
junk_output = st.one_of(
    st.text(max_size=5).map(lambda value: (value, TypeError)),
    st.lists(
        st.one_of(st.integers(), st.none(), st.binary(max_size=3), st.floats()),
        min_size=1,
        max_size=3,
    ).map(lambda value: (value, TypeError)),
    st.lists(st.just(""), min_size=1, max_size=2).map(lambda value: (["ok"] + value, ValueError)),
    junk.filter(lambda value: not isinstance(value, tuple)).map(lambda value: (value, TypeError)),
)
#: The metrics that take ``tokenizer=``.
TOKENIZER_CALLS = {
    "distinct_n": lambda c, t: lexical.distinct_n(c, tokenizer=t),
    "entropy_n": lambda c, t: lexical.entropy_n(c, tokenizer=t),
    "averaged_distinct_n": lambda c, t: lexical.averaged_distinct_n(c, tokenizer=t),
    "ngram_cosine_diversity": lambda c, t: lexical.ngram_cosine_diversity(c, tokenizer=t),
    "self_bleu": lambda c, t: lexical.self_bleu(c, tokenizer=t),
    "lf": lambda c, t: lexical.lf(c, tokenizer=t),
    "set_lexical_diversity": lambda c, t: lexical.set_lexical_diversity(_sets(c), tokenizer=t),
    "expectation_adjusted_distinct": lambda c, t: ead.expectation_adjusted_distinct(
        c, vocab_size=9, tokenizer=t
    ),
}


@covers(*TOKENIZER_CALLS, "get_tokenizer")
@given(
    corpus=st.lists(nonblank_text, min_size=2, max_size=5, unique=True),
    name=st.sampled_from(sorted(TOKENIZER_CALLS)),
    output=junk_output,
    victim=st.integers(0, 4),
)
def test_a_tokenizer_returning_junk_for_one_text_is_refused_naming_tokenizer(
    corpus, name, output, victim
):
    value, error_type = output
    target = corpus[victim % len(corpus)]

    def tokenizer(text):
        return value if text == target else text.split() or ["x"]

    result = outcome(TOKENIZER_CALLS[name], corpus, tokenizer)
    assert refused(result) and isinstance(result.error, error_type), result
    assert str(result.error).startswith("`tokenizer` "), str(result.error)
    well_behaved = outcome(TOKENIZER_CALLS[name], corpus, lambda text: text.split() or ["x"])
    assert not refused(well_behaved) and all_finite(well_behaved) is None
