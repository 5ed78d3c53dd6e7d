"""N-best helpers (Sato et al. 2022, §4; App. C) on tiny models: our group beam search equals
transformers' beam search with one group, equals a plain re-statement of Vijayakumar et al.'s
algorithm (Hamming diversity) with several, and every helper returns B distinct responses."""
from __future__ import annotations

import math

import pytest
import torch

from dialeval.generation.nbest import (
    beam_search_nbest,
    beam_size_sweep,
    dialogue_prompt,
    diverse_beam_search_nbest,
    nucleus_sampling_nbest,
)
from dialeval.generation.group_beam_search import group_beam_search

PROMPTS = ["hi there! how are you doing today?", "do you have any pets at home?", "i like comedies."]


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """Tiny models do thousands of small forwards: with intra-op threads on a loaded 2-core
    machine, thread hand-offs (not arithmetic) dominate and the module took 10x longer."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def gpt2(tiny_gpt2_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(tiny_gpt2_path).eval(), AutoTokenizer.from_pretrained(tiny_gpt2_path)


@pytest.fixture(scope="module")
def bart(tiny_bart_path):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    return AutoModelForSeq2SeqLM.from_pretrained(tiny_bart_path).eval(), AutoTokenizer.from_pretrained(tiny_bart_path)


def frequent_token(model, tokenizer) -> int:
    """A token the random model's beams pick often: used as EOS so that beams do finish early."""
    encoded = tokenizer(PROMPTS[:1], return_tensors="pt")
    output = model.generate(**encoded, num_beams=4, num_return_sequences=4, do_sample=False, max_new_tokens=8)
    generated = output[:, encoded["input_ids"].shape[1]:].reshape(-1).tolist()
    return max(set(generated), key=generated.count)


def hf_beams(model, tokenizer, prompt, num_beams, max_new_tokens, length_penalty, eos):
    encoded = tokenizer([prompt], return_tensors="pt")
    output = model.generate(
        **encoded, num_beams=num_beams, num_return_sequences=num_beams, do_sample=False, max_new_tokens=max_new_tokens,
        length_penalty=length_penalty, early_stopping=False, eos_token_id=eos, return_dict_in_generate=True,
        output_scores=True,
    )
    beams = []
    for row, score in zip(output.sequences[:, encoded["input_ids"].shape[1]:].tolist(), output.sequences_scores.tolist()):
        if eos in row:  # after EOS transformers pads; the hypothesis ends at its EOS
            row = row[: row.index(eos) + 1]
        beams.append((row, score))
    return beams


@pytest.mark.parametrize("length_penalty", [0.0, 1.0])
@pytest.mark.parametrize("early_eos", [False, True])
def test_one_group_equals_transformers_beam_search(gpt2, length_penalty, early_eos):
    model, tokenizer = gpt2
    eos = frequent_token(model, tokenizer) if early_eos else tokenizer.eos_token_id
    finished_early = False
    for prompt in PROMPTS:
        expected = hf_beams(model, tokenizer, prompt, 4, 8, length_penalty, eos)
        encoded = tokenizer([prompt], return_tensors="pt")
        ours = group_beam_search(model, encoded["input_ids"], encoded["attention_mask"], num_beams=4, num_beam_groups=1,
                                 max_new_tokens=8, length_penalty=length_penalty, eos_token_id=eos)[0]
        assert [h.token_ids for h in ours] == [tokens for tokens, _ in expected]
        assert [h.score for h in ours] == pytest.approx([score for _, score in expected], abs=1e-4)
        finished_early |= any(len(h.token_ids) < 8 for h in ours)
    assert finished_early == early_eos  # with the frequent token as EOS, the EOS path is exercised


def test_one_group_equals_transformers_on_an_encoder_decoder(bart):
    model, tokenizer = bart
    for prompt in PROMPTS[:2]:
        encoded = tokenizer([prompt], return_tensors="pt")
        output = model.generate(**encoded, num_beams=3, num_return_sequences=3, do_sample=False, max_new_tokens=6,
                                length_penalty=0.0, early_stopping=False, forced_eos_token_id=None,
                                return_dict_in_generate=True, output_scores=True)
        ours = group_beam_search(model, encoded["input_ids"], encoded["attention_mask"], num_beams=3, max_new_tokens=6)[0]
        expected = [row[1:] for row in output.sequences.tolist()]  # drop the decoder start token
        eos = tokenizer.eos_token_id
        expected = [row[: row.index(eos) + 1] if eos in row else row for row in expected]
        assert [h.token_ids for h in ours] == expected
        assert [h.score for h in ours] == pytest.approx(output.sequences_scores.tolist(), abs=1e-4)


