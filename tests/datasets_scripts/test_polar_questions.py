"""Polar echo questions (Sato et al. 2022, App. A): the rewriting rules on the paper's examples
(Table 1, Table 4, Table 7) and the MultiNLI builder on a small synthetic file in the real format.

A lexicon tagger stands in for spaCy (not installable offline with its en_core_web_sm model):
it gives Penn Treebank tags and lemmas, which is all the rules read.
"""
from __future__ import annotations

import json
import re

import pytest

from dialeval.datasets_scripts import prepare
from dialeval.datasets_scripts._sources import SourceNotAvailableError
from dialeval.datasets_scripts.polar_questions import (
    PolarQuestions,
    SpacyTagger,
    TaggedToken,
    TaggerNotAvailableError,
    Unrewritable,
    answer_sentence,
    build_polar_question_sets,
    history_utterance,
    polar_question,
)

LEXICON = {
    # pronouns
    **{word: ("PRP", word) for word in ("i", "you", "we", "she", "he", "it", "me", "us", "they")},
    **{word: ("PRP$", word) for word in ("my", "your", "our", "her", "his")},
    # be / have / do / modals
    "'m": ("VBP", "be"), "am": ("VBP", "be"), "are": ("VBP", "be"), "'re": ("VBP", "be"), "is": ("VBZ", "be"),
    "'s": ("VBZ", "be"), "was": ("VBD", "be"), "were": ("VBD", "be"), "been": ("VBN", "be"),
    "have": ("VBP", "have"), "has": ("VBZ", "have"), "'ve": ("VBP", "have"), "had": ("VBD", "have"),
    "do": ("VBP", "do"), "did": ("VBD", "do"), "n't": ("RB", "not"), "not": ("RB", "not"),
    "can": ("MD", "can"), "ca": ("MD", "can"), "will": ("MD", "will"), "may": ("MD", "may"), "'ll": ("MD", "will"),
    # lexical verbs
    "made": ("VBD", "make"), "likes": ("VBZ", "like"), "like": ("VBP", "like"), "call": ("VBP", "call"),
    "fix": ("VB", "fix"), "buy": ("VB", "buy"), "think": ("VBP", "think"), "lived": ("VBD", "live"),
    "went": ("VBD", "go"), "want": ("VBP", "want"),
    # the rest
    "in": ("IN", "in"), "at": ("IN", "at"), "for": ("IN", "for"), "to": ("TO", "to"), "a": ("DT", "a"),
    "the": ("DT", "the"), "and": ("CC", "and"), "but": ("CC", "but"), "there": ("RB", "there"),
    "always": ("RB", "always"), "yeah": ("UH", "yeah"), "desperate": ("JJ", "desperate"), "red": ("JJ", "red"),
    "right": ("JJ", "right"), "never": ("RB", "never"),
    ".": (".", "."), ",": (",", ","), "?": (".", "?"), "!": (".", "!"),
}
_TOKEN = re.compile(r"\w+(?=n't)|n't|'(?:m|re|s|ve|ll|d)\b|\w+|[^\w\s]")


def lexicon_tagger(text: str) -> list[TaggedToken]:
    """Tokenizes like spaCy (clitics split off) and tags from LEXICON; unknown words are NN/NNP."""
    matches = list(_TOKEN.finditer(text))
    tokens = []
    for index, match in enumerate(matches):
        word = match.group()
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        tag, lemma = LEXICON.get(word.lower(), ("NNP" if word[:1].isupper() else "NN", word.lower()))
        tokens.append(TaggedToken(word, tag, lemma, text[match.end():end]))
    return tokens


def question(hypothesis: str, negative: bool = False) -> str:
    return polar_question(lexicon_tagger(hypothesis), negative=negative)


# --- the rewriting rules -------------------------------------------------------------------------


def test_table1_entq_and_cntq():
    assert history_utterance("yeah i'm in North Carolina") == "Yeah I'm in North Carolina."
    assert question("I'm in North Carolina.") == "Are you in North Carolina?"
    assert question("I'm in South Carolina.", negative=True) == "Aren't you in South Carolina?"


def test_table7_four_questions_and_responses():
    entailed, contradicted = lexicon_tagger("I'm in North Carolina."), lexicon_tagger("I'm in South Carolina.")
    assert polar_question(entailed) == "Are you in North Carolina?"  # PositiveQ1
    assert polar_question(contradicted) == "Are you in South Carolina?"  # PositiveQ2
    assert polar_question(entailed, negative=True) == "Aren't you in North Carolina?"  # NegativeQ1
    assert polar_question(contradicted, negative=True) == "Aren't you in South Carolina?"  # NegativeQ2
    assert answer_sentence(entailed, "Yes") == "Yes, I'm in North Carolina."
    assert answer_sentence(contradicted, "No") == "No, I'm in South Carolina."


def test_table4_messages():
    # "we" -> "you" and do-support in the negative form; "was" agrees with the swapped subject.
    assert question("We always call it Coke.", negative=True) == "Don't you always call it Coke?"
    assert question("I was desperate to buy a house.", negative=True) == "Weren't you desperate to buy a house?"


