"""Diversity Threshold Generation (Stasaski & Hearst 2022, §5): the cached loop against a naive one."""

import copy

import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

from dialeval.generation.dtg import diversity_threshold_generate
from dialeval.generation.objectives import DistinctN, NLIContradictions
from dialeval.metrics.nli_diversity.nli import CONTRADICTION, ENTAILMENT, NLIScorer, ordered_pairs

CONTEXTS = [
    "hello there , how are you ?",
    "what did you do today ?",
    "i like music",
    "tell me a story",
]
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
    return AutoModelForCausalLM.from_pretrained(
        tiny_gpt2_path
    ).eval(), AutoTokenizer.from_pretrained(tiny_gpt2_path)


def naive_dtg(model, tokenizer, contexts, scorer, threshold, n, max_resamples, **generate_kwargs):
    """The procedure as §5 states it, every subset re-scored from scratch; same generate calls.

    S counts resamples (the n first draws excluded); subsets are ranked by Baseline NLI Diversity;
    ties are broken at random by a generator drawn from torch's at the first tie, as DTG documents.
    """
    tokenizer = copy.deepcopy(tokenizer)
    tokenizer.padding_side = "left"
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    encoded = tokenizer(contexts, return_tensors="pt", padding=True)
    kwargs = {
        "do_sample": True,
        "top_p": 0.9,
        "top_k": 0,
        "pad_token_id": tokenizer.pad_token_id,
        **generate_kwargs,
    }

    def sample(rows, per_row):
        out = model.generate(
            input_ids=encoded["input_ids"][rows],
            attention_mask=encoded["attention_mask"][rows],
            num_return_sequences=per_row,
            **kwargs,
        )
        texts = [
            t.strip()
            for t in tokenizer.batch_decode(
                out[:, encoded["input_ids"].shape[1] :], skip_special_tokens=True
            )
        ]
        return [texts[i * per_row : (i + 1) * per_row] for i in range(len(rows))]

    def labels(responses):
        first, second = ordered_pairs(len(responses))
        probabilities = scorer.pair_probabilities(
            [responses[i] for i in first], [responses[j] for j in second]
        )
        return probabilities.argmax(1), len(first)

    def contradictions(responses):
        return float((labels(responses)[0] == CONTRADICTION).sum())

    def baseline_nli(responses):
        predicted, count = labels(responses)
        return float((predicted == CONTRADICTION).sum() - (predicted == ENTAILMENT).sum()), count

    sets = sample(list(range(len(contexts))), n)
    resampled = [0] * len(contexts)
    evaluations = [labels(s)[1] for s in sets]
    rng = None
    while True:
        active = [
            i
            for i in range(len(contexts))
            if contradictions(sets[i]) <= threshold and resampled[i] < max_resamples
        ]
        if not active:
            return sets, resampled, evaluations
        drops = {}
        for i in active:
            values = []
            for k in range(n):
                value, count = baseline_nli(sets[i][:k] + sets[i][k + 1 :])
                values.append(value)
                evaluations[i] += count
            tied = [k for k, value in enumerate(values) if value == max(values)]
            if len(tied) > 1 and rng is None:
                rng = np.random.default_rng(int(torch.randint(0, 2**62, (1,)).item()))
            drops[i] = tied[0] if len(tied) == 1 else int(rng.choice(tied))
        for i, (new,) in zip(active, sample(active, 1)):
            sets[i][drops[i]] = new
            resampled[i] += 1


@pytest.mark.parametrize("threshold", [4.0, 10.0])
def test_cached_scorer_equals_the_naive_procedure(gpt2, threshold):
    model, tokenizer = gpt2
    torch.manual_seed(7)
    ours = diversity_threshold_generate(
        model,
        tokenizer,
        CONTEXTS,
        metric=NLIContradictions(RuleScorer()),
        threshold=threshold,
        **GENERATE,
    )
    torch.manual_seed(7)
    sets, resampled, naive_evaluations = naive_dtg(
        model, tokenizer, CONTEXTS, RuleScorer(), threshold, 5, 20, **GENERATE
    )
    assert [r.responses for r in ours] == sets
    assert [r.num_resampled for r in ours] == resampled
    n, s = 5, 20
    for result, naive in zip(ours, naive_evaluations):
        assert result.num_pair_evaluations <= n * (n - 1) + 2 * (n - 1) * s
        assert result.num_pair_evaluations <= naive
        value = float(
            sum(
                RuleScorer()
                .pair_probabilities([result.responses[i]], [result.responses[j]])[0]
                .argmax()
                == 0
                for i, j in zip(*ordered_pairs(5))
            )
        )
        assert result.final_diversity == value
        assert result.reached_threshold == (value > threshold)
        assert result.stop_reason == ("threshold" if value > threshold else "max_samples")
        assert 0 <= result.utterance_overlap <= 5
        assert (result.num_resampled == 20) or result.reached_threshold


