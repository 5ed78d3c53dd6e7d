"""Polar echo questions (Sato et al. 2022, App. A): the rewriting rules on the paper's examples
(Table 1, Table 4, Table 7) and the MultiNLI builder on a small synthetic file in the real format.

A lexicon tagger stands in for spaCy (not installable offline with its en_core_web_sm model):
it gives Penn Treebank tags, lemmas and rough dependency labels, which is all the rules read.
The filters and the selection follow the authors' released code
(shiki-sato/nbest-contradiction-analysis: src/make_question_for_mnli.py,
src/transform_negative_for_mnli.py, construct_yesno_dataset.ipynb).
"""

from __future__ import annotations

import json
import re
import sys

import pytest

from dialeval.datasets_scripts import prepare
from dialeval.datasets_scripts._sources import SourceNotAvailableError
from dialeval.datasets_scripts.polar_questions import (
    MissingDependencyLabels,
    PolarQuestions,
    SpacyTagger,
    TaggedToken,
    TaggerNotAvailableError,
    Unrewritable,
    answer_sentence,
    build_polar_question_sets,
    history_utterance,
    polar_question,
    premise_skip_reason,
    skip_reason,
)

LEXICON = {
    # pronouns
    **{word: ("PRP", word) for word in ("i", "you", "we", "she", "he", "it", "me", "us", "they")},
    **{word: ("PRP$", word) for word in ("my", "your", "our", "her", "his")},
    # be / have / do / modals
    "'m": ("VBP", "be"),
    "am": ("VBP", "be"),
    "are": ("VBP", "be"),
    "'re": ("VBP", "be"),
    "is": ("VBZ", "be"),
    "'s": ("VBZ", "be"),
    "was": ("VBD", "be"),
    "were": ("VBD", "be"),
    "been": ("VBN", "be"),
    "have": ("VBP", "have"),
    "has": ("VBZ", "have"),
    "'ve": ("VBP", "have"),
    "had": ("VBD", "have"),
    "do": ("VBP", "do"),
    "did": ("VBD", "do"),
    "n't": ("RB", "not"),
    "not": ("RB", "not"),
    "can": ("MD", "can"),
    "ca": ("MD", "can"),
    "will": ("MD", "will"),
    "may": ("MD", "may"),
    "'ll": ("MD", "will"),
    # lexical verbs
    "made": ("VBD", "make"),
    "likes": ("VBZ", "like"),
    "like": ("VBP", "like"),
    "call": ("VBP", "call"),
    "fix": ("VB", "fix"),
    "buy": ("VB", "buy"),
    "think": ("VBP", "think"),
    "lived": ("VBD", "live"),
    "went": ("VBD", "go"),
    "want": ("VBP", "want"),
    "eat": ("VBP", "eat"),
    "said": ("VBD", "say"),
    "go": ("VB", "go"),
    # the rest
    "in": ("IN", "in"),
    "at": ("IN", "at"),
    "for": ("IN", "for"),
    "to": ("TO", "to"),
    "a": ("DT", "a"),
    "the": ("DT", "the"),
    "and": ("CC", "and"),
    "but": ("CC", "but"),
    "there": ("RB", "there"),
    "here": ("RB", "here"),
    "always": ("RB", "always"),
    "maybe": ("RB", "maybe"),
    "well": ("UH", "well"),
    "yeah": ("UH", "yeah"),
    "uh": ("UH", "uh"),
    "desperate": ("JJ", "desperate"),
    "red": ("JJ", "red"),
    "right": ("JJ", "right"),
    "never": ("RB", "never"),
    "very": ("RB", "very"),
    "now": ("RB", "now"),
    "mostly": ("RB", "mostly"),
    ".": (".", "."),
    ",": (",", ","),
    "?": (".", "?"),
    "!": (".", "!"),
    '"': ("``", '"'),
}
_TOKEN = re.compile(r"\w+(?=n't)|n't|'(?:m|re|s|ve|ll|d)\b|\w+|[^\w\s]")
NOUNS = {"NN", "NNS", "NNP", "NNPS"}
FINITE = {"VB", "VBP", "VBZ", "VBD", "MD"}


