"""Part-of-speech template rate and templates per token: hand cases on the deterministic tagger,
equality with the ``diversity`` package's own functions, the default taggers faked at their
import, and the registry / job / meta-eval hooks on a machine without a tagger."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import evaluate
import pytest
from pos_tagging_fixtures import (
    lexicon_tagger,
    load_peer_templates,
    peer_get_pos,
    regex_sentence_splitter,
)

from dialeval.cli.evaluate_job import (
    EvaluationOptions,
    evaluate_corpus,
    evaluate_response_sets,
    planned_steps,
)
from dialeval.hub import ModelNotAvailableError
from dialeval.io import ResponseSet
from dialeval.metrics import pos_templates, registry
from dialeval.metrics.pos_templates import taggers

TAGGING = {"tagger": lexicon_tagger, "sentence_splitter": regex_sentence_splitter}
# Tags (lexicon_tagger): PRP VBP PRP VBZ DT JJ NN . / PRP VBP PRP VBZ DT NN NN . / DT .
TEXTS = ["I think it is a good idea.", "I think it is a bad plan.", "No."]
NO_MODELS = dict(
    sentence_models=[], nli_models=[], bertscore_models=[], cross_encoder_models=[], progress=False
)


# ---------------------------------------------------------------- hand-computed


def test_top_patterns_ties_in_first_seen_order_and_their_spans():
    templates = pos_templates.extract_templates(TEXTS, top_n=2, **TAGGING)
    # "PRP VBP PRP VBZ DT" occurs twice; every other 5-gram once: the first seen of them comes next.
    assert templates == {
        "PRP VBP PRP VBZ DT": ["I think it is a"],
        "VBP PRP VBZ DT JJ": ["think it is a good"],
    }
    assert list(pos_templates.extract_templates(TEXTS, n=2, top_n=3, **TAGGING)) == [
        "PRP VBP",
        "VBP PRP",
        "PRP VBZ",
    ]


def test_rate_and_per_token_by_hand():
    assert pos_templates.template_rate(TEXTS, top_n=2, **TAGGING) == pytest.approx(2 / 3)
    # text 1: both spans start in it (2 positions, 7 words); text 2: one (7 words); "No.": none.
    assert pos_templates.templates_per_token(TEXTS, top_n=2, **TAGGING) == pytest.approx(
        [2 / 7, 1 / 7, 0.0]
    )
    scores = pos_templates.pos_template_scores(TEXTS, top_n=2, **TAGGING)
    assert scores["template_rate"] == pytest.approx(2 / 3) and scores[
        "templates_per_token"
    ] == pytest.approx(1 / 7)
    assert (
        scores["scope"],
        scores["num_templates"],
        scores["num_template_spans"],
        scores["num_responses"],
    ) == ("corpus", 2, 2, 3)


def test_overlapping_starts_count_once_per_position_and_match_inside_words():
    # starts 0, 1, 3, 4
    assert pos_templates.templates_per_token(["ab ab ab"], {"X": ["ab ab", "b ab"]}) == [4 / 3]
    # positions 0 and 3
    assert pos_templates.templates_per_token(["ab ab"], {"X": ["ab"], "Y": ["ab ab"]}) == [1.0]
    # a substring, as the package
    assert pos_templates.template_rate(["bathe cat", "a dog"], {"X": ["he cat"]}) == 0.5


def test_templates_from_one_corpus_score_another():
    templates = pos_templates.extract_templates(TEXTS, top_n=2, **TAGGING)
    other = ["Well, I think it is a long story.", "Nothing to add."]
    assert pos_templates.template_rate(other, templates) == 0.5
    assert pos_templates.templates_per_token(other, templates) == [1 / 8, 0.0]


def test_joined_tokens_of_a_contraction_never_match_the_text():
    """spaCy-style tokens ("do", "n't") joined by " " are not in the text: faithful to the package."""
    texts = ["I don't know that.", "I don't know this."]
    templates = pos_templates.extract_templates(texts, n=3, top_n=1, **TAGGING)
    assert templates == {"PRP VBP RB": ["I do n't"]}
    assert pos_templates.template_rate(texts, templates) == 0.0


def test_per_set_scope_extracts_each_sets_own_templates():
    sets = [TEXTS, ["You can go there now.", "You can see them now.", "You can say it now."]]
    scores = pos_templates.pos_template_scores(sets, top_n=2, **TAGGING)
    assert scores["scope"] == "response_set" and scores["num_sets"] == 2
    for texts, row in zip(sets, scores["per_set"]):
        assert row["template_rate"] == pos_templates.template_rate(texts, top_n=2, **TAGGING)
        per_token = pos_templates.templates_per_token(texts, top_n=2, **TAGGING)
        assert row["templates_per_token"] == pytest.approx(sum(per_token) / len(per_token))
    # set 2's first two 5-grams (each seen once): "You can go there now" and "can go there now ." (never in a text)
    assert scores["template_rate"] == pytest.approx((2 / 3 + 1 / 3) / 2)
    shared = pos_templates.pos_template_scores(sets, templates={"X": ["You can"]})
    assert [row["template_rate"] for row in shared["per_set"]] == [0.0, 1.0]


def test_sets_are_tagged_together_in_chunks(monkeypatch):
    calls = []

    def counting(sentences):
        calls.append(len(sentences))
        return lexicon_tagger(sentences)

    monkeypatch.setattr("dialeval.metrics.pos_templates.templates.TAGGING_CHUNK", 4)
    sets = [TEXTS] * 5  # 3 sentences each
    scores = pos_templates.pos_template_scores(
        sets, top_n=2, tagger=counting, sentence_splitter=regex_sentence_splitter
    )
    # two sets (6 sentences) reach the chunk, each tagger call at most a chunk: 4 + 2, 4 + 2, then the last set
    assert (
        calls == [4, 2, 4, 2, 3]
        and [row["template_rate"] for row in scores["per_set"]] == [pytest.approx(2 / 3)] * 5
    )


def test_empty_texts_score_zero_when_allowed():
    assert pos_templates.templates_per_token(
        ["I think it is a good idea.", "", " "], {"X": ["think it"]}, allow_empty=True
    ) == [1 / 7, 0.0, 0.0]
    assert pos_templates.template_rate(["x y", "z"], {}) == 0.0  # no template: nothing matches


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: pos_templates.template_rate([], {"X": ["a"]}),
            r"`texts` must hold at least one response",
        ),
        (
            lambda: pos_templates.template_rate(["a", ""], {"X": ["a"]}),
            r"`texts\[1\]` is an empty string",
        ),
        (
            lambda: pos_templates.extract_templates(TEXTS, n=0, **TAGGING),
            r"`n` must be a positive int",
        ),
        (
            lambda: pos_templates.extract_templates(TEXTS, top_n="3", **TAGGING),
            r"`top_n` must be a positive int",
        ),
        (lambda: pos_templates.template_rate(TEXTS, "I think"), r"`templates` must be a dict"),
        (
            lambda: pos_templates.template_rate(TEXTS, {"X": "I think"}),
            r"`templates\['X'\]` must be a list or set",
        ),
        (lambda: pos_templates.template_rate(TEXTS, {"X": [""]}), r"`templates\['X'\]` holds ''"),
        (
            lambda: pos_templates.extract_templates(TEXTS, tagger="spacy"),
            r"`tagger` must be a callable",
        ),
        (
            lambda: pos_templates.extract_templates(
                TEXTS, tagger=lambda s: [], sentence_splitter=regex_sentence_splitter
            ),
            r"`tagger` must return one list of \(token, tag\) pairs per sentence",
        ),
        (
            lambda: pos_templates.extract_templates(
                TEXTS,
                tagger=lambda s: [[("a", "N N")]] * len(s),
                sentence_splitter=regex_sentence_splitter,
            ),
            r"`tagger` returned",
        ),
        (
            lambda: pos_templates.extract_templates(
                TEXTS, tagger=lexicon_tagger, sentence_splitter=lambda t: t
            ),
            r"`sentence_splitter` must return a list of strings",
        ),
        (
            lambda: pos_templates.pos_template_scores([["a"], "b"], {"X": ["a"]}),
            r"`predictions` mixes nesting levels",
        ),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ---------------------------------------------------------------- the default taggers


@pytest.fixture()
def nothing_installed(monkeypatch):
    """No spaCy model and no NLTK data, whatever this machine has."""
    import nltk

    real = taggers.importlib.util.find_spec
    for name in ("spacy", taggers.SPACY_MODEL):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(
        taggers.importlib.util,
        "find_spec",
        lambda name, package=None: (
            None if name in ("spacy", taggers.SPACY_MODEL) else real(name, package)
        ),
    )

    def missing(resource, *args, **kwargs):
        raise LookupError(resource)

    monkeypatch.setattr(nltk.data, "find", missing)


@pytest.fixture()
def punkt(monkeypatch):
    """NLTK's punkt data "installed": sent_tokenize is the regex splitter."""
    import nltk
    import nltk.tokenize

    monkeypatch.setattr(nltk.data, "find", lambda resource, *args, **kwargs: resource)
    monkeypatch.setattr(nltk.tokenize, "sent_tokenize", regex_sentence_splitter)


