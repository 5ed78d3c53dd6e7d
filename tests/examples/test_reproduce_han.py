"""Han et al. (2022) reproduction scripts end to end on tiny inputs (smoke): Table 1's numbers are
scipy's correlations of the library's measures; Tables 3 / 5 print a row per method / config."""

from __future__ import annotations

import json

import pytest
from test_reproduce import load_script, table_rows

WORDS = [
    "the",
    "cat",
    "dog",
    "sat",
    "ran",
    "happy",
    "sad",
    "food",
    "movie",
    "weather",
    "travel",
    "music",
    "book",
    "coffee",
    "rain",
    "sun",
    "city",
    "park",
]


def sentence(seed: int, length: int, vocabulary: int = len(WORDS)) -> str:
    return " ".join(WORDS[(seed * 7 + i * 3) % vocabulary] for i in range(length))


def test_table1_correlations_are_the_librarys(tmp_path):
    from scipy.stats import pearsonr, spearmanr

    from dialeval.metrics import SemanticClusters, distinct_n, load_embedder, sem_ent

    reference = [sentence(seed, 5) + f" {seed}" for seed in range(30)]
    (tmp_path / "ref.txt").write_text("\n".join(reference) + "\n", encoding="utf-8")
    rated = [
        {
            "system": f"s{i}",
            "responses": [sentence(j, 4 + i, 4 + 3 * i) for j in range(5)],
            "human_score": {
                "Diversity/BT": float(i) + (i % 2) * 0.3,
                "Interesting/BT": float((i * 3) % 5),
            },
        }
        for i in range(5)
    ]
    (tmp_path / "rated.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rated), encoding="utf-8"
    )
    results = load_script("han2022_table1").main(
        [
            "--rated",
            str(tmp_path / "rated.jsonl"),
            "--reference",
            str(tmp_path / "ref.txt"),
            "--num-clusters",
            "4",
            "--out-dir",
            str(tmp_path / "out"),
        ]
    )
    rows = table_rows((tmp_path / "out" / "table1.md").read_text(encoding="utf-8"))
    assert [row[:3] for row in rows[:2]] == [
        ["Diversity/BT", "Pearson", "ours"],
        ["Diversity/BT", "Pearson", "paper"],
    ]
    assert rows[1][7] == "0.810 (0.015)"  # the paper's Sem-Ent Pearson, printed beside ours

    clusters = SemanticClusters.fit(reference, load_embedder(), num_clusters=4, seed=0)
    human = [row["human_score"]["Diversity/BT"] for row in rated]
    dist = [distinct_n(row["responses"], 3) for row in rated]
    sem = [sem_ent(row["responses"], clusters)["sem_ent"] for row in rated]
    r, p = pearsonr(dist, human)
    assert rows[0][3] == f"{r:.3f} ({p:.3f})"
    rho, p = spearmanr(sem, human)
    spearman_row = next(row for row in rows if row[:3] == ["Diversity/BT", "Spearman", "ours"])
    assert spearman_row[7] == f"{rho:.3f} ({p:.3f})"
    assert results["correlations"]["Diversity/BT|Spearman"]["sem_ent"]["coefficient"] == rho


TINY = [
    "--test-limit",
    "3",
    "--steps",
    "1",
    "--base-steps",
    "1",
    "--batch-size",
    "4",
    "--num-clusters",
    "3",
    "--negative-contexts",
    "3",
    "--recluster-every",
    "1",
    "--vocab-size",
    "300",
    "--width",
    "32",
    "--layers",
    "1",
    "--max-length",
    "32",
    "--max-new-tokens",
    "4",
    "--seed",
    "1",
]


def write_pairs(tmp_path) -> str:
    pairs = [
        {"context": [sentence(i, 5)], "response": sentence(i + 1, 4) + f" {i}"} for i in range(20)
    ]
    # one generic response to 4 different contexts: 2 bits of target entropy, EDF removes these 4 pairs
    pairs += [
        {"context": [sentence(i, 3) + f" {i}"], "response": "i do not know"} for i in range(4)
    ]
    (tmp_path / "pairs.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in pairs), encoding="utf-8"
    )
    return str(tmp_path / "pairs.jsonl")