def dependency_labels(tags: list[str]) -> list[str]:
    """A rough parse, enough for the rules: the head noun or pronoun of a phrase after a preposition
    is a pobj, one before the first verb (or right before any verb) a subject, other ones dobj."""
    verb = next((i for i, tag in enumerate(tags) if tag in FINITE), len(tags))
    labels = []
    for i, tag in enumerate(tags):
        following = tags[i + 1] if i + 1 < len(tags) else None
        if tag in FINITE or tag.startswith("VB"):
            labels.append("ROOT" if i == verb else "aux")
        elif tag == "EX":
            labels.append("expl")
        elif tag in NOUNS | {"PRP"}:
            if tag != "PRP" and following in NOUNS:
                labels.append("compound")
            else:
                back = i - 1
                while back >= 0 and (
                    tags[back] in {"DT", "PRP$", "JJ", "CD"} or labels[back] == "compound"
                ):
                    back -= 1
                if back >= 0 and tags[back] in {"IN", "TO"}:
                    labels.append("pobj")
                else:
                    labels.append("nsubj" if i < verb or following in FINITE else "dobj")
        elif tag in {".", ",", ":", "``"}:
            labels.append("punct")
        else:
            labels.append("dep")
    return labels


def lexicon_tagger(text: str) -> list[TaggedToken]:
    """Tokenizes like spaCy (clitics split off), tags from LEXICON (unknown words NN/NNP) and
    labels dependencies roughly (:func:`dependency_labels`)."""
    matches = list(_TOKEN.finditer(text))
    words, tags, lemmas, spaces = [], [], [], []
    for index, match in enumerate(matches):
        word = match.group()
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        tag, lemma = LEXICON.get(
            word.lower(), ("NNP" if word[:1].isupper() else "NN", word.lower())
        )
        (
            words.append(word),
            tags.append(tag),
            lemmas.append(lemma),
            spaces.append(text[match.end() : end]),
        )
    return [
        TaggedToken(*fields) for fields in zip(words, tags, lemmas, spaces, dependency_labels(tags))
    ]


def question(hypothesis: str, negative: bool = False) -> str:
    return polar_question(lexicon_tagger(hypothesis), negative=negative)


# --- the rewriting rules -------------------------------------------------------------------------


def test_table1_entq_and_cntq():
    assert history_utterance("yeah i'm in North Carolina") == "Yeah I'm in North Carolina."
    assert question("I'm in North Carolina.") == "Are you in North Carolina?"
    assert question("I'm in South Carolina.", negative=True) == "Aren't you in South Carolina?"


def test_table7_four_questions_and_responses():
    entailed, contradicted = (
        lexicon_tagger("I'm in North Carolina."),
        lexicon_tagger("I'm in South Carolina."),
    )
    assert polar_question(entailed) == "Are you in North Carolina?"  # PositiveQ1
    assert polar_question(contradicted) == "Are you in South Carolina?"  # PositiveQ2
    assert polar_question(entailed, negative=True) == "Aren't you in North Carolina?"  # NegativeQ1
    # NegativeQ2
    assert polar_question(contradicted, negative=True) == "Aren't you in South Carolina?"
    assert answer_sentence(entailed, "Yes") == "Yes, I'm in North Carolina."
    assert answer_sentence(contradicted, "No") == "No, I'm in South Carolina."


def test_table4_messages():
    # "we" -> "you" and do-support in the negative form; "was" agrees with the swapped subject.
    assert question("We always call it Coke.", negative=True) == "Don't you always call it Coke?"
    assert (
        question("I was desperate to buy a house.", negative=True)
        == "Weren't you desperate to buy a house?"
    )