@pytest.fixture()
def fake_spacy(nothing_installed, punkt, monkeypatch):
    """A ``spacy`` whose ``load`` gives a pipeline tagging with lexicon_tagger; the calls it got."""
    calls = []

    class Pipeline:
        def pipe(self, texts, batch_size, n_process):
            calls.append(("pipe", batch_size, n_process))
            for pairs in lexicon_tagger(list(texts)):
                yield [types.SimpleNamespace(text=token, tag_=tag) for token, tag in pairs]

    def load(name, enable):
        calls.append(("load", name, tuple(enable)))
        return Pipeline()

    monkeypatch.setitem(sys.modules, "spacy", types.SimpleNamespace(load=load))
    monkeypatch.setitem(sys.modules, taggers.SPACY_MODEL, types.ModuleType(taggers.SPACY_MODEL))
    taggers._spacy_pipeline.cache_clear()
    yield calls
    taggers._spacy_pipeline.cache_clear()


def test_no_tagger_installed_says_how_to_get_one(nothing_installed):
    assert not pos_templates.tagger_available()
    with pytest.raises(
        pos_templates.TaggerNotAvailableError, match=r"python -m spacy download en_core_web_sm"
    ) as caught:
        pos_templates.template_rate(TEXTS)
    assert "nltk.downloader punkt_tab averaged_perceptron_tagger_eng" in str(caught.value)
    # the CLI's "skipped, not on this machine"
    assert isinstance(caught.value, ModelNotAvailableError)


