"""MMI-antiLM (Li et al. 2016, §4.3) as a LogitsProcessor: hand-computed scores on a bigram table
LM, and generate(logits_processor=...) equal to a plain greedy loop over
log p(t|S, t<k) - lambda log p_LM(t | t<k) (k <= gamma) for a decoder-only and an encoder-decoder generator."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch
from transformers import (
    AutoModelForCausalLM,
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    LogitsProcessorList,
)

from dialeval.generation import MMIAntiLMLogitsProcessor

LN2, LN3 = math.log(2), math.log(3)


class BigramTableLM(torch.nn.Module):
    """logits(next) = table[last token]: after 0 (bos) p = (1/4, 1/2, 1/4); after 1 p = (3/5, 1/5, 1/5)."""

    def __init__(self):
        super().__init__()
        self.table = torch.nn.Parameter(
            torch.tensor([[0.0, LN2, 0.0], [LN3, 0.0, 0.0], [0.0, 0.0, 0.0]])
        )
        self.config = SimpleNamespace(bos_token_id=0, is_encoder_decoder=False)

    def forward(self, input_ids):
        return SimpleNamespace(logits=self.table[input_ids])


def test_scores_by_hand():
    processor = MMIAntiLMLogitsProcessor(BigramTableLM(), lam=0.5, gamma=2)
    scores = torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    # step 1: the LM reads [bos] only; -0.5 log(1/4) = ln 2, -0.5 log(1/2) = 0.5 ln 2
    first = processor(torch.tensor([[2, 1], [1, 1]]), scores.clone())
    torch.testing.assert_close(
        first, torch.tensor([[1 + LN2, 2 + 0.5 * LN2, 3 + LN2], [LN2, 0.5 * LN2, LN2]])
    )
    # step 2: row 0 generated 1 -> p = (3/5, 1/5, 1/5); row 1 generated 0 (bos row of the table again)
    second = processor(torch.tensor([[2, 1, 1], [1, 1, 0]]), scores.clone())
    after_one = [-0.5 * math.log(3 / 5), -0.5 * math.log(1 / 5), -0.5 * math.log(1 / 5)]
    torch.testing.assert_close(
        second,
        torch.tensor(
            [[1 + after_one[0], 2 + after_one[1], 3 + after_one[2]], [LN2, 0.5 * LN2, LN2]]
        ),
    )
    # step 3: two response tokens = gamma, no penalty
    assert torch.equal(
        processor(torch.tensor([[2, 1, 1, 2], [1, 1, 0, 0]]), scores.clone()), scores
    )
    # a new generation (another prompt) is penalized from its first token again
    again = processor(torch.tensor([[2, 2], [1, 2]]), scores.clone())
    torch.testing.assert_close(again, first)


def test_minus_inf_stays_and_lambda_scales():
    processor = MMIAntiLMLogitsProcessor(BigramTableLM(), lam=2.0, gamma=1)
    out = processor(torch.tensor([[1]]), torch.tensor([[-math.inf, 0.0, 0.0]]))
    assert out[0, 0] == -math.inf
    assert out[0, 1:].tolist() == pytest.approx([-2 * math.log(1 / 2), -2 * math.log(1 / 4)])


def manual_greedy(
    step_logits, lm, start: list[int], lam: float, gamma: int, steps: int, bos: int
) -> list[int]:
    """Greedy argmax of log p(t | S, t<k) - lambda log p_LM(t | bos, t<k) for the first gamma tokens."""
    generated: list[int] = []
    for k in range(steps):
        score = torch.log_softmax(step_logits(start + generated), dim=-1)
        if k < gamma:
            lm_logits = lm(input_ids=torch.tensor([[bos] + generated])).logits[0, -1]
            score = score - lam * torch.log_softmax(lm_logits, dim=-1)
        generated.append(int(score.argmax()))
    return generated


@pytest.fixture(scope="module")
def anti_lm(tiny_gpt2_path):
    torch.manual_seed(1)
    return AutoModelForCausalLM.from_pretrained(tiny_gpt2_path).eval()


def test_plugs_into_generate_for_a_decoder_only_model(tiny_gpt2_path, anti_lm):
    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_path)
    model = AutoModelForCausalLM.from_pretrained(tiny_gpt2_path).eval()
    prompt = tokenizer("do you have any pets at home?", return_tensors="pt")
    lam, gamma, steps = 3.0, 3, 5
    # the LM given as a directory is loaded through dialeval.hub
    processor = MMIAntiLMLogitsProcessor(tiny_gpt2_path, lam=lam, gamma=gamma)
    with torch.no_grad():
        out = model.generate(
            **prompt,
            logits_processor=LogitsProcessorList([processor]),
            do_sample=False,
            max_new_tokens=steps,
            pad_token_id=tokenizer.pad_token_id,
        )
        plain = model.generate(
            **prompt, do_sample=False, max_new_tokens=steps, pad_token_id=tokenizer.pad_token_id
        )
        expected = manual_greedy(
            lambda ids: model(input_ids=torch.tensor([ids])).logits[0, -1],
            AutoModelForCausalLM.from_pretrained(tiny_gpt2_path).eval(),
            prompt["input_ids"][0].tolist(),
            lam,
            gamma,
            steps,
            tokenizer.bos_token_id,
        )
    new = out[0, prompt["input_ids"].shape[1] :].tolist()
    assert new == expected[: len(new)]
    # the anti-LM changed the response
    assert new != plain[0, prompt["input_ids"].shape[1] :].tolist()


def test_plugs_into_generate_for_an_encoder_decoder_model(tiny_bart_path, anti_lm):
    tokenizer = AutoTokenizer.from_pretrained(tiny_bart_path)
    model = AutoModelForSeq2SeqLM.from_pretrained(tiny_bart_path).eval()
    source = tokenizer("do you have any pets at home?", return_tensors="pt")
    lam, gamma, steps = 3.0, 3, 5
    processor = MMIAntiLMLogitsProcessor(anti_lm, lam=lam, gamma=gamma)
    start = model.config.decoder_start_token_id
    with torch.no_grad():
        out = model.generate(
            **source,
            logits_processor=LogitsProcessorList([processor]),
            do_sample=False,
            num_beams=1,
            max_new_tokens=steps + 1,
        )
        plain = model.generate(**source, do_sample=False, num_beams=1, max_new_tokens=steps + 1)
        expected = manual_greedy(
            lambda ids: model(**source, decoder_input_ids=torch.tensor([ids[:1] + ids[1:]])).logits[
                0, -1
            ],
            anti_lm,
            [start],
            lam,
            gamma,
            steps,
            tokenizer.bos_token_id,
        )
    new = out[0, 1:].tolist()[:steps]  # the last of steps + 1 is BART's forced EOS
    assert new == expected[: len(new)]
    assert new != plain[0, 1:].tolist()[:steps]


def test_one_processor_serves_batches_and_repeated_calls(tiny_gpt2_path, anti_lm):
    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_path)
    model = AutoModelForCausalLM.from_pretrained(tiny_gpt2_path).eval()
    processor = MMIAntiLMLogitsProcessor(anti_lm, lam=3.0, gamma=3)
    texts = ["do you have any pets at home?", "hi"]
    batch = tokenizer(texts, return_tensors="pt", padding=True)
    with torch.no_grad():
        together = model.generate(
            **batch,
            logits_processor=LogitsProcessorList([processor]),
            do_sample=False,
            max_new_tokens=4,
            pad_token_id=tokenizer.pad_token_id,
        )[:, batch["input_ids"].shape[1] :]
        alone = [
            model.generate(
                **tokenizer(text, return_tensors="pt"),
                logits_processor=LogitsProcessorList([processor]),
                do_sample=False,
                max_new_tokens=4,
                pad_token_id=tokenizer.pad_token_id,
            )[0, -4:]
            for text in texts
        ]
    assert together.tolist() == [row.tolist() for row in alone]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"lam": 0}, "lam"),
        ({"lam": float("inf")}, "lam"),
        ({"gamma": 0}, "gamma"),
        ({"gamma": 2.5}, "gamma"),
        ({"bos_token_id": -1}, "bos_token_id"),
    ],
)
def test_bad_arguments_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MMIAntiLMLogitsProcessor(BigramTableLM(), **kwargs)


def test_the_language_model_scores_in_eval_mode():
    lm = BigramTableLM()
    assert lm.training
    assert not MMIAntiLMLogitsProcessor(lm).language_model.training


def test_a_language_model_with_another_vocabulary_is_refused():
    processor = MMIAntiLMLogitsProcessor(BigramTableLM(), gamma=1)
    with pytest.raises(ValueError, match="vocabulary"):
        processor(torch.tensor([[1]]), torch.zeros(1, 5))
    with pytest.raises(ValueError, match="language_model"):
        MMIAntiLMLogitsProcessor(object())