def reference_diverse_beam_search(model, prompt_ids, num_beams, num_groups, penalty, max_new_tokens, eos):
    """Vijayakumar et al.'s algorithm, stated plainly: one forward per beam, Python lists throughout."""
    size = num_beams // num_groups
    groups = [{"beams": [(list(prompt_ids), 0.0)], "finished": [], "done": False} for _ in range(num_groups)]
    for step in range(max_new_tokens):
        chosen = {}
        for group in groups:
            if group["done"]:
                continue
            candidates = []
            for sequence, score in group["beams"]:
                with torch.no_grad():
                    logits = model(input_ids=torch.tensor([sequence])).logits[0, -1].float()
                times_chosen = torch.zeros_like(logits)
                for token, count in chosen.items():
                    times_chosen[token] = count
                log_probs = torch.log_softmax(logits, dim=-1) - penalty * times_chosen
                # Only a beam's best 2*size continuations can be among the group's best 2*size.
                values, tokens = torch.topk(log_probs, 2 * size)
                for log_prob, token in zip(values.tolist(), tokens.tolist()):
                    candidates.append((score + log_prob, sequence, token))
            candidates.sort(key=lambda item: -item[0])
            beams = []
            for rank, (score, sequence, token) in enumerate(candidates[: 2 * size]):
                if token == eos or step + 1 == max_new_tokens:
                    if rank < size:
                        group["finished"].append((score, sequence[len(prompt_ids):] + [token]))
                elif len(beams) < size:
                    beams.append((sequence + [token], score))
            group["finished"] = sorted(group["finished"], key=lambda item: -item[0])[:size]
            for sequence, _ in beams:
                chosen[sequence[-1]] = chosen.get(sequence[-1], 0) + 1
            group["beams"] = beams
            if not beams or (len(group["finished"]) == size and beams[0][1] <= group["finished"][-1][0]):
                group["done"] = True
        if all(group["done"] for group in groups):
            break
    finished = [item for group in groups for item in group["finished"]]
    return sorted(finished, key=lambda item: -item[0])


@pytest.mark.parametrize(("num_groups", "penalty"), [(2, 0.5), (3, 2.0), (6, 1.0)])
def test_groups_follow_vijayakumar_et_al(gpt2, num_groups, penalty):
    model, tokenizer = gpt2
    eos = frequent_token(model, tokenizer)
    for prompt in PROMPTS[:2]:
        prompt_ids = tokenizer(prompt)["input_ids"]
        expected = reference_diverse_beam_search(model, prompt_ids, 6, num_groups, penalty, 6, eos)
        ours = group_beam_search(model, torch.tensor([prompt_ids]), None, num_beams=6, num_beam_groups=num_groups,
                                 diversity_penalty=penalty, max_new_tokens=6, eos_token_id=eos)[0]
        assert [h.token_ids for h in ours] == [tokens for _, tokens in expected]
        assert [h.score for h in ours] == pytest.approx([score for score, _ in expected], abs=1e-4)


def test_diversity_penalty_separates_the_groups(gpt2):
    model, tokenizer = gpt2
    plain = diverse_beam_search_nbest(model, tokenizer, PROMPTS[:1], beam_size=6, num_beam_groups=3, diversity_penalty=0.0,
                                      max_new_tokens=6, return_hypotheses=True)[0]
    diverse = diverse_beam_search_nbest(model, tokenizer, PROMPTS[:1], beam_size=6, num_beam_groups=3, diversity_penalty=5.0,
                                        max_new_tokens=6, return_hypotheses=True)[0]
    # Without the penalty the three groups find the same two hypotheses; with it, six different ones.
    assert len({tuple(h.token_ids) for h in plain}) == 2
    assert len({tuple(h.token_ids) for h in diverse}) == 6
    assert sorted(h.group for h in diverse) == [0, 0, 1, 1, 2, 2]
    first_tokens = {h.group: h.token_ids[0] for h in diverse}
    assert len(set(first_tokens.values())) == 3  # at step 1 each group avoids the earlier groups' tokens


def test_beam_search_nbest_returns_b_distinct_beams_per_input(gpt2, bart):
    for model, tokenizer in (gpt2, bart):
        lists = beam_search_nbest(model, tokenizer, PROMPTS, beam_size=5, max_new_tokens=6)
        assert len(lists) == len(PROMPTS)
        for nbest in lists:
            assert len(nbest) == 5 and len(set(nbest)) == 5


