"""NLI Diversity (Stasaski & Hearst 2022, §3) and the pairwise scoring engine under it."""

from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from dialeval.hub import ModelNotAvailableError
from dialeval.metrics.engines.pair_scorer import PairScoringStats, load_pair_classifier, score_pairs
from dialeval.metrics.nli_diversity.nli import (
    NLI_FIGURES,
    NLIScorer,
    iter_nli_pair_matrices,
    nli_diversity,
    nli_label_indices,
    nli_pair_matrices,
    nli_scores,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
CON, NEU, ENT = np.eye(3)


class ControlledNLI:
    """Returns fixed class probabilities per (premise, hypothesis); counts the pairs it is asked."""

    def __init__(self, table: dict, default=NEU):
        self.table, self.default, self.calls = table, default, []

    def pair_probabilities(self, premises, hypotheses):
        self.calls.append(len(premises))
        return np.array([self.table.get(pair, self.default) for pair in zip(premises, hypotheses)])


# ---------------------------------------------------------------- the formulas (§3.1-3.3)


def test_figure_1_two_contradictions_three_neutrals_one_entailment_score_1():
    a, b, c = "I'd love to go hiking.", "I hate the outdoors.", "Hiking sounds fun."
    table = {(a, b): CON, (b, a): CON, (a, c): ENT, (c, a): NEU, (b, c): NEU, (c, b): NEU}
    result = nli_diversity([[a, b, c]], scorer=ControlledNLI(table))
    assert result["per_set"][0] == {
        "nli_diversity": 1.0,  # (2 x 1) + (3 x 0) + (1 x -1), Figure 1
        "nli_diversity_neutral": 4.0,  # 2 + 3 - 1
        "nli_diversity_confidence": 1.0,  # one-hot probabilities: confidence 1 per pair
        "num_contradiction": 2,
        "num_neutral": 3,
        "num_entailment": 1,
    }


def test_three_variants_against_a_hand_computed_case():
    probabilities = np.array(
        [
            [0.7, 0.2, 0.1],  # contradiction, p = 0.7
            [0.1, 0.3, 0.6],  # entailment, p = 0.6
            [0.2, 0.5, 0.3],  # neutral
            [0.4, 0.35, 0.25],  # contradiction, p = 0.4
        ]
    )
    scores = nli_scores(probabilities)
    assert scores["nli_diversity"] == pytest.approx(1 - 1 + 0 + 1)
    assert scores["nli_diversity_neutral"] == pytest.approx(1 - 1 + 1 + 1)
    assert scores["nli_diversity_confidence"] == pytest.approx(0.7 - 0.6 + 0 + 0.4)
    assert (scores["num_contradiction"], scores["num_neutral"], scores["num_entailment"]) == (
        2,
        1,
        1,
    )


def test_all_ordered_pairs_are_scored_and_means_are_over_sets():
    scorer = ControlledNLI({}, default=ENT)
    result = nli_diversity([["a", "b", "c", "d"], ["e", "f"]], scorer=scorer)
    assert [row["num_entailment"] for row in result["per_set"]] == [12, 2]  # n(n-1)
    assert result["nli_diversity"] == pytest.approx((-12 - 2) / 2)
    assert result["num_sets"] == 2
    assert set(NLI_FIGURES) <= set(result)


def test_pair_matrix_orientation_and_leave_one_out_match_rescoring():
    a, b, c, d = "w", "x", "y", "z"
    table = {(a, b): CON, (b, a): ENT, (c, d): CON, (d, c): CON, (a, d): ENT}
    matrix = nli_pair_matrices([[a, b, c, d]], scorer=ControlledNLI(table))[0]
    assert matrix.predicted[0, 1] == 0 and matrix.predicted[1, 0] == 2  # [premise, hypothesis]
    assert (np.diag(matrix.predicted) == -1).all()
    subsets = [[b, c, d], [a, c, d], [a, b, d], [a, b, c]]
    direct = [nli_diversity([s], scorer=ControlledNLI(table))["nli_diversity"] for s in subsets]
    assert matrix.leave_one_out_scores().tolist() == direct
    with pytest.raises(ValueError, match="figure"):
        matrix.leave_one_out_scores("bleu")


def test_streaming_accepts_a_generator_and_chunking_does_not_change_results():
    sets = [[f"r{i}", f"r{i + 1}", "shared"] for i in range(50)]
    table = {(f"r{i}", "shared"): CON for i in range(0, 50, 3)}
    whole = nli_diversity(sets, scorer=ControlledNLI(table))
    scorer = ControlledNLI(table)
    streamed = nli_diversity((s for s in sets), scorer=scorer, max_pairs_per_chunk=7)
    assert streamed["per_set"] == whole["per_set"]
    assert max(scorer.calls) < 7 + 6  # one chunk's pairs at a time, never the whole corpus
    assert (
        len(list(iter_nli_pair_matrices(iter(sets), ControlledNLI(table), max_pairs_per_chunk=1)))
        == 50
    )


def test_bad_input():
    scorer = ControlledNLI({})
    with pytest.raises(ValueError, match=r"response_sets\[1\].*at least 2"):
        nli_diversity([["a", "b"], ["lonely"]], scorer=scorer)
    with pytest.raises(ValueError, match="empty"):
        nli_diversity([], scorer=scorer)
    with pytest.raises(ValueError, match=r"response_sets\[0\]\[1\].*empty"):
        nli_diversity([["a", ""]], scorer=scorer)
    assert nli_diversity([["a", ""]], scorer=scorer, allow_empty=True)["num_sets"] == 1
    with pytest.raises(ValueError, match="response_sets"):
        nli_diversity("just a string", scorer=scorer)
    with pytest.raises(ValueError, match="max_pairs_per_chunk"):
        nli_diversity([["a", "b"]], scorer=scorer, max_pairs_per_chunk=0)


# ---------------------------------------------------------------- labels by name


@pytest.mark.parametrize(
    ("id2label", "expected"),
    [
        ({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}, (0, 1, 2)),  # roberta-large-mnli
        (
            {0: "entailment", 1: "neutral", 2: "contradiction"},
            (2, 1, 0),
        ),  # ynie/...-nli ("Combined")
        ({"0": "Neutral", "1": "Entailment", "2": "Contradiction"}, (2, 0, 1)),
    ],
)
def test_labels_are_found_by_name(id2label, expected):
    assert nli_label_indices(id2label) == expected


def test_unmappable_labels_are_a_clear_error_and_label_map_overrides():
    generic = {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}
    with pytest.raises(ValueError, match=r"^`model` has labels .* cannot be mapped .*label_map"):
        nli_label_indices(generic)
    with pytest.raises(ValueError, match=r"^`model` has labels .* cannot be mapped"):
        nli_label_indices({0: "entailment", 1: "not_entailment"})
    assert nli_label_indices(generic, {"contradiction": 2, "neutral": 0, "entailment": 1}) == (
        2,
        0,
        1,
    )
    with pytest.raises(ValueError, match="label_map"):
        nli_label_indices(generic, {"contradiction": 0, "neutral": 0, "entailment": 1})


# ---------------------------------------------------------------- the engine on a tiny RoBERTa-NLI

SETS = [
    ["hi there! how are you?", "i am a nurse at the hospital.", "hi there! how are you?", "no."],
    [
        "a man is playing a guitar on the stage.",
        "nobody is playing music right now.",
        "i like dogs",
    ],
    [
        "okay, see you later!",
        "thank you, you too. talk to you tomorrow, have a good night and sleep well.",
    ],
]


def _one_pair_per_forward(path, premise, hypothesis):
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    with torch.inference_mode():
        return (
            model(**tokenizer(premise, hypothesis, return_tensors="pt"))
            .logits.softmax(-1)[0]
            .double()
            .numpy()
        )


def test_batched_engine_equals_one_pair_per_forward(tiny_roberta_nli_path):
    matrices = nli_pair_matrices(SETS, model=tiny_roberta_nli_path, batch_size=4)
    for responses, matrix in zip(SETS, matrices):
        for i in range(len(responses)):
            for j in range(len(responses)):
                if i != j:
                    expected = _one_pair_per_forward(
                        tiny_roberta_nli_path, responses[i], responses[j]
                    )
                    np.testing.assert_allclose(matrix.probabilities[i, j], expected, atol=1e-5)


def test_scores_do_not_depend_on_batch_size(tiny_roberta_nli_path):
    results = [
        nli_diversity(SETS, model=tiny_roberta_nli_path, batch_size=size) for size in (1, 3, 64)
    ]
    for result in results[1:]:
        for mine, reference in zip(result["per_set"], results[0]["per_set"]):
            assert mine["num_contradiction"] == reference["num_contradiction"]
            assert mine["nli_diversity_confidence"] == pytest.approx(
                reference["nli_diversity_confidence"], abs=1e-5
            )


def test_the_model_varies_its_predictions(tiny_roberta_nli_path):
    """Guards the tests above against a degenerate classifier that predicts one class for all."""
    predicted = np.concatenate(
        [
            m.predicted[m.predicted >= 0]
            for m in nli_pair_matrices(SETS, model=tiny_roberta_nli_path)
        ]
    )
    assert len(set(predicted.tolist())) >= 2


def test_identical_pairs_are_scored_once(tiny_roberta_nli_path):
    result = nli_diversity(SETS, model=tiny_roberta_nli_path)
    # Set 0 repeats a response: its 12 ordered pairs hold 2 copies of 4 pairs, and the
    # (duplicate, duplicate) pair appears twice too.
    assert result["num_pairs"] == 12 + 6 + 2
    assert result["num_unique_pairs"] == result["num_pairs"] - 5


def test_truncation_is_counted(tiny_roberta_nli_path):
    too_long = " ".join(["word"] * 300)
    result = nli_diversity([[too_long, "short"], ["a", "b"]], model=tiny_roberta_nli_path)
    assert result["num_truncated"] == 2  # both orders of the long pair, nothing else
    assert result["num_sets"] == 2


def test_label_order_of_the_checkpoint_does_not_matter(tiny_roberta_nli_path, tmp_path):
    """A copy with permuted output rows and id2label (like ynie's order) must give the same scores."""
    model = AutoModelForSequenceClassification.from_pretrained(tiny_roberta_nli_path)
    permutation = [2, 0, 1]  # new row k holds old class permutation[k]
    head = model.classifier.out_proj
    head.weight.data, head.bias.data = (
        head.weight.data[permutation].clone(),
        head.bias.data[permutation].clone(),
    )
    old = dict(model.config.id2label)
    model.config.id2label = {k: old[permutation[k]].upper() for k in range(3)}
    model.config.label2id = {label: k for k, label in model.config.id2label.items()}
    model.save_pretrained(tmp_path)
    AutoTokenizer.from_pretrained(tiny_roberta_nli_path).save_pretrained(tmp_path)
    original = nli_diversity(SETS, model=tiny_roberta_nli_path)["per_set"]
    permuted = nli_diversity(SETS, model=str(tmp_path))["per_set"]
    for a, b in zip(original, permuted):
        assert a["nli_diversity"] == b["nli_diversity"]
        assert a["nli_diversity_confidence"] == pytest.approx(
            b["nli_diversity_confidence"], abs=1e-6
        )


def test_model_is_loaded_once_per_path_device_dtype(tiny_roberta_nli_path):
    first = load_pair_classifier(tiny_roberta_nli_path, device="cpu")
    assert load_pair_classifier(tiny_roberta_nli_path, device="cpu") is first
    assert NLIScorer(tiny_roberta_nli_path, device="cpu").classifier is first
    with pytest.raises(ValueError, match="dtype"):
        load_pair_classifier(tiny_roberta_nli_path, dtype="int8")


def test_engine_input_checks(tiny_roberta_nli_path):
    classifier = load_pair_classifier(tiny_roberta_nli_path)
    with pytest.raises(ValueError, match="same length"):
        score_pairs(classifier, ["a"], [])
    with pytest.raises(ValueError, match="batch_size"):
        score_pairs(classifier, ["a"], ["b"], batch_size=0)
    stats = PairScoringStats()
    assert score_pairs(classifier, [], [], stats=stats).shape == (0, 3)


def test_missing_model_says_how_to_get_it():
    with pytest.raises(ModelNotAvailableError, match="hf download"):
        nli_diversity([["a", "b"]], model="nobody/no-such-nli-model")


# ---------------------------------------------------------------- the evaluate module


def test_evaluate_module_offline(tiny_roberta_nli_path):
    import evaluate

    module = evaluate.load(str(REPO_ROOT / "metrics" / "nli_diversity"))
    result = module.compute(predictions=SETS, model=tiny_roberta_nli_path, batch_size=8)
    direct = nli_diversity(SETS, model=tiny_roberta_nli_path, batch_size=8)
    assert result["per_set"] == direct["per_set"]
    assert result["nli_diversity"] == direct["nli_diversity"]
    with pytest.raises(ValueError, match="predictions"):
        module.compute(predictions=[["a", "b"], "c"], model=tiny_roberta_nli_path)
    with pytest.raises(ValueError, match="references"):
        module.compute(predictions=SETS, references=SETS, model=tiny_roberta_nli_path)


@pytest.mark.parametrize("template", ["roberta", "bert"])
def test_pairs_from_the_backend_equal_the_tokenizer_on_pairs(tiny_tokenizer_path, template):
    """Each text encoded once + the tokenizer's post-processor == tokenizer(first, second), truncation included."""
    from types import SimpleNamespace

    import torch
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from tokenizers import processors
    from transformers import AutoTokenizer

    from dialeval.hub import LoadedModel
    from dialeval.metrics.engines.pair_scorer import PairScoringStats, _encode_with_backend

    tokenizer = AutoTokenizer.from_pretrained(tiny_tokenizer_path)
    cls, sep = (
        (tokenizer.bos_token, tokenizer.bos_token_id),
        (tokenizer.eos_token, tokenizer.eos_token_id),
    )
    if template == "roberta":
        tokenizer.backend_tokenizer.post_processor = processors.RobertaProcessing(sep, cls)
    else:
        tokenizer.backend_tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{cls[0]} $A {sep[0]}",
            pair=f"{cls[0]} $A {sep[0]} $B:1 {sep[0]}:1",
            special_tokens=[cls, sep],
        )
        tokenizer.model_input_names = ["input_ids", "token_type_ids", "attention_mask"]
    words = st.lists(
        st.sampled_from(
            ["hello", "there", "x", "I don't", "know!", "\U0001f600", "caf\u00e9", "  "]
        ),
        max_size=30,
    )

    @settings(max_examples=150, deadline=None)
    @given(words.map(" ".join), words.map(" ".join), st.integers(min_value=6, max_value=40))
    def check(first, second, limit):
        tokenizer.model_max_length = limit
        model = SimpleNamespace(
            config=SimpleNamespace(model_type="bert", max_position_embeddings=512)
        )
        loaded = LoadedModel(model, tokenizer, torch.device("cpu"), "tiny")
        stats = PairScoringStats()
        ids, type_ids = _encode_with_backend(loaded, [first], [second], stats)[0]
        # Batched, as the engine always called it (a single call drops an empty second text).
        expected = tokenizer(
            [first],
            [second],
            truncation="longest_first",
            max_length=limit,
            return_token_type_ids=True,
        )
        assert ids == expected["input_ids"][0]
        assert type_ids == expected["token_type_ids"][0]
        whole = tokenizer([first], [second], truncation=False, verbose=False)["input_ids"][0]
        assert stats.num_truncated == int(len(whole) > limit)

    check()


