"""N-best helpers (Sato et al. 2022, §4; App. C) on tiny models: our group beam search equals
transformers' beam search with one group (also under a checkpoint's content constraints), equals
a plain re-statement of Vijayakumar et al.'s algorithm (Hamming diversity) with several, every
helper returns B distinct responses, batching does not change the lists, and neither the
caller's tokenizer nor the generation config is modified."""

from __future__ import annotations

import copy
import itertools
import math

import pytest
import torch

from dialeval.generation.group_beam_search import DEFAULT_MAX_NEW_TOKENS, group_beam_search
from dialeval.generation.nbest import (
    beam_search_nbest,
    beam_size_sweep,
    dialogue_prompt,
    diverse_beam_search_nbest,
    nucleus_sampling_nbest,
)

PROMPTS = [
    "hi there! how are you doing today?",
    "do you have any pets at home?",
    "i like comedies.",
]


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

    return AutoModelForCausalLM.from_pretrained(
        tiny_gpt2_path
    ).eval(), AutoTokenizer.from_pretrained(tiny_gpt2_path)


@pytest.fixture(scope="module")
def bart(tiny_bart_path):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    return AutoModelForSeq2SeqLM.from_pretrained(
        tiny_bart_path
    ).eval(), AutoTokenizer.from_pretrained(tiny_bart_path)


def frequent_token(model, tokenizer) -> int:
    """A token the random model's beams pick often: used as EOS so that beams do finish early."""
    encoded = tokenizer(PROMPTS[:1], return_tensors="pt")
    output = model.generate(
        **encoded,
        num_beams=4,
        num_return_sequences=4,
        do_sample=False,
        max_new_tokens=8,
        forced_eos_token_id=None,
    )
    start = 1 if model.config.is_encoder_decoder else encoded["input_ids"].shape[1]
    generated = output[:, start:].reshape(-1).tolist()
    return max(set(generated), key=generated.count)


def hf_beams(model, tokenizer, prompt, num_beams, max_new_tokens, length_penalty, eos):
    encoded = tokenizer([prompt], return_tensors="pt")
    output = model.generate(
        **encoded,
        num_beams=num_beams,
        num_return_sequences=num_beams,
        do_sample=False,
        max_new_tokens=max_new_tokens,
        length_penalty=length_penalty,
        early_stopping=False,
        eos_token_id=eos,
        return_dict_in_generate=True,
        output_scores=True,
    )
    beams = []
    for row, score in zip(
        output.sequences[:, encoded["input_ids"].shape[1] :].tolist(),
        output.sequences_scores.tolist(),
    ):
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
        ours = group_beam_search(
            model,
            encoded["input_ids"],
            encoded["attention_mask"],
            num_beams=4,
            num_beam_groups=1,
            max_new_tokens=8,
            length_penalty=length_penalty,
            eos_token_id=eos,
        )[0]
        assert [h.token_ids for h in ours] == [tokens for tokens, _ in expected]
        assert [h.score for h in ours] == pytest.approx([score for _, score in expected], abs=1e-4)
        finished_early |= any(len(h.token_ids) < 8 for h in ours)
    assert finished_early == early_eos  # with the frequent token as EOS, the EOS path is exercised


def test_one_group_equals_transformers_on_an_encoder_decoder(bart):
    model, tokenizer = bart
    for prompt in PROMPTS[:2]:
        encoded = tokenizer([prompt], return_tensors="pt")
        # The tiny BART forces EOS at max_length, as facebook/bart-* do: both searches apply it.
        output = model.generate(
            **encoded,
            num_beams=3,
            num_return_sequences=3,
            do_sample=False,
            max_new_tokens=6,
            length_penalty=0.0,
            early_stopping=False,
            return_dict_in_generate=True,
            output_scores=True,
        )
        ours = group_beam_search(
            model, encoded["input_ids"], encoded["attention_mask"], num_beams=3, max_new_tokens=6
        )[0]
        expected = [row[1:] for row in output.sequences.tolist()]  # drop the decoder start token
        eos = tokenizer.eos_token_id
        expected = [row[: row.index(eos) + 1] if eos in row else row for row in expected]
        assert [h.token_ids for h in ours] == expected
        assert [h.score for h in ours] == pytest.approx(output.sequences_scores.tolist(), abs=1e-4)