@pytest.mark.parametrize(
    ("hypothesis", "expected"),
    [
        (
            "I made a cake for my sister.",
            "Did you make a cake for your sister?",
        ),  # VBD -> Did + base form
        ("She likes you.", "Does she like me?"),  # VBZ -> Does; object "you" -> "me"
        ("You were at home.", "Was I at home?"),  # subject "you" -> "I", "were" agrees
        ("You have a dog.", "Do I have a dog?"),  # main-verb "have": do-support
        ("I have been to Paris.", "Have you been to Paris?"),  # perfect "have" is fronted
        (
            "She's been to Paris.",
            "Has she been to Paris?",
        ),  # 's before "been" is "has", not "is" (authors' rule)
        ("We can fix you.", "Can you fix me?"),  # object "you" (dobj) -> "me"
        ("We can fix it.", "Can you fix it?"),  # modal fronted
        (
            "I think I'm right.",
            "Do you think you're right?",
        ),  # inner "'m" agrees with the swapped "you"
        ("The car is red.", "Is the car red?"),  # first word lower-cased
        (
            "John likes my car",
            "Does John like your car?",
        ),  # proper noun kept; no final punctuation -> "?"
    ],
)
def test_rewriting_rules(hypothesis, expected):
    assert question(hypothesis) == expected


@pytest.mark.parametrize(
    ("hypothesis", "reason"),
    [
        ("I like tea and coffee.", "coordination (CC)"),
        ("I didn't call it soda.", "negation"),
        ("I never went there.", "negation"),
        ("Yeah, I went there.", "complex syntax (comma)"),
        ("A red car.", "no finite verb"),
        ("I went there. I lived there.", "more than one sentence"),
    ],
)
def test_skipped_hypotheses_say_why(hypothesis, reason):
    with pytest.raises(Unrewritable) as caught:
        question(hypothesis)
    assert caught.value.reason == reason


def test_negative_form_needs_a_contractible_auxiliary():
    assert question("I may go.") == "May you go?"
    with pytest.raises(Unrewritable, match="no negative contraction of 'may'"):
        question("I may go.", negative=True)


LONG = (
    "I went to the big red house of my old friend John in the small town near the river for a very long visit "
    "with his two dogs on a sunny day."
)  # 32 words


@pytest.mark.parametrize(
    ("hypothesis", "reason"),
    [
        # Each of these rewrites into an ungrammatical question without the authors' filter.
        ("Maybe he likes it.", "sentence-initial RB"),  # not "Does maybe he like it?"
        ("In Texas you eat beef.", "sentence-initial IN"),  # not "Do in Texas I eat beef?"
        ("Well I like it.", "sentence-initial UH"),
        ("Went to Paris.", "sentence-initial VBD"),
        (
            "My sister she likes it.",
            "more than one subject before the verb",
        ),  # "Does your sister she like it?"
        ("I lived there.", "here/there"),
        ("He is here.", "here/there"),
        (LONG, "longer than 30 words"),
    ],
)
def test_filters_of_the_authors_code(hypothesis, reason):
    assert len(lexicon_tagger(hypothesis)) > 0
    assert skip_reason(lexicon_tagger(hypothesis)) == reason
    with pytest.raises(Unrewritable) as caught:
        question(hypothesis)
    assert caught.value.reason == reason


def test_question_over_30_words_is_skipped():
    # 29 words and a full stop: the hypothesis passes, its question ("Did" + 29 + "?") has 31.
    hypothesis = "I made " + " ".join(["cake"] * 27) + "."
    assert skip_reason(lexicon_tagger(hypothesis)) is None
    with pytest.raises(Unrewritable, match="question longer than 30 words"):
        question(hypothesis)
    assert question("I made " + " ".join(["cake"] * 26) + ".").startswith("Did you make cake")


@pytest.mark.parametrize(
    ("premise", "reason"),
    [
        ("yeah in Texas mostly", "premise without a subject"),
        ("did i go there?", "premise is a question"),
        ('he said " go " to me', "premise with quotes"),
        (
            "i went " + " ".join(f"w{n}" for n in range(28)),
            "premise longer than 30 tokens",
        ),  # 30 words and the full stop
        ("i i went home", "premise with a repeated word or phrase"),
        ("you know you know i went home", "premise with a repeated word or phrase"),
        ("uh i went to the the store", "premise with a repeated word or phrase"),
    ],
)
def test_premise_filters_of_the_authors_code(premise, reason):
    assert premise_skip_reason(lexicon_tagger(premise)) == reason


def test_premises_that_pass():
    # 29 words and the full stop; "yeah yeah": the authors' string replacement drops one "yeah" only.
    for premise in (
        "yeah i'm in North Carolina",
        "i went " + " ".join(f"w{n}" for n in range(27)),
        "yeah yeah i went home",
    ):
        assert premise_skip_reason(lexicon_tagger(premise)) is None, premise


