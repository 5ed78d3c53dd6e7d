"""Diversity Threshold Generation (Stasaski & Hearst 2022, §5): the cached loop against a naive one."""
import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

from dialeval.generation.dtg import diversity_threshold_generate
from dialeval.generation.objectives import DistinctN, NLIContradictions
from dialeval.metrics.nli_diversity.nli import CONTRADICTION, NLIScorer, ordered_pairs

CONTEXTS = ["hello there , how are you ?", "what did you do today ?", "i like music", "tell me a story"]
GENERATE = {"max_new_tokens": 6, "min_new_tokens": 2}


class RuleScorer:
    """A controlled NLI model: a pair contradicts when its texts' lengths sum to a multiple of 3."""

    def pair_probabilities(self, premises, hypotheses):
        rows = []
        for premise, hypothesis in zip(premises, hypotheses):
            label = CONTRADICTION if (len(premise) + len(hypothesis)) % 3 == 0 else 1
            rows.append(np.eye(3)[label])
        return np.array(rows)


@pytest.fixture(scope="module")
def gpt2(tiny_gpt2_path):
    return AutoModelForCausalLM.from_pretrained(tiny_gpt2_path).eval(), AutoTokenizer.from_pretrained(tiny_gpt2_path)


def naive_dtg(model, tokenizer, contexts, scorer, threshold, n, max_samples, **generate_kwargs):
    """The procedure as §5 states it, every subset re-scored from scratch; same generate calls."""
    tokenizer.padding_side = "left"
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    encoded = tokenizer(contexts, return_tensors="pt", padding=True)
    kwargs = {"do_sample": True, "top_p": 0.9, "top_k": 0, "pad_token_id": tokenizer.pad_token_id, **generate_kwargs}

    def sample(rows, per_row):
        out = model.generate(input_ids=encoded["input_ids"][rows], attention_mask=encoded["attention_mask"][rows],
                             num_return_sequences=per_row, **kwargs)
        texts = [t.strip() for t in tokenizer.batch_decode(out[:, encoded["input_ids"].shape[1]:], skip_special_tokens=True)]
        return [texts[i * per_row:(i + 1) * per_row] for i in range(len(rows))]

    def contradictions(responses):
        first, second = ordered_pairs(len(responses))
        probabilities = scorer.pair_probabilities([responses[i] for i in first], [responses[j] for j in second])
        return float((probabilities.argmax(1) == CONTRADICTION).sum()), len(first)

    sets = sample(list(range(len(contexts))), n)
    sampled = [n] * len(contexts)
    evaluations = [contradictions(s)[1] for s in sets]
    while True:
        active = [i for i in range(len(contexts)) if contradictions(sets[i])[0] <= threshold and sampled[i] < max_samples]
        if not active:
            return sets, sampled, evaluations
        drops = {}
        for i in active:
            values = []
            for k in range(n):
                value, count = contradictions(sets[i][:k] + sets[i][k + 1:])
                values.append(value)
                evaluations[i] += count
            drops[i] = int(np.argmax(values))
        for i, (new,) in zip(active, sample(active, 1)):
            sets[i][drops[i]] = new
            sampled[i] += 1


@pytest.mark.parametrize("threshold", [4.0, 10.0])
def test_cached_scorer_equals_the_naive_procedure(gpt2, threshold):
    model, tokenizer = gpt2
    torch.manual_seed(7)
    ours = diversity_threshold_generate(model, tokenizer, CONTEXTS, metric=NLIContradictions(RuleScorer()),
                                        threshold=threshold, **GENERATE)
    torch.manual_seed(7)
    sets, sampled, naive_evaluations = naive_dtg(model, tokenizer, CONTEXTS, RuleScorer(), threshold, 5, 20, **GENERATE)
    assert [r.responses for r in ours] == sets
    assert [r.num_sampled for r in ours] == sampled
    n, s = 5, 20
    for result, naive in zip(ours, naive_evaluations):
        assert result.num_pair_evaluations <= n * (n - 1) + 2 * (n - 1) * (s - n)
        assert result.num_pair_evaluations <= naive
        value = float(sum(RuleScorer().pair_probabilities([result.responses[i]], [result.responses[j]])[0].argmax() == 0
                          for i, j in zip(*ordered_pairs(5))))
        assert result.final_diversity == value
        assert result.reached_threshold == (value > threshold)
        assert result.stop_reason == ("threshold" if value > threshold else "max_samples")
        assert 0 <= result.utterance_overlap <= 5
        assert (result.num_sampled == 20) or result.reached_threshold


