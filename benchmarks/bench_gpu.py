"""Benchmark the model-backed metrics and DTG on one GPU: throughput, share of the bare-forward ceiling, bf16 vs fp32.

Every model is randomly initialized in code (seeded) at a real checkpoint's shape, built directly
on the device, and saved with ``save_pretrained`` (plus a tokenizer) to a temporary directory,
because the library's loaders take a model id or a local directory. The tokenizers are byte-level
BPEs trained in this script on the benchmark's own synthetic texts (as ``bench_nli.py`` does);
the embedding tables keep the real models' shapes (50,265 / 50,257 rows), so the compute is
realistic, while the tokenizers know fewer ids (every word of the synthetic texts is one or two
tokens). Nothing is downloaded.

Texts: seeded synthetic English-like sentences (a Zipfian draw over ~100 common English words and
4,000 pseudo-words of 1-3 syllables, 8-25 words each, punctuation).

1. NLI Diversity at ``roberta-large-mnli``'s shape (``RobertaForSequenceClassification``: 24 x 1024,
   16 heads, FFN 4096, 50,265-token table, 514 positions, 3 labels), float32 and bfloat16:
   - ours: pairs/s of ``dialeval.metrics.nli_diversity(sets, model=DIR, device=..., dtype=...,
     batch_size=...)`` over ``--nli-sets`` sets x 5 responses (n(n-1) = 20 ordered pairs a set),
     the whole call timed (tokenization, batching, softmax, copies to the host included);
   - ceiling: the same distinct pairs, tokenized, length-sorted (longest first), right-padded per
     batch at the same batch size and moved to the device *before* the timer; only the model's
     forward passes are timed, under ``torch.inference_mode`` (a model loaded with
     ``AutoModelForSequenceClassification.from_pretrained(DIR, dtype=...)``, as the library does);
   - fraction of ceiling = ours pairs/s / ceiling pairs/s;
   - bf16/fp32 agreement: the share of ordered pairs whose argmax class is the same (a random
     classifier predicts nearly one class, so this is an optimistic figure: the class counts
     and the largest probability difference are reported next to it); also whether the
     ceiling's fp32 argmax equals ours (a check that both ran the same computation).
2. DTG (``dialeval.generation.diversity_threshold_generate``) with a DialoGPT-medium-shaped
   generator (``GPT2LMHeadModel``: 24 x 1024, 16 heads, 50,257-token table, 1,024 positions) and
   the NLI objective (``NLIContradictions``) scored by the classifier of (1), both in ``--dtg-dtype``:
   contexts/s over ``--dtg-contexts`` synthetic 1-3-turn contexts, n = 5, S = ``--dtg-max-samples``
   (the paper's 20), nucleus p = 0.9, ``--dtg-max-new-tokens`` new tokens. The threshold defaults
   to n(n-1), which a set cannot exceed, so every context draws n + S responses (S counts resamples; the loop's worst
   case, and a workload that does not depend on which class the random classifier prefers).
   Sampling is restricted to the ids the tokenizer knows by a logits processor (the generator's
   table is larger than the trained BPE); the share of the time spent in NLI scoring is reported.
3. Response selection (``dialeval.metrics.response_selection``) at GPT-2-medium's shape (the same
   architecture and shape as DialoGPT-medium, so the generator's directory is reused): questions/s
   over ``--selection-questions`` synthetic questions (1-3 context turns, 4-10 candidates), float32
   and bfloat16, and the share of questions whose selected candidate is the same in both.
4. The whole job, ``bench_job.py``'s comparison on the GPU: ``dialeval evaluate`` (set-level lexical,
   corpus Dist / Ent / LF, sent-BERT, Vendi; ``--device cuda``) against ``peer_job.py`` (the
   peers' script, ``--device cuda``), each a fresh process, all-MiniLM-L6-v2 in float32, at
   ``--job-sizes`` DailyDialog++ responses (default 10k and 100k; one round each after an untimed
   run of each side): wall time, peak RSS, the figures checked equal (``bench_job.TOLERANCES``)
   before a time counts. Needs ``../shared/data/dailydialog-plusplus``.

Timing: ``time.perf_counter`` with ``torch.cuda.synchronize()`` before and after; every
measurement is preceded by one warm-up call (which also loads the model); ``--repeats`` timed
runs (fewer when a section's time budget runs out), the median reported, all kept in the JSON.
A section that would start with less than its minimum left of ``--time-budget`` (default 330 s,
counted from the start of the process) is skipped and reported as such. The JSON of raw numbers
(``--json``) and the section of ``benchmarks/RESULTS.md`` (unless ``--no-write``) are rewritten
after every section, so a run cut short still leaves what it measured; ``--render-json`` turns
such a JSON back into the markdown section. TF32 matmuls are left as found (reported).

Usage::

    .venv/bin/python benchmarks/bench_gpu.py --json /tmp/bench_gpu.json      # one GPU; sized for ~4-5 minutes, capped by --time-budget
    .venv/bin/python benchmarks/bench_gpu.py --smoke --no-write --json /tmp/gpu_smoke.json   # tiny shapes; ~1 minute on 2 CPU cores
    .venv/bin/python benchmarks/bench_gpu.py --sections job --json /tmp/bench_gpu_job.json   # the whole job only
    .venv/bin/python benchmarks/bench_gpu.py --render-json /tmp/bench_gpu.json   # section from a copied-back JSON
    .venv/bin/python benchmarks/bench_gpu.py --merge-job FULL.json JOB.json      # a later --sections job run into FULL.json
"""

from __future__ import annotations

import os
import time

START = time.perf_counter()  # before the heavy imports: --time-budget counts them

for _name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_name, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse
import datetime
import json
import platform
import shlex
import statistics
import sys
import tempfile
import traceback
from pathlib import Path

import bench_job
import numpy as np
import torch
import transformers
from _report import RESULTS_PATH, machine_line, markdown_table, section_text, write_section
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    GPT2Config,
    GPT2LMHeadModel,
    LogitsProcessor,
    LogitsProcessorList,
    PreTrainedTokenizerFast,
    RobertaConfig,
    RobertaForSequenceClassification,
)

from dialeval.generation import NLIContradictions, diversity_threshold_generate
from dialeval.metrics import NLIScorer, nli_diversity, response_selection

SCRIPT = "bench_gpu"
transformers.utils.logging.disable_progress_bar()
START = time.perf_counter()
LABELS = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}  # roberta-large-mnli's order
ROBERTA_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
EOS = "<|endoftext|>"
DTYPES = ("float32", "bfloat16")
ROBERTA_LARGE_BERTSCORE_LAYER = 17  # bert_score's model2layers["roberta-large"]