def test_threshold_reached_at_once_means_no_resampling(gpt2):
    model, tokenizer = gpt2
    results = diversity_threshold_generate(
        model,
        tokenizer,
        CONTEXTS[:2],
        metric=NLIContradictions(RuleScorer()),
        threshold=-1.0,
        **GENERATE,
    )
    for result in results:
        assert result.num_initial == 5 and result.num_resampled == 0
        assert result.reached_threshold and result.stop_reason == "threshold"
        assert result.responses == result.initial_responses and result.utterance_overlap == 5
        assert result.num_pair_evaluations == 20 and result.history == []


def test_unreachable_threshold_stops_at_max_samples_and_says_so(gpt2):
    model, tokenizer = gpt2
    results = diversity_threshold_generate(
        model,
        tokenizer,
        CONTEXTS[:2],
        metric=NLIContradictions(RuleScorer()),
        threshold=20.0,
        num_responses=3,
        max_samples=4,
        **GENERATE,
    )
    for result in results:
        assert result.num_resampled == 4 and result.num_drawn == 7
        assert not result.reached_threshold and result.stop_reason == "max_samples"
        assert len(result.history) == 4 and result.num_pair_evaluations == 6 + 4 * 2 * 2


def test_distinct_n_and_seq2seq(tiny_bart_path):
    model = AutoModelForSeq2SeqLM.from_pretrained(tiny_bart_path).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_bart_path)
    torch.manual_seed(0)
    results = diversity_threshold_generate(
        model,
        tokenizer,
        CONTEXTS[:2],
        metric="distinct_n",
        threshold=0.99,
        num_responses=3,
        max_samples=3,
        **GENERATE,
    )
    for result in results:
        assert len(result.responses) == 3 and 0 <= result.num_resampled <= 3
        assert result.final_diversity == pytest.approx(DistinctN()._score(result.responses))
        assert result.num_pair_evaluations == 0


def test_real_nli_model_runs(gpt2, tiny_roberta_nli_path):
    model, tokenizer = gpt2
    objective = NLIContradictions(NLIScorer(tiny_roberta_nli_path, device="cpu"))
    results = diversity_threshold_generate(
        model, tokenizer, CONTEXTS[:2], metric=objective, num_responses=3, max_samples=5, **GENERATE
    )
    assert all(0 <= r.final_diversity <= 6 for r in results)


def test_invalid_sizes_are_errors(gpt2):
    model, tokenizer = gpt2
    for n, s, message in (
        (1, 20, "`num_responses` must be an int >= 2"),
        (5, -1, "`max_samples` must be an int >= 0"),
        (2.5, 20, "`num_responses` must be"),
    ):
        with pytest.raises(ValueError, match=message):
            diversity_threshold_generate(
                model,
                tokenizer,
                CONTEXTS,
                metric=NLIContradictions(RuleScorer()),
                num_responses=n,
                max_samples=s,
            )
    with pytest.raises(ValueError, match="`metric`"):
        diversity_threshold_generate(model, tokenizer, CONTEXTS, metric="self_bleu")


def test_the_comparison_exercises_resampling(gpt2):
    # Guard for the equality test above: with these seeds and thresholds some contexts do swap
    # responses, so the cached leave-one-out path is what is being compared.
    model, tokenizer = gpt2
    torch.manual_seed(7)
    results = diversity_threshold_generate(
        model,
        tokenizer,
        CONTEXTS,
        metric=NLIContradictions(RuleScorer()),
        threshold=10.0,
        **GENERATE,
    )
    assert any(r.history for r in results)
    assert any(r.responses != r.initial_responses for r in results)
    assert any(r.final_diversity > r.initial_diversity for r in results)