@pytest.mark.parametrize(("hypothesis", "expected"), [
    ("I made a cake for my sister.", "Did you make a cake for your sister?"),  # VBD -> Did + base form
    ("She likes you.", "Does she like me?"),  # VBZ -> Does; object "you" -> "me"
    ("You were at home.", "Was I at home?"),  # subject "you" -> "I", "were" agrees
    ("You have a dog.", "Do I have a dog?"),  # main-verb "have": do-support
    ("I have been there.", "Have you been there?"),  # perfect "have" is fronted
    ("We can fix it.", "Can you fix it?"),  # modal fronted
    ("I think I'm right.", "Do you think you're right?"),  # inner "'m" agrees with the swapped "you"
    ("The car is red.", "Is the car red?"),  # first word lower-cased
    ("John likes my car", "Does John like your car?"),  # proper noun kept; no final punctuation -> "?"
])
def test_rewriting_rules(hypothesis, expected):
    assert question(hypothesis) == expected


@pytest.mark.parametrize(("hypothesis", "reason"), [
    ("I like tea and coffee.", "coordination (CC)"),
    ("I didn't call it soda.", "negation"),
    ("I never went there.", "negation"),
    ("Yeah, I went there.", "complex syntax (comma)"),
    ("A red car.", "no finite verb"),
    ("I went there. I lived there.", "more than one sentence"),
])
def test_skipped_hypotheses_say_why(hypothesis, reason):
    with pytest.raises(Unrewritable) as caught:
        question(hypothesis)
    assert caught.value.reason == reason


def test_negative_form_needs_a_contractible_auxiliary():
    assert question("I may go.") == "May you go?"
    with pytest.raises(Unrewritable, match="no negative contraction of 'may'"):
        question("I may go.", negative=True)


def test_spacy_tagger_error_says_how_to_install():
    try:
        import spacy  # noqa: F401
    except ImportError:
        with pytest.raises(TaggerNotAvailableError, match="en_core_web_sm"):
            SpacyTagger()("I'm here.")
    else:
        pytest.skip("spaCy is installed here; the missing-tagger message is not reachable")


# --- the builder -----------------------------------------------------------------------------------

PREMISES = {
    "p1": ("yeah i'm in North Carolina", "I'm in North Carolina.", "I'm in South Carolina."),
    "p2": ("i made a cake for my sister", "I made a cake for my sister.", "I made a cake for my dog."),
    "p3": ("we call it Coke mostly", "We call it Coke.", "We call it soda."),
    "p4": ("she likes her car a lot", "She likes her car.", "She likes her dog."),
    "p5": ("uh i lived in Texas for years", "I lived in Texas.", "I lived in Ohio."),
    "p6": ("i may go to Paris", "I may go to Paris.", "I may go to Rome."),  # no negative form of "may"
}


def mnli_line(pair_id, prompt_id, genre, label, premise, hypothesis) -> str:
    # The released fields (parses abbreviated): the builder must read past the ones it does not use.
    return json.dumps({
        "annotator_labels": [label], "genre": genre, "gold_label": label, "pairID": pair_id,
        "promptID": prompt_id, "sentence1": premise, "sentence1_binary_parse": "( x )", "sentence1_parse": "(ROOT x)",
        "sentence2": hypothesis, "sentence2_binary_parse": "( y )", "sentence2_parse": "(ROOT y)",
    })