def test_spacy_is_the_default_loaded_once_with_the_packages_components(fake_spacy):
    assert pos_templates.tagger_available() and isinstance(
        taggers.default_tagger(), pos_templates.SpacyTagger
    )
    expected = pos_templates.extract_templates(TEXTS, top_n=2, **TAGGING)
    assert pos_templates.extract_templates(TEXTS, top_n=2) == expected
    assert pos_templates.template_rate(TEXTS, top_n=2) == pytest.approx(2 / 3)
    assert [call for call in fake_spacy if call[0] == "load"] == [
        ("load", "en_core_web_sm", ("tok2vec", "tagger"))
    ]
    assert ("pipe", 1000, 1) in fake_spacy


def test_spacy_without_its_model_is_the_how_to(fake_spacy, monkeypatch):
    def cannot(name, enable):
        raise OSError("[E050] Can't find model 'en_core_web_sm'.")

    monkeypatch.setitem(sys.modules, "spacy", types.SimpleNamespace(load=cannot))
    with pytest.raises(pos_templates.TaggerNotAvailableError, match="E050.*spacy download"):
        pos_templates.template_rate(TEXTS)


def test_nltk_perceptron_when_spacy_is_absent(nothing_installed, punkt, monkeypatch):
    import nltk.tag

    class Perceptron:
        def tag(self, tokens):
            return [
                (token, tag)
                for token, tag in zip(tokens, [t for _, t in lexicon_tagger([" ".join(tokens)])[0]])
            ]

    monkeypatch.setattr(nltk.tag, "PerceptronTagger", Perceptron)
    taggers._nltk_perceptron.cache_clear()
    try:
        assert isinstance(taggers.default_tagger(), pos_templates.NLTKTagger)
        # NLTK's Treebank tokens ("do", "n't", "."), tagged by the fake perceptron
        assert pos_templates.NLTKTagger()(["I don't know."])[0] == [
            ("I", "PRP"),
            ("do", "VBP"),
            ("n't", "RB"),
            ("know", "VBP"),
            (".", "."),
        ]
        assert pos_templates.template_rate(TEXTS, top_n=2) == pytest.approx(2 / 3)
    finally:
        taggers._nltk_perceptron.cache_clear()