def test_tables3_5_print_a_row_per_method_and_config(tmp_path):
    pairs = write_pairs(tmp_path)
    results = load_script("han2022_tables3_5").main(
        [
            "--pairs",
            pairs,
            "--test-contexts",
            pairs,
            *TINY,
            "--gammas",
            "1",
            "--ks",
            "4",
            "--out-dir",
            str(tmp_path / "out"),
        ]
    )
    markdown = (tmp_path / "out" / "tables3_5.md").read_text(encoding="utf-8")
    # the tables, after ours vs the paper and what differs
    markdown = markdown[markdown.index("\nTable 3 (") :]
    table3 = table_rows(markdown.split("Table 5")[0])
    assert [row[:2] for row in table3] == [
        [name, run]
        for name, ours in [
            ("MLE (vanilla)", "ours"),
            ("MMI (antiLM)", "ours"),
            ("CVAE", "not run"),
            ("EDF", "ours"),
            ("NT", "ours"),
            ("AdaLabel", "not run"),
            ("DRESS(-NT)", "ours"),
            ("DRESS", "ours"),
        ]
        for run in (ours, "paper")
    ]
    assert all(row[9] == "n/a" for row in table3 if row[1] == "ours")  # MaUdE is not available
    assert table3[3][2:] == [
        "0.0349",
        "0.1677",
        "0.3069",
        "7.0730",
        "10.3806",
        "11.9808",
        "0.2155",
        "0.8208",
        "2.5784",
    ]
    assert (
        results["baselines"]["edf"]["removed_pairs"] == 4
        and results["baselines"]["edf"]["source"] == "utterance"
    )
    assert "EDF: 4 of 24 pairs (16.7%) removed" in markdown
    nt = results["baselines"]["nt"]
    assert nt["contexts"] == 3 and nt["negatives"] >= 1 and nt["alpha"] == nt["share"]
    assert results["baselines"]["mmi"] == {"lambda": 0.5, "gamma": 5, "anti_lm": "trained here"}
    table5 = table_rows(markdown.split("Table 5")[1])
    assert [row[0] for row in table5] == ["gamma = 1.0", "k = 4"]
    assert table5[0][5:] == ["0.4333", "12.8968", "0.8570", "2.6233"]


def test_tables3_methods_picks_rows_and_refuses_unbuilt_ones(tmp_path, capsys):

    pairs = write_pairs(tmp_path)
    script = load_script("han2022_tables3_5")
    # the 3 generations differ, so none is above a ratio of 0.99: NT has no negatives and is not run
    results = script.main(
        [
            "--pairs",
            pairs,
            "--test-contexts",
            pairs,
            *TINY,
            "--methods",
            "nt,edf",
            "--skip-table5",
            "--nt-r-thres",
            "0.99",
            "--out-dir",
            str(tmp_path / "out"),
        ]
    )
    assert list(results["table3"]) == ["EDF"]
    assert results["baselines"]["nt"]["negatives"] == 0
    markdown = (tmp_path / "out" / "tables3_5.md").read_text(encoding="utf-8")
    assert [row[:2] for row in table_rows(markdown)] == [
        ["CVAE", "not run"],
        ["CVAE", "paper"],
        ["EDF", "ours"],
        ["EDF", "paper"],
        ["NT", "not run"],
        ["NT", "paper"],
        ["AdaLabel", "not run"],
        ["AdaLabel", "paper"],
    ]
    assert "not run: no generation is frequent at this --nt-r-thres" in markdown
    with pytest.raises(SystemExit):
        script.main(["--pairs", pairs, "--methods", "cvae", "--out-dir", str(tmp_path / "out")])
    assert "CVAE and AdaLabel are not implemented" in capsys.readouterr().err


