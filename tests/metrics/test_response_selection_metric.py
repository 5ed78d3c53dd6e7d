"""Response-selection evaluation (Sato et al. 2020, §4.1.2 and Table 3) with tiny models.

The batched scorer is checked against an independent reference: one forward per candidate,
unpadded, with transformers' own ``labels=`` loss (mean over the scored tokens) times the
number of scored tokens.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import evaluate
import numpy as np
import pytest
import torch
from conftest import REPO_ROOT
from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

from dialeval.cli import main
from dialeval.hub import LoadedModel
from dialeval.metrics import evaluate_module_path
from dialeval.metrics.engines.lm_scorer import CandidateLosses, CandidateScorer, load_language_model
from dialeval.metrics.response_selection import (
    random_protocol_correlation,
    read_selection_questions,
    response_selection,
    select_by_loss,
    system_ranking_correlation,
)

CONTEXTS = [
    [
        "hi there! how are you doing today?",
        "i'm doing well, thanks for asking.",
        "what are you going to cook?",
    ],
    "do you have any pets at home?",
    [
        "where do you work?",
        "i work as a nurse at the hospital near the river.",
        "that must be hard work.",
    ],
]
CANDIDATES = [
    [
        "probably pasta with tomato sauce.",
        "a man is playing a guitar on the stage.",
        "yes",
        "nobody is playing music right now.",
    ],
    ["yes, i have a dog named max and two cats.", "i read a lot of history books."],
    [
        "most days, yes. helping people makes me happy.",
        "okay, see you later!",
        "the children are playing football outside.",
    ],
]
LABELS = [0, 0, 1]


def reference_nll_sums(
    path: str, contexts, candidates, separator: str | None = None
) -> list[list[float]]:
    """Summed candidate NLL, one unpadded forward per candidate, loss from transformers' ``labels``."""
    tokenizer = AutoTokenizer.from_pretrained(path)
    separator = tokenizer.eos_token if separator is None else separator
    encoder_decoder = "bart" in Path(path, "config.json").read_text()
    model = (
        (AutoModelForSeq2SeqLM if encoder_decoder else AutoModelForCausalLM)
        .from_pretrained(path)
        .eval()
    )
    out = []
    with torch.no_grad():
        for context, options in zip(contexts, candidates):
            turns = [context] if isinstance(context, str) else context
            text = separator.join(turns)
            row = []
            for option in options:
                if encoder_decoder:
                    source = tokenizer(text, return_tensors="pt")
                    labels = tokenizer(text_target=option, return_tensors="pt")["input_ids"]
                    loss = model(**source, labels=labels).loss
                    count = labels.shape[1]
                else:
                    prefix = tokenizer(text + separator, add_special_tokens=False)["input_ids"]
                    target = tokenizer(option, add_special_tokens=False)["input_ids"] + [
                        tokenizer.eos_token_id
                    ]
                    ids = torch.tensor([prefix + target])
                    labels = torch.tensor([[-100] * len(prefix) + target])
                    loss = model(input_ids=ids, labels=labels).loss
                    count = len(target)
                row.append(float(loss) * count)
            out.append(row)
    return out


@pytest.mark.parametrize("fixture", ["tiny_gpt2_path", "tiny_bart_path"])
def test_batched_losses_equal_one_forward_per_candidate(fixture, request):
    path = request.getfixturevalue(fixture)
    expected = reference_nll_sums(path, CONTEXTS, CANDIDATES)
    for batch_size, share_context in ((1, True), (2, True), (16, True), (2, False), (16, False)):
        result = response_selection(
            CONTEXTS,
            CANDIDATES,
            LABELS,
            model=path,
            device="cpu",
            batch_size=batch_size,
            share_context=share_context,
        )
        for row, reference in zip(result["per_question"], expected):
            np.testing.assert_allclose(row["nll_sums"], reference, rtol=1e-5, atol=1e-4)
            assert row["losses"] == row["nll_sums"]
            assert row["selected"] == int(np.argmin(reference))
    mean = response_selection(
        CONTEXTS, CANDIDATES, LABELS, model=path, device="cpu", reduction="mean"
    )
    for row, reference in zip(mean["per_question"], expected):
        np.testing.assert_allclose(
            row["losses"], np.array(reference) / np.array(row["num_tokens"]), rtol=1e-5, atol=1e-5
        )
    assert mean["reduction"] == "mean" and mean["num_questions"] == 3