@pytest.fixture()
def mnli_dir(tmp_path):
    lines = []
    for prompt_id, (premise, entailed, contradicted) in PREMISES.items():
        lines.append(mnli_line(f"{prompt_id}e", prompt_id, "telephone", "entailment", premise, entailed))
        lines.append(mnli_line(f"{prompt_id}n", prompt_id, "telephone", "neutral", premise, "I like tea and coffee."))
        lines.append(mnli_line(f"{prompt_id}c", prompt_id, "telephone", "contradiction", premise, contradicted))
    lines.append(mnli_line("f1e", "f1", "fiction", "entailment", "he went home", "He went home."))
    folder = tmp_path / "release" / "multinli_1.0"
    folder.mkdir(parents=True)
    (folder / "multinli_1.0_train.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path / "release"


def build(cache_dir, **kwargs):
    builder = PolarQuestions(cache_dir=str(cache_dir), tagger=lexicon_tagger, **kwargs)
    prepare(builder)
    return builder.as_dataset()


def test_entq_and_cntq_records(mnli_dir, tmp_path):
    # Every telephone pair rewrites except p6's contradiction in the negative form ("may").
    entq = build(tmp_path / "a", config_name="entq", data_dir=str(mnli_dir), num_inputs=6)["test"]
    cntq = build(tmp_path / "b", config_name="cntq", data_dir=str(mnli_dir), num_inputs=5)["test"]
    assert (len(entq), len(cntq)) == (6, 5)
    assert set(entq["expected_answer"]) == {"yes"} and set(cntq["expected_answer"]) == {"no"}
    assert set(entq["input_type"]) == {"ENTQ"} and set(cntq["input_type"]) == {"CNTQ"}
    assert "p6c" not in cntq["id"]
    by_id = {record["id"]: record for record in list(entq) + list(cntq)}
    assert (by_id["p1e"]["history"], by_id["p1e"]["message"]) == ("Yeah I'm in North Carolina.", "Are you in North Carolina?")
    assert (by_id["p1c"]["history"], by_id["p1c"]["message"]) == ("Yeah I'm in North Carolina.", "Aren't you in South Carolina?")
    assert by_id["p2c"]["message"] == "Didn't you make a cake for your dog?"
    assert by_id["p5e"]["history"] == "Uh I lived in Texas for years."
    assert by_id["p3c"]["hypothesis"] == "We call it soda."


def test_selection_is_seeded_and_only_telephone(mnli_dir, tmp_path):
    from dialeval.datasets_scripts.polar_questions import read_multinli

    records = read_multinli(str(mnli_dir / "multinli_1.0" / "multinli_1.0_train.jsonl"))
    first = build_polar_question_sets(records, lexicon_tagger, num_inputs=6, num_unlikelihood_premises=1, seed=1, configs=("entq",))
    again = build_polar_question_sets(records, lexicon_tagger, num_inputs=6, num_unlikelihood_premises=1, seed=1, configs=("entq",))
    other = build_polar_question_sets(records, lexicon_tagger, num_inputs=6, num_unlikelihood_premises=1, seed=2, configs=("entq",))
    assert first == again
    ids = [item["id"] for item in first["entq"]]
    assert sorted(ids) == sorted(f"{p}e" for p in PREMISES)  # all six telephone entailments, no fiction
    assert ids != [item["id"] for item in other["entq"]]  # another seed, another order


def test_unlikelihood_config_matches_table7_and_avoids_test_premises(mnli_dir, tmp_path):
    splits = build(tmp_path, config_name="unlikelihood", data_dir=str(mnli_dir), num_inputs=2, num_unlikelihood_premises=3)
    train, validation = splits["train"], splits["validation"]
    assert (len(train), len(validation)) == (11, 1)  # 3 premises x 4 questions, 9:1
    samples = list(train) + list(validation)
    entq = build(tmp_path / "e", config_name="entq", data_dir=str(mnli_dir), num_inputs=2)["test"]
    cntq = build(tmp_path / "c", config_name="cntq", data_dir=str(mnli_dir), num_inputs=2)["test"]
    assert not ({s["prompt_id"] for s in samples} & (set(entq["prompt_id"]) | set(cntq["prompt_id"])))
    assert "p6" not in {s["prompt_id"] for s in samples}  # "may" has no negative question
    by_type = {}
    for sample in samples:
        by_type.setdefault(sample["prompt_id"], {})[sample["question_type"]] = sample
    assert all(set(four) == {"PositiveQ1", "PositiveQ2", "NegativeQ1", "NegativeQ2"} for four in by_type.values())
    for four in by_type.values():
        assert four["PositiveQ1"]["gold_response"].startswith("Yes, ") and four["PositiveQ1"]["negative_response"].startswith("No, ")
        assert four["NegativeQ2"]["gold_response"].startswith("No, ") and four["NegativeQ2"]["negative_response"].startswith("Yes, ")
        # Q1 and Q2 restate the same two hypotheses with the answers swapped (Table 7).
        assert four["PositiveQ1"]["gold_response"][5:] == four["PositiveQ2"]["gold_response"][4:]


def test_too_few_rewritable_pairs_is_an_error(mnli_dir, tmp_path):
    with pytest.raises(ValueError, match="only 6 entailment pairs"):
        build(tmp_path, config_name="entq", data_dir=str(mnli_dir), num_inputs=7)


def test_malformed_record_names_the_line(tmp_path):
    (tmp_path / "multinli_1.0_train.jsonl").write_text(json.dumps({"genre": "telephone"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 1: missing MultiNLI field"):
        build(tmp_path / "cache", config_name="entq", data_dir=str(tmp_path))


def test_given_sha256_is_checked(mnli_dir, tmp_path):
    path = mnli_dir / "multinli_1.0" / "multinli_1.0_train.jsonl"
    with pytest.raises(ValueError, match="is not the given `sha256`"):
        build(tmp_path, config_name="entq", source_path=str(path), num_inputs=2, sha256="0" * 64)


def test_offline_without_data_dir_says_where_to_get_it(tmp_path):
    with pytest.raises(SourceNotAvailableError, match="multinli_1.0.zip"):
        build(tmp_path, config_name="entq")


def test_builder_without_a_tagger_says_how_to_get_spacy(mnli_dir, tmp_path):
    try:
        import spacy  # noqa: F401
    except ImportError:
        builder = PolarQuestions(cache_dir=str(tmp_path), config_name="entq", data_dir=str(mnli_dir), num_inputs=2)
        with pytest.raises(TaggerNotAvailableError, match="pip install spacy"):
            prepare(builder)
    else:
        pytest.skip("spaCy is installed here; the missing-tagger message is not reachable")