def test_threshold_reached_at_once_means_no_resampling(gpt2):
    model, tokenizer = gpt2
    results = diversity_threshold_generate(model, tokenizer, CONTEXTS[:2], metric=NLIContradictions(RuleScorer()),
                                           threshold=-1.0, **GENERATE)
    for result in results:
        assert result.num_sampled == 5 and result.reached_threshold and result.stop_reason == "threshold"
        assert result.responses == result.initial_responses and result.utterance_overlap == 5
        assert result.num_pair_evaluations == 20 and result.history == []


def test_unreachable_threshold_stops_at_max_samples_and_says_so(gpt2):
    model, tokenizer = gpt2
    results = diversity_threshold_generate(model, tokenizer, CONTEXTS[:2], metric=NLIContradictions(RuleScorer()),
                                           threshold=20.0, num_responses=3, max_samples=7, **GENERATE)
    for result in results:
        assert result.num_sampled == 7 and not result.reached_threshold and result.stop_reason == "max_samples"
        assert len(result.history) == 4 and result.num_pair_evaluations == 6 + 4 * 2 * 2


def test_distinct_n_and_seq2seq(tiny_bart_path):
    model = AutoModelForSeq2SeqLM.from_pretrained(tiny_bart_path).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_bart_path)
    torch.manual_seed(0)
    results = diversity_threshold_generate(model, tokenizer, CONTEXTS[:2], metric="distinct_n", threshold=0.99,
                                           num_responses=3, max_samples=6, **GENERATE)
    for result in results:
        assert len(result.responses) == 3 and 3 <= result.num_sampled <= 6
        assert result.final_diversity == pytest.approx(DistinctN()._score(result.responses))
        assert result.num_pair_evaluations == 0


def test_real_nli_model_runs(gpt2, tiny_roberta_nli_path):
    model, tokenizer = gpt2
    objective = NLIContradictions(NLIScorer(tiny_roberta_nli_path, device="cpu"))
    results = diversity_threshold_generate(model, tokenizer, CONTEXTS[:2], metric=objective, num_responses=3,
                                           max_samples=5, **GENERATE)
    assert all(0 <= r.final_diversity <= 6 for r in results)


def test_invalid_sizes_are_errors(gpt2):
    model, tokenizer = gpt2
    for n, s, message in ((1, 20, "at least 2"), (5, 4, "must be >="), (2.5, 20, "must be an int")):
        with pytest.raises(ValueError, match=message):
            diversity_threshold_generate(model, tokenizer, CONTEXTS, metric=NLIContradictions(RuleScorer()),
                                         num_responses=n, max_samples=s)
    with pytest.raises(ValueError, match="`metric`"):
        diversity_threshold_generate(model, tokenizer, CONTEXTS, metric="self_bleu")


def test_the_comparison_exercises_resampling(gpt2):
    # Guard for the equality test above: with these seeds and thresholds some contexts do swap
    # responses, so the cached leave-one-out path is what is being compared.
    model, tokenizer = gpt2
    torch.manual_seed(7)
    results = diversity_threshold_generate(model, tokenizer, CONTEXTS, metric=NLIContradictions(RuleScorer()),
                                           threshold=10.0, **GENERATE)
    assert any(r.history for r in results)
    assert any(r.responses != r.initial_responses for r in results)
    assert any(r.final_diversity > r.initial_diversity for r in results)


def test_custom_generate_folder_equals_the_function(gpt2):
    from conftest import REPO_ROOT

    model, tokenizer = gpt2
    tokenizer.padding_side, tokenizer.pad_token = "left", tokenizer.pad_token or tokenizer.eos_token
    encoded = tokenizer(CONTEXTS, return_tensors="pt", padding=True)
    torch.manual_seed(3)
    out = model.generate(**encoded, custom_generate=str(REPO_ROOT / "generation"), trust_remote_code=True,
                         tokenizer=tokenizer, metric=NLIContradictions(RuleScorer()), threshold=10.0,
                         return_dict_in_generate=True, do_sample=True, top_p=0.9, top_k=0, **GENERATE)
    torch.manual_seed(3)
    direct = diversity_threshold_generate(model, tokenizer, encoded, metric=NLIContradictions(RuleScorer()),
                                          threshold=10.0, **GENERATE)
    assert [r.responses for r in out["dtg_results"]] == [r.responses for r in direct]
    assert out["sequences"].shape[0] == 5 * len(CONTEXTS)
    decoded = tokenizer.batch_decode(out["sequences"], skip_special_tokens=True)
    assert [text.strip() for text in decoded] == [t for r in direct for t in r.responses]
    with pytest.raises(ValueError, match="tokenizer"):
        model.generate(**encoded, custom_generate=str(REPO_ROOT / "generation"), trust_remote_code=True)


