"""Building response-selection test sets over one's own corpora (Sato et al. 2020, §3, App. A), the
RANDOM protocol (§4.2-4.3, Fig. 2) and the TF-IDF baseline (§3.2), on a small synthetic corpus."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from dialeval.metrics.engines.lm_scorer import CandidateScorer
from dialeval.metrics.response_selection import (
    BM25Retriever,
    EmbeddingRetriever,
    assemble_questions,
    build_repository,
    filter_pool,
    random_protocol_accuracies,
    random_protocol_correlation,
    random_protocol_figure,
    random_trial,
    read_selection_questions,
    response_selection,
    retrieve_candidate_pools,
    scoring_sheet,
    tfidf_selection,
)

# A repository in which each topic word occurs in a few utterances (the "related" ones).
REPOSITORY = [
    "could he not focus on that?",
    "but i do have ninja focus.",
    "do not lose your focus!",
    "focus on the road.",
    "i play tennis on sundays.",
    "tennis is a fun sport.",
    "the camera is broken again.",
    "take a picture of the camera.",
    "i like my new camera.",
    "where is the station?",
    "the train leaves at noon.",
    "my train was late today.",
    "thats the problem with small towns.",
    "you are to be finished very soon.",
    "i will be finished soon.",
    "dinner is ready.",
    "what is for dinner tonight?",
    "we had pasta for dinner.",
    "i don't know.",
    "okay.",
]
TRAINING_UTTERANCES = [
    "I don't know.",
    "  okay. ",
]  # in the systems' training data: never a candidate (§3.2)


class HashingEmbedder:
    """Bag of words hashed into 64 dimensions: texts that share words have similar vectors."""

    def embed(self, texts):
        vectors = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().replace("?", " ").replace(".", " ").replace("!", " ").split():
                vectors[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1
        return vectors


class FixedRetriever:
    """Returns a fixed ranking: pool composition can be checked by hand."""

    def __init__(self, name, ranking):
        self.name, self.ranking = name, ranking

    def rank(self, queries, k):
        return [self.ranking[:k] for _ in queries]


def test_repository_leaves_out_training_utterances_and_repeats():
    repository = build_repository(
        REPOSITORY + ["Okay.", "", "focus on the road. "], exclude=TRAINING_UTTERANCES
    )
    assert "i don't know." not in repository and "okay." not in repository
    assert repository.count("focus on the road.") == 1 and "" not in repository
    assert len(repository) == len(REPOSITORY) - 2
    with pytest.raises(ValueError, match="empty"):
        build_repository(["okay."], exclude=["OKAY."])


def test_bm25_retrieves_utterances_sharing_content_words():
    retriever = BM25Retriever(REPOSITORY)
    ranked = retriever.rank(["Do I have to focus it?", "the the the"], k=10)
    # only related ones
    assert {REPOSITORY[i] for i in ranked[0]} == {u for u in REPOSITORY if "focus" in u}
    assert ranked[1] == []  # stopwords only: nothing lexical to match


def test_embedding_retriever_ranks_by_cosine_similarity():
    retriever = EmbeddingRetriever(REPOSITORY, embedder=HashingEmbedder())
    ranked = retriever.rank(["my camera", "dinner tonight"], k=3)
    assert REPOSITORY[ranked[0][0]] == "i like my new camera."  # shares both words
    assert REPOSITORY[ranked[1][0]] == "what is for dinner tonight?"
    vectors = HashingEmbedder().embed(REPOSITORY + ["dinner tonight"])
    cosine = (
        vectors[:-1]
        @ vectors[-1]
        / np.linalg.norm(vectors[:-1], axis=1)
        / np.linalg.norm(vectors[-1])
    )
    assert ranked[1] == sorted(range(len(REPOSITORY)), key=lambda i: (-cosine[i], i))[:3]


def test_pools_alternate_retrievers_and_skip_the_ground_truth_and_context():
    repository = ["a", "b", "c", "d", "e", "f"]
    first, second = (
        FixedRetriever("lexical", [0, 1, 2, 3]),
        FixedRetriever("embedding", [1, 4, 5, 0]),
    )
    pools = retrieve_candidate_pools(
        [["context says E"]], ["A"], repository, [first, second], num_retrieved=4
    )
    # "a" is the ground truth (case-insensitive) and "e" a context turn? no: the turn is "context says E".
    assert pools[0].retrieved == ["b", "e", "c", "f"]
    assert pools[0].retrieved_by == ["lexical", "embedding", "lexical", "embedding"]
    pools = retrieve_candidate_pools([["e"]], ["A"], repository, [first, second], num_retrieved=4)
    assert pools[0].retrieved == ["b", "f", "c", "d"]  # "e" is the context: skipped
    with pytest.raises(ValueError, match="found only 4"):
        retrieve_candidate_pools([["e"]], ["A"], repository, [first, second], num_retrieved=5)
    with pytest.raises(ValueError, match="`retrievers`"):
        retrieve_candidate_pools([["e"]], ["A"], repository, [object()])


def test_pools_from_bm25_and_embeddings_on_a_synthetic_corpus(tmp_path):
    repository = build_repository(REPOSITORY, exclude=TRAINING_UTTERANCES)
    retrievers = [
        BM25Retriever(repository),
        EmbeddingRetriever(repository, embedder=HashingEmbedder()),
    ]
    contexts = [["Excuse me.", "Could you take a picture of us with this camera?", "Sure."]]
    pools = retrieve_candidate_pools(
        contexts, ["Do I have to focus it?"], repository, retrievers, num_retrieved=6
    )
    pool = pools[0]
    assert len(pool.retrieved) == len(set(pool.retrieved)) == 6
    assert pool.retrieved_by[:2] == ["bm25", "embedding"]
    assert "focus" in pool.retrieved[0]  # BM25's best shares the content word
    assert not {"i don't know.", "okay."} & set(pool.retrieved)
    sheet = scoring_sheet(pools, tmp_path / "sheet.jsonl")
    assert sheet[0]["candidates"] == ["Do I have to focus it?", *pool.retrieved]
    assert json.loads((tmp_path / "sheet.jsonl").read_text()) == sheet[0]


GT_OK, GT_LOW = [5, 5, 4, 4, 2], [5, 3, 3, 2, 5]  # GT_LOW: three scores <= 3
FALSE, ACCEPTABLE, UNGRAMMATICAL = [1, 2, 1, 1, 3], [3, 3, 4, 1, 1], [0, 0, 0, 2, 1]
GOOD_ACCEPTABLE = [
    4,
    5,
    4,
    3,
    1,
]  # acceptable, and passes the ground-truth rule: becomes a new ground truth


def test_filter_pool_applies_the_rules_of_section_3_1():
    verdict = filter_pool([GT_OK, FALSE, ACCEPTABLE, UNGRAMMATICAL, [2, 2, 3, 3, 0]])
    assert verdict.ground_truth_kept
    assert (verdict.usable, verdict.acceptable, verdict.ungrammatical) == ([0, 3], [1], [2])
    assert not filter_pool([GT_LOW, FALSE]).ground_truth_kept
    assert not filter_pool([[0, 0, 0, 5, 5], FALSE]).ground_truth_kept  # 0 is a score <= 3
    with pytest.raises(ValueError, match="ground truth first"):
        filter_pool([GT_OK])
    with pytest.raises(ValueError, match="0 \\(ungrammatical\\) to 5"):
        filter_pool([GT_OK, [1, 2, 9, 1, 1]])


def test_assemble_questions_of_section_3_2(tmp_path):
    repository = [f"utterance {i}" for i in range(10)]
    pools = retrieve_candidate_pools(
        [["c0"], ["c1"], ["c2"], ["c3"]],
        ["gt0", "gt1", "gt2", "gt3"],
        repository,
        [FixedRetriever("fixed", list(range(10)))],
        num_retrieved=10,
    )
    scores = [
        # pool 0: 7 usable, acceptable ones at 1 (fails the GT rule) and 4 (passes): two questions
        [
            GT_OK,
            FALSE,
            ACCEPTABLE,
            FALSE,
            FALSE,
            GOOD_ACCEPTABLE,
            FALSE,
            UNGRAMMATICAL,
            FALSE,
            FALSE,
            FALSE,
        ],
        # pool 1: ground truth scored low: no question
        [GT_LOW] + [FALSE] * 10,
        # pool 2: only 2 usable: no question
        [GT_OK, FALSE, FALSE] + [ACCEPTABLE] * 8,
        # pool 3: 6 usable but no acceptable utterance fit to be a ground truth: one question
        [GT_OK] + [FALSE] * 6 + [ACCEPTABLE] * 4,
    ]
    questions = assemble_questions(pools, scores)
    assert [(q["pool_id"], q["ground_truth_source"]) for q in questions] == [
        (0, "dialogue"),
        (0, "retrieved"),
        (3, "dialogue"),
    ]
    first, second = questions[0], questions[1]
    assert first["candidates"] == ["gt0", "utterance 0", "utterance 2", "utterance 3"]
    assert second["candidates"] == ["utterance 4", "utterance 5", "utterance 7", "utterance 8"]
    assert second["context"] == ["c0"] and second["label"] == 0
    assert (
        first["scores"] == [GT_OK, FALSE, FALSE, FALSE] and second["scores"][0] == GOOD_ACCEPTABLE
    )
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in questions))
    assert read_selection_questions(path)["candidates"] == [q["candidates"] for q in questions]


QUESTIONS = [
    {
        "context": ["do you like tennis?"],
        "candidates": ["tennis is a fun sport.", "x", "y", "z"],
        "label": 0,
    },
    {
        "context": ["what is for dinner?"],
        "candidates": ["we had pasta for dinner.", "x", "y", "z"],
        "label": 0,
    },
]


def test_random_trial_is_seeded_per_trial_and_leaves_out_training_utterances():
    repository = REPOSITORY
    first = random_trial(QUESTIONS, repository, seed=3, trial=1, exclude=TRAINING_UTTERANCES)
    assert first == random_trial(
        QUESTIONS, repository, seed=3, trial=1, exclude=TRAINING_UTTERANCES
    )
    assert first != random_trial(
        QUESTIONS, repository, seed=3, trial=2, exclude=TRAINING_UTTERANCES
    )
    draws = np.random.default_rng([3, 1]).integers(0, len(repository), size=(2, 10))
    for question, row, drawn in zip(QUESTIONS, first, draws):
        assert (
            row["candidates"][0] == question["candidates"][0]
            and row["context"] == question["context"]
        )
        expected = []
        for line in drawn.tolist():
            text = repository[line]
            if (
                text not in ("i don't know.", "okay.", question["candidates"][0])
                and line not in expected
                and text not in [repository[e] for e in expected]
            ):
                expected.append(line)
        assert row["false_candidate_lines"] == expected[:3]
    # Training utterances are never drawn, over many trials.
    drawn_texts = {
        text
        for t in range(30)
        for row in random_trial(QUESTIONS, repository, 0, t, TRAINING_UTTERANCES)
        for text in row["candidates"][1:]
    }
    assert not drawn_texts & {"i don't know.", "okay."}
    with pytest.raises(ValueError, match="only 1 of 10"):
        random_trial(QUESTIONS, ["tennis is a fun sport.", "a", "A"], seed=0, trial=0)


def test_random_protocol_accuracies_equal_scoring_each_trial(tiny_gpt2_path):
    scorer = CandidateScorer(tiny_gpt2_path, device="cpu")
    trials = [
        random_trial(QUESTIONS, REPOSITORY, seed=0, trial=t, exclude=TRAINING_UTTERANCES)
        for t in range(4)
    ]
    accuracies = random_protocol_accuracies(scorer, trials)
    for trial, accuracy in zip(trials, accuracies):
        direct = response_selection(
            [q["context"] for q in trial], [q["candidates"] for q in trial], [0, 0], scorer=scorer
        )
        assert accuracy == direct["accuracy"]
    with pytest.raises(ValueError, match="another context"):
        random_protocol_accuracies(scorer, [trials[0], list(reversed(trials[1]))])


def test_fig2_box_plot():
    from matplotlib.figure import Figure

    human = {"a": 1.0, "b": 2.0, "c": 3.0}
    trials = [
        {"a": 0.1, "b": 0.2, "c": 0.3},
        {"a": 0.3, "b": 0.2, "c": 0.1},
        {"a": 0.2, "b": 0.2, "c": 0.2},
    ]
    result = random_protocol_correlation(human, trials)
    figure = random_protocol_figure(result, chosen_spearman=0.5)
    assert isinstance(figure, Figure)
    axes = figure.axes[0]
    box_values = sorted(float(v) for line in axes.lines[:-1] for v in line.get_ydata())
    assert box_values[0] == -1.0 and box_values[-1] == 1.0  # the two defined trials' ρ
    assert list(axes.lines[-1].get_ydata()) == [0.5]  # CHOSEN, the blue dot
    assert "1 undefined" in axes.get_xticklabels()[0].get_text()
    with pytest.raises(ValueError, match="spearman_per_trial"):
        random_protocol_figure({})


def test_tfidf_baseline_by_hand():
    contexts = [["i like tennis", "do you?"], ["where is the station?"], ["hello"]]
    candidates = [
        ["tennis is fun", "pasta again"],
        ["pasta again", "the station is near"],
        ["abc", "xyz"],
    ]
    result = tfidf_selection(contexts, candidates, [0, 0, 0])
    # Q0: only the ground truth shares a word; Q1: the false candidate does; Q2: nothing shared, a tie.
    assert [row["correct"] for row in result["per_question"]] == [True, False, False]
    assert result["per_question"][2]["tie"] and result["per_question"][2]["similarities"] == [
        0.0,
        0.0,
    ]
    assert result["accuracy"] == pytest.approx(1 / 3)
    # With one shared word of idf 1 in a 2-word candidate and a 3-word context, cosine = 1/sqrt(2*3).
    one = tfidf_selection(
        [["aa bb cc"]], [["aa dd", "ee ff"]], [0], fit_texts=["aa bb cc dd ee ff"]
    )
    assert one["per_question"][0]["similarities"][0] == pytest.approx(1 / np.sqrt(6))