#: Model shapes: the real checkpoints' (full) and tiny ones for --smoke (vocab None: the tokenizer's size).
SHAPES = {
    "full": {
        "classifier": {
            "num_hidden_layers": 24,
            "hidden_size": 1024,
            "num_attention_heads": 16,
            "intermediate_size": 4096,
            "vocab_size": 50265,
        },
        "generator": {"n_layer": 24, "n_embd": 1024, "n_head": 16, "vocab_size": 50257},
    },
    "smoke": {
        "classifier": {
            "num_hidden_layers": 2,
            "hidden_size": 32,
            "num_attention_heads": 2,
            "intermediate_size": 64,
            "vocab_size": None,
        },
        "generator": {"n_layer": 2, "n_embd": 32, "n_head": 2, "vocab_size": None},
    },
}
#: Sizes per mode; command-line flags override them.
SIZES = {
    "full": {
        "nli_sets": 400,
        "nli_batch_size": 128,
        "dtg_contexts": 16,
        "dtg_max_samples": 20,
        "dtg_max_new_tokens": 32,
        "selection_questions": 200,
        "selection_batch_size": 32,
        "repeats": 3,
        "job_sizes": [10_000, 100_000],
        "job_repeats": 1,
        "bertscore_sets": 400,
    },
    "smoke": {
        "nli_sets": 12,
        "nli_batch_size": 16,
        "dtg_contexts": 2,
        "dtg_max_samples": 7,
        "dtg_max_new_tokens": 8,
        "selection_questions": 12,
        "selection_batch_size": 4,
        "repeats": 1,
        "job_sizes": [20, 60],
        "job_repeats": 1,
        "bertscore_sets": 4,
    },
}
#: Seconds after which a section stops repeating its timed runs (it always makes at least one).
SECTION_BUDGET_S = {
    "nli": 150.0,
    "dtg": 90.0,
    "selection": 75.0,
}  # the job section has no repeats to cut
#: A section is skipped when less than this is left of --time-budget when it would start.
SECTION_MIN_LEFT_S = {"nli": 60.0, "dtg": 45.0, "selection": 30.0, "bertscore": 30.0, "job": 150.0}
SECTIONS = ("nli", "dtg", "selection", "bertscore", "job")


def log(message: str) -> None:
    print(f"[{SCRIPT} {time.perf_counter() - START:6.1f}s] {message}", flush=True)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(device: torch.device, function, /, *args, **kwargs):
    """``function(*args, **kwargs)`` and its wall time, the device synchronized before and after."""
    sync(device)
    start = time.perf_counter()
    result = function(*args, **kwargs)
    sync(device)
    return result, time.perf_counter() - start


def reset_peak(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def peak_gib(device: torch.device) -> float | None:
    return torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None


def repeat_timed(
    device, budget_s: float, repeats: int, function, /, *args, **kwargs
) -> tuple[object, list[float]]:
    """Up to ``repeats`` timed runs (at least one; no new one once ``budget_s`` has passed)."""
    began, seconds, result = time.perf_counter(), [], None
    for _ in range(max(repeats, 1)):
        result, took = timed(device, function, *args, **kwargs)
        seconds.append(took)
        if time.perf_counter() - began + took > budget_s:
            break
    return result, seconds


# ------------------------------------------------------------------------------------------
# Synthetic texts
# ------------------------------------------------------------------------------------------

COMMON_WORDS = [
    "i",
    "you",
    "we",
    "they",
    "he",
    "she",
    "it",
    "is",
    "are",
    "was",
    "were",
    "be",
    "not",
    "do",
    "did",
    "have",
    "has",
    "like",
    "love",
    "want",
    "think",
    "know",
    "really",
    "very",
    "just",
    "so",
    "but",
    "and",
    "or",
    "the",
    "a",
    "an",
    "to",
    "of",
    "in",
    "on",
    "at",
    "for",
    "with",
    "that",
    "this",
    "what",
    "how",
    "why",
    "when",
    "where",
    "yes",
    "no",
    "okay",
    "sure",
    "maybe",
    "good",
    "great",
    "bad",
    "fine",
    "nice",
    "day",
    "night",
    "time",
    "work",
    "home",
    "food",
    "movie",
    "music",
    "book",
    "game",
    "friend",
    "family",
    "weekend",
    "today",
    "tomorrow",
    "yesterday",
    "here",
    "there",
    "now",
    "then",
    "again",
    "never",
    "always",
    "sometimes",
    "my",
    "your",
    "our",
    "me",
    "him",
    "her",
    "them",
    "can",
    "could",
    "would",
    "should",
    "will",
    "go",
    "went",
    "come",
    "see",
    "look",
    "feel",
    "say",
    "said",
    "tell",
]
SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"] + [
    "ar",
    "en",
    "is",
    "on",
    "ul",
    "ey",
]


class TextSource:
    """Seeded English-like sentences: Zipfian words from common English plus pseudo-words."""

    def __init__(self, seed: int, num_pseudo_words: int = 4000):
        self.rng = np.random.default_rng(seed)
        pseudo = set()
        while len(pseudo) < num_pseudo_words:
            pseudo.add("".join(self.rng.choice(SYLLABLES, size=self.rng.integers(1, 4))))
        self.words = np.array(COMMON_WORDS + sorted(pseudo - set(COMMON_WORDS)))
        weights = 1.0 / np.arange(1, len(self.words) + 1) ** 1.05
        self.probabilities = weights / weights.sum()

    def sentence(self, low: int = 8, high: int = 25) -> str:
        words = list(
            self.rng.choice(
                self.words, size=int(self.rng.integers(low, high + 1)), p=self.probabilities
            )
        )
        for k in range(2, len(words) - 2):
            if self.rng.random() < 0.06:
                words[k] += ","
        words[0] = words[0].capitalize()
        return " ".join(words) + str(self.rng.choice([".", ".", ".", "?", "!"]))

    def turns(self, low: int = 1, high: int = 3) -> list[str]:
        return [self.sentence() for _ in range(int(self.rng.integers(low, high + 1)))]


def nli_sets(count: int, seed: int, size: int = 5) -> list[list[str]]:
    source = TextSource(seed)
    return [[source.sentence() for _ in range(size)] for _ in range(count)]


def selection_questions(
    count: int, seed: int
) -> tuple[list[list[str]], list[list[str]], list[int]]:
    source = TextSource(seed + 1)
    contexts = [source.turns() for _ in range(count)]
    candidates = [
        [source.sentence() for _ in range(int(source.rng.integers(4, 11)))] for _ in range(count)
    ]
    labels = [int(source.rng.integers(0, len(options))) for options in candidates]
    return contexts, candidates, labels