def _beams(model, tokenizer, contexts, num_beams):
    tokenizer.padding_side, tokenizer.pad_token = "left", tokenizer.pad_token or tokenizer.eos_token
    encoded = tokenizer(contexts, return_tensors="pt", padding=True)
    out = model.generate(
        **encoded,
        num_beams=num_beams,
        num_return_sequences=num_beams,
        do_sample=False,
        pad_token_id=tokenizer.pad_token_id,
        **GENERATE,
    )
    texts = [
        t.strip()
        for t in tokenizer.batch_decode(
            out[:, encoded["input_ids"].shape[1] :], skip_special_tokens=True
        )
    ]
    return [texts[i * num_beams : (i + 1) * num_beams] for i in range(len(contexts))]


@pytest.mark.parametrize("threshold", [4.0, 10.0])
def test_beam_variant_takes_beams_in_likelihood_order(gpt2, threshold):
    """App. D: start from the 5 most likely of 25 beams; each dropped response gives way to the next beam."""
    model, tokenizer = gpt2
    beams = _beams(model, tokenizer, CONTEXTS, 25)
    results = diversity_threshold_generate(
        model,
        tokenizer,
        CONTEXTS,
        metric=NLIContradictions(RuleScorer()),
        threshold=threshold,
        decoding="beam",
        tie_break="first",
        **GENERATE,
    )
    scorer = RuleScorer()

    def count(responses):
        first, second = ordered_pairs(len(responses))
        return float(
            (
                scorer.pair_probabilities(
                    [responses[i] for i in first], [responses[j] for j in second]
                ).argmax(1)
                == CONTRADICTION
            ).sum()
        )

    for result, context_beams in zip(results, beams):
        assert result.initial_responses == context_beams[:5]
        current, taken = list(context_beams[:5]), 5  # the naive procedure: rescore every subset
        while count(current) <= threshold and taken < 5 + 20:  # 25 beams = 5 + S (App. D)
            values = [count(current[:k] + current[k + 1 :]) for k in range(5)]
            current[int(np.argmax(values))] = context_beams[taken]
            taken += 1
        assert result.responses == current and result.num_resampled == taken - 5
        assert result.stop_reason == ("threshold" if count(current) > threshold else "max_samples")
    assert any(result.history for result in results)


def test_beam_variant_stops_when_the_beams_run_out(gpt2):
    model, tokenizer = gpt2
    results = diversity_threshold_generate(
        model,
        tokenizer,
        CONTEXTS[:2],
        metric=NLIContradictions(RuleScorer()),
        threshold=20.0,
        decoding="beam",
        num_beams=8,
        max_samples=30,
        **GENERATE,
    )
    for result in results:
        assert result.num_resampled == 3 and result.num_drawn == 8
        assert result.stop_reason == "beams_exhausted" and not result.reached_threshold
    with pytest.raises(ValueError, match="num_beams"):
        diversity_threshold_generate(
            model,
            tokenizer,
            CONTEXTS[:1],
            metric=NLIContradictions(RuleScorer()),
            decoding="beam",
            num_beams=4,
        )
    with pytest.raises(ValueError, match="decoding"):
        diversity_threshold_generate(
            model,
            tokenizer,
            CONTEXTS[:1],
            metric=NLIContradictions(RuleScorer()),
            decoding="greedy",
        )
    with pytest.raises(ValueError, match="num_return_sequences"):
        diversity_threshold_generate(
            model,
            tokenizer,
            CONTEXTS[:1],
            metric=NLIContradictions(RuleScorer()),
            num_return_sequences=3,
        )


def test_nli_scores_report_baseline_nli_diversity(gpt2, tiny_roberta_nli_path):
    """Table 4 reports Baseline NLI Diversity of the first and last sets: it must equal the metric's own value."""
    from dialeval.metrics.nli_diversity.nli import nli_diversity

    model, tokenizer = gpt2
    scorer = NLIScorer(tiny_roberta_nli_path, device="cpu")
    torch.manual_seed(1)
    results = diversity_threshold_generate(
        model,
        tokenizer,
        CONTEXTS[:2],
        metric=NLIContradictions(scorer),
        num_responses=3,
        max_samples=2,
        **GENERATE,
    )
    for result in results:
        for responses, scores in (
            (result.initial_responses, result.initial_scores),
            (result.responses, result.final_scores),
        ):
            expected = nli_diversity([responses], scorer=scorer)
            assert scores["nli_diversity"] == pytest.approx(expected["nli_diversity"])
            assert scores["contradictions"] == expected["num_contradiction"]
        assert result.final_scores["contradictions"] == result.final_diversity
        assert set(result.to_dict()) >= {
            "responses",
            "initial_scores",
            "final_scores",
            "stop_reason",
        }