@pytest.mark.parametrize(
    "family",
    # the second seq2seq family takes the same code path; 27 s
    ["bart", pytest.param("blenderbot_small", marks=pytest.mark.slow)],
)
def test_tables3_5_paper_scale_fine_tunes_a_pretrained_seq2seq_model(
    tmp_path, tiny_seq2seq_paths, family
):
    """--scale paper on a tiny BART (decoding starts from </s>) and BlenderBot-small (from <s>; its
    tokenizer adds no eos) saved with their tokenizers: every method trains and generates."""
    pairs = [
        {"context": [sentence(i, 5)], "response": sentence(i + 1, 4) + f" {i}"} for i in range(12)
    ]
    (tmp_path / "pairs.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in pairs), encoding="utf-8"
    )
    results = load_script("han2022_tables3_5").main(
        [
            "--scale",
            "paper",
            "--model",
            tiny_seq2seq_paths[family],
            "--device",
            "cpu",
            "--pairs",
            str(tmp_path / "pairs.jsonl"),
            "--test-contexts",
            str(tmp_path / "pairs.jsonl"),
            "--test-limit",
            "3",
            "--steps",
            "2",
            "--batch-size",
            "4",
            "--num-clusters",
            "3",
            "--skip-table5",
            "--negative-contexts",
            "4",
            "--recluster-every",
            "1",
            "--max-length",
            "32",
            "--max-new-tokens",
            "4",
            "--out-dir",
            str(tmp_path / "out"),
        ]
    )
    assert results["start"] == tiny_seq2seq_paths[family] and results["num_train_pairs"] == 12
    table3 = table_rows((tmp_path / "out" / "tables3_5.md").read_text(encoding="utf-8"))
    ours = {row[0] for row in table3 if row[1] == "ours"}
    assert {"MLE (vanilla)", "MMI (antiLM)", "EDF", "DRESS(-NT)", "DRESS"} <= ours
    for texts in results["generations"].values():
        assert len(texts) == 3 and any(texts)


def test_tables3_5_decodes_greedily_whatever_the_checkpoints_settings(tiny_seq2seq_paths):
    """A checkpoint's Blender-style generation_config (10 beams, min_length 20) must not reach §5.3's greedy decoding:
    a model whose greedy answer is eos at once gives empty responses."""
    from argparse import Namespace

    from tiny_lms import eager_to_stop
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    path = tiny_seq2seq_paths["blenderbot_small"]
    model = eager_to_stop(AutoModelForSeq2SeqLM.from_pretrained(path))
    texts = load_script("han2022_tables3_5").greedy_responses(
        model,
        AutoTokenizer.from_pretrained(path),
        [[sentence(i, 5)] for i in range(3)],
        Namespace(max_length=32, max_new_tokens=6),
    )
    assert texts == ["", "", ""]


SMALL = ["--methods", "vanilla", "--skip-table5", "--train-limit", "6", *TINY]


def test_tables3_5_default_to_the_papers_dailydialog_when_it_is_here(tmp_path, capsys):
    """A DailyDialog archive in --dailydialog-dir: trained on its train pairs, tested on its test contexts, and said;
    DialoGPT-large is not on this machine, so the embedder line says MiniLM and why."""
    from dailydialog_release import write_archive

    write_archive(tmp_path)
    results = load_script("han2022_tables3_5").main(
        [
            "--dailydialog-dir",
            str(tmp_path),
            "--no-verify",
            "--cache-dir",
            str(tmp_path / "cache"),
            *SMALL,
            "--out-dir",
            str(tmp_path / "out"),
        ]
    )
    printed = capsys.readouterr().out
    assert "data: DailyDialog (the paper's data" in printed
    assert results["data"] == {
        "dataset": "dailydialog",
        "paper": True,
        "why": None,
        "said": printed.splitlines()[0],
    }
    # the fake release: test dialogues of 3 and 2 turns give 3 contexts, train dialogues of 3 and 2 turns 3 pairs
    assert results["num_train_pairs"] == 3 and results["num_test_contexts"] == 3
    embedder_line = next(
        line for line in printed.splitlines() if line.startswith("Sem-Ent / DRESS embedder:")
    )
    assert embedder_line.startswith(
        "Sem-Ent / DRESS embedder: sentence_transformers sentence-transformers/all-MiniLM-L6-v2 "
        "(NOT the paper's last_token microsoft/DialoGPT-large: Model 'microsoft/DialoGPT-large' "
        "is not available on this machine"
    )
    assert (
        results["embedder"]["kind"] == "sentence_transformers" and not results["embedder"]["paper"]
    )
    # before the tables: ours next to the paper's, then what differs
    markdown = (tmp_path / "out" / "tables3_5.md").read_text(encoding="utf-8")
    before = markdown.split("| Method |")[0]
    assert "MLE (vanilla): Dist-3 " in before and "(paper 0.3881)" in before and "Sem-Ent" in before
    differs = before.split("Settings that differ from the paper:")[1]
    assert "test contexts: 3 (the paper: DailyDialog's test split, 6,740 contexts)" in differs
    assert (
        "NOT the paper's last_token microsoft/DialoGPT-large" in differs and "data:" not in differs
    )
    assert printed.index("Settings that differ from the paper:") < printed.index("| Method |")