def reference_diverse_beam_search(
    model, prompt_ids, num_beams, num_groups, penalty, max_new_tokens, eos, pad
):
    """Vijayakumar et al.'s algorithm with transformers 4.51's bookkeeping (``BeamSearchScorer``),
    stated plainly: one forward per beam, Python lists throughout, ``length_penalty=0``."""
    size = num_beams // num_groups
    groups = [
        {"beams": [(list(prompt_ids), 0.0)], "finished": [], "done": False}
        for _ in range(num_groups)
    ]
    for step in range(max_new_tokens):
        chosen = {}
        for group in groups:
            if group["done"]:
                # 4.51 feeds a done group's beams the pad token
                chosen[pad] = chosen.get(pad, 0) + size
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
                if token == eos:
                    if rank < size:
                        group["finished"].append((score, sequence[len(prompt_ids) :] + [token]))
                # also at the last step: later groups are penalized for these
                elif len(beams) < size:
                    beams.append((sequence + [token], score))
            group["finished"] = sorted(group["finished"], key=lambda item: -item[0])[:size]
            for sequence, _ in beams:
                chosen[sequence[-1]] = chosen.get(sequence[-1], 0) + 1
            group["beams"] = beams
            if len(group["finished"]) == size and group["finished"][-1][0] >= candidates[0][0]:
                group["done"] = True
        if all(group["done"] for group in groups):
            break
    for group in groups:  # cut at max_new_tokens: the running beams are hypotheses too
        if not group["done"]:
            ends = [(score, sequence[len(prompt_ids) :]) for sequence, score in group["beams"]]
            group["finished"] = sorted(group["finished"] + ends, key=lambda item: -item[0])[:size]
    finished = [item for group in groups for item in group["finished"]]
    return sorted(finished, key=lambda item: -item[0])


@pytest.mark.parametrize(("num_groups", "penalty"), [(2, 0.5), (3, 2.0), (6, 1.0)])
def test_groups_follow_vijayakumar_et_al(gpt2, num_groups, penalty):
    model, tokenizer = gpt2
    eos = frequent_token(model, tokenizer)
    for prompt in PROMPTS[:2]:
        prompt_ids = tokenizer(prompt)["input_ids"]
        expected = reference_diverse_beam_search(
            model, prompt_ids, 6, num_groups, penalty, 6, eos, tokenizer.pad_token_id
        )
        ours = group_beam_search(
            model,
            torch.tensor([prompt_ids]),
            None,
            num_beams=6,
            num_beam_groups=num_groups,
            diversity_penalty=penalty,
            max_new_tokens=6,
            eos_token_id=eos,
        )[0]
        assert [h.token_ids for h in ours] == [tokens for _, tokens in expected]
        assert [h.score for h in ours] == pytest.approx([score for score, _ in expected], abs=1e-4)


def test_diversity_penalty_separates_the_groups(gpt2):
    model, tokenizer = gpt2
    plain = diverse_beam_search_nbest(
        model,
        tokenizer,
        PROMPTS[:1],
        beam_size=6,
        num_beam_groups=3,
        diversity_penalty=0.0,
        max_new_tokens=6,
        return_hypotheses=True,
    )[0]
    diverse = diverse_beam_search_nbest(
        model,
        tokenizer,
        PROMPTS[:1],
        beam_size=6,
        num_beam_groups=3,
        diversity_penalty=5.0,
        max_new_tokens=6,
        return_hypotheses=True,
    )[0]
    # Without the penalty the three groups find the same two hypotheses; with it, six different ones.
    assert len({tuple(h.token_ids) for h in plain}) == 2
    assert len({tuple(h.token_ids) for h in diverse}) == 6
    assert sorted(h.group for h in diverse) == [0, 0, 1, 1, 2, 2]
    first_tokens = {h.group: h.token_ids[0] for h in diverse}
    # at step 1 each group avoids the earlier groups' tokens
    assert len(set(first_tokens.values())) == 3


def test_beam_search_nbest_returns_b_distinct_beams_per_input(gpt2, bart):
    for model, tokenizer in (gpt2, bart):
        lists = beam_search_nbest(model, tokenizer, PROMPTS, beam_size=5, max_new_tokens=6)
        assert len(lists) == len(PROMPTS)
        for nbest in lists:
            assert len(nbest) == 5 and len(set(nbest)) == 5


def test_beam_search_nbest_batch_equals_one_by_one(gpt2):
    model, tokenizer = gpt2
    together = beam_search_nbest(model, tokenizer, PROMPTS, beam_size=3, max_new_tokens=5)
    alone = [
        beam_search_nbest(model, tokenizer, [prompt], beam_size=3, max_new_tokens=5)[0]
        for prompt in PROMPTS
    ]
    assert together == alone