def test_a_tagger_without_dependency_labels_is_refused():
    bare = [
        TaggedToken(t.text, t.tag, t.lemma, t.whitespace)
        for t in lexicon_tagger("I'm in North Carolina.")
    ]
    with pytest.raises(MissingDependencyLabels, match="dependency labels"):
        polar_question(bare)


def test_spacy_tagger_error_says_how_to_install():
    try:
        import spacy  # noqa: F401
    except ImportError:
        with pytest.raises(TaggerNotAvailableError, match="en_core_web_sm"):
            SpacyTagger()("I'm here.")
    else:
        pytest.skip("spaCy is installed here; the missing-tagger message is not reachable")


# --- the builder -----------------------------------------------------------------------------------

# In file order. Paired premises (both hypotheses rewrite in both forms) go to unlikelihood
# training under the authors' selection; ENTQ / CNTQ take the unpaired ones.
PREMISES = {
    "p1": ("yeah i'm in North Carolina", "I'm in North Carolina.", "I'm in South Carolina."),
    "u1": (
        "we lived in Texas for years",
        "We lived in Texas.",
        "We never lived in Texas.",
    ),  # contradiction: negation
    "p2": (
        "i made a cake for my sister",
        "I made a cake for my sister.",
        "I made a cake for my dog.",
    ),
    "u2": (
        "she likes her car a lot",
        "She likes her car and her dog.",
        "She likes her dog.",
    ),  # entailment: CC
    "p3": ("we call it Coke mostly", "We call it Coke.", "We call it soda."),
    "x1": ("i i went to Paris", "I went to Paris.", "I went to Rome."),  # premise: repeated word
    "u3": (
        "uh i lived in Ohio for years",
        "I lived in Ohio.",
        "Maybe I lived in Utah.",
    ),  # contradiction: initial RB
    "p6": (
        "i may go to Paris",
        "I may go to Paris.",
        "I may go to Rome.",
    ),  # "may": no negative form, both dropped
    "x2": (
        "yeah in Texas mostly",
        "We lived in Texas.",
        "We lived in Ohio.",
    ),  # premise: no subject
    "u4": (
        "he said i went to Rome",
        "He thinks I went to Rome.",
        "I went to Oslo.",
    ),  # entailment: 2 subjects*
    "u5": ("my dog likes you a lot", "My dog likes you.", "My dog likes cats."),
    "u6": ("i went to Lima for work", "I went to Lima.", "I went to Peru."),
}
# * "thinks" is not in the lexicon (tagged NN), so "went" is the first verb, with subjects before it.
# u5 and u6 have a row of one label only, so they are unpaired.
UNPAIRED_ONLY = {"u5": "entailment", "u6": "contradiction"}
MORE_PAIRED = [f"City{n}" for n in range(7)]  # p7..p13: "i'm in CityN now" with both hypotheses


def mnli_line(pair_id, prompt_id, genre, label, premise, hypothesis) -> str:
    # The released fields (parses abbreviated): the builder must read past the ones it does not use.
    return json.dumps(
        {
            "annotator_labels": [label],
            "genre": genre,
            "gold_label": label,
            "pairID": pair_id,
            "promptID": prompt_id,
            "sentence1": premise,
            "sentence1_binary_parse": "( x )",
            "sentence1_parse": "(ROOT x)",
            "sentence2": hypothesis,
            "sentence2_binary_parse": "( y )",
            "sentence2_parse": "(ROOT y)",
        }
    )


def mnli_lines() -> list[str]:
    rows = dict(PREMISES)
    for n, city in enumerate(MORE_PAIRED, start=7):
        rows[f"p{n}"] = (f"i'm in {city} now", f"I'm in {city}.", f"I'm in Old{city}.")
    lines = []
    for prompt_id, (premise, entailed, contradicted) in rows.items():
        if UNPAIRED_ONLY.get(prompt_id, "entailment") == "entailment":
            lines.append(
                mnli_line(f"{prompt_id}e", prompt_id, "telephone", "entailment", premise, entailed)
            )
        lines.append(
            mnli_line(
                f"{prompt_id}n",
                prompt_id,
                "telephone",
                "neutral",
                premise,
                "I like tea and coffee.",
            )
        )
        if UNPAIRED_ONLY.get(prompt_id, "contradiction") == "contradiction":
            lines.append(
                mnli_line(
                    f"{prompt_id}c", prompt_id, "telephone", "contradiction", premise, contradicted
                )
            )
    lines.append(mnli_line("f1e", "f1", "fiction", "entailment", "he went home", "He went home."))
    return lines