def dtg_contexts(count: int, seed: int) -> list[str]:
    """DialoGPT's format: turns joined by EOS, EOS at the end."""
    source = TextSource(seed + 2)
    return [EOS.join(source.turns()) + EOS for _ in range(count)]


# ------------------------------------------------------------------------------------------
# Models built in code
# ------------------------------------------------------------------------------------------


def train_bpe(texts: list[str], vocab_size: int, specials: list[str], unk: str) -> Tokenizer:
    """A byte-level BPE trained on ``texts`` (it stops early when no merge is left)."""
    bpe = Tokenizer(models.BPE(unk_token=unk))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    return bpe


def init_on(device: torch.device, model_class, config):
    """``model_class(config)`` with its weights allocated and initialized directly on ``device`` (seeded).

    Falls back to initializing on the CPU and moving the model, should a model class refuse the
    device context.
    """
    torch.manual_seed(0)
    try:
        with torch.device(device):
            return model_class(config)
    except (RuntimeError, TypeError, ValueError, NotImplementedError) as error:
        log(
            f"init on {device} failed ({type(error).__name__}: {error}); initializing on the CPU and moving"
        )
        torch.manual_seed(0)
        return model_class(config).to(device)


def build_classifier(
    directory: Path, texts: list[str], shape: dict, device: torch.device
) -> tuple[str, dict]:
    """A seeded random RoBERTa NLI classifier (built on ``device``) and a BPE trained on ``texts``, saved to ``directory``."""
    bpe = train_bpe(texts, 50265, ROBERTA_SPECIALS, "<unk>")
    bpe.post_processor = processors.RobertaProcessing(
        ("</s>", 2), ("<s>", 0), add_prefix_space=False
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        model_max_length=512,
        bos_token="<s>",
        pad_token="<pad>",
        eos_token="</s>",
        unk_token="<unk>",
        mask_token="<mask>",
    )
    shape = dict(shape)
    vocab = shape.pop("vocab_size") or len(tokenizer)
    config = RobertaConfig(
        vocab_size=vocab,
        max_position_embeddings=514,
        num_labels=3,
        id2label=LABELS,
        label2id={v: k for k, v in LABELS.items()},
        initializer_range=0.02,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        **shape,
    )
    model = init_on(device, RobertaForSequenceClassification, config)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    info = {
        "parameters": sum(p.numel() for p in model.parameters()),
        "table_rows": vocab,
        "tokenizer_size": len(tokenizer),
    }
    del model
    return str(directory), info


def build_generator(directory: Path, texts: list[str], shape: dict, device: torch.device):
    """A seeded random GPT-2 (built on ``device``, float32) and a BPE trained on ``texts``, saved to ``directory``.

    Returns the directory, the in-memory model (eval mode) and a description.
    """
    bpe = train_bpe(texts, 50257, [EOS], EOS)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        model_max_length=1024,
        eos_token=EOS,
        bos_token=EOS,
        unk_token=EOS,
        pad_token=EOS,
    )
    shape = dict(shape)
    vocab = shape.pop("vocab_size") or len(tokenizer)
    eos_id = tokenizer.eos_token_id
    config = GPT2Config(
        vocab_size=vocab,
        n_positions=1024,
        bos_token_id=eos_id,
        eos_token_id=eos_id,
        pad_token_id=eos_id,
        **shape,
    )
    model = init_on(device, GPT2LMHeadModel, config)
    model.eval()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    info = {
        "parameters": sum(p.numel() for p in model.parameters()),
        "table_rows": vocab,
        "tokenizer_size": len(tokenizer),
    }
    return str(directory), model, info


class KnownTokensOnly(LogitsProcessor):
    """Never sample an id the tokenizer cannot decode (the table has more rows than the trained BPE)."""

    def __init__(self, num_known: int):
        self.num_known = num_known

    def __call__(self, input_ids, scores):
        scores[:, self.num_known :] = -float("inf")
        return scores


class TimedScorer:
    """Wraps an NLI scorer: seconds spent (device synchronized) and pairs inside ``pair_probabilities``."""

    def __init__(self, scorer, device: torch.device):
        self.scorer, self.device, self.seconds, self.pairs, self.calls = scorer, device, 0.0, 0, 0

    def pair_probabilities(self, premises, hypotheses):
        probabilities, took = timed(
            self.device, self.scorer.pair_probabilities, premises, hypotheses
        )
        self.seconds += took
        self.pairs += len(premises)
        self.calls += 1
        return probabilities


# ------------------------------------------------------------------------------------------
# 1. NLI Diversity
# ------------------------------------------------------------------------------------------


def ordered_pair_list(response_sets: list[list[str]]) -> list[tuple[str, str]]:
    """Every set's ordered pairs i != j, row-major (the order of ``NLIPairMatrix.predicted``)."""
    return [
        (s[i], s[j]) for s in response_sets for i in range(len(s)) for j in range(len(s)) if i != j
    ]


def predicted_pairs(matrices) -> np.ndarray:
    """Argmax class of every ordered pair, row-major per set, from ``nli_diversity(..., return_matrices=True)``."""
    out = []
    for matrix in matrices:
        predicted = matrix.predicted
        out.append(predicted[~np.eye(len(predicted), dtype=bool)])
    return np.concatenate(out)


def probabilities_pairs(matrices) -> np.ndarray:
    out = []
    for matrix in matrices:
        n = matrix.probabilities.shape[0]
        out.append(matrix.probabilities[~np.eye(n, dtype=bool)])
    return np.concatenate(out)


def prepare_ceiling_batches(
    path: str, pairs: list[tuple[str, str]], batch_size: int, device: torch.device
):
    """Distinct pairs tokenized, sorted longest first, right-padded per batch and moved to ``device``."""
    tokenizer = AutoTokenizer.from_pretrained(path)
    unique: dict[tuple[str, str], int] = {}
    rows = np.array([unique.setdefault(pair, len(unique)) for pair in pairs], dtype=np.int64)
    distinct = list(unique)
    encoded = tokenizer(
        [a for a, _ in distinct], [b for _, b in distinct], truncation=True, verbose=False
    )
    features = [{key: values[i] for key, values in encoded.items()} for i in range(len(distinct))]
    order = sorted(range(len(distinct)), key=lambda i: len(features[i]["input_ids"]), reverse=True)
    batches, members_of = [], []
    for start in range(0, len(order), batch_size):
        members = order[start : start + batch_size]
        batch = tokenizer.pad(
            [features[i] for i in members], padding_side="right", return_tensors="pt"
        )
        batches.append({key: value.to(device) for key, value in batch.items()})
        members_of.append(members)
    tokens = int(sum(len(f["input_ids"]) for f in features))
    padded = int(sum(b["input_ids"].numel() for b in batches))
    return (
        batches,
        members_of,
        rows,
        {"distinct_pairs": len(distinct), "tokens": tokens, "padded_tokens": padded},
    )


