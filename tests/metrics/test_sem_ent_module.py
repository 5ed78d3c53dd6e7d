"""Sem-Ent end to end with the embedded MiniLM: the evaluate module and `dialeval evaluate`."""

import json
import math

import evaluate
import pytest
from conftest import REPO_ROOT
from matplotlib.image import imread

from dialeval.cli import main
from dialeval.metrics import evaluate_module_path, load_embedder
from dialeval.metrics.sem_ent.clusters import SemanticClusters, sem_ent

TOPICS = {
    "food": [
        "I love pizza with extra cheese.",
        "Sushi is my favourite dinner.",
        "Let's cook pasta tonight.",
        "This soup tastes amazing.",
        "I baked a chocolate cake.",
        "Fresh bread smells wonderful.",
        "We had tacos for lunch.",
        "The curry was too spicy for me.",
    ],
    "weather": [
        "It is raining heavily outside.",
        "The sun is shining all day.",
        "A storm is coming tonight.",
        "It's freezing cold this morning.",
        "Snow covered the whole street.",
        "The wind is very strong today.",
        "What a hot and humid afternoon.",
        "Fog made it hard to see the road.",
    ],
    "sport": [
        "He scored a goal in the last minute.",
        "Our team won the basketball final.",
        "I go running every morning.",
        "The tennis match lasted five hours.",
        "She swims fifty laps a day.",
        "The referee gave a red card.",
        "We lost the football game again.",
        "Cycling up that hill was tough.",
    ],
    "work": [
        "My boss wants the report by Friday.",
        "I have three meetings tomorrow.",
        "The office printer is broken again.",
        "I asked for a raise today.",
        "Our project deadline moved up.",
        "I'm working from home this week.",
        "The new colleague starts on Monday.",
        "I need to answer forty emails.",
    ],
}
CORPUS = [text for texts in TOPICS.values() for text in texts]


@pytest.fixture(scope="module")
def module():
    return evaluate.load(evaluate_module_path("sem_ent"))


def test_module_equals_the_functional_core(module):
    generated = [
        "Pizza for dinner?",
        "It's pouring rain.",
        "Nice goal!",
        "Meeting at nine.",
        "Cake is ready.",
    ]
    result = module.compute(predictions=generated, references=CORPUS, num_clusters=4, seed=1)
    clusters = SemanticClusters.fit(CORPUS, load_embedder(), num_clusters=4, seed=1)
    expected = sem_ent(generated, clusters)
    assert result["sem_ent"] == pytest.approx(expected["sem_ent"])
    assert result["cluster_distribution"] == pytest.approx(expected["cluster_distribution"])
    assert result["max_sem_ent"] == pytest.approx(math.log(4)) and result["num_texts"] == 5
    assert (
        result["clusters"]["embedder"]["kind"] == "sentence_transformers"
        and result["clusters"]["num_clusters"] == 4
    )


def test_topics_become_clusters_and_one_topic_scores_zero(module, tmp_path):
    saved = tmp_path / "clusters"
    spread = [TOPICS[topic][i] for topic in TOPICS for i in (0, 1)]
    result = module.compute(
        predictions=spread, references=CORPUS, num_clusters=4, save_clusters_to=str(saved)
    )
    # two per topic: uniform over the 4 clusters
    assert result["sem_ent"] == pytest.approx(math.log(4))
    one_topic = module.compute(predictions=TOPICS["food"], clusters=str(saved))
    assert one_topic["sem_ent"] == 0.0 and sorted(one_topic["cluster_distribution"]) == [
        0.0,
        0.0,
        0.0,
        1.0,
    ]
    # Reusing the saved clusters gives the very same figures as the fit that wrote them.
    again = module.compute(predictions=spread, clusters=str(saved))
    assert again["cluster_distribution"] == result["cluster_distribution"]


def test_module_refuses_misuse(module, tmp_path):
    with pytest.raises(ValueError, match=r"^`references` is required .* unless `clusters`"):
        module.compute(predictions=["a b"])
    with pytest.raises(
        ValueError, match=r"^`clusters` is given along with `references`: give exactly one"
    ):
        module.compute(predictions=["a b"], references=CORPUS, clusters=str(tmp_path))
    with pytest.raises(
        ValueError,
        match=r"^`num_clusters`=3 applies to fitting clusters on `references`, not to saved `clusters`",
    ):
        module.compute(predictions=["a b"], clusters=str(tmp_path), num_clusters=3)
    with pytest.raises(ValueError, match="flat list"):
        module.compute(predictions=[["a", "b"]], references=CORPUS)
    with pytest.raises(ValueError, match="`texts` is empty|`predictions`"):
        module.compute(predictions=[], references=CORPUS, num_clusters=4)


def test_dialeval_evaluate_adds_sem_ent_and_its_plot(tmp_path, capsys):
    corpus = tmp_path / "train.txt"
    corpus.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    demo = REPO_ROOT / "examples" / "demo_response_sets.jsonl"
    out, saved, plots = tmp_path / "report.json", tmp_path / "clusters", tmp_path / "plots"
    argv = [
        "evaluate",
        str(demo),
        "--output",
        str(out),
        "--no-progress",
        "--nli-model",
        "none",
        "--bertscore-model",
        "none",
        "--cross-encoder-model",
        "none",
    ]
    assert (
        main(
            argv
            + [
                "--reference-corpus",
                str(corpus),
                "--sem-ent-k",
                "4",
                "--save-sem-ent-clusters",
                str(saved),
                "--plot",
                str(plots),
            ]
        )
        == 0
    )
    summary = json.loads(out.read_text(encoding="utf-8"))["metrics"]["sem_ent"]
    assert (
        summary["scope"] == "corpus" and summary["num_clusters"] == 4 and summary["num_texts"] == 40
    )
    assert 0 <= summary["sem_ent"] <= math.log(4) + 1e-9
    printed = capsys.readouterr().out
    assert "sem_ent" in printed and f"plot: {plots / 'sem_ent_clusters.png'}" in printed
    image = imread(plots / "sem_ent_clusters.png")
    assert image.shape[1] > 600 and image[..., :3].std() > 0.05
    # Saved clusters: same Sem-Ent without a reference corpus.
    assert main(argv + ["--sem-ent-clusters", str(saved)]) == 0
    reused = json.loads(out.read_text(encoding="utf-8"))["metrics"]["sem_ent"]
    assert reused["sem_ent"] == pytest.approx(summary["sem_ent"]) and reused["clusters"].startswith(
        "saved clusters"
    )