def test_diverse_beam_search_nbest_on_both_architectures(gpt2, bart):
    for model, tokenizer in (gpt2, bart):
        lists = diverse_beam_search_nbest(
            model,
            tokenizer,
            PROMPTS[:2],
            beam_size=4,
            num_beam_groups=2,
            diversity_penalty=2.0,
            max_new_tokens=5,
        )
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


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_beams": 6, "num_beam_groups": 4}, "must be divisible"),
        ({"num_beams": 0}, "`num_beams` must be a positive int"),
        ({"num_beams": 4, "diversity_penalty": -1.0}, "`diversity_penalty` must be a float >= 0"),
        ({"num_beams": 4, "early_stopping": "never"}, "`early_stopping` must be True or False"),
    ],
)
def test_bad_search_arguments(gpt2, kwargs, message):
    model, tokenizer = gpt2
    with pytest.raises(ValueError, match=message):
        group_beam_search(model, tokenizer(["hi"], return_tensors="pt")["input_ids"], **kwargs)


def test_dialogue_prompt(gpt2, bart):
    (gpt2_model, gpt2_tokenizer), (bart_model, bart_tokenizer) = gpt2, bart
    turns = ["Yeah I'm in North Carolina.", "Are you in North Carolina?"]
    assert (
        dialogue_prompt(turns, gpt2_tokenizer, gpt2_model)
        == "Yeah I'm in North Carolina.</s>Are you in North Carolina?</s>"
    )
    assert (
        dialogue_prompt(turns, bart_tokenizer, bart_model)
        == "Yeah I'm in North Carolina.\nAre you in North Carolina?"
    )
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
    sweep = beam_size_sweep(
        model,
        tokenizer,
        PROMPTS,
        ["yes", "no", "yes"],
        FirstWordClassifier(),
        beam_sizes=[1, 2, 4],
        input_types=types,
        max_new_tokens=4,
    )
    assert [point["beam_size"] for point in sweep] == [1, 2, 4]
    for point in sweep:
        nbest = beam_search_nbest(
            model, tokenizer, PROMPTS, beam_size=point["beam_size"], max_new_tokens=4
        )
        answers = [FirstWordClassifier().classify(responses) for responses in nbest]
        with_noncontradictory = [a.count(ref) for a, ref in zip(answers, ["yes", "no", "yes"])]
        assert point["certainty"] == pytest.approx(sum(c > 0 for c in with_noncontradictory) / 3)
        assert set(point["per_type"]) == {"ENTQ", "CNTQ"} and "per_input" not in point
    path = plot_beam_size_sweep(
        {"tiny-gpt2": sweep, "tiny-gpt2 again": sweep},
        tmp_path / "fig" / "fig2.png",
        title="Fig. 2",
    )
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    with pytest.raises(ValueError, match="per_type"):
        plot_beam_size_sweep(
            {"m": [{"beam_size": 1, "certainty": 1.0, "variety": math.nan}]}, tmp_path / "x.png"
        )


# --- the checkpoint's generation settings (App. C: ParlAI's defaults but beam_length_penalty=0) ---


def constrained(model, **settings):
    """A copy of ``model`` whose generation_config carries ``settings``, as a checkpoint would."""
    model = copy.deepcopy(model)
    for name, value in settings.items():
        setattr(model.generation_config, name, value)
    return model


def generate_beams(model, encoded, num_beams, max_new_tokens, eos):
    output = model.generate(
        **encoded,
        num_beams=num_beams,
        num_return_sequences=num_beams,
        do_sample=False,
        max_new_tokens=max_new_tokens,
        length_penalty=0.0,
        early_stopping=False,
        return_dict_in_generate=True,
        output_scores=True,
    )
    start = 1 if model.config.is_encoder_decoder else encoded["input_ids"].shape[1]
    rows = [row[start:] for row in output.sequences.tolist()]
    return [
        row[: row.index(eos) + 1] if eos in row else row for row in rows
    ], output.sequences_scores.tolist()


@pytest.mark.parametrize("architecture", ["gpt2", "bart"])
def test_one_group_equals_generate_under_the_checkpoints_constraints(gpt2, bart, architecture):
    """BlenderBot-like generation_config (min length, n-gram blocking, forced EOS, ...): our search
    builds the processors generate builds, so BS and DBS rows are produced under the same rules."""
    model, tokenizer = gpt2 if architecture == "gpt2" else bart
    eos = frequent_token(model, tokenizer)  # so beams would end early without the minimum length
    settings = {
        "eos_token_id": eos,
        "no_repeat_ngram_size": 2,
        "repetition_penalty": 1.3,
        "forced_eos_token_id": eos,
    }
    if architecture == "gpt2":
        settings["min_new_tokens"] = 4
    else:  # BlenderBot's own kind of settings: min_length counts decoder tokens, and the context is blocked too
        settings.update(min_length=5, encoder_no_repeat_ngram_size=2)
    strict, plain = constrained(model, **settings), constrained(model, eos_token_id=eos)
    changed = False
    for prompt in PROMPTS:
        encoded = tokenizer([prompt], return_tensors="pt")
        expected, scores = generate_beams(strict, encoded, 4, 7, eos)
        ours = group_beam_search(
            strict, encoded["input_ids"], encoded["attention_mask"], num_beams=4, max_new_tokens=7
        )[0]
        assert [h.token_ids for h in ours] == expected
        assert [h.score for h in ours] == pytest.approx(scores, abs=1e-4)
        assert all(len(h.token_ids) >= 4 for h in ours)  # nothing ends before the minimum length
        changed |= expected != generate_beams(plain, encoded, 4, 7, eos)[0]
    assert changed  # the constraints matter here: ignoring them gives other beams