@pytest.fixture()
def mnli_dir(tmp_path):
    folder = tmp_path / "release" / "multinli_1.0"
    folder.mkdir(parents=True)
    (folder / "multinli_1.0_train.jsonl").write_text(
        "\n".join(mnli_lines()) + "\n", encoding="utf-8"
    )
    return tmp_path / "release"


def build(cache_dir, **kwargs):
    """Built from the extracted file, which has no published digest: unchecked unless a test says otherwise."""
    kwargs.setdefault("verify_checksums", False)
    builder = PolarQuestions(cache_dir=str(cache_dir), tagger=lexicon_tagger, **kwargs)
    prepare(builder)
    return builder.as_dataset()


PAIRED = ["p1", "p2", "p3", *(f"p{n}" for n in range(7, 14))]  # file order


def test_authors_selection_takes_unpaired_premises_in_file_order(mnli_dir, tmp_path):
    """construct_yesno_dataset.ipynb: paired premises go to unlikelihood training; ENTQ / CNTQ are
    the first unpaired pairs in file order, so they never share a premise."""
    entq = build(tmp_path / "a", config_name="entq", data_dir=str(mnli_dir), num_inputs=3)["test"]
    cntq = build(tmp_path / "b", config_name="cntq", data_dir=str(mnli_dir), num_inputs=3)["test"]
    assert entq["id"] == ["u1e", "u3e", "u5e"]
    assert cntq["id"] == ["u2c", "u4c", "u6c"]
    assert not set(entq["prompt_id"]) & set(cntq["prompt_id"])
    assert set(entq["expected_answer"]) == {"yes"} and set(cntq["expected_answer"]) == {"no"}
    assert set(entq["input_type"]) == {"ENTQ"} and set(cntq["input_type"]) == {"CNTQ"}
    by_id = {record["id"]: record for record in list(entq) + list(cntq)}
    assert (by_id["u1e"]["history"], by_id["u1e"]["message"]) == (
        "We lived in Texas for years.",
        "Did you live in Texas?",
    )
    assert (by_id["u6c"]["history"], by_id["u6c"]["message"]) == (
        "I went to Lima for work.",
        "Didn't you go to Peru?",
    )
    assert by_id["u5e"]["message"] == "Does your dog like me?"
    with pytest.raises(ValueError, match="only 3 entailment pairs .* unpaired"):
        build(tmp_path / "c", config_name="entq", data_dir=str(mnli_dir), num_inputs=4)


def test_authors_unlikelihood_split_is_by_premise_in_file_order(mnli_dir, tmp_path):
    splits = build(
        tmp_path, config_name="unlikelihood", data_dir=str(mnli_dir), num_unlikelihood_premises=10
    )
    train, validation = splits["train"], splits["validation"]
    # head -n 9 / the 10th paired premise (the notebook's 1,800 / 200 of 2,000), 4 samples each (Table 7).
    assert (
        list(dict.fromkeys(train["prompt_id"])) == PAIRED[:9]
        and validation["prompt_id"] == ["p13"] * 4
    )
    assert train["question_type"][:4] == ["PositiveQ1", "PositiveQ2", "NegativeQ1", "NegativeQ2"]
    first = dict(zip(train["question_type"][:4], train.select(range(4))))
    assert first["PositiveQ1"]["message"] == "Are you in North Carolina?"
    assert first["NegativeQ2"]["message"] == "Aren't you in South Carolina?"
    assert first["NegativeQ2"]["gold_response"] == "No, I'm in North Carolina."
    assert first["NegativeQ2"]["negative_response"] == "Yes, I'm in South Carolina."
    with pytest.raises(ValueError, match="only 10 telephone premises"):
        build(
            tmp_path / "more",
            config_name="unlikelihood",
            data_dir=str(mnli_dir),
            num_unlikelihood_premises=11,
        )