def test_dialeval_evaluate_without_reference_has_no_sem_ent(tmp_path):
    out = tmp_path / "r.json"
    demo = REPO_ROOT / "examples" / "demo_response_sets.jsonl"
    assert (
        main(
            [
                "evaluate",
                str(demo),
                "--output",
                str(out),
                "--no-progress",
                "--no-sentence-model",
                "--nli-model",
                "none",
                "--bertscore-model",
                "none",
                "--cross-encoder-model",
                "none",
            ]
        )
        == 0
    )
    assert "sem_ent" not in json.loads(out.read_text(encoding="utf-8"))["metrics"]


def test_too_small_reference_corpus_skips_sem_ent_but_not_lf(tmp_path):
    corpus = tmp_path / "train.txt"
    corpus.write_text("hey\nyo\nhey\n", encoding="utf-8")
    out = tmp_path / "r.json"
    demo = REPO_ROOT / "examples" / "demo_response_sets.jsonl"
    assert (
        main(
            [
                "evaluate",
                str(demo),
                "--output",
                str(out),
                "--no-progress",
                "--no-sentence-model",
                "--nli-model",
                "none",
                "--bertscore-model",
                "none",
                "--cross-encoder-model",
                "none",
                "--homogenization-model",
                "none",
                "--reference-corpus",
                str(corpus),
            ]
        )
        == 0
    )
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["metrics"]["corpus_lexical_diversity"]["lf_counted_against"] == "reference corpus"
    skipped = {entry["metric"]: entry["reason"] for entry in report["skipped"]}
    assert "2 distinct texts, fewer than the 20 clusters" in skipped["sem_ent"]


NO_PAIR_MODELS = [
    "--no-progress",
    "--nli-model",
    "none",
    "--bertscore-model",
    "none",
    "--cross-encoder-model",
    "none",
    "--homogenization-model",
    "none",
]


def test_sem_ent_asked_for_with_more_clusters_than_texts_is_an_error(tmp_path, capsys):
    corpus = tmp_path / "train.txt"
    corpus.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    demo = REPO_ROOT / "examples" / "demo_response_sets.jsonl"
    argv = ["evaluate", str(demo), "--output", str(out), *NO_PAIR_MODELS]
    argv += ["--reference-corpus", str(corpus), "--sem-ent-k", "1000000", "--metric", "sem_ent"]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "Traceback" not in error
    assert (
        "`--metric`: sem_ent was asked for but cannot run: the reference corpus has "
        f"{len(set(CORPUS))} distinct texts, fewer than the 1000000 clusters to fit (--sem-ent-k)"
        in error
    )
    assert not out.exists()


def test_sem_ent_max_length_fits_a_short_position_table(tmp_path, capsys, tiny_gpt2_path):
    from tiny_models import MAX_LENGTH

    corpus = tmp_path / "train.txt"
    corpus.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    demo = REPO_ROOT / "examples" / "demo_response_sets.jsonl"
    argv = ["evaluate", str(demo), "--output", str(out), *NO_PAIR_MODELS, "--metric", "sem_ent"]
    argv += ["--reference-corpus", str(corpus), "--sem-ent-k", "4"]
    argv += ["--sem-ent-embedder", f"last_token={tiny_gpt2_path}"]
    assert main(argv) == 2  # the released code's 256 tokens exceed the tiny model's positions
    error = capsys.readouterr().err
    assert (
        f"`--sem-ent-max-length`=256 exceeds the {MAX_LENGTH} positions of "
        f"{tiny_gpt2_path!r}; pass `--sem-ent-max-length` <= {MAX_LENGTH}"
    ) in error
    assert main([*argv, "--sem-ent-max-length", str(MAX_LENGTH)]) == 0
    summary = json.loads(out.read_text(encoding="utf-8"))["metrics"]["sem_ent"]
    assert summary["embedder"]["max_length"] == MAX_LENGTH
    options = json.loads(out.read_text(encoding="utf-8"))["provenance"]["options"]
    assert options["--sem-ent-max-length"] == MAX_LENGTH


def test_only_the_main_process_saves_clusters_under_split_work(module, tmp_path, monkeypatch):
    """Under split_work every process holds the main process's clusters; only that one writes them."""
    import sys
    from types import SimpleNamespace

    module_globals = sys.modules[type(module).__module__]
    monkeypatch.setattr(module_globals, "is_sharing_work", lambda: True)
    monkeypatch.setattr(
        module_globals, "process_state", lambda: SimpleNamespace(is_main_process=False)
    )
    saved = tmp_path / "clusters"
    module.compute(
        predictions=CORPUS[:4], references=CORPUS, num_clusters=4, save_clusters_to=str(saved)
    )
    assert not saved.exists()
    monkeypatch.setattr(
        module_globals, "process_state", lambda: SimpleNamespace(is_main_process=True)
    )
    module.compute(
        predictions=CORPUS[:4], references=CORPUS, num_clusters=4, save_clusters_to=str(saved)
    )
    assert saved.exists()