def test_tables3_5_fall_back_to_dailydialog_pp_and_say_so(
    shared_data, tmp_path, capsys, tiny_gpt2_path, monkeypatch
):
    """No DailyDialog (offline, nothing cached): DailyDialog++ from --data-dir, said with how to get the paper's;
    the paper's embedder, when it is here (a tiny GPT-2 stands in for DialoGPT-large), is used and said."""
    folder = shared_data / "dailydialog-plusplus"
    if not folder.is_dir():
        pytest.skip(f"DailyDialog++ files are not at {folder}")
    import dialeval.metrics

    script = load_script("han2022_tables3_5")
    monkeypatch.setattr(script, "PAPER_EMBEDDER_MODEL", tiny_gpt2_path)
    load_embedder = dialeval.metrics.load_embedder
    # the tiny GPT-2 has 128 positions, DialoGPT-large's embedder reads 256 tokens
    monkeypatch.setattr(
        dialeval.metrics,
        "load_embedder",
        lambda kind, model: load_embedder(kind, model, max_length=64),
    )
    results = script.main(
        [
            "--data-dir",
            str(folder),
            "--cache-dir",
            str(tmp_path / "cache"),
            *SMALL,
            "--out-dir",
            str(tmp_path / "out"),
        ]
    )
    printed = capsys.readouterr().out
    data_line = printed.splitlines()[0]
    assert data_line.startswith(
        "data: DailyDialog++ (positives as training pairs, its test split's contexts; NOT the "
        "paper's data). Not the paper's because DailyDialog was not found (ijcnlp_dailydialog.zip: "
        "could not download http://yanran.li/files/ijcnlp_dailydialog.zip"
    )
    assert data_line.endswith(
        "To use the paper's DailyDialog, download http://yanran.li/files/ijcnlp_dailydialog.zip on "
        "a machine with internet and pass the folder holding it as --dailydialog-dir"
    )
    assert results["data"]["dataset"] == "dailydialog_pp" and not results["data"]["paper"]
    assert (
        f"Sem-Ent / DRESS embedder: last_token {tiny_gpt2_path} (the paper's, App. A.7)" in printed
    )
    assert results["embedder"]["paper"]
    differs = printed.split("Settings that differ from the paper:")[1].split("| Method |")[0]
    assert "data: DailyDialog++" in differs and "embedder" not in differs


def test_tables3_5_explicit_flags_override_the_defaults(tmp_path, capsys):
    """--dataset dailydialog insists on the paper's data (no fallback); --dailydialog-dir without the archive
    is an error naming that flag; --embedder-kind / --embedder-model are used as given."""
    script = load_script("han2022_tables3_5")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit) as stopped:
        script.main(
            [
                "--dailydialog-dir",
                str(tmp_path / "empty"),
                "--data-dir",
                str(tmp_path),
                "--cache-dir",
                str(tmp_path / "cache"),
                *SMALL,
                "--out-dir",
                str(tmp_path / "out"),
            ]
        )
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert (
        "not found under --dailydialog-dir" in error
        and "http://yanran.li/files/ijcnlp_dailydialog.zip" in error
    )
    with pytest.raises(SystemExit):
        script.main(
            [
                "--dataset",
                "dailydialog",
                "--data-dir",
                str(tmp_path),
                "--cache-dir",
                str(tmp_path / "cache"),
                *SMALL,
                "--out-dir",
                str(tmp_path / "out"),
            ]
        )
    assert (
        "could not download http://yanran.li/files/ijcnlp_dailydialog.zip"
        in capsys.readouterr().err
    )
    args = script.parse_args(["--pairs", "p", "--out-dir", "o", "--embedder-kind", "last_token"])
    assert script.choose_embedder(args) == {
        "kind": "last_token",
        "model": "microsoft/DialoGPT-large",
        "explicit": True,
        "paper": True,
        "why": None,
    }
    args = script.parse_args(["--pairs", "p", "--out-dir", "o", "--embedder-model", "some/model"])
    assert script.choose_embedder(args)["kind"] == "sentence_transformers"
    assert "as asked; NOT the paper's" in script.describe_embedder(script.choose_embedder(args))