def test_shuffled_selection_is_seeded_and_only_telephone(mnli_dir, tmp_path):
    from dialeval.datasets_scripts.polar_questions import read_multinli

    records = read_multinli(str(mnli_dir / "multinli_1.0" / "multinli_1.0_train.jsonl"))
    options = {
        "num_inputs": 14,
        "num_unlikelihood_premises": 1,
        "configs": ("entq",),
        "selection": "shuffled",
    }
    first = build_polar_question_sets(records, lexicon_tagger, seed=1, **options)
    again = build_polar_question_sets(records, lexicon_tagger, seed=1, **options)
    other = build_polar_question_sets(records, lexicon_tagger, seed=2, **options)
    assert first == again
    ids = [item["id"] for item in first["entq"]]
    # Every rewritable telephone entailment (a paired one too), none from fiction or a filtered premise.
    assert sorted(ids) == sorted([f"{p}e" for p in PAIRED] + ["p6e", "u1e", "u3e", "u5e"])
    assert ids != [item["id"] for item in other["entq"]]  # another seed, another order
    with pytest.raises(ValueError, match="`selection`"):
        build_polar_question_sets(records, lexicon_tagger, selection="random")


def test_shuffled_unlikelihood_avoids_test_premises(mnli_dir, tmp_path):
    kwargs = {"data_dir": str(mnli_dir), "selection": "shuffled", "num_inputs": 2}
    splits = build(tmp_path, config_name="unlikelihood", num_unlikelihood_premises=3, **kwargs)
    train, validation = splits["train"], splits["validation"]
    assert (len(train), len(validation)) == (11, 1)  # 3 premises x 4 questions, 9:1 at random
    samples = list(train) + list(validation)
    entq = build(tmp_path / "e", config_name="entq", **kwargs)["test"]
    cntq = build(tmp_path / "c", config_name="cntq", **kwargs)["test"]
    assert not (
        {s["prompt_id"] for s in samples} & (set(entq["prompt_id"]) | set(cntq["prompt_id"]))
    )
    # no negative form of "may"; filtered premises
    assert not {"p6", "x1", "x2"} & {s["prompt_id"] for s in samples}


def test_malformed_record_names_the_line(tmp_path):
    (tmp_path / "multinli_1.0_train.jsonl").write_text(
        json.dumps({"genre": "telephone"}) + "\n", encoding="utf-8"
    )
    with pytest.raises(ValueError, match=r"line 1: missing MultiNLI field"):
        build(tmp_path / "cache", config_name="entq", data_dir=str(tmp_path))


def test_given_sha256_is_checked(mnli_dir, tmp_path):
    path = mnli_dir / "multinli_1.0" / "multinli_1.0_train.jsonl"
    with pytest.raises(ValueError, match="is not the given `sha256`"):
        build(
            tmp_path,
            config_name="entq",
            source_path=str(path),
            num_inputs=2,
            sha256="0" * 64,
            verify_checksums=True,
        )


def test_offline_without_data_dir_says_where_to_get_it(tmp_path):
    with pytest.raises(SourceNotAvailableError, match="multinli_1.0.zip"):
        build(tmp_path, config_name="entq")


def test_builder_without_a_tagger_says_how_to_get_spacy(mnli_dir, tmp_path):
    try:
        import spacy  # noqa: F401
    except ImportError:
        builder = PolarQuestions(
            cache_dir=str(tmp_path),
            config_name="entq",
            data_dir=str(mnli_dir),
            num_inputs=2,
            verify_checksums=False,
        )
        with pytest.raises(TaggerNotAvailableError, match="pip install spacy"):
            prepare(builder)
    else:
        pytest.skip("spaCy is installed here; the missing-tagger message is not reachable")


class _SpacyWithoutItsPipeline:
    """spaCy installed but not ``en_core_web_sm``: spacy.load fails as it does then."""

    @staticmethod
    def load(name, **kwargs):
        raise OSError(f"[E050] Can't find model {name!r}.")


