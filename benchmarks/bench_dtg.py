"""Benchmark DTG's cached NLI objective against re-scoring every subset from scratch.

Diversity Threshold Generation with the NLI metric (Stasaski & Hearst 2022, §5-6: n = 5,
S = 20 resamples) on DailyDialog++ dev contexts. The threshold is 20 contradictions (unreachable: 20 is
all ordered pairs), so every context draws n + S = 25 responses, the loop's worst case: a random
classifier predicts one class for almost every pair, and under the paper's threshold of 10 its
contexts would all stop at once or all run to S depending on which class that is. With

- a tiny random GPT-2 generator (4 x 128, byte-level BPE trained here on the contexts), and
- a randomly initialized NLI classifier of roberta-base's shape (12 x 768; built as in
  ``bench_nli.py``), float32 on the CPU.

Both runs make the same generate calls under the same seed; they differ only in scoring:

- naive: the procedure as §5 states it: the set's value from its n(n-1) ordered pairs and each
  leave-one-out subset from its (n-1)(n-2) pairs, one scorer call per set or subset, every
  time (n(n-1) + n(n-1)(n-2) = 80 pairs a step for n = 5);
- cached: :class:`dialeval.generation.NLIContradictions`: the pair matrix of the current set;
  a swap scores only the 2(n-1) = 8 new ordered pairs; subsets are read from the matrix.

Check: identical final sets, samples and stop reasons. Reported: scoring wall time (time spent
inside the classifier's ``pair_probabilities``), pair evaluations, total wall time, and their
ratios. Writes its section of ``benchmarks/RESULTS.md``.

Usage::

    .venv/bin/python benchmarks/bench_dtg.py                   # ~5 minutes on 2 idle cores
    .venv/bin/python benchmarks/bench_dtg.py --contexts 2 --max-samples 7   # smoke run
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import transformers
from _report import RESULTS_PATH, machine_line, markdown_table, section_text, write_section
from bench_nli import build_classifier
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

from dialeval.generation import diversity_threshold_generate
from dialeval.generation.objectives import NLIContradictions, SetState
from dialeval.metrics.nli_diversity.nli import CONTRADICTION, ENTAILMENT, NLIScorer, ordered_pairs

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_FILE = REPO_ROOT.parent / "shared" / "data" / "dailydialog-plusplus" / "dev.json"
SCRIPT = "bench_dtg"
TARGET_SPEEDUP = 5.0


class TimedScorer:
    """Wraps a scorer: seconds spent and pairs asked for inside ``pair_probabilities``."""

    def __init__(self, scorer):
        self.scorer, self.seconds, self.pairs = scorer, 0.0, 0

    def pair_probabilities(self, premises, hypotheses):
        start = time.perf_counter()
        probabilities = self.scorer.pair_probabilities(premises, hypotheses)
        self.seconds += time.perf_counter() - start
        self.pairs += len(premises)
        return probabilities


class NaiveNLIContradictions:
    """§5 without a cache: every value and every leave-one-out subset is scored from its pairs."""

    name = "nli"
    default_threshold = 10.0

    def __init__(self, scorer):
        self.scorer = scorer
        self.pair_evaluations = 0
        self._last = None

    def _classes(self, responses: list[str]) -> np.ndarray:
        if self._last is not None and self._last[0] == responses:
            # the report right after value(): no need to score the same set twice
            return self._last[1]
        first, second = ordered_pairs(len(responses))
        self.pair_evaluations += len(first)
        classes = self.scorer.pair_probabilities(
            [responses[i] for i in first], [responses[j] for j in second]
        ).argmax(1)
        self._last = (list(responses), classes)
        return classes

    def start(self, responses):
        return SetState(list(responses))

    def value(self, state):
        return float((self._classes(state.responses) == CONTRADICTION).sum())

    def report(self, state):
        classes = self._classes(state.responses)
        contradictions = int((classes == CONTRADICTION).sum())
        return {
            "contradictions": contradictions,
            "nli_diversity": float(contradictions - (classes == ENTAILMENT).sum()),
        }

    def leave_one_out(self, state):
        """Baseline NLI Diversity of every subset, as NLIContradictions ranks them by default."""
        values = []
        for k in range(len(state.responses)):
            classes = self._classes(state.responses[:k] + state.responses[k + 1 :])
            values.append(float((classes == CONTRADICTION).sum() - (classes == ENTAILMENT).sum()))
        return np.array(values)

    def replace(self, state, index, response):
        state.responses[index] = response


def build_generator(directory: Path, texts: list[str]) -> str:
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=8000,
            special_tokens=["<|endoftext|>", "<unk>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token="<|endoftext|>",
        bos_token="<|endoftext|>",
        unk_token="<unk>",
        pad_token="<|endoftext|>",
        model_max_length=512,
    )
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=512,
        n_embd=128,
        n_layer=4,
        n_head=4,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=0,
    )
    torch.manual_seed(0)
    GPT2LMHeadModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def run(objective, generator, tokenizer, contexts, args):
    torch.manual_seed(args.seed)
    start = time.perf_counter()
    results = diversity_threshold_generate(
        generator,
        tokenizer,
        contexts,
        metric=objective,
        num_responses=args.num_responses,
        max_samples=args.max_samples,
        threshold=args.threshold,
        max_new_tokens=args.max_new_tokens,
        min_new_tokens=4,
    )
    return results, time.perf_counter() - start


def render(m: dict, command: str) -> str:
    scoring_ratio = m["naive_scoring_s"] / m["cached_scoring_s"]
    verdict = "meets" if scoring_ratio >= TARGET_SPEEDUP else "**misses**"
    n, s = m["num_responses"], m["max_samples"]
    lines = [
        "## bench_dtg: DTG with the NLI metric, cached pair matrix vs. re-scoring every subset",
        "",
        f"- Date: {datetime.date.today().isoformat()}",
        f"- Command: `{command}`",
        machine_line(),
        (
            f"- Versions: Python {platform.python_version()}, torch {torch.__version__} ({torch.get_num_threads()} threads), "
            f"transformers {transformers.__version__}"
        ),
        (
            f"- Setting: {m['num_contexts']} DailyDialog++ dev contexts, n = {n}, S = {s}, threshold {m['threshold']:g} "
            f"contradictions (20 is unreachable: every context draws S, the worst case), nucleus p = 0.9, at most {m['max_new_tokens']} new tokens; seed {m['seed']}. Generator: "
            "random GPT-2 4 x 128; NLI: random `RobertaForSequenceClassification` of roberta-base's shape (12 x 768), "
            "float32, CPU, batch 32."
        ),
        (
            f"- Contexts that reached the threshold: {m['reached']} of {m['num_contexts']}; mean responses drawn "
            f"{m['mean_sampled']:.1f}; predicted classes over the cached run's pairs (c, n, e): {m['class_counts']}."
        ),
        (
            f"- 1-minute load average at the end of the run: {m['load_average']:.1f} (above 2 means other jobs shared the "
            "cores; both runs ran under the same conditions, one after the other)."
        ),
        "",
        *markdown_table(
            ("scoring", "pair evaluations", "scoring wall time", "whole DTG wall time"),
            "lrrr",
            [
                (
                    "naive: every value and subset from its pairs",
                    f"{m['naive_pairs']:,}",
                    f"{m['naive_scoring_s']:.1f} s",
                    f"{m['naive_total_s']:.1f} s",
                ),
                (
                    "cached pair matrix (ours)",
                    f"{m['cached_pairs']:,}",
                    f"{m['cached_scoring_s']:.1f} s",
                    f"{m['cached_total_s']:.1f} s",
                ),
                (
                    "ratio",
                    f"{m['naive_pairs'] / m['cached_pairs']:.1f}x",
                    f"**{scoring_ratio:.1f}x** ({verdict} the {TARGET_SPEEDUP:.0f}x target)",
                    f"{m['naive_total_s'] / m['cached_total_s']:.1f}x",
                ),
            ],
        ),
        "",
        (
            f"Identical final sets, samples drawn and stop reasons: **{m['identical']}**. Bound per context "
            f"n(n-1) + 2(n-1)(S-n) = {n * (n - 1) + 2 * (n - 1) * (s - n)} model pair scorings: max observed "
            f"{m['max_pairs_per_context']} (the Table 4 report reads the matrix and adds none)."
        ),
    ]
    return section_text(SCRIPT, lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-file", type=Path, default=DATA_FILE)
    parser.add_argument("--contexts", type=int, default=2)
    parser.add_argument("--num-responses", type=int, default=5)
    parser.add_argument("--max-samples", type=int, default=20)
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--threshold", type=float, default=20.0, help="default: unreachable, every context draws S"
    )
    parser.add_argument("--results", type=Path, default=RESULTS_PATH)
    args = parser.parse_args(argv)
    if not args.data_file.is_file():
        print(
            f"bench_dtg: {args.data_file} not found (the papers' data lives in ../shared/data); nothing measured"
        )
        return 1
    records = [
        json.loads(line)
        for line in args.data_file.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    dialogues = [record["context"] for record in records]
    contexts = [
        "<|endoftext|>".join(turns) + "<|endoftext|>" for turns in dialogues[: args.contexts]
    ]
    texts = [turn for turns in dialogues for turn in turns] + [
        r for record in records for r in record["positive_responses"]
    ]
    with tempfile.TemporaryDirectory() as workdir:
        generator_path = build_generator(Path(workdir) / "generator", texts)
        classifier_path = build_classifier(
            Path(workdir) / "roberta-base-shape", texts, roberta_base=True
        )
        generator = GPT2LMHeadModel.from_pretrained(generator_path).eval()
        tokenizer = transformers.AutoTokenizer.from_pretrained(generator_path)
        scorer = NLIScorer(classifier_path, device="cpu", batch_size=32)
        # Warm-up: first-call costs (allocator, kernels) go to neither measured run.
        run(
            NLIContradictions(scorer),
            generator,
            tokenizer,
            contexts[:1],
            argparse.Namespace(**{**vars(args), "max_samples": 1}),
        )

        cached_scorer = TimedScorer(scorer)
        cached_objective = NLIContradictions(cached_scorer)
        cached, cached_total = run(cached_objective, generator, tokenizer, contexts, args)
        naive_scorer = TimedScorer(scorer)
        naive_objective = NaiveNLIContradictions(naive_scorer)
        naive, naive_total = run(naive_objective, generator, tokenizer, contexts, args)

    identical = all(
        a.responses == b.responses
        and a.num_resampled == b.num_resampled
        and a.stop_reason == b.stop_reason
        and a.final_scores == b.final_scores
        for a, b in zip(cached, naive)
    )
    classes = np.zeros(3, dtype=int)
    for result in cached:
        first, second = ordered_pairs(len(result.responses))
        predicted = scorer.pair_probabilities(
            [result.responses[i] for i in first], [result.responses[j] for j in second]
        ).argmax(1)
        classes += np.bincount(predicted, minlength=3)
    measured = {
        "num_contexts": len(contexts),
        "num_responses": args.num_responses,
        "max_samples": args.max_samples,
        "max_new_tokens": args.max_new_tokens,
        "seed": args.seed,
        "threshold": args.threshold,
        "cached_pairs": cached_scorer.pairs,
        "naive_pairs": naive_scorer.pairs,
        "cached_scoring_s": cached_scorer.seconds,
        "naive_scoring_s": naive_scorer.seconds,
        "cached_total_s": cached_total,
        "naive_total_s": naive_total,
        "identical": identical,
        "reached": sum(r.reached_threshold for r in cached),
        "mean_sampled": float(np.mean([r.num_drawn for r in cached])),
        "max_pairs_per_context": max(r.num_pair_evaluations for r in cached),
        "class_counts": classes.tolist(),
    }
    measured["load_average"] = os.getloadavg()[0]
    print(measured)
    command = "python benchmarks/bench_dtg.py " + shlex.join(
        argv if argv is not None else sys.argv[1:]
    )
    write_section(args.results, SCRIPT, render(measured, command.strip()))
    print(f"wrote {args.results}")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