def test_run_dtg_seeds_each_batch_so_a_resumed_run_equals_the_whole(gpt2):
    from dialeval.generation import run_dtg

    model, tokenizer = gpt2
    contexts = CONTEXTS + ["good morning"]
    options = {
        "metric": NLIContradictions(RuleScorer()),
        "threshold": 10.0,
        "num_responses": 3,
        "max_samples": 3,
        **GENERATE,
    }
    seen = []
    whole = run_dtg(
        model,
        tokenizer,
        contexts,
        seed=5,
        batch_size=2,
        on_batch=lambda k, r: seen.append((k, len(r))),
        **options,
    )
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
    results = diversity_threshold_generate(
        model,
        tokenizer,
        CONTEXTS,
        metric=NLIContradictions(scorer),
        threshold=20.0,
        num_responses=3,
        max_samples=3,
        **GENERATE,
    )
    rounds = 3
    assert scorer.calls == 1 + rounds  # the first sets together, then one call per round
    assert all(r.num_pair_evaluations == 3 * 2 + rounds * 2 * 2 for r in results)


class WordEncoder:
    """A sentence encoder stand-in: bag of hashed words, so cosines are exact and text-dependent."""

    def __init__(self):
        self.batch_sizes = []

    def encode(
        self,
        texts,
        batch_size=32,
        convert_to_numpy=True,
        normalize_embeddings=True,
        show_progress_bar=False,
    ):
        self.batch_sizes.append(batch_size)
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
        expected = [direct(responses[:k] + responses[k + 1 :]) for k in range(3)]
        np.testing.assert_allclose(objective.leave_one_out(state), expected)
    assert objective.replace_many(states, [1, 0], ["e f", "q r"]) == [2, 2]
    assert objective.value(states[0]) == pytest.approx(direct(["a b", "e f", "c d"]))
    assert objective.value(states[1]) == pytest.approx(direct(["q r", "x y", "z"]))
    assert objective.report(states[1]) == {"sent_bert": pytest.approx(direct(["q r", "x y", "z"]))}


# --- the paper's procedure, not a variant ------------------------------------------------------------------------


def test_s_counts_resamples_not_the_first_draws(gpt2):
    """§6.1's S = 20 caps the resamples: an unreachable threshold draws 5 + 20 = 25 responses (App. D's 25 beams)."""
    model, tokenizer = gpt2
    results = diversity_threshold_generate(
        model,
        tokenizer,
        CONTEXTS[:1],
        metric=NLIContradictions(RuleScorer()),
        threshold=20.0,
        **GENERATE,
    )
    (result,) = results
    assert (result.num_initial, result.num_resampled, result.num_drawn) == (5, 20, 25)
    assert len(result.history) == 20 and result.stop_reason == "max_samples"
    assert "num_resampled" in result.to_dict() and "response_token_ids" not in result.to_dict()


class PairTable:
    """An NLI stand-in that reads each ordered pair's label from a table (neutral otherwise)."""

    def __init__(self, labels):
        self.labels = labels

    def pair_probabilities(self, premises, hypotheses):
        return np.array(
            [np.eye(3)[self.labels.get((p, h), 1)] for p, h in zip(premises, hypotheses)]
        )