def repeated_bigrams(tokens: list[int]) -> int:
    bigrams = list(itertools.pairwise(tokens))
    return len(bigrams) - len(set(bigrams))


def test_diverse_beam_search_honours_no_repeat_ngram_size_from_the_config(gpt2):
    model, tokenizer = gpt2
    blocked = constrained(model, no_repeat_ngram_size=2)
    free = diverse_beam_search_nbest(
        model,
        tokenizer,
        PROMPTS,
        beam_size=4,
        num_beam_groups=2,
        diversity_penalty=1.0,
        max_new_tokens=8,
        return_hypotheses=True,
    )
    kept = diverse_beam_search_nbest(
        blocked,
        tokenizer,
        PROMPTS,
        beam_size=4,
        num_beam_groups=2,
        diversity_penalty=1.0,
        max_new_tokens=8,
        return_hypotheses=True,
    )
    prompts = [tokenizer(prompt)["input_ids"] for prompt in PROMPTS]
    assert sum(repeated_bigrams(p + h.token_ids) for p, hs in zip(prompts, free) for h in hs) > 0
    assert sum(repeated_bigrams(p + h.token_ids) for p, hs in zip(prompts, kept) for h in hs) == 0
    # A keyword option overrides the checkpoint's setting, as in generate.
    again = diverse_beam_search_nbest(
        blocked,
        tokenizer,
        PROMPTS,
        beam_size=4,
        num_beam_groups=2,
        diversity_penalty=1.0,
        max_new_tokens=8,
        return_hypotheses=True,
        no_repeat_ngram_size=0,
    )
    assert [[h.token_ids for h in hs] for hs in again] == [[h.token_ids for h in hs] for hs in free]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"no_repeat_ngram": 2}, TypeError, "unknown generation option"),
        ({"do_sample": True}, TypeError, "sets \\['do_sample'\\] itself"),
    ],
)
def test_group_beam_search_rejects_unknown_and_owned_options(gpt2, kwargs, error, message):
    model, tokenizer = gpt2
    with pytest.raises(error, match=message):
        group_beam_search(
            model, tokenizer(["hi"], return_tensors="pt")["input_ids"], num_beams=2, **kwargs
        )


def test_nucleus_sampling_overrides_the_checkpoints_decoding_algorithm(gpt2):
    """A BlenderBot-like config (num_beams=10, ...) must not turn NS into beam sampling, nor
    temperature / top-k change the nucleus."""
    model, tokenizer = gpt2
    beamy = constrained(model, num_beams=4, temperature=0.3, top_k=5, do_sample=False)
    ours = nucleus_sampling_nbest(beamy, tokenizer, PROMPTS[:1], n=3, max_new_tokens=6, seed=11)
    encoded = tokenizer(PROMPTS[:1], return_tensors="pt")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(11)
        output = model.generate(
            **encoded,
            do_sample=True,
            num_beams=1,
            top_p=0.9,
            top_k=0,
            num_return_sequences=3,
            max_new_tokens=6,
        )
    expected = [
        tokenizer.decode(row, skip_special_tokens=True).strip()
        for row in output[:, encoded["input_ids"].shape[1] :]
    ]
    assert ours == [expected]


# --- batching, lengths, no side effects ---