# ---------------------------------------------------------------- the registry, the job, meta-eval


def test_set_scorers_share_one_run_and_skip_without_a_tagger(nothing_installed):
    rate, per_token = (
        registry.set_scorer("template_rate"),
        registry.set_scorer("templates_per_token"),
    )
    assert rate.run is per_token.run and not rate.needs_model  # meta-eval computes both in one run
    with pytest.raises(ModelNotAvailableError, match="spacy download"):
        rate.run([["I think so.", "I think not."]])


def test_meta_eval_lists_them_as_skipped_with_the_how_to(nothing_installed, shared_data, tmp_path):
    from dialeval.cli.meta_eval_job import MetaEvalOptions, run_meta_eval

    options = MetaEvalOptions(
        data_dir=str(shared_data / "tevet-diversity-eval"), cache_dir=str(tmp_path), progress=False
    )
    report = run_meta_eval(
        ["template_rate", "averaged_distinct_n"], "contest", "prompt", options, human=False
    )
    assert [row.label for row in report.rows] == ["averaged_distinct_n"]
    assert (
        report.skipped[0]["metric"] == "template_rate"
        and "spacy download en_core_web_sm" in report.skipped[0]["reason"]
    )


def test_the_job_lists_the_step_as_skipped_without_a_tagger_and_refuses_it_when_asked(
    nothing_installed,
):
    report = evaluate_corpus(TEXTS, EvaluationOptions(**NO_MODELS))
    assert "pos_templates" not in report["metrics"] and "compression_ratio" in report["metrics"]
    skipped = {entry["metric"]: entry["reason"] for entry in report["skipped"]}
    assert "no part-of-speech tagger" in skipped["pos_templates"]
    assert "spacy download en_core_web_sm" in skipped["pos_templates"]
    with pytest.raises(
        ValueError,
        match=r"^`metrics`: pos_templates was asked for but cannot run: no part-of-speech tagger"
        r".*spacy download",
    ):
        planned_steps("corpus", EvaluationOptions(**NO_MODELS, metrics=["pos_templates"]))


def test_the_job_runs_the_step_where_a_tagger_is_installed(fake_spacy):
    sets = [TEXTS, ["You can go there now.", "You can see them now."]]
    report = evaluate_response_sets(
        [ResponseSet(None, s) for s in sets],
        EvaluationOptions(**NO_MODELS, metrics=["pos_templates"]),
    )
    direct = pos_templates.pos_template_scores(sets, **TAGGING)
    assert report["metrics"]["pos_templates"] == {
        "scope": "response_set",
        "template_rate": direct["template_rate"],
        "templates_per_token": direct["templates_per_token"],
    }
    assert [row["template_rate"] for row in report["per_set"]] == [
        row["template_rate"] for row in direct["per_set"]
    ]
    corpus = evaluate_corpus(TEXTS, EvaluationOptions(**NO_MODELS, metrics=["pos_templates"]))[
        "metrics"
    ]["pos_templates"]
    assert corpus["template_rate"] == pos_templates.template_rate(TEXTS, **TAGGING)