def ceiling_forward(model, batches) -> list:
    with torch.inference_mode():
        return [model(**batch).logits for batch in batches]


def bench_nli(path: str, response_sets, device, args, budget_s: float) -> dict:
    pairs = ordered_pair_list(response_sets)
    warm_sets = response_sets[: max(len(response_sets) // 10, 2)]
    out = {
        "num_sets": len(response_sets),
        "set_size": len(response_sets[0]),
        "pairs": len(pairs),
        "batch_size": args.nli_batch_size,
        "rows": {},
    }
    batches = members_of = rows = None
    predictions, probabilities = {}, {}
    began = time.perf_counter()
    for dtype in DTYPES:
        row = {"dtype": dtype}
        reset_peak(device)
        left = budget_s - (time.perf_counter() - began)
        call = {
            "model": path,
            "device": str(device),
            "dtype": dtype,
            "batch_size": args.nli_batch_size,
            "return_matrices": True,
        }
        log(f"NLI {dtype}: load + warm-up on {len(warm_sets)} sets")
        _, row["warmup_s"] = timed(device, nli_diversity, warm_sets, **call)
        log(f"NLI {dtype}: timing nli_diversity on {len(response_sets)} sets ({len(pairs)} pairs)")
        result, row["ours_s"] = repeat_timed(
            device, left / 4, args.repeats, nli_diversity, response_sets, **call
        )
        row["num_unique_pairs"] = result.get("num_unique_pairs")
        row["num_truncated"] = result.get("num_truncated")
        row["mean_nli_diversity"] = result["nli_diversity"]
        predictions[dtype] = predicted_pairs(result["matrices"])
        probabilities[dtype] = probabilities_pairs(result["matrices"])
        row["class_counts"] = np.bincount(predictions[dtype], minlength=3).tolist()
        row["ours_pairs_per_s"] = len(pairs) / statistics.median(row["ours_s"])
        log(
            f"NLI {dtype}: ours {row['ours_pairs_per_s']:.0f} pairs/s (runs {[round(s, 3) for s in row['ours_s']]})"
        )

        if batches is None:
            batches, members_of, rows, ceiling_info = prepare_ceiling_batches(
                path, pairs, args.nli_batch_size, device
            )
            out.update(ceiling_info)
        log(f"NLI {dtype}: ceiling: load model, warm-up, timing {len(batches)} forward passes")
        model = (
            AutoModelForSequenceClassification.from_pretrained(path, dtype=getattr(torch, dtype))
            .to(device)
            .eval()
        )
        row["attn_implementation"] = getattr(model.config, "_attn_implementation", None)
        timed(device, ceiling_forward, model, batches[:2] + batches[-2:])
        left = budget_s - (time.perf_counter() - began)
        logits, row["ceiling_s"] = repeat_timed(
            device, left / 4, args.repeats, ceiling_forward, model, batches
        )
        ceiling_classes = np.empty(out["distinct_pairs"], dtype=np.int64)
        for members, batch_logits in zip(members_of, logits):
            ceiling_classes[members] = batch_logits.float().argmax(-1).cpu().numpy()
        # The classifier's label order is (contradiction, neutral, entailment), the library's canonical order.
        row["ceiling_same_argmax_as_ours"] = float(
            (ceiling_classes[rows] == predictions[dtype]).mean()
        )
        row["ceiling_pairs_per_s"] = len(pairs) / statistics.median(row["ceiling_s"])
        row["fraction_of_ceiling"] = row["ours_pairs_per_s"] / row["ceiling_pairs_per_s"]
        row["peak_gpu_gib"] = peak_gib(device)
        del model, logits
        if device.type == "cuda":
            torch.cuda.empty_cache()
        log(
            f"NLI {dtype}: ceiling {row['ceiling_pairs_per_s']:.0f} pairs/s, fraction {row['fraction_of_ceiling']:.2f}"
        )
        out["rows"][dtype] = row
    out["bf16_fp32_agreement"] = float((predictions["bfloat16"] == predictions["float32"]).mean())
    out["bf16_fp32_max_abs_prob_diff"] = float(
        np.abs(probabilities["bfloat16"] - probabilities["float32"]).max()
    )
    log(f"NLI: bf16/fp32 argmax agreement {out['bf16_fp32_agreement']:.4f}")
    return out


# ------------------------------------------------------------------------------------------
# 2. DTG
# ------------------------------------------------------------------------------------------


def bench_dtg(
    classifier_path: str,
    generator,
    generator_info: dict,
    generator_path: str,
    contexts,
    device,
    args,
) -> dict:
    dtype = args.dtg_dtype
    generator = generator.to(getattr(torch, dtype)).eval()
    tokenizer = AutoTokenizer.from_pretrained(generator_path)
    n, samples = 5, args.dtg_max_samples
    threshold = float(n * (n - 1)) if args.dtg_threshold is None else args.dtg_threshold
    scorer = TimedScorer(
        NLIScorer(classifier_path, device=str(device), dtype=dtype, batch_size=args.nli_batch_size),
        device,
    )
    processors_ = LogitsProcessorList([KnownTokensOnly(generator_info["tokenizer_size"])])
    settings = {
        "num_responses": n,
        "max_samples": samples,
        "threshold": threshold,
        "max_new_tokens": args.dtg_max_new_tokens,
        "logits_processor": processors_,
    }
    reset_peak(device)
    log(f"DTG {dtype}: warm-up on 2 contexts, S = 1")
    torch.manual_seed(args.seed)
    timed(
        device,
        diversity_threshold_generate,
        generator,
        tokenizer,
        contexts[:2],
        metric=NLIContradictions(scorer=scorer),
        **{**settings, "max_samples": 1},
    )
    scorer.seconds, scorer.pairs, scorer.calls = 0.0, 0, 0
    log(
        f"DTG {dtype}: timing {len(contexts)} contexts, n = {n}, S = {samples}, threshold {threshold:g}"
    )
    torch.manual_seed(args.seed)
    objective = NLIContradictions(scorer=scorer)
    results, seconds = timed(
        device,
        diversity_threshold_generate,
        generator,
        tokenizer,
        contexts,
        metric=objective,
        **settings,
    )
    drawn = [r.num_drawn for r in results]
    response_tokens = [
        len(tokenizer(text, add_special_tokens=False)["input_ids"])
        for r in results
        for text in r.responses
    ]
    out = {
        "dtype": dtype,
        "num_contexts": len(contexts),
        "num_responses": n,
        "max_samples": samples,
        "threshold": threshold,
        "max_new_tokens": args.dtg_max_new_tokens,
        "top_p": 0.9,
        "nli_batch_size": args.nli_batch_size,
        "seconds": seconds,
        "contexts_per_s": len(contexts) / seconds,
        "responses_drawn": int(sum(drawn)),
        "responses_per_s": sum(drawn) / seconds,
        "nli_pairs": scorer.pairs,
        "nli_calls": scorer.calls,
        "nli_seconds": scorer.seconds,
        "nli_share": scorer.seconds / seconds,
        "stop_reasons": {
            reason: sum(r.stop_reason == reason for r in results)
            for reason in {r.stop_reason for r in results}
        },
        "mean_final_response_tokens": float(np.mean(response_tokens)) if response_tokens else 0.0,
        "attn_implementation": getattr(generator.config, "_attn_implementation", None),
        "peak_gpu_gib": peak_gib(device),
    }
    log(
        f"DTG {dtype}: {out['contexts_per_s']:.2f} contexts/s ({seconds:.1f} s, NLI share {out['nli_share']:.0%})"
    )
    return out


# ------------------------------------------------------------------------------------------
# 3. Response selection
# ------------------------------------------------------------------------------------------


def bench_selection(path: str, questions, device, args, budget_s: float) -> dict:
    contexts, candidates, labels = questions
    out = {
        "num_questions": len(contexts),
        "num_candidates": sum(map(len, candidates)),
        "batch_size": args.selection_batch_size,
        "rows": {},
    }
    selected = {}
    began = time.perf_counter()
    warm = max(min(len(contexts) // 10, args.selection_batch_size), 2)
    for dtype in DTYPES:
        row = {"dtype": dtype}
        reset_peak(device)
        call = {
            "model": path,
            "device": str(device),
            "dtype": dtype,
            "batch_size": args.selection_batch_size,
        }
        log(f"selection {dtype}: load + warm-up on {warm} questions")
        _, row["warmup_s"] = timed(
            device, response_selection, contexts[:warm], candidates[:warm], labels[:warm], **call
        )
        left = budget_s - (time.perf_counter() - began)
        log(
            f"selection {dtype}: timing {len(contexts)} questions ({out['num_candidates']} candidates)"
        )
        result, row["seconds"] = repeat_timed(
            device, left / 3, args.repeats, response_selection, contexts, candidates, labels, **call
        )
        median = statistics.median(row["seconds"])
        row["questions_per_s"] = len(contexts) / median
        row["candidates_per_s"] = out["num_candidates"] / median
        row["scored_tokens"] = int(sum(sum(q["num_tokens"]) for q in result["per_question"]))
        row["scored_tokens_per_s"] = row["scored_tokens"] / median
        row["accuracy"] = result["accuracy"]
        row["peak_gpu_gib"] = peak_gib(device)
        selected[dtype] = np.array([q["selected"] for q in result["per_question"]])
        out["rows"][dtype] = row
        log(
            f"selection {dtype}: {row['questions_per_s']:.1f} questions/s (runs {[round(s, 3) for s in row['seconds']]})"
        )
    out["bf16_fp32_same_selection"] = float((selected["bfloat16"] == selected["float32"]).mean())
    return out


# ------------------------------------------------------------------------------------------
# 3b. BERTScore diversity against bert_score
# ------------------------------------------------------------------------------------------


def _stand_in_plotting() -> list[str]:
    """bert_score imports matplotlib at module level for its plotting helper only; where the
    device's image has no matplotlib, empty stand-in modules satisfy that import (no plot is
    drawn). The names stood in for, for the report."""
    import importlib.util
    import types

    if importlib.util.find_spec("matplotlib") is not None:
        return []
    stand_ins = ["matplotlib", "matplotlib.pyplot", "mpl_toolkits", "mpl_toolkits.axes_grid1"]
    for name in stand_ins:
        sys.modules[name] = types.ModuleType(name)
    sys.modules["mpl_toolkits.axes_grid1"].make_axes_locatable = None
    return stand_ins


def bench_bertscore_section(classifier_path: str, response_sets, device, args) -> dict:
    """``bench_peers_bertscore.bench_bertscore`` on ``device``: ours (``backend="auto"``, torch on
    a GPU) against ``bert_score.BERTScorer`` at roberta-large's shape (the classifier of (1)'s
    encoder, declared ``RobertaTokenizer``), every unordered pair of each set, float32."""
    stand_ins = _stand_in_plotting()
    import bench_peers_bertscore
    from _peers import with_roberta_tokenizer_class

    # roberta-large's layer in bert_score's defaults; the tiny smoke model has 2 layers
    layer = 2 if args.smoke else ROBERTA_LARGE_BERTSCORE_LAYER
    sets = response_sets[: args.bertscore_sets]
    with tempfile.TemporaryDirectory(dir=args.workdir) as folder:
        path = with_roberta_tokenizer_class(classifier_path, Path(folder) / "bertscore")
        (row,) = bench_peers_bertscore.bench_bertscore(
            path, sets, args.repeats, "auto", device=str(device), num_layers=layer
        )
    return {
        "num_sets": len(sets),
        "pairs": sum(len(s) * (len(s) - 1) // 2 for s in sets),
        "layer": layer,
        "ours_s": row.ours_timing.wall,
        "peer_s": row.peer_timing.wall,
        "speedup": row.ratio,
        "equal": row.equal,
        "equal_detail": row.equal_detail,
        "matplotlib_stand_ins": stand_ins,
    }


# ------------------------------------------------------------------------------------------
# 4. The whole job
# ------------------------------------------------------------------------------------------


def bench_whole_job(device: torch.device, args) -> dict:
    """``bench_job.measure`` with both sides on ``device`` (float32: neither side is asked for another dtype)."""
    if not bench_job.DAILYDIALOG.exists():
        return f"skipped: {bench_job.DAILYDIALOG} not found"
    with tempfile.TemporaryDirectory(dir=args.workdir) as workdir:
        return bench_job.measure(
            sorted(args.job_sizes),
            args.job_repeats,
            Path(workdir),
            device=str(device),
            warmup=not args.smoke,
        )


# ------------------------------------------------------------------------------------------
# Report
# ------------------------------------------------------------------------------------------


def environment(device: torch.device) -> dict:
    cuda = device.type == "cuda"
    return {
        "date": datetime.date.today().isoformat(),
        "device": str(device),
        "gpu": torch.cuda.get_device_name(device) if cuda else None,
        "gpu_memory_gib": torch.cuda.get_device_properties(device).total_memory / 2**30
        if cuda
        else None,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "allow_tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "torch_threads": torch.get_num_threads(),
        "machine": machine_line(),
    }


def _gib(value) -> str:
    return "–" if value is None else f"{value:.1f} GiB"


def _median(values) -> float:
    return statistics.median(values)


def _model(data: dict, name: str) -> str:
    info = data["models"].get(name)
    if not info:
        return "not built"
    return (
        f"{info['parameters'] / 1e6:.1f} M parameters ({info['table_rows']:,}-row table; the tokenizer knows "
        f"{info['tokenizer_size']:,} ids)"
    )


def _shape(data: dict, name: str) -> str:
    shape = data["shapes"][name]
    if name == "classifier":
        layers, width, heads = (
            shape["num_hidden_layers"],
            shape["hidden_size"],
            shape["num_attention_heads"],
        )
    else:
        layers, width, heads = shape["n_layer"], shape["n_embd"], shape["n_head"]
    rows = data["models"].get(name, {}).get("table_rows", shape["vocab_size"])
    return (
        f"{layers} x {width}, {heads} heads, {rows:,}-row table"
        if rows
        else f"{layers} x {width}, {heads} heads"
    )


def render(data: dict) -> str:
    env, settings = data["environment"], data["settings"]
    mode = "smoke (tiny shapes; not a measurement)" if settings["smoke"] else "full shapes"
    where = (
        f"GPU: **{env['gpu']}** ({env['gpu_memory_gib']:.0f} GiB), CUDA {env['cuda']}"
        if env["gpu"]
        else f"device: **{env['device']}** (no GPU)"
    )
    lines = [
        "## bench_gpu: model-backed metrics and DTG on one GPU",
        "",
        f"- Date: {env['date']}",
        f"- Command: `{data['command']}`",
        f"- {where}; {mode}",
        env["machine"],
        (
            f"- Versions: Python {env['python']}, torch {env['torch']}, transformers {env['transformers']}; TF32 matmul "
            f"{'on' if env['allow_tf32_matmul'] else 'off'} (left as found; float32 matmul precision "
            f"`{env['float32_matmul_precision']}`)"
        ),
        (
            f"- Models: randomly initialized (seeded) in code, built on the device, saved to a temporary directory, "
            f"loaded by the library; byte-level BPEs trained on the synthetic texts. Classifier {_model(data, 'classifier')}; "
            f"generator / selection LM {_model(data, 'generator')}. Model build + save: {data.get('build_s', 0):.1f} s; "
            f"whole run {data.get('total_s', 0):.0f} s."
        ),
        (
            f"- Timing: wall time with the device synchronized, one warm-up call first (model load included there), "
            f"median of up to {settings['repeats']} runs."
        ),
        "",
    ]
    nli = data.get("nli")
    smoke = " (smoke: tiny)" if settings["smoke"] else ""
    lines += [
        f"### 1. NLI Diversity, roberta-large-mnli's shape{smoke} ({_shape(data, 'classifier')})",
        "",
    ]
    if isinstance(nli, dict) and "rows" in nli:
        lines += [
            (
                f"{nli['num_sets']} synthetic sets x {nli['set_size']} responses (8-25 words) = {nli['pairs']:,} ordered pairs "
                f"({nli['distinct_pairs']:,} distinct; {nli['tokens']:,} tokens, {nli['padded_tokens']:,} after per-batch padding), "
                f"batch {nli['batch_size']}. Ours: `nli_diversity(sets, model=DIR, device=..., dtype=..., "
                f"batch_size={nli['batch_size']})`, the whole call. Ceiling: the same batches pre-tokenized, pre-padded and on "
                "the device; only the forward passes timed."
            ),
            "",
            *markdown_table(
                (
                    "dtype",
                    "ours: wall",
                    "ours: pairs/s",
                    "ceiling: wall",
                    "ceiling: pairs/s",
                    "fraction of ceiling",
                    "peak GPU memory",
                ),
                "lrrrrrr",
                [
                    (
                        dtype,
                        f"{_median(row['ours_s']):.2f} s",
                        f"{row['ours_pairs_per_s']:,.0f}",
                        f"{_median(row['ceiling_s']):.2f} s",
                        f"{row['ceiling_pairs_per_s']:,.0f}",
                        f"**{row['fraction_of_ceiling']:.2f}**",
                        _gib(row["peak_gpu_gib"]),
                    )
                    for dtype, row in nli["rows"].items()
                ],
            ),
        ]
        counts = {dtype: row["class_counts"] for dtype, row in nli["rows"].items()}
        same = ", ".join(
            f"{dtype} {row['ceiling_same_argmax_as_ours']:.1%}"
            for dtype, row in nli["rows"].items()
        )
        lines += [
            "",
            f"bfloat16 vs float32: the same argmax class on **{nli['bf16_fp32_agreement']:.2%}** of the "
            f"{nli['pairs']:,} pairs; max |Δp| {nli['bf16_fp32_max_abs_prob_diff']:.1e}. Predicted classes (c, n, e): "
            + "; ".join(f"{dtype} {c}" for dtype, c in counts.items())
            + " (a random classifier predicts nearly one class, so the agreement is optimistic; a trained "
            f"roberta-large-mnli's was not measured). Ceiling argmax equal to ours: {same}.",
            "",
        ]
    else:
        lines += [f"Not measured: {nli}", ""]
    dtg = data.get("dtg")
    lines += [
        f"### 2. DTG, DialoGPT-medium's shape{smoke} ({_shape(data, 'generator')}) + the NLI classifier of (1)",
        "",
    ]
    if isinstance(dtg, dict) and "contexts_per_s" in dtg:
        lines += [
            (
                f"`diversity_threshold_generate(model, tokenizer, contexts, metric=NLIContradictions(scorer=NLIScorer(DIR, "
                f'dtype="{dtg["dtype"]}", batch_size={dtg["nli_batch_size"]})), num_responses={dtg["num_responses"]}, '
                f"max_samples={dtg['max_samples']}, threshold={dtg['threshold']:g}, max_new_tokens={dtg['max_new_tokens']})`: "
                f"nucleus p = {dtg['top_p']}, generator and classifier in {dtg['dtype']}; {dtg['num_contexts']} synthetic "
                f"1-3-turn contexts. Threshold {dtg['threshold']:g} = n(n-1) cannot be exceeded, so every context draws S "
                "responses (worst case). Sampling restricted to the tokenizer's ids."
            ),
            "",
            *markdown_table(
                (
                    "dtype",
                    "contexts",
                    "wall",
                    "contexts/s",
                    "responses drawn",
                    "responses/s",
                    "NLI pairs (calls)",
                    "NLI share of wall",
                    "peak GPU memory",
                ),
                "lrrrrrrrr",
                [
                    (
                        dtg["dtype"],
                        dtg["num_contexts"],
                        f"{dtg['seconds']:.1f} s",
                        f"**{dtg['contexts_per_s']:.2f}**",
                        dtg["responses_drawn"],
                        f"{dtg['responses_per_s']:.1f}",
                        f"{dtg['nli_pairs']:,} ({dtg['nli_calls']})",
                        f"{dtg['nli_share']:.0%}",
                        _gib(dtg["peak_gpu_gib"]),
                    )
                ],
            ),
            "",
            f"Stop reasons: {dtg['stop_reasons']}; final responses average {dtg['mean_final_response_tokens']:.1f} tokens (re-tokenized).",
            "",
        ]
    else:
        lines += [f"Not measured: {dtg}", ""]
    sel = data.get("selection")
    lines += [
        f"### 3. Response selection, GPT-2-medium's shape{smoke} ({_shape(data, 'generator')})",
        "",
    ]
    if isinstance(sel, dict) and "rows" in sel:
        lines += [
            (
                f"`response_selection(contexts, candidates, labels, model=DIR, device=..., dtype=..., "
                f"batch_size={sel['batch_size']})` (default `share_context=True`): {sel['num_questions']} synthetic questions "
                f"(1-3 context turns, 4-10 candidates; {sel['num_candidates']:,} candidates)."
            ),
            "",
            *markdown_table(
                (
                    "dtype",
                    "wall",
                    "questions/s",
                    "candidates/s",
                    "scored tokens/s",
                    "peak GPU memory",
                ),
                "lrrrrr",
                [
                    (
                        dtype,
                        f"{_median(row['seconds']):.2f} s",
                        f"**{row['questions_per_s']:.1f}**",
                        f"{row['candidates_per_s']:.0f}",
                        f"{row['scored_tokens_per_s']:,.0f}",
                        _gib(row["peak_gpu_gib"]),
                    )
                    for dtype, row in sel["rows"].items()
                ],
            ),
        ]
        lines += [
            "",
            f"bfloat16 selects the float32 candidate on {sel['bf16_fp32_same_selection']:.1%} of the questions.",
            "",
        ]
    else:
        lines += [f"Not measured: {sel}", ""]
    bert = data.get("bertscore")
    lines += [
        f"### 3b. BERTScore diversity, roberta-large's shape{smoke} (the encoder of (1)), float32",
        "",
    ]
    if isinstance(bert, dict):
        stood_in = (
            f" bert_score's module-level matplotlib import was met by empty stand-ins "
            f"({', '.join(bert['matplotlib_stand_ins'])}: the device's image has no matplotlib; "
            "no plot is drawn)."
            if bert.get("matplotlib_stand_ins")
            else ""
        )
        lines += [
            (
                f"`bertscore_diversity(sets, model=DIR, num_layers={bert['layer']}, "
                "rescale_with_baseline=False, batch_size=64, device=DEV)` (backend auto: torch on a GPU) vs "
                f"`bert_score.BERTScorer(model_type=DIR, num_layers={bert['layer']}, batch_size=64, device=DEV)"
                f".score(cands, refs)` on every unordered pair: {bert['num_sets']} synthetic sets of 5, "
                f"{bert['pairs']:,} pairs; interleaved runs after a warm-up of each, medians "
                "(`bench_peers_bertscore.py`; `sent_encode` patched for transformers 5 as there)."
                + stood_in
            ),
            "",
            *markdown_table(
                ("ours: wall", "bert_score: wall", "speed-up", "equal figures"),
                "rrrl",
                [
                    (
                        f"{_median(bert['ours_s']):.2f} s",
                        f"{_median(bert['peer_s']):.2f} s",
                        f"**{bert['speedup']:.2f}x**",
                        f"{'yes' if bert['equal'] else 'NO'}: {bert['equal_detail']}",
                    )
                ],
            ),
            "",
        ]
    else:
        lines += [f"Not measured: {bert}", ""]
    job = data.get("job")
    lines += [
        f"### 4. The whole job: `dialeval evaluate` vs the peers' script (bench_job.py), float32{smoke}",
        "",
    ]
    if isinstance(job, dict) and "rows" in job:
        lines += [
            (
                "`dialeval evaluate SETS.jsonl --device DEV --metric lexical_diversity --metric corpus_lexical_diversity "
                f"--metric sent_bert --metric vendi` vs `benchmarks/peer_job.py --device DEV` (DEV = {job['device']}), "
                "as `bench_job.py` runs them: a fresh process per run, DailyDialog++ sets of 10, all-MiniLM-L6-v2 in "
                f"float32, {job['repeats']} round(s) per size {bench_job.warmup_text(job)}; peak RSS of the process "
                "tree (host memory)."
            ),
            "",
            *bench_job.render_rows(job),
            "",
        ]
        run = data.get("job_run")
        if run:  # section 4 measured by a later run, merged into this JSON (see --merge-job)
            env = run["environment"]
            lines += [
                (
                    f"This section comes from a later run on the same kind of card: `{run['command']}` ({env['date']}, "
                    f"{env['gpu']}; Python {env['python']}, torch {env['torch']}, transformers {env['transformers']}). "
                    f"{run.get('note', '')}"
                ).strip(),
                "",
            ]
    else:
        lines += [f"Not measured: {job}", ""]
    return section_text(SCRIPT, lines[:-1])  # the end marker takes the last blank line's place


def save_json(path: Path | None, data: dict) -> None:
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")


def checkpoint(args, data: dict) -> None:
    """Rewrite the JSON and (unless --no-write) the section with what is measured so far."""
    data["total_s"] = time.perf_counter() - START
    save_json(args.json, data)
    if not args.no_write:
        write_section(args.results, SCRIPT, render(data))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--smoke", action="store_true", help="tiny shapes and sizes (runs on a CPU in < 1 minute)"
    )
    parser.add_argument(
        "--device", default=None, help="default: cuda when available (else only --smoke runs)"
    )
    parser.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument(
        "--nli-sets", type=int, help="synthetic sets of 5 responses (default 400; smoke 12)"
    )
    parser.add_argument(
        "--nli-batch-size", type=int, help="pairs per forward (default 128; smoke 16)"
    )
    parser.add_argument("--dtg-contexts", type=int, help="default 16; smoke 2")
    parser.add_argument("--dtg-max-samples", type=int, help="S (default 20, the paper's; smoke 7)")
    parser.add_argument("--dtg-max-new-tokens", type=int, help="default 32; smoke 8")
    parser.add_argument(
        "--dtg-threshold",
        type=float,
        default=None,
        help="default n(n-1): unreachable, every context draws S",
    )
    parser.add_argument("--dtg-dtype", choices=DTYPES, default="bfloat16")
    parser.add_argument("--selection-questions", type=int, help="default 200; smoke 12")
    parser.add_argument(
        "--selection-batch-size", type=int, help="questions per forward (default 32; smoke 4)"
    )
    parser.add_argument(
        "--repeats",
        type=int,
        help="timed runs per measurement, median reported (default 3; smoke 1)",
    )
    parser.add_argument(
        "--job-sizes",
        type=int,
        nargs="+",
        help="responses per size of the whole-job section (default 10000 100000; smoke 20 60)",
    )
    parser.add_argument(
        "--job-repeats",
        type=int,
        help="interleaved rounds per size of the whole-job section (default 1)",
    )
    parser.add_argument(
        "--time-budget",
        type=float,
        default=330.0,
        help="seconds: a section that would start with too little left is skipped (default 330)",
    )
    parser.add_argument(
        "--bertscore-sets",
        type=int,
        help="synthetic sets of 5 for section 3b (default 400; smoke 4)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="where the models are saved (default a temporary directory)",
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=None,
        help="write the raw numbers here (rewritten after each section)",
    )
    parser.add_argument(
        "--render-json", type=Path, default=None, help="measure nothing: render this JSON's section"
    )
    parser.add_argument(
        "--merge-job",
        type=Path,
        nargs=2,
        metavar=("FULL_JSON", "JOB_JSON"),
        default=None,
        help="measure nothing: put JOB_JSON's whole-job section (a --sections job run) into FULL_JSON "
        "(a run of the other sections), with its command and environment, and rewrite FULL_JSON",
    )
    parser.add_argument(
        "--job-note", default="", help="with --merge-job: a sentence on how that run was set up"
    )
    parser.add_argument("--results", type=Path, default=RESULTS_PATH)
    parser.add_argument(
        "--no-write", action="store_true", help="print the section, do not write --results"
    )
    args = parser.parse_args(argv)

    if args.merge_job is not None:
        full_path, job_path = args.merge_job
        full, job_run = (
            json.loads(path.read_text(encoding="utf-8")) for path in (full_path, job_path)
        )
        if not isinstance(job_run.get("job"), dict):
            parser.error(
                f"--merge-job: {job_path} holds no measured whole-job section ({job_run.get('job')!r})"
            )
        full["job"] = job_run["job"]
        full["job_run"] = {
            "command": job_run["command"],
            "environment": job_run["environment"],
            "note": args.job_note,
        }
        save_json(full_path, full)
        print(f"wrote {full_path}")
        return 0
    if args.render_json is not None:
        section = render(json.loads(args.render_json.read_text(encoding="utf-8")))
        print(section)
        if not args.no_write:
            write_section(args.results, SCRIPT, section)
            print(f"wrote {args.results}")
        return 0

    mode = "smoke" if args.smoke else "full"
    for key, value in SIZES[mode].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if device.type == "cpu" and not args.smoke and args.device is None:
        print(
            f"{SCRIPT}: no CUDA device; run with --smoke for a CPU check (or --device cpu to force the full shapes)"
        )
        return 2
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    shapes = SHAPES[mode]
    command = "python benchmarks/bench_gpu.py " + shlex.join(
        argv if argv is not None else sys.argv[1:]
    )
    data = {
        "command": command.strip(),
        "environment": environment(device),
        "settings": {
            "smoke": args.smoke,
            **{k: getattr(args, k) for k in SIZES[mode]},
            "dtg_dtype": args.dtg_dtype,
            "seed": args.seed,
            "sections": args.sections,
            "time_budget": args.time_budget,
        },
        "shapes": shapes,
        "models": {},
        **{name: "not run: the run stopped before this section" for name in SECTIONS},
    }
    log(
        f"device {device} ({data['environment']['gpu'] or 'no GPU'}), mode {mode}, torch {torch.__version__}, "
        f"transformers {transformers.__version__}"
    )

    response_sets = nli_sets(args.nli_sets, args.seed)
    questions = selection_questions(args.selection_questions, args.seed)
    contexts = dtg_contexts(args.dtg_contexts, args.seed)
    texts = (
        [t for s in response_sets for t in s]
        + [t for turns in questions[0] for t in turns]
        + [t for options in questions[1] for t in options]
        + [t for c in contexts for t in c.split(EOS) if t]
    )

    with tempfile.TemporaryDirectory(dir=args.workdir) as workdir:
        log(
            "building the classifier (roberta-large-mnli shape)"
            if not args.smoke
            else "building the tiny classifier"
        )
        built = time.perf_counter()
        classifier_path, data["models"]["classifier"] = build_classifier(
            Path(workdir) / "classifier", texts, shapes["classifier"], device
        )
        generator_path = generator = None
        if {"dtg", "selection"} & set(args.sections):
            log(
                "building the generator (DialoGPT-medium / GPT-2-medium shape)"
                if not args.smoke
                else "building the tiny generator"
            )
            generator_path, generator, data["models"]["generator"] = build_generator(
                Path(workdir) / "generator", texts, shapes["generator"], device
            )
        data["build_s"] = time.perf_counter() - built
        log(f"models built and saved in {data['build_s']:.1f} s")
        checkpoint(args, data)

        jobs = {
            "nli": lambda: bench_nli(
                classifier_path, response_sets, device, args, SECTION_BUDGET_S["nli"]
            ),
            "dtg": lambda: bench_dtg(
                classifier_path,
                generator,
                data["models"]["generator"],
                generator_path,
                contexts,
                device,
                args,
            ),
            "selection": lambda: bench_selection(
                generator_path, questions, device, args, SECTION_BUDGET_S["selection"]
            ),
            "bertscore": lambda: bench_bertscore_section(
                classifier_path, response_sets, device, args
            ),
            "job": lambda: bench_whole_job(device, args),
        }
        for name in SECTIONS:
            if name not in args.sections:
                data[name] = "not requested (--sections)"
                continue
            left = args.time_budget - (time.perf_counter() - START)
            if left < SECTION_MIN_LEFT_S[name] and not args.smoke:
                data[name] = f"skipped: {left:.0f} s of --time-budget left"
                log(f"{name}: {data[name]}")
                continue
            try:
                data[name] = jobs[name]()
            except Exception as error:  # noqa: BLE001 (keep the other sections' numbers)
                traceback.print_exc()
                data[name] = f"failed: {type(error).__name__}: {error}"
                log(f"{name}: {data[name]}")
            checkpoint(args, data)

    checkpoint(args, data)
    print(render(data), flush=True)
    if args.json is not None:
        print(f"wrote {args.json}")
    if not args.no_write:
        print(f"wrote {args.results}")
    failed = [name for name in args.sections if isinstance(data.get(name), str)]
    if isinstance(data.get("job"), dict) and not all(row["equal"] for row in data["job"]["rows"]):
        failed.append("job (figures differ)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