def test_beam_search_nbest_batch_equals_one_by_one(gpt2):
    model, tokenizer = gpt2
    together = beam_search_nbest(model, tokenizer, PROMPTS, beam_size=3, max_new_tokens=5)
    alone = [beam_search_nbest(model, tokenizer, [prompt], beam_size=3, max_new_tokens=5)[0] for prompt in PROMPTS]
    assert together == alone


def test_diverse_beam_search_nbest_on_both_architectures(gpt2, bart):
    for model, tokenizer in (gpt2, bart):
        lists = diverse_beam_search_nbest(model, tokenizer, PROMPTS[:2], beam_size=4, num_beam_groups=2,
                                          diversity_penalty=2.0, max_new_tokens=5)
        assert [len(nbest) for nbest in lists] == [4, 4]
        assert all(len(set(nbest)) == 4 for nbest in lists)


def test_nucleus_sampling_n_times_is_seeded(gpt2):
    model, tokenizer = gpt2
    first = nucleus_sampling_nbest(model, tokenizer, PROMPTS[:2], n=4, max_new_tokens=6, seed=3)
    again = nucleus_sampling_nbest(model, tokenizer, PROMPTS[:2], n=4, max_new_tokens=6, seed=3)
    other = nucleus_sampling_nbest(model, tokenizer, PROMPTS[:2], n=4, max_new_tokens=6, seed=4)
    assert [len(samples) for samples in first] == [4, 4]
    assert first == again and first != other
    assert len(set(first[0])) > 1  # independent samples, not one sample repeated


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"num_beams": 6, "num_beam_groups": 4}, "must be divisible"),
    ({"num_beams": 0}, "`num_beams` must be a positive int"),
    ({"num_beams": 4, "diversity_penalty": -1.0}, "`diversity_penalty` must be a float >= 0"),
])
def test_bad_search_arguments(gpt2, kwargs, message):
    model, tokenizer = gpt2
    with pytest.raises(ValueError, match=message):
        group_beam_search(model, tokenizer(["hi"], return_tensors="pt")["input_ids"], **kwargs)


def test_dialogue_prompt(gpt2, bart):
    (gpt2_model, gpt2_tokenizer), (bart_model, bart_tokenizer) = gpt2, bart
    turns = ["Yeah I'm in North Carolina.", "Are you in North Carolina?"]
    assert dialogue_prompt(turns, gpt2_tokenizer, gpt2_model) == "Yeah I'm in North Carolina.</s>Are you in North Carolina?</s>"
    assert dialogue_prompt(turns, bart_tokenizer, bart_model) == "Yeah I'm in North Carolina.\nAre you in North Carolina?"
    with pytest.raises(ValueError, match="`turns`"):
        dialogue_prompt("Are you?", gpt2_tokenizer, gpt2_model)


def test_beam_size_sweep_and_fig2_png(gpt2, tmp_path):
    from dialeval.generation.nbest_plots import plot_beam_size_sweep

    model, tokenizer = gpt2

    class FirstWordClassifier:
        """Deterministic stand-in: a response is 'yes' when its first character sorts before 'm'."""

        name = "first-character"

        def classify(self, responses, questions=None):
            return ["yes" if response[:1].lower() < "m" else "no" for response in responses]

    types = ["ENTQ", "CNTQ", "ENTQ"]
    sweep = beam_size_sweep(model, tokenizer, PROMPTS, ["yes", "no", "yes"], FirstWordClassifier(), beam_sizes=[1, 2, 4],
                            input_types=types, max_new_tokens=4)
    assert [point["beam_size"] for point in sweep] == [1, 2, 4]
    for point in sweep:
        nbest = beam_search_nbest(model, tokenizer, PROMPTS, beam_size=point["beam_size"], max_new_tokens=4)
        answers = [FirstWordClassifier().classify(responses) for responses in nbest]
        with_noncontradictory = [a.count(ref) for a, ref in zip(answers, ["yes", "no", "yes"])]
        assert point["certainty"] == pytest.approx(sum(c > 0 for c in with_noncontradictory) / 3)
        assert set(point["per_type"]) == {"ENTQ", "CNTQ"} and "per_input" not in point
    path = plot_beam_size_sweep({"tiny-gpt2": sweep, "tiny-gpt2 again": sweep}, tmp_path / "fig" / "fig2.png", title="Fig. 2")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    with pytest.raises(ValueError, match="per_type"):
        plot_beam_size_sweep({"m": [{"beam_size": 1, "certainty": 1.0, "variety": math.nan}]}, tmp_path / "x.png")