def test_evaluate_module_with_a_given_tagger():
    module = evaluate.load("metrics/pos_templates")
    result = module.compute(predictions=TEXTS, top_n=2, **TAGGING)
    assert result["template_rate"] == pytest.approx(2 / 3) and result[
        "templates_per_token_scores"
    ] == pytest.approx([2 / 7, 1 / 7, 0])


# ---------------------------------------------------------------- the `diversity` package


@pytest.fixture(scope="module")
def peer():
    loaded = load_peer_templates()
    if loaded is None:
        pytest.skip(
            "the `diversity` package is not installed (pip install --no-deps diversity==0.3.1, the bench extra)"
        )
    return loaded


@pytest.fixture(scope="module")
def dailydialog_responses(shared_data):
    with open(shared_data / "dailydialog-plusplus" / "dev.json", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    return [text for record in records for text in record["positive_responses"]][:300]


def test_equal_to_the_package_on_dailydialog_plusplus(peer, dailydialog_responses):
    texts = dailydialog_responses
    ours = pos_templates.extract_templates(texts, **TAGGING)
    theirs = peer.extract_patterns(texts)
    assert list(ours) == list(theirs) and {key: set(spans) for key, spans in ours.items()} == theirs
    spans = sum(len(found) for found in ours.values())
    # one regex shard of the package's (500): its count is then ours (see the card)
    assert 100 < spans <= 500
    assert pos_templates.template_rate(texts, **TAGGING) == peer.template_rate(texts, theirs)
    assert pos_templates.template_rate(texts, **TAGGING) > 0.1
    assert pos_templates.templates_per_token(texts, **TAGGING) == peer.templates_per_token(
        texts, theirs
    )
    assert pos_templates.templates_per_token(texts, ours) == peer.templates_per_token(texts, ours)


def test_the_packages_shards_count_a_position_once_per_shard(peer):
    """Beyond 500 spans the package counts a start position once per regex shard it matches in."""
    templates = {"X": ["ab"], "Y": ["ab ab"]}
    assert pos_templates.templates_per_token(["ab ab"], templates) == [1.0]
    assert peer.templates_per_token(["ab ab"], templates, shard_size=2) == [1.0]
    assert peer.templates_per_token(["ab ab"], templates, shard_size=1) == [1.5]


def test_peer_get_pos_stand_in_keeps_the_packages_contract():
    joined, tuples = peer_get_pos(["I think so."])
    assert joined == ["PRP VBP RB ."] and tuples == [
        [("I", "PRP"), ("think", "VBP"), ("so", "RB"), (".", ".")]
    ]


# ---------------------------------------------------------------- NLTK's data, looked for cheaply
NLTK_HAS = """
import sys
from dialeval.metrics.pos_templates.taggers import punkt_available
print(punkt_available(), "nltk" in sys.modules)
"""


def _punkt_available_in_a_fresh_process(home, nltk_data):
    environment = {
        **{key: value for key, value in os.environ.items() if key != "NLTK_DATA"},
        "HOME": str(home),
        "NLTK_DATA": str(nltk_data),
    }
    done = subprocess.run(
        [sys.executable, "-c", NLTK_HAS],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split()


def test_nltk_data_absent_from_every_folder_is_known_without_importing_nltk(tmp_path):
    if taggers._nltk_data_folders() is None:
        pytest.skip("NLTK's data folders are not known here (Windows): NLTK itself is asked")
    machine_wide = [
        folder
        for folder in taggers._nltk_data_folders()
        if os.path.isdir(os.path.join(folder, "tokenizers"))
        and not folder.startswith(os.path.expanduser("~"))
    ]
    if machine_wide:
        pytest.skip(f"this machine has NLTK tokenizers installed in {machine_wide}")
    data = tmp_path / "nltk_data"
    data.mkdir()
    assert _punkt_available_in_a_fresh_process(tmp_path, data) == ["False", "False"]
    # data in a folder NLTK searches: NLTK's own search decides, and finds it
    (data / "tokenizers" / "punkt_tab" / "english").mkdir(parents=True)
    assert _punkt_available_in_a_fresh_process(tmp_path, data) == ["True", "True"]