def test_nli_objective_ranks_subsets_by_baseline_nli_diversity_or_by_contradictions():
    # A<->B contradict; C->D, D->C and C->A entail. Values worked by hand from the pairs left in each subset:
    #   without:        A    B    C    D
    #   contradictions  0    0    2    2     (a tie between dropping C and D)
    #   nli_diversity  -2   -3    2    1     (C->D, D->C entail; + C->A; A<->B only; A<->B and C->A)
    labels = {
        ("A", "B"): CONTRADICTION,
        ("B", "A"): CONTRADICTION,
        ("C", "D"): ENTAILMENT,
        ("D", "C"): ENTAILMENT,
        ("C", "A"): ENTAILMENT,
    }
    by_diversity = NLIContradictions(PairTable(labels))
    state = by_diversity.start(["A", "B", "C", "D"])
    assert by_diversity.nli_objective == "nli_diversity"  # the default: §6.2's metric
    assert list(by_diversity.leave_one_out(state)) == [-2, -3, 2, 1]
    by_contradictions = NLIContradictions(PairTable(labels), nli_objective="contradictions")
    assert list(by_contradictions.leave_one_out(by_contradictions.start(["A", "B", "C", "D"]))) == [
        0,
        0,
        2,
        2,
    ]
    # Either way the threshold is tested on the contradiction count (§6.2: "more than 10 of 20").
    assert by_diversity.value(state) == 2.0
    with pytest.raises(ValueError, match="nli_objective"):
        NLIContradictions(PairTable(labels), nli_objective="confidence")


def test_nli_objective_is_a_dtg_option(gpt2, tiny_roberta_nli_path):
    model, tokenizer = gpt2
    with pytest.raises(ValueError, match="nli_objective"):
        diversity_threshold_generate(
            model, tokenizer, CONTEXTS[:1], metric="distinct_n", nli_objective="contradictions"
        )
    with pytest.raises(ValueError, match="nli_objective"):
        diversity_threshold_generate(
            model,
            tokenizer,
            CONTEXTS[:1],
            metric="nli",
            nli_objective="entailments",
            metric_options={"model": tiny_roberta_nli_path},
        )
    results = diversity_threshold_generate(
        model,
        tokenizer,
        CONTEXTS[:1],
        metric="nli",
        nli_objective="contradictions",
        metric_options={"model": tiny_roberta_nli_path, "device": "cpu"},
        num_responses=3,
        max_samples=1,
        **GENERATE,
    )
    assert len(results[0].responses) == 3


def test_nli_model_is_the_classifier_the_nli_objective_scores_with(
    gpt2, tiny_roberta_nli_path, monkeypatch
):
    from dialeval.generation import objectives
    from dialeval.generation.dtg_runner import run_dtg

    loaded = []

    class RecordingScorer(NLIScorer):
        def __init__(self, model, **options):
            loaded.append(model)
            super().__init__(model, **options)

    monkeypatch.setattr(objectives, "NLIScorer", RecordingScorer)
    model, tokenizer = gpt2
    options = {"num_responses": 3, "max_samples": 2, **GENERATE}
    torch.manual_seed(5)
    by_argument = diversity_threshold_generate(
        model, tokenizer, CONTEXTS[:2], metric="nli", nli_model=tiny_roberta_nli_path, **options
    )
    torch.manual_seed(5)
    by_option = diversity_threshold_generate(
        model, tokenizer, CONTEXTS[:2], metric_options={"model": tiny_roberta_nli_path}, **options
    )
    run_dtg(model, tokenizer, CONTEXTS[:2], nli_model=tiny_roberta_nli_path, **options)
    assert loaded == [tiny_roberta_nli_path] * 3
    assert [r.to_dict() for r in by_argument] == [r.to_dict() for r in by_option]
    for wrong, message in (
        ({"metric": "distinct_n"}, "^`nli_model` applies to metric='nli'"),
        ({"metric_options": {"model": tiny_roberta_nli_path}}, "^`nli_model` and "),
        ({"nli_model": 123}, "^`nli_model` must be an NLI classifier's Hub id"),
        ({"nli_model": " "}, "^`nli_model` must be an NLI classifier's Hub id"),
    ):
        with pytest.raises(ValueError, match=message):
            diversity_threshold_generate(
                model,
                tokenizer,
                CONTEXTS[:1],
                **{"nli_model": tiny_roberta_nli_path, **wrong},
                **options,
            )
    assert len(loaded) == 3  # each refusal came before any classifier was loaded


