"""Smoke runs of the one-command reproductions of Sato et al. (2020) Table 3 / Fig. 2 and Sato et
al. (2022) Tables 2-3 on tiny models: the scripts must run end to end and their numbers must be
what the library computes for the same inputs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import torch

REPRODUCE = Path(__file__).resolve().parents[2] / "examples" / "reproduce"


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, REPRODUCE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models on a shared 2-core machine
    yield
    torch.set_num_threads(threads)


QUESTIONS = [
    {
        "context": [
            "hi there! how are you doing today?",
            "i'm doing well.",
            "what are you going to cook?",
        ],
        "candidates": [
            "probably pasta with tomato sauce.",
            "a man is playing a guitar.",
            "yes",
            "okay, see you later!",
        ],
        "label": 0,
    },
    {
        "context": ["do you have any pets at home?", "yes, a dog.", "what is its name?"],
        "candidates": [
            "his name is max.",
            "i read a lot of history books.",
            "the children are playing.",
            "no",
        ],
        "label": 0,
    },
    {
        "context": ["where do you work?", "i work as a nurse.", "that must be hard work."],
        "candidates": [
            "most days, yes.",
            "nobody is playing music right now.",
            "i love sunny days.",
            "what?",
        ],
        "label": 0,
    },
]
REPOSITORY = [
    "i like comedies.",
    "that sounds nice.",
    "i don't know.",
    "thank you, you too.",
    "sure, why not?",
    "the weather was good.",
    "i think i will visit my parents.",
    "where is the park?",
    "okay.",
    "not bad.",
]


def test_sato2020_table3_smoke(tmp_path, tiny_gpt2_path, tiny_seq2seq_paths, one_thread, capsys):
    from dialeval.metrics.engines.lm_scorer import CandidateScorer
    from dialeval.metrics.response_selection import (
        random_protocol_accuracies,
        random_trial,
        response_selection,
        system_ranking_correlation,
    )

    (tmp_path / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    (tmp_path / "repository.txt").write_text("\n".join(REPOSITORY) + "\n")
    (tmp_path / "exclude.txt").write_text("i don't know.\nokay.\n")
    systems = {
        "gpt2": tiny_gpt2_path,
        "bart": tiny_seq2seq_paths["bart"],
        "blenderbot": tiny_seq2seq_paths["blenderbot"],
    }
    # Per response, five annotators' scores (enables the HUMAN row).
    rng = np.random.default_rng(0)
    human = {name: rng.integers(1, 6, size=(4, 5)).tolist() for name in systems}
    (tmp_path / "human.json").write_text(json.dumps(human))
    report = load_script("sato2020_table3").main(
        [
            "--questions",
            str(tmp_path / "questions.jsonl"),
            "--human-scores",
            str(tmp_path / "human.json"),
            *(arg for name, path in systems.items() for arg in ("--system", f"{name}={path}")),
            "--repository",
            str(tmp_path / "repository.txt"),
            "--exclude",
            str(tmp_path / "exclude.txt"),
            "--num-trials",
            "3",
            "--human-splits",
            "4",
            "--device",
            "cpu",
            "--output-dir",
            str(tmp_path / "out"),
        ]
    )
    contexts, candidates = [q["context"] for q in QUESTIONS], [q["candidates"] for q in QUESTIONS]
    s_final = {name: float(np.mean(np.mean(scores, axis=1))) for name, scores in human.items()}
    assert report["human_scores"] == pytest.approx(s_final)
    trials = [
        random_trial(QUESTIONS, REPOSITORY, seed=0, trial=t, exclude=["i don't know.", "okay."])
        for t in range(3)
    ]
    for name, path in systems.items():
        scorer = CandidateScorer(path, device="cpu")
        assert (
            report["chosen_accuracy"][name]
            == response_selection(contexts, candidates, [0, 0, 0], scorer=scorer)["accuracy"]
        )
        assert report["random_accuracy"][name] == random_protocol_accuracies(scorer, trials)
    chosen = system_ranking_correlation(s_final, report["chosen_accuracy"])
    assert report["rows"]["CHOSEN"]["spearman"] == chosen["spearman"] or np.isnan(
        chosen["spearman"]
    )
    assert report["rows"]["RANDOM"]["num_trials"] == 3
    # HUMAN as the paper (one split, seeded, with its p-value); the 4-split mean beside it
    script = load_script("sato2020_table3")
    per_annotator = {name: np.asarray(scores, dtype=float) for name, scores in human.items()}
    one = script.human_split(per_annotator, seed=0, split=0)
    assert {k: report["rows"]["HUMAN"][k] for k in ("spearman", "p_value", "seed")} == {
        "spearman": one["spearman"],
        "p_value": one["p_value"],
        "seed": 0,
    }
    rhos = [script.human_split(per_annotator, seed=0, split=s)["spearman"] for s in range(4)]
    defined = [rho for rho in rhos if rho is not None]
    assert report["rows"]["HUMAN (mean of 4 splits)"]["spearman"] == pytest.approx(
        np.mean(defined) if defined else None
    )
    printed = capsys.readouterr().out
    assert printed.index("Settings that differ from the paper:") < printed.index("| Metric |")
    assert "  - RANDOM: 3 trials (paper, footnote 5: 100)" in printed
    assert "  - CHOSEN / RANDOM questions: 3 (paper: 1,019)" in printed
    assert "  - human scores: 4 responses x 5 annotators per system (paper: 56 x 5)" in printed
    assert (tmp_path / "out" / "fig2_random_vs_chosen.png").stat().st_size > 0
    table = (tmp_path / "out" / "table3.md").read_text()
    assert "| CHOSEN |" in table and "| BLEU-1 | not computed |" in table
    assert (
        json.loads((tmp_path / "out" / "table3.json").read_text())["chosen_accuracy"]
        == report["chosen_accuracy"]
    )


def test_sato2020_human_row_is_one_seeded_split_as_the_paper():
    script = load_script("sato2020_table3")
    # annotators agree on every response: every split ranks a < b < c < d < e on both sides, rho = 1
    agreeing = {name: np.full((3, 5), float(score)) for name, score in zip("abcde", range(1, 6))}
    upper = script.human_upper_bound(agreeing, splits=3, seed=7)
    assert (
        upper["one_split"]["spearman"] == pytest.approx(1.0)
        and upper["one_split"]["p_value"] < 0.05
    )
    assert (upper["one_split"]["seed"], upper["one_split"]["split"]) == (7, 0)
    assert upper["spearman_mean"] == pytest.approx(1.0) and upper["num_splits"] == 3
    # the paper's split does not depend on how many splits the mean row averages
    rng = np.random.default_rng(3)
    noisy = {name: rng.integers(1, 6, size=(6, 5)).astype(float) for name in "abcde"}
    one = script.human_upper_bound(noisy, splits=1, seed=2)
    many = script.human_upper_bound(noisy, splits=20, seed=2)
    assert one["one_split"] == many["one_split"] == script.human_split(noisy, seed=2, split=0)
    assert one["spearman_mean"] == one["one_split"]["spearman"]
    per_split = [script.human_split(noisy, seed=2, split=s)["spearman"] for s in range(20)]
    assert many["spearman_mean"] == pytest.approx(
        np.mean([rho for rho in per_split if rho is not None])
    )
    # split 0, by hand: per system, each response's 5 annotators go 2 / 3 by a permutation from
    # default_rng([seed, 0]) drawn system after system; scipy's rho between the two sides' means
    from scipy.stats import spearmanr

    rng = np.random.default_rng([2, 0])
    sides = {0: [], 1: []}
    for name in "abcde":
        order = np.argsort(rng.random((6, 5)), axis=1)
        sides[0].append(np.mean([noisy[name][i, order[i, :2]] for i in range(6)]))
        sides[1].append(np.mean([noisy[name][i, order[i, 2:]] for i in range(6)]))
    rho, p_value = spearmanr(sides[0], sides[1])
    assert (one["one_split"]["spearman"], one["one_split"]["p_value"]) == pytest.approx(
        (rho, p_value)
    )


def test_sato2020_lists_what_differs_from_the_paper():
    import argparse

    script = load_script("sato2020_table3")
    paper_like = argparse.Namespace(
        systems={f"s{i}": "m" for i in range(10)}, repository="r", exclude="x", human_splits=100
    )
    per_annotator = {f"s{i}": np.ones((56, 5)) for i in range(10)}
    differ = script.settings_that_differ(paper_like, 1019, 100, per_annotator)
    # only what cannot match here: the systems, the extra mean row, the generation metrics
    assert [item.split(":")[0] for item in differ] == [
        "systems",
        "HUMAN (mean of 100 splits)",
        "BLEU-1 / BLEU-2 / METEOR / ROUGE-L",
    ]
    small = argparse.Namespace(
        systems={"a": "m", "b": "m", "c": "m"}, repository="r", exclude=None, human_splits=4
    )
    differ = script.settings_that_differ(small, 3, 0, None)
    assert "RANDOM: not run (no --repository / --random-questions)" in differ
    assert "CHOSEN / RANDOM questions: 3 (paper: 1,019)" in differ
    assert any(
        item.startswith("RANDOM: the systems' training utterances are not excluded")
        for item in differ
    )
    assert any(item.startswith("HUMAN: not computed") for item in differ)
    report = {
        "rows": {
            "CHOSEN": {"spearman": 0.5, "p_value": 0.67},
            "HUMAN": {"spearman": None, "p_value": None, "seed": 0},
            "HUMAN (mean of 4 splits)": {"spearman": 0.25, "p_value": None},
        },
        "differs_from_paper": differ,
    }
    text = script.comparison(report)
    assert "  CHOSEN: ours 0.500, paper 0.48\n  HUMAN: ours undefined, paper 0.87\n" in text
    assert "  HUMAN (mean of 4 splits): ours 0.250, paper - (one split)\n" in text
    table = script.markdown(report)
    assert (
        "| HUMAN | undefined | - | 0.87 | 0.0038 |\n| HUMAN (mean of 4 splits) | 0.250 | - | - | - |"
        in table
    )
    assert (
        "| CHOSEN | 0.500 | 0.67 | 0.48 | 0.19 |" in table
        and "| BLEU-1 | not computed | - | -0.36 | 0.30 |" in table
    )


def test_sato2020_table3_needs_three_systems(tmp_path):
    with pytest.raises(SystemExit):
        load_script("sato2020_table3").parse_args(
            [
                "--questions",
                "q",
                "--human-scores",
                "h",
                "--system",
                "a=x",
                "--system",
                "b=y",
                "--output-dir",
                str(tmp_path),
            ]
        )


@pytest.fixture(scope="module")
def yes_no_classifier(tmp_path_factory, tiny_tokenizer_path):
    """Two labels only, so no list is excluded as ambiguous and every figure is defined."""
    from tiny_models import save_tiny_roberta_yes_no

    return save_tiny_roberta_yes_no(
        tmp_path_factory.mktemp("yes-no-2"), tiny_tokenizer_path, labels={0: "yes", 1: "no"}
    )


def test_sato2022_tables2_3_smoke(
    tmp_path, tiny_gpt2_path, tiny_seq2seq_paths, yes_no_classifier, one_thread
):
    from dialeval.generation.nbest import beam_search_nbest, dialogue_prompt
    from dialeval.hub import load_model
    from dialeval.metrics.nbest_contradiction.certainty_variety import nbest_contradiction

    entq = [
        {
            "history": "Yeah I'm in North Carolina.",
            "message": "Are you in North Carolina?",
            "expected_answer": "yes",
        },
        {
            "history": "I made a cake for my sister.",
            "message": "Did you make a cake?",
            "expected_answer": "yes",
        },
    ]
    cntq = [
        {
            "history": "We call it soda.",
            "message": "Don't you always call it Coke?",
            "expected_answer": "no",
        },
        {
            "history": "I lived in Texas.",
            "message": "Didn't you live in Ohio?",
            "expected_answer": "no",
        },
    ]
    (tmp_path / "entq.jsonl").write_text("".join(json.dumps(row) + "\n" for row in entq))
    (tmp_path / "cntq.jsonl").write_text("".join(json.dumps(row) + "\n" for row in cntq))
    script = load_script("sato2022_tables2_3")
    report = script.main(
        [
            "--entq",
            str(tmp_path / "entq.jsonl"),
            "--cntq",
            str(tmp_path / "cntq.jsonl"),
            "--classifier",
            yes_no_classifier,
            "--bs",
            f"DialoGPT-tiny={tiny_gpt2_path}",
            "--technique-model",
            tiny_seq2seq_paths["bart"],
            "--ul",
            f"UL (alpha=1)={tiny_gpt2_path}",
            "--beam-size",
            "4",
            "--num-beam-groups",
            "2",
            "--max-new-tokens",
            "4",
            "--device",
            "cpu",
            "--output-dir",
            str(tmp_path / "out"),
        ]
    )
    assert set(report["table2"]) == {"DialoGPT-tiny"}
    assert set(report["table3"]) == {"BS", "DBS", "NS", "UL (alpha=1)"}
    for row in [*report["table2"].values(), *report["table3"].values()]:
        assert row["ENTQ"]["num_inputs"] == 2 and row["CNTQ"]["num_inputs"] == 2
    # The Table 2 row is beam search + the metric on the same inputs.
    lm = load_model(tiny_gpt2_path, "language_model", device="cpu")
    rows = entq + cntq
    prompts = [
        dialogue_prompt([row["history"], row["message"]], lm.tokenizer, lm.model) for row in rows
    ]
    nbest = beam_search_nbest(lm.model, lm.tokenizer, prompts, beam_size=4, max_new_tokens=4)
    expected = nbest_contradiction(
        nbest,
        [row["expected_answer"] for row in rows],
        yes_no_classifier,
        device="cpu",
        input_types=["ENTQ", "ENTQ", "CNTQ", "CNTQ"],
    )["per_type"]
    assert report["table2"]["DialoGPT-tiny"] == expected
    assert all(
        row[kind]["num_analyzed"] == 2
        for row in report["table3"].values()
        for kind in ("ENTQ", "CNTQ")
    )
    table = (tmp_path / "out" / "tables2_3.md").read_text()
    assert "| BS (paper) | 0.856 | 0.768 | 0.824 | 0.737 | 1566 / 2000 | 1403 / 2000 |" in table
    assert "UL (alpha=1) (ours)" in table


def test_sato2022_needs_a_row(tmp_path):
    with pytest.raises(SystemExit):
        load_script("sato2022_tables2_3").parse_args(
            ["--entq", "e", "--cntq", "c", "--classifier", "prefix", "--output-dir", str(tmp_path)]
        )