@pytest.mark.parametrize("architecture", ["gpt2", "bart"])
def test_batched_nbest_equals_unbatched(gpt2, bart, architecture):
    model, tokenizer = gpt2 if architecture == "gpt2" else bart
    prompts = PROMPTS + [
        "okay, see you later!",
        "what is your favourite book? mine is about the sea.",
    ]
    one_by_one = beam_search_nbest(
        model, tokenizer, prompts, beam_size=3, max_new_tokens=5, batch_size=1
    )
    for batch_size in (2, len(prompts)):
        assert (
            beam_search_nbest(
                model, tokenizer, prompts, beam_size=3, max_new_tokens=5, batch_size=batch_size
            )
            == one_by_one
        )
    diverse = [
        diverse_beam_search_nbest(
            model,
            tokenizer,
            prompts,
            beam_size=4,
            num_beam_groups=2,
            diversity_penalty=1.0,
            max_new_tokens=5,
            batch_size=size,
        )
        for size in (1, 3)
    ]
    assert diverse[0] == diverse[1]
    sampled = nucleus_sampling_nbest(
        model, tokenizer, prompts, n=2, max_new_tokens=5, seed=0, batch_size=2
    )
    assert [len(samples) for samples in sampled] == [2] * len(prompts)
    assert (
        nucleus_sampling_nbest(
            model, tokenizer, prompts, n=2, max_new_tokens=5, seed=0, batch_size=2
        )
        == sampled
    )


def test_batches_are_generate_calls_of_batch_size_inputs(gpt2, monkeypatch):
    model, tokenizer = gpt2
    rows = []
    original = model.generate

    def counting_generate(**kwargs):
        rows.append(kwargs["input_ids"].shape[0] * kwargs["num_return_sequences"])
        return original(**kwargs)

    monkeypatch.setattr(model, "generate", counting_generate)
    beam_search_nbest(model, tokenizer, PROMPTS * 3, beam_size=4, max_new_tokens=3, batch_size=4)
    assert rows == [16, 16, 4]  # 9 inputs: 4 + 4 + 1 inputs of 4 beams, never all 36 rows at once


def test_max_new_tokens_default_leaves_room_for_a_minimum_length_of_20(bart):
    model, tokenizer = bart
    blender_like = constrained(model, min_length=20, no_repeat_ngram_size=3)
    hypotheses = diverse_beam_search_nbest(
        blender_like, tokenizer, PROMPTS[:1], beam_size=2, num_beam_groups=1, return_hypotheses=True
    )[0]
    assert all(20 <= len(h.token_ids) <= DEFAULT_MAX_NEW_TOKENS for h in hypotheses)
    assert DEFAULT_MAX_NEW_TOKENS >= 60  # BlenderBot's own max_length
    with pytest.raises(ValueError, match="`max_new_tokens` \\(10\\) is below the 20 tokens"):
        beam_search_nbest(blender_like, tokenizer, PROMPTS[:1], beam_size=2, max_new_tokens=10)
    with pytest.raises(ValueError, match="beyond the model's 128 positions"):
        beam_search_nbest(model, tokenizer, PROMPTS[:1], beam_size=2, max_new_tokens=200)


def test_callers_tokenizer_and_generation_config_are_left_alone(tiny_gpt2_path, gpt2):
    from transformers import AutoTokenizer

    model, _ = gpt2
    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_path)
    tokenizer.pad_token = None  # GPT-2 / DialoGPT ship without one
    tokenizer.padding_side = tokenizer.truncation_side = "right"
    config_before = model.generation_config.to_dict()
    for run in (
        lambda: beam_search_nbest(
            model, tokenizer, PROMPTS, beam_size=2, max_new_tokens=3, max_context_tokens=5
        ),
        lambda: nucleus_sampling_nbest(
            model, tokenizer, PROMPTS, n=2, max_new_tokens=3, seed=1, max_context_tokens=5
        ),
        lambda: diverse_beam_search_nbest(
            model,
            tokenizer,
            PROMPTS,
            beam_size=2,
            num_beam_groups=2,
            max_new_tokens=3,
            max_context_tokens=5,
            no_repeat_ngram_size=2,
        ),
    ):
        assert len(run()) == len(PROMPTS)
        assert tokenizer.pad_token is None
        assert (tokenizer.padding_side, tokenizer.truncation_side) == ("right", "right")
        assert model.generation_config.to_dict() == config_before


@pytest.mark.parametrize("architecture", ["gpt2", "bart"])
def test_long_contexts_keep_their_end(gpt2, bart, architecture):
    """max_context_tokens keeps the last tokens (the question), for both architectures."""
    model, tokenizer = gpt2 if architecture == "gpt2" else bart
    question = dialogue_prompt(["do you have any pets at home?"], tokenizer, model)
    long_context = dialogue_prompt(
        ["i like comedies."] * 5 + ["do you have any pets at home?"], tokenizer, model
    )
    cut = len(tokenizer(question)["input_ids"])
    assert beam_search_nbest(
        model, tokenizer, [long_context], beam_size=2, max_new_tokens=4, max_context_tokens=cut
    ) == beam_search_nbest(model, tokenizer, [question], beam_size=2, max_new_tokens=4)