def test_choose_drop_breaks_ties_uniformly_and_never_picks_an_untied_subset():
    from dialeval.generation.dtg import choose_drop

    assert choose_drop([1.0, 3.0, 2.0], "random", np.random.default_rng(0)) == (1, 1)
    rng = np.random.default_rng(0)
    picks = [choose_drop([2.0, 0.0, 2.0, 2.0, 1.0], "random", rng) for _ in range(600)]
    assert {tied for _, tied in picks} == {3}
    counts = np.bincount([index for index, _ in picks], minlength=5)
    assert counts[1] == counts[4] == 0 and all(150 < counts[k] < 250 for k in (0, 2, 3))
    assert choose_drop([2.0, 0.0, 2.0], "first") == (0, 2)


def test_ties_do_not_replace_slot_0_again_and_again(gpt2):
    """With every subset tied, a plain argmax would drop slot 0 at every swap and keep the other four (App. C overlap 4)."""
    model, tokenizer = gpt2
    never = PairTable({})  # all neutral: every leave-one-out subset scores 0
    torch.manual_seed(2)
    results = diversity_threshold_generate(
        model,
        tokenizer,
        CONTEXTS[:2],
        metric=NLIContradictions(never),
        threshold=0.0,
        max_samples=10,
        **GENERATE,
    )
    for result in results:
        dropped = [step["dropped"] for step in result.history]
        assert all(step["tied"] == 5 for step in result.history)
        assert len(set(dropped)) >= 3
    torch.manual_seed(2)
    again = diversity_threshold_generate(
        model,
        tokenizer,
        CONTEXTS[:2],
        metric=NLIContradictions(never),
        threshold=0.0,
        max_samples=10,
        **GENERATE,
    )
    assert [r.history for r in again] == [r.history for r in results]  # seeded: repeatable
    first = diversity_threshold_generate(
        model,
        tokenizer,
        CONTEXTS[:2],
        metric=NLIContradictions(never),
        threshold=0.0,
        max_samples=10,
        tie_break="first",
        **GENERATE,
    )
    assert all(step["dropped"] == 0 for r in first for step in r.history)
    with pytest.raises(ValueError, match="tie_break"):
        diversity_threshold_generate(
            model, tokenizer, CONTEXTS[:1], metric=NLIContradictions(never), tie_break="last"
        )


def test_a_blenderbot_like_generation_config_still_samples_with_one_beam(tiny_bart_path):
    """BlenderBot's generation_config (num_beams=10, length_penalty, n-gram blocking, ...) must not turn §6.2's
    nucleus sampling into beam sampling; its content constraints stay, the run is recorded."""
    from transformers import GenerationConfig

    model = AutoModelForSeq2SeqLM.from_pretrained(tiny_bart_path).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_bart_path)
    model.generation_config = GenerationConfig(
        num_beams=10,
        do_sample=False,
        top_k=50,
        temperature=0.7,
        length_penalty=0.65,
        no_repeat_ngram_size=3,
        encoder_no_repeat_ngram_size=3,
        min_length=3,
        max_length=60,
        forced_eos_token_id=2,
        decoder_start_token_id=2,
        bos_token_id=0,
        eos_token_id=2,
        pad_token_id=1,
        return_dict_in_generate=True,
        output_scores=True,
    )
    checkpoint = model.generation_config.to_dict()
    torch.manual_seed(5)
    results = diversity_threshold_generate(
        model,
        tokenizer,
        CONTEXTS[:2],
        metric=NLIContradictions(RuleScorer()),
        threshold=-1.0,
        num_responses=3,
        max_new_tokens=6,
    )
    encoded = tokenizer(CONTEXTS[:2], return_tensors="pt", padding=True)
    torch.manual_seed(5)
    expected = model.generate(
        **encoded,
        num_beams=1,
        do_sample=True,
        top_p=0.9,
        top_k=0,
        temperature=1.0,
        num_return_sequences=3,
        max_new_tokens=6,
        return_dict_in_generate=False,
    )
    texts = [t.strip() for t in tokenizer.batch_decode(expected, skip_special_tokens=True)]
    assert [t for r in results for t in r.responses] == texts
    settings = results[0].decoding_settings
    assert {
        key: settings[key] for key in ("do_sample", "num_beams", "top_p", "top_k", "temperature")
    } == {"do_sample": True, "num_beams": 1, "top_p": 0.9, "top_k": 0, "temperature": 1.0}
    # the checkpoint's content constraints
    assert settings["no_repeat_ngram_size"] == 3 and settings["min_length"] == 3
    assert "length_penalty" not in settings  # beam-only: it does not act on sampling
    assert model.generation_config.to_dict() == checkpoint
    with pytest.raises(ValueError, match=r"^`num_beams`=4 applies to decoding=.beam."):
        diversity_threshold_generate(
            model, tokenizer, CONTEXTS[:1], metric=NLIContradictions(RuleScorer()), num_beams=4
        )
    with pytest.raises(ValueError, match=r"^`do_sample`=False would change DTG.s decoding"):
        diversity_threshold_generate(
            model, tokenizer, CONTEXTS[:1], metric=NLIContradictions(RuleScorer()), do_sample=False
        )
    model.generation_config.dola_layers = "high"
    with pytest.raises(ValueError, match="dola_layers"):
        diversity_threshold_generate(
            model, tokenizer, CONTEXTS[:1], metric=NLIContradictions(RuleScorer())
        )