def _beams(model, tokenizer, contexts, num_beams):
    tokenizer.padding_side, tokenizer.pad_token = "left", tokenizer.pad_token or tokenizer.eos_token
    encoded = tokenizer(contexts, return_tensors="pt", padding=True)
    out = model.generate(**encoded, num_beams=num_beams, num_return_sequences=num_beams, do_sample=False,
                         pad_token_id=tokenizer.pad_token_id, **GENERATE)
    texts = [t.strip() for t in tokenizer.batch_decode(out[:, encoded["input_ids"].shape[1]:], skip_special_tokens=True)]
    return [texts[i * num_beams:(i + 1) * num_beams] for i in range(len(contexts))]


@pytest.mark.parametrize("threshold", [4.0, 10.0])
def test_beam_variant_takes_beams_in_likelihood_order(gpt2, threshold):
    """App. D: start from the 5 most likely of 25 beams; each dropped response gives way to the next beam."""
    model, tokenizer = gpt2
    beams = _beams(model, tokenizer, CONTEXTS, 25)
    results = diversity_threshold_generate(model, tokenizer, CONTEXTS, metric=NLIContradictions(RuleScorer()),
                                           threshold=threshold, decoding="beam", **GENERATE)
    scorer = RuleScorer()

    def count(responses):
        first, second = ordered_pairs(len(responses))
        return float((scorer.pair_probabilities([responses[i] for i in first],
                                                [responses[j] for j in second]).argmax(1) == CONTRADICTION).sum())

    for result, context_beams in zip(results, beams):
        assert result.initial_responses == context_beams[:5]
        current, taken = list(context_beams[:5]), 5  # the naive procedure: rescore every subset
        while count(current) <= threshold and taken < 20:
            values = [count(current[:k] + current[k + 1:]) for k in range(5)]
            current[int(np.argmax(values))] = context_beams[taken]
            taken += 1
        assert result.responses == current and result.num_sampled == taken
        assert result.stop_reason == ("threshold" if count(current) > threshold else "max_samples")
    assert any(result.history for result in results)


def test_beam_variant_stops_when_the_beams_run_out(gpt2):
    model, tokenizer = gpt2
    results = diversity_threshold_generate(model, tokenizer, CONTEXTS[:2], metric=NLIContradictions(RuleScorer()),
                                           threshold=20.0, decoding="beam", num_beams=8, max_samples=30, **GENERATE)
    for result in results:
        assert result.num_sampled == 8 and result.stop_reason == "beams_exhausted" and not result.reached_threshold
    with pytest.raises(ValueError, match="num_beams"):
        diversity_threshold_generate(model, tokenizer, CONTEXTS[:1], metric=NLIContradictions(RuleScorer()),
                                     decoding="beam", num_beams=4)
    with pytest.raises(ValueError, match="decoding"):
        diversity_threshold_generate(model, tokenizer, CONTEXTS[:1], metric=NLIContradictions(RuleScorer()),
                                     decoding="greedy")
    with pytest.raises(ValueError, match="num_return_sequences"):
        diversity_threshold_generate(model, tokenizer, CONTEXTS[:1], metric=NLIContradictions(RuleScorer()),
                                     num_return_sequences=3)