def test_a_huge_text_is_encoded_once_and_cut_to_the_limit(tiny_roberta_nli_path):
    """20k words beside 100k characters: linear work per text, each pair cut as longest_first."""
    result = nli_diversity(
        [["word " * 20000, "x" * 100000, "short"]], model=tiny_roberta_nli_path, device="cpu"
    )
    assert result["num_truncated"] == 6 and result["num_pairs"] == 6


def test_identical_responses_are_scored_once_and_huge_sets_refused(tiny_roberta_nli_path):
    """10,000 copies of one response need one pair; a set needing more pairs than the limit is a clear error."""
    same = nli_diversity([["I don't know."] * 10000], model=tiny_roberta_nli_path, device="cpu")
    assert same["num_pairs"] == 10000 * 9999 and same["num_unique_pairs"] == 1
    one = nli_pair_matrices(
        [["I don't know.", "I don't know."]], model=tiny_roberta_nli_path, device="cpu"
    )[0]
    assert same["num_contradiction"] + same["num_neutral"] + same["num_entailment"] == 10000 * 9999
    assert same["nli_diversity"] == pytest.approx(one.scores()["nli_diversity"] * 10000 * 9999 / 2)
    with pytest.raises(ValueError, match=r"`response_sets\[0\]`.*`max_pairs_per_set` = 100"):
        nli_diversity(
            [[f"response {i}" for i in range(11)]],
            model=tiny_roberta_nli_path,
            max_pairs_per_set=100,
        )
    with pytest.raises(ValueError, match="max_pairs_per_set"):
        nli_diversity(
            [["a"] * 20], model=tiny_roberta_nli_path, max_pairs_per_set=100, return_matrices=True
        )
    assert (
        nli_diversity([["a"] * 20], model=tiny_roberta_nli_path, max_pairs_per_set=100)[
            "num_unique_pairs"
        ]
        == 1
    )


def test_weighted_scores_equal_the_full_matrix(tiny_roberta_nli_path):
    sets = [["a b", "a b", "c d", "a b", "e"], ["x", "y", "x"]]
    weighted = nli_diversity(sets, model=tiny_roberta_nli_path, device="cpu")
    matrices = nli_diversity(sets, model=tiny_roberta_nli_path, device="cpu", return_matrices=True)[
        "matrices"
    ]
    for row, matrix in zip(weighted["per_set"], matrices):
        full = matrix.scores()
        assert {key: row[key] for key in full} == pytest.approx(full)


def test_a_classifier_whose_labels_were_reset_is_refused_by_name(tiny_roberta_nli_path):
    from dialeval.hub import load_model

    # a private copy to edit
    classifier = load_model(tiny_roberta_nli_path, "sequence_classification", cached=False)
    classifier.model.config.id2label = (
        None  # transformers' config type allows it; num_labels is then None
    )
    with pytest.raises(ValueError, match="`classifier` has no labels"):
        score_pairs(classifier, ["a"], ["b"])