def test_every_causal_path_equals_the_reference(tiny_gpt2_path):
    """Packed rows with the output layer on hidden states or on the model's logits, eager or sdpa attention."""
    expected = reference_nll_sums(tiny_gpt2_path, CONTEXTS, CANDIDATES)
    loaded = load_language_model(tiny_gpt2_path, device="cpu")
    eager = AutoModelForCausalLM.from_pretrained(tiny_gpt2_path, attn_implementation="eager").eval()
    for lm in (loaded, LoadedModel(eager, loaded.tokenizer, loaded.device, "eager")):
        for head_on_hidden in (True, False):
            scorer = CandidateScorer(lm, batch_size=2)
            assert scorer.share_context
            scorer._head_on_hidden = head_on_hidden
            scored = scorer.score(CONTEXTS, CANDIDATES)
            for sums, reference in zip(scored.nll_sums, expected):
                np.testing.assert_allclose(sums, reference, rtol=1e-5, atol=1e-4)


def test_turn_separator_and_long_contexts(tiny_gpt2_path):
    expected = reference_nll_sums(tiny_gpt2_path, CONTEXTS, CANDIDATES, separator="\n")
    result = response_selection(
        CONTEXTS, CANDIDATES, LABELS, model=tiny_gpt2_path, device="cpu", turn_separator="\n"
    )
    for row, reference in zip(result["per_question"], expected):
        np.testing.assert_allclose(row["nll_sums"], reference, rtol=1e-5, atol=1e-4)
    # The tiny model takes 128 tokens: an over-long context keeps its most recent tokens.
    long_context = [["we talked about the weather and the park today. " * 10] * 3]
    for share_context in (True, False):
        scored = response_selection(
            long_context,
            [CANDIDATES[0]],
            [0],
            model=tiny_gpt2_path,
            device="cpu",
            share_context=share_context,
        )
        assert (
            scored["num_truncated_contexts"] == 1
            and np.isfinite(scored["per_question"][0]["losses"]).all()
        )
    with pytest.raises(ValueError, match=r"candidates\[0\]\[1\]"):
        response_selection(
            ["hi"], [["ok", "a very long reply " * 60]], [0], model=tiny_gpt2_path, device="cpu"
        )


class ControlledLM:
    name = "controlled"


class ControlledScorer:
    """Returns fixed summed NLLs and token counts, so selection and accuracy can be checked by hand."""

    lm = ControlledLM()

    def __init__(self, sums, counts):

        self.result = CandidateLosses(
            [np.array(s, float) for s in sums], [np.array(c) for c in counts], 0
        )

    def score(self, contexts, candidates, progress=None):
        return self.result


def test_argmin_selection_and_accuracy_by_hand():
    contexts, candidates = ["a", "b", "c"], [["x", "y"], ["x", "y", "z"], ["x", "y"]]
    # Question 0: right; 1: wrong under "sum" (y is lower) but right under "mean" (8/4 < 6/2 > ...).
    scorer = ControlledScorer(
        [[2.0, 5.0], [8.0, 6.0, 9.0], [3.0, 3.0]], [[1, 1], [4, 2, 3], [1, 1]]
    )
    total = response_selection(contexts, candidates, [0, 0, 0], scorer=scorer)
    assert [row["selected"] for row in total["per_question"]] == [0, 1, 0]
    # Question 2 is a tie: argmin picks index 0 (the label) but a shared minimum counts as wrong.
    assert [row["correct"] for row in total["per_question"]] == [True, False, False]
    assert (
        total["accuracy"] == pytest.approx(1 / 3)
        and total["num_ties"] == 1
        and total["num_correct"] == 1
    )
    mean = response_selection(contexts, candidates, [0, 0, 0], scorer=scorer, reduction="mean")
    assert [row["losses"] for row in mean["per_question"]][1] == [2.0, 3.0, 3.0]
    assert mean["accuracy"] == pytest.approx(2 / 3)