def test_contexts_are_cut_to_the_models_own_maximum_input_length(tiny_bart_path, tiny_gpt2_path):
    """§6.1 gives BlenderBot (128 positions) the last 128 tokens; the limit comes from the model itself."""
    from transformers import BartForConditionalGeneration

    from dialeval.generation.dtg import context_token_limit

    tokenizer = AutoTokenizer.from_pretrained(tiny_bart_path)
    config = AutoModelForSeq2SeqLM.from_pretrained(tiny_bart_path).config
    config.max_position_embeddings = 16
    torch.manual_seed(0)
    model = BartForConditionalGeneration(config).eval()
    long_context = " ".join(["hello there , how are you ?"] * 8)
    assert len(tokenizer(long_context)["input_ids"]) > 16
    results = diversity_threshold_generate(
        model,
        tokenizer,
        [long_context, "hi"],
        metric=NLIContradictions(RuleScorer()),
        num_responses=2,
        max_samples=1,
        **GENERATE,
    )
    assert results[0].decoding_settings["max_context_tokens"] == 16
    # tokenized inputs are used as given
    with pytest.raises(ValueError, match="max_context_tokens"):
        diversity_threshold_generate(
            model,
            tokenizer,
            tokenizer(["hi"], return_tensors="pt"),
            metric=NLIContradictions(RuleScorer()),
            max_context_tokens=8,
        )
    gpt2 = AutoModelForCausalLM.from_pretrained(tiny_gpt2_path)
    assert context_token_limit(gpt2, tokenizer, GenerationConfigWith(max_new_tokens=6)) == 128 - 6


def GenerationConfigWith(**settings):
    from transformers import GenerationConfig

    return GenerationConfig(**settings)


def test_sent_bert_objective_honours_device_dtype_and_batch_size(monkeypatch):
    from dialeval.generation.objectives import SentBertDiversity
    from dialeval.metrics.engines import embedders

    encoder, asked = WordEncoder(), []
    monkeypatch.setattr(
        embedders,
        "load_sentence_model",
        lambda model, device=None, dtype=None: asked.append((model, device, dtype)) or encoder,
    )
    objective = SentBertDiversity(
        model="some/sentence-model", device="cpu", dtype="bfloat16", batch_size=3
    )
    objective.start_many([["a b", "b c", "c d"]])
    assert asked == [("some/sentence-model", "cpu", "bfloat16")] and encoder.batch_sizes == [3]
    with pytest.raises(ValueError, match="device"):
        SentBertDiversity(model=WordEncoder(), device="cpu")


def test_sent_bert_objective_loads_a_model_given_by_id_or_path():
    """`dtg --metric sent_bert --metric-model ID` passes a str: a str has .encode() too, so it must be
    loaded as a model id, not called as an encoder."""
    from dialeval.generation.objectives import SentBertDiversity
    from dialeval.hub import EMBEDDED_SENTENCE_MODEL, resolve_model_path

    for model in (EMBEDDED_SENTENCE_MODEL, resolve_model_path(EMBEDDED_SENTENCE_MODEL)):
        objective = SentBertDiversity(model, device="cpu")
        assert not isinstance(objective.encoder, str)
        vectors = objective.encoder.encode(
            ["a b", "c d"], convert_to_numpy=True, normalize_embeddings=True
        )
        assert vectors.shape == (2, 384)
    with pytest.raises(ValueError, match="`model` must be a sentence-transformers id"):
        SentBertDiversity(3.5)
