"""The candidate scorer across model families (Sato et al. 2020, §4.1.2: ℓ_r of every candidate).

References are independent of the scorer: one unpadded forward per candidate through the model's
own ``forward(labels=...)`` (which derives the decoder inputs the family's way) and its loss.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import (
    AutoModelForCausalLM,
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    GPTNeoConfig,
    MistralConfig,
    Qwen2Config,
)

from dialeval.metrics.engines.lm_scorer import CandidateScorer, attention_window, shift_right
from dialeval.metrics.response_selection import response_selection, select_by_loss
from dialeval.metrics.response_selection.selection import TIE_RTOL

CONTEXTS = [
    [
        "hi there! how are you doing today?",
        "i'm doing well, thanks for asking.",
        "what are you going to cook?",
    ],
    "do you have any pets at home?",
]
CANDIDATES = [
    ["probably pasta with tomato sauce.", "a man is playing a guitar on the stage.", "yes"],
    ["yes, i have a dog named max and two cats.", "i read a lot of history books."],
]


def seq2seq_reference(path: str, contexts, candidates) -> list[list[float]]:
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSeq2SeqLM.from_pretrained(path).eval()
    out = []
    with torch.no_grad():
        for context, options in zip(contexts, candidates):
            text = tokenizer.eos_token.join([context] if isinstance(context, str) else context)
            source = tokenizer(text, return_tensors="pt")
            row = []
            for option in options:
                target = tokenizer(text_target=option)["input_ids"]
                # the response ends with EOS, as the model generates it
                if target[-1] != tokenizer.eos_token_id:
                    target = target + [tokenizer.eos_token_id]
                loss = model(**source, labels=torch.tensor([target])).loss
                row.append(float(loss) * len(target))
            out.append(row)
    return out


def causal_reference(path: str, contexts, candidates) -> list[list[float]]:
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    out = []
    with torch.no_grad():
        for context, options in zip(contexts, candidates):
            turns = [context] if isinstance(context, str) else context
            prefix = tokenizer(
                tokenizer.eos_token.join(turns) + tokenizer.eos_token, add_special_tokens=False
            )["input_ids"]
            row = []
            for option in options:
                target = tokenizer(option, add_special_tokens=False)["input_ids"] + [
                    tokenizer.eos_token_id
                ]
                labels = torch.tensor([[-100] * len(prefix) + target])
                row.append(
                    float(model(input_ids=torch.tensor([prefix + target]), labels=labels).loss)
                    * len(target)
                )
            out.append(row)
    return out


@pytest.mark.parametrize("family", ["bart", "t5", "blenderbot", "blenderbot_small"])
def test_every_seq2seq_family_is_scored_as_its_forward_does(family, tiny_seq2seq_paths):
    path = tiny_seq2seq_paths[family]
    expected = seq2seq_reference(path, CONTEXTS, CANDIDATES)
    result = response_selection(
        CONTEXTS, CANDIDATES, [0, 0], model=path, device="cpu", batch_size=2
    )
    for row, reference in zip(result["per_question"], expected):
        np.testing.assert_allclose(row["nll_sums"], reference, rtol=1e-5, atol=1e-4)


def test_shift_right_by_hand():
    labels = torch.tensor([[5, 6, 7], [8, -100, -100]])
    assert shift_right(labels, decoder_start_token_id=2, pad_token_id=1).tolist() == [
        [2, 5, 6],
        [2, 8, 1],
    ]


def test_identical_candidates_tie_on_every_path(tiny_gpt2_path, tiny_bart_path):
    context = [["hi there! how are you doing today?", "i'm doing well, thanks for asking."]]
    # The duplicate sits at another offset of the packed row, where float32 sums come out differently.
    candidates = [
        ["yes, i have a dog.", "the children are playing football outside.", "yes, i have a dog."]
    ]
    for path, share_context in (
        (tiny_gpt2_path, True),
        (tiny_gpt2_path, False),
        (tiny_bart_path, True),
    ):
        result = response_selection(
            context, candidates, [0], model=path, device="cpu", share_context=share_context
        )
        row = result["per_question"][0]
        assert row["nll_sums"][0] == row["nll_sums"][2]
        if row["selected"] in (0, 2):
            assert row["tie"] and not row["correct"] and result["num_ties"] == 1


def test_losses_within_float32_rounding_tie():
    # The packed path's numbers for one candidate listed twice.
    selected = select_by_loss([[27.4744067, 27.4744058, 30.0]], [0])["per_question"][0]
    assert selected["tie"] and not selected["correct"]
    # A real preference is not a tie: 1e-4 nats apart.
    assert select_by_loss([[27.4743, 27.4744, 30.0]], [0])["per_question"][0]["correct"]
    # The tolerance is relative to the loss, floored at 1 nat.
    assert select_by_loss([[0.0, TIE_RTOL * 0.9]], [0])["per_question"][0]["tie"]
    assert not select_by_loss([[0.0, TIE_RTOL * 1.1]], [0])["per_question"][0]["tie"]
    assert select_by_loss([[27.4744067, 27.4744058]], [1], tie_rtol=0.0)["per_question"][0][
        "correct"
    ]
    with pytest.raises(ValueError, match="`tie_rtol`"):
        select_by_loss([[1.0, 2.0]], [0], tie_rtol=-1)


def test_attention_window_of_configs():
    assert attention_window(MistralConfig(sliding_window=16)) == 16
    assert attention_window(MistralConfig(sliding_window=None)) is None
    assert attention_window(Qwen2Config(sliding_window=32, use_sliding_window=False)) is None
    assert (
        attention_window(
            GPTNeoConfig(attention_types=[[["global", "local"], 12]], num_layers=24, window_size=64)
        )
        == 64
    )


def test_sliding_window_model_is_scored_with_its_window(tiny_mistral_path, monkeypatch):
    """Mistral-style window of 8 tokens: contexts longer than it must not be packed with a full mask."""
    long_contexts = [
        [
            "hi there! how are you doing today?",
            "i'm doing well, thanks for asking.",
            "what are you going to cook?",
        ]
    ]
    long_candidates = [
        ["probably pasta with tomato sauce.", "yes", "probably pasta with tomato sauce."]
    ]
    expected = causal_reference(tiny_mistral_path, long_contexts, long_candidates)
    scorer = CandidateScorer(tiny_mistral_path, device="cpu")
    assert scorer.attention_window == 8 and scorer.share_context
    calls = []
    for name in ("_causal_batch", "_causal_packed_batch"):
        method = getattr(scorer, name)
        monkeypatch.setattr(
            scorer,
            name,
            lambda batch, method=method, name=name: calls.append(name) or method(batch),
        )
    np.testing.assert_allclose(
        scorer.score(long_contexts, long_candidates).nll_sums[0], expected[0], rtol=1e-5, atol=1e-4
    )
    assert calls == ["_causal_batch"]
    # Short enough for the window: packed (the packed row, 3 candidates long, exceeds the window).
    short_contexts, short_candidates = [["hi"]], [["yes", "ok.", "yes sure"]]
    expected = causal_reference(tiny_mistral_path, short_contexts, short_candidates)
    assert all(
        len(AutoTokenizer.from_pretrained(tiny_mistral_path)("hi</s>" + c + "</s>")["input_ids"])
        <= 8
        for c in short_candidates[0]
    )
    np.testing.assert_allclose(
        scorer.score(short_contexts, short_candidates).nll_sums[0],
        expected[0],
        rtol=1e-5,
        atol=1e-4,
    )
    assert calls == ["_causal_batch", "_causal_packed_batch"]