def test_bad_input_names_the_argument():
    scorer = ControlledScorer([[1.0, 2.0]], [[1, 1]])
    cases = [
        (dict(contexts="hi", candidates=[["a", "b"]], labels=[0]), "`contexts` must be a list"),
        (dict(contexts=[["hi", ""]], candidates=[["a", "b"]], labels=[0]), r"`contexts\[0\]\[1\]`"),
        (
            dict(contexts=["hi"], candidates=[["a"]], labels=[0]),
            r"`candidates\[0\]` must be a list of at least 2",
        ),
        (dict(contexts=["hi"], candidates=[["a", 3]], labels=[0]), r"`candidates\[0\]\[1\]`"),
        (dict(contexts=["hi"], candidates=[["a", "b"]], labels=[2]), r"`labels\[0\]` = 2"),
        (
            dict(contexts=["hi"], candidates=[["a", "b"]], labels=[True]),
            r"`labels\[0\]` must be an int",
        ),
        (dict(contexts=["hi", "yo"], candidates=[["a", "b"]], labels=[0]), "one list per question"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            response_selection(**kwargs, scorer=scorer)
    with pytest.raises(ValueError, match="reduction"):
        response_selection(["hi"], [["a", "b"]], [0], scorer=scorer, reduction="max")
    with pytest.raises(ValueError, match="`model` is required"):
        response_selection(["hi"], [["a", "b"]], [0])
    with pytest.raises(ValueError, match="batch_size"):
        CandidateScorer("unused", batch_size=0)
    with pytest.raises(ValueError, match=r"`losses\[0\]`"):
        select_by_loss([[1.0, float("nan")]], [0])


@pytest.mark.parametrize("label", [0.5, True, "0", None])
def test_select_by_loss_refuses_a_label_that_is_not_an_int(label):
    """Found by tests/property: 0.5 was read as label 0 and True as label 1, silently."""
    with pytest.raises(ValueError, match=r"`labels\[0\]` must be an int index"):
        select_by_loss([[1.0, 2.0]], [label])
    assert select_by_loss([[1.0, 2.0]], [np.int64(0)])["accuracy"] == 1.0


def test_system_ranking_correlation_by_hand():
    human = {"gru": 3.1, "lstm": 2.9, "transformer": 3.4, "small": 2.0, "tiny": 2.2}
    # Ranks human: tiny 2, small 1, lstm 3, gru 4, transformer 5; metric swaps gru and lstm.
    metric = {"gru": 0.40, "lstm": 0.45, "transformer": 0.50, "small": 0.20, "tiny": 0.30}
    result = system_ranking_correlation(human, metric)
    # rho = 1 - 6 * sum(d^2) / (n (n^2 - 1)) with d = (1, -1, 0, 0, 0): 1 - 12/120.
    assert (
        result["spearman"] == pytest.approx(0.9)
        and result["num_systems"] == 5
        and 0 < result["p_value"] < 0.1
    )
    assert system_ranking_correlation([1, 2, 3], [3, 2, 1])["spearman"] == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="same systems"):
        system_ranking_correlation(human, {"gru": 1.0})
    with pytest.raises(ValueError, match="at least 3 systems"):
        system_ranking_correlation([1, 2], [1, 2])


def test_random_protocol_averages_the_trials():
    human = [1.0, 2.0, 3.0, 4.0]
    trials = [[1, 2, 3, 4], [4, 3, 2, 1], [1, 2, 4, 3], [5, 5, 5, 5]]  # rho 1, -1, 0.8, undefined
    result = random_protocol_correlation(human, trials)
    assert result["spearman_per_trial"][:3] == pytest.approx([1.0, -1.0, 0.8])
    assert result["spearman_per_trial"][3] is None and result["num_undefined_trials"] == 1
    assert result["spearman_mean"] == pytest.approx(0.8 / 3)
    assert (
        result["spearman_min"] == -1.0
        and result["spearman_max"] == 1.0
        and result["spearman_median"] == pytest.approx(0.8)
    )
    with pytest.raises(ValueError, match="metric_scores_per_trial"):
        random_protocol_correlation(human, [])


def test_question_files(tmp_path):
    jsonl = tmp_path / "questions.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps({"context": c, "candidates": o, "label": y, "extra": 1}) + "\n"
            for c, o, y in zip(CONTEXTS, CANDIDATES, LABELS)
        )
    )
    assert read_selection_questions(jsonl) == {
        "contexts": CONTEXTS,
        "candidates": CANDIDATES,
        "labels": LABELS,
    }
    tsv = tmp_path / "test_set"  # create_test.sh's output has whatever name it was given
    tsv.write_text("a\tb\tc\tground truth\tf1\tf2\tf3\n\n")
    assert read_selection_questions(tsv) == {
        "contexts": [["a", "b", "c"]],
        "candidates": [["ground truth", "f1", "f2", "f3"]],
        "labels": [0],
    }
    tsv.write_text("a\tb\tc\tgt\n")
    with pytest.raises(ValueError, match=r":1: expected 7 tab-separated fields"):
        read_selection_questions(tsv)
    jsonl.write_text('{"context": ["a"], "candidates": ["x", "y"]}\n')
    with pytest.raises(ValueError, match=r":1: expected an object with keys"):
        read_selection_questions(jsonl)