def test_nli_scores_report_baseline_nli_diversity(gpt2, tiny_roberta_nli_path):
    """Table 4 reports Baseline NLI Diversity of the first and last sets: it must equal the metric's own value."""
    from dialeval.metrics.nli_diversity.nli import nli_diversity

    model, tokenizer = gpt2
    scorer = NLIScorer(tiny_roberta_nli_path, device="cpu")
    torch.manual_seed(1)
    results = diversity_threshold_generate(model, tokenizer, CONTEXTS[:2], metric=NLIContradictions(scorer),
                                           num_responses=3, max_samples=5, **GENERATE)
    for result in results:
        for responses, scores in ((result.initial_responses, result.initial_scores), (result.responses, result.final_scores)):
            expected = nli_diversity([responses], scorer=scorer)
            assert scores["nli_diversity"] == pytest.approx(expected["nli_diversity"])
            assert scores["contradictions"] == expected["num_contradiction"]
        assert result.final_scores["contradictions"] == result.final_diversity
        assert set(result.to_dict()) >= {"responses", "initial_scores", "final_scores", "stop_reason"}


def test_run_dtg_seeds_each_batch_so_a_resumed_run_equals_the_whole(gpt2):
    from dialeval.generation import run_dtg

    model, tokenizer = gpt2
    contexts = CONTEXTS + ["good morning"]
    options = {"metric": NLIContradictions(RuleScorer()), "threshold": 10.0, "num_responses": 3, "max_samples": 6, **GENERATE}
    seen = []
    whole = run_dtg(model, tokenizer, contexts, seed=5, batch_size=2, on_batch=lambda k, r: seen.append((k, len(r))), **options)
    assert seen == [(0, 2), (1, 2), (2, 1)]
    resumed = run_dtg(model, tokenizer, contexts, seed=5, batch_size=2, start_batch=1, **options)
    assert [r.responses for r in resumed] == [r.responses for r in whole[2:]]
    torch.manual_seed(5 + 1)
    direct = diversity_threshold_generate(model, tokenizer, contexts[2:4], **options)
    assert [r.responses for r in direct] == [r.responses for r in whole[2:4]]
    with pytest.raises(ValueError, match="batch_size"):
        run_dtg(model, tokenizer, contexts, batch_size=0, **options)


class CountingScorer(RuleScorer):
    def __init__(self):
        self.calls = 0

    def pair_probabilities(self, premises, hypotheses):
        self.calls += 1
        return super().pair_probabilities(premises, hypotheses)


def test_each_round_scores_all_active_contexts_in_one_call(gpt2):
    """The new pairs of every context still sampling go to the NLI model together (one batch per round)."""
    model, tokenizer = gpt2
    scorer = CountingScorer()
    torch.manual_seed(7)
    results = diversity_threshold_generate(model, tokenizer, CONTEXTS, metric=NLIContradictions(scorer),
                                           threshold=20.0, num_responses=3, max_samples=6, **GENERATE)
    rounds = 6 - 3
    assert scorer.calls == 1 + rounds  # the first sets together, then one call per round
    assert all(r.num_pair_evaluations == 3 * 2 + rounds * 2 * 2 for r in results)


class WordEncoder:
    """A sentence encoder stand-in: bag of hashed words, so cosines are exact and text-dependent."""

    def encode(self, texts, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False):
        vectors = np.zeros((len(texts), 16))
        for row, text in enumerate(texts):
            for word in text.split() or ["<empty>"]:
                vectors[row, sum(map(ord, word)) % 16] += 1.0
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_sent_bert_objective_keeps_the_cosine_matrix_of_the_current_set():
    from dialeval.generation.objectives import SentBertDiversity

    objective = SentBertDiversity(model=WordEncoder())
    sets = [["a b", "b c", "c d"], ["x y", "x y", "z"]]
    states, counts = objective.start_many(sets)
    assert counts == [3, 3]

    def direct(responses):
        vectors = WordEncoder().encode(responses)
        similarity = vectors @ vectors.T
        n = len(responses)
        return -(similarity.sum() - np.trace(similarity)) / (n * (n - 1))

    for state, responses in zip(states, sets):
        assert objective.value(state) == pytest.approx(direct(responses))
        expected = [direct(responses[:k] + responses[k + 1:]) for k in range(3)]
        np.testing.assert_allclose(objective.leave_one_out(state), expected)
    assert objective.replace_many(states, [1, 0], ["e f", "q r"]) == [2, 2]
    assert objective.value(states[0]) == pytest.approx(direct(["a b", "e f", "c d"]))
    assert objective.value(states[1]) == pytest.approx(direct(["q r", "x y", "z"]))
    assert objective.report(states[1]) == {"sent_bert": pytest.approx(direct(["q r", "x y", "z"]))}