@pytest.mark.parametrize(
    "spacy, advice",
    [
        (None, r"pip install spacy && python -m spacy download en_core_web_sm"),
        (_SpacyWithoutItsPipeline, r"run `python -m spacy download en_core_web_sm`"),
    ],
)
def test_export_dataset_without_spacy_is_one_line_and_exit_2(
    mnli_dir, tmp_path, monkeypatch, capsys, spacy, advice
):
    from dialeval.cli.main import main

    monkeypatch.setitem(sys.modules, "spacy", spacy)  # None: `import spacy` raises ImportError
    rc = main(
        [
            "export-dataset",
            "polar_questions",
            "--to",
            str(tmp_path / "export"),
            "--config",
            "entq",
            "--data-dir",
            str(mnli_dir),
            "--no-verify",
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
    )
    stderr = capsys.readouterr().err
    assert rc == 2
    assert stderr.startswith("dialeval export-dataset: error: ") and stderr.count("\n") == 1
    assert re.search(advice, stderr) and "Traceback" not in stderr


def _zip_release(folder, mnli_dir):
    """The release's layout: multinli_1.0.zip holding multinli_1.0/multinli_1.0_train.jsonl."""
    import zipfile

    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / "multinli_1.0.zip", "w") as archive:
        archive.write(
            mnli_dir / "multinli_1.0" / "multinli_1.0_train.jsonl",
            "multinli_1.0/multinli_1.0_train.jsonl",
        )
    return folder


def test_the_archive_is_checked_against_its_published_sha256(mnli_dir, tmp_path):
    """The README says every source is checked: MultiNLI's archive has a published digest."""
    from dialeval.datasets_scripts.polar_questions.polar_questions import (
        MULTINLI_ARCHIVE,
        MULTINLI_SHA256,
    )

    # The digest huggingface/datasets and NLIDatasets.jl record for the NYU archive.
    assert MULTINLI_ARCHIVE.sha256 == (MULTINLI_SHA256,)
    assert MULTINLI_SHA256 == "049f507b9e36b1fcb756cfd5aeb3b7a0cfcb84bf023793652987f7e7e0957822"
    release = _zip_release(tmp_path / "zipped", mnli_dir)
    with pytest.raises(
        ValueError,
        match=r"multinli_1.0.zip: sha256 [0-9a-f]{64} is not the released multinli_1.0.zip",
    ):
        build(
            tmp_path / "cache",
            config_name="entq",
            data_dir=str(release),
            num_inputs=3,
            verify_checksums=True,
        )
    entq = build(tmp_path / "cache2", config_name="entq", data_dir=str(release), num_inputs=3)[
        "test"
    ]
    assert entq["id"] == ["u1e", "u3e", "u5e"]  # the same records as from the extracted file


def test_an_extracted_file_needs_its_digest_or_no_verification(mnli_dir, tmp_path):
    from dialeval.datasets_scripts._sources import sha256_of

    path = mnli_dir / "multinli_1.0" / "multinli_1.0_train.jsonl"
    for where in ({"data_dir": str(mnli_dir)}, {"source_path": str(path)}):
        with pytest.raises(
            ValueError,
            match=r"only the sha256 of multinli_1.0.zip is published.*`sha256=`.*verify_checksums=False",
        ):
            build(
                tmp_path / "cache", config_name="entq", num_inputs=3, verify_checksums=True, **where
            )
    checked = build(
        tmp_path / "cache2",
        config_name="entq",
        data_dir=str(mnli_dir),
        num_inputs=3,
        verify_checksums=True,
        sha256=sha256_of(path),
    )["test"]
    assert checked["id"] == ["u1e", "u3e", "u5e"]


def test_an_archive_without_the_split_file_is_named(mnli_dir, tmp_path):
    import zipfile

    (tmp_path / "zipped").mkdir()
    with zipfile.ZipFile(tmp_path / "zipped" / "multinli_1.0.zip", "w") as archive:
        archive.writestr("multinli_1.0/README.txt", "no data here")
    with pytest.raises(
        ValueError, match=r"multinli_1.0.zip: no multinli_1.0/multinli_1.0_train.jsonl in it"
    ):
        build(
            tmp_path / "cache", config_name="entq", data_dir=str(tmp_path / "zipped"), num_inputs=3
        )