def test_evaluate_module_equals_the_function(tiny_gpt2_path):
    module = evaluate.load(evaluate_module_path("response_selection"))
    via_module = module.compute(
        contexts=CONTEXTS, candidates=CANDIDATES, labels=LABELS, model=tiny_gpt2_path, device="cpu"
    )
    direct = response_selection(CONTEXTS, CANDIDATES, LABELS, model=tiny_gpt2_path, device="cpu")
    assert via_module["accuracy"] == direct["accuracy"]
    assert [row["losses"] for row in via_module["per_question"]] == [
        row["losses"] for row in direct["per_question"]
    ]
    with pytest.raises(ValueError, match="`model` is required"):
        module.compute(contexts=CONTEXTS, candidates=CANDIDATES, labels=LABELS)
    with pytest.raises(ValueError, match=r"`candidates\[1\]\[0\]`"):
        module.compute(
            contexts=CONTEXTS[:2],
            candidates=[CANDIDATES[0], [["nested"], "b"]],
            labels=LABELS[:2],
            model=tiny_gpt2_path,
        )


def test_dialeval_evaluate_runs_response_selection(tmp_path, tiny_gpt2_path, capsys):
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        "".join(
            json.dumps({"context": c, "candidates": o, "label": y}) + "\n"
            for c, o, y in zip(CONTEXTS, CANDIDATES, LABELS)
        )
    )
    out = tmp_path / "report.json"
    demo = REPO_ROOT / "examples" / "demo_response_sets.jsonl"
    base = [
        "evaluate",
        str(demo),
        "-o",
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
    assert (
        main(
            [
                *base,
                "--selection-model",
                tiny_gpt2_path,
                "--selection-questions",
                str(questions),
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    summary = json.loads(out.read_text())["metrics"][f"response_selection[{tiny_gpt2_path}]"]
    direct = response_selection(CONTEXTS, CANDIDATES, LABELS, model=tiny_gpt2_path, device="cpu")
    assert summary["scope"] == "questions" and summary["num_questions"] == 3
    assert (
        summary["accuracy"] == direct["accuracy"]
        and summary["per_question"] == direct["per_question"]
    )
    assert "response_selection" in capsys.readouterr().out
    assert main([*base, "--selection-model", tiny_gpt2_path]) == 2
    assert "--selection-questions" in capsys.readouterr().err


@pytest.mark.parametrize(
    "record, error",
    [
        ({"context": [], "candidates": ["a", "b"], "label": 0}, "`context` must be a string"),
        ({"context": [3], "candidates": ["a", "b"], "label": 0}, r"`context\[0\]` must be"),
        ({"context": "hi", "candidates": ["a"], "label": 0}, "`candidates` must be a list"),
        ({"context": "hi", "candidates": ["a", ""], "label": 0}, r"`candidates\[1\]` must be"),
        ({"context": "hi", "candidates": ["a", "b"], "label": 5}, "`label` = 5 is not an index"),
        ({"context": "hi", "candidates": ["a", "b"], "label": 1.5}, "`label` must be an int"),
    ],
)
def test_a_bad_question_names_its_file_line_and_field(tmp_path, record, error):
    good = {"context": ["hi"], "candidates": ["a", "b"], "label": 0}
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps(good) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(ValueError, match=re.escape(f"{questions}:2: ") + error):
        read_selection_questions(questions)


def test_dialeval_evaluate_names_the_flag_and_line_of_a_bad_question(tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"context": "hi", "candidates": ["a", "b"], "label": 5}))
    demo = REPO_ROOT / "examples" / "demo_response_sets.jsonl"
    command = ["evaluate", str(demo), "-o", str(tmp_path / "r.json"), "--no-progress"]
    command += ["--selection-model", "gpt2", "--selection-questions", str(questions)]
    assert main(command) == 2
    message = capsys.readouterr().err
    assert f"`--selection-questions`: {questions}:1: `label` = 5" in message, message
