"""Benchmark response-selection scoring: batched questions vs one forward per candidate.

Sato et al. (2020, §4.1.2) score every candidate of 1,019 questions (3 context turns, 4
candidates) with a generation model's loss. This script scores 1,019 x 4 candidates with a small
causal LM both ways in the same run:

- naive: for every candidate, tokenize ``context + candidate``, one unpadded forward with
  ``labels=`` (transformers' own loss, every position's logits), loss x scored tokens;
- ours: :func:`dialeval.metrics.response_selection.selection.response_selection` (questions
  length-sorted; all candidates of ``--batch-size`` questions in one padded forward, each
  question one row ``context cand1 cand2 cand3 cand4`` under a 4D attention mask, the output
  layer on the scored tokens only; ``torch.inference_mode``), and its ``share_context=False``
  variant (one left-padded row per ``context + candidate``, logits for the candidates only).

The naive loop is slow, so it runs on the first ``--naive-questions`` questions; ours runs on
the same questions (the ratio) and on all of them.

Check: per-candidate summed NLL within ``LOSS_TOLERANCE`` (padding changes float32 summation
order, hence the last bits) and the same selected candidate for every question.

The Sato et al. test-set text is not on this machine (DailyDialog and OpenSubtitles are not
redistributed), so the questions are DailyDialog text of the same shape from DailyDialog++'s dev
file (``../shared/data/dailydialog-plusplus/dev.json``): the last 3 context turns, one
human-written relevant response (the "ground truth") and 3 adversarial irrelevant responses.
The model is a randomly initialized GPT-2 of ``distilgpt2``'s shape (6 x 768, 50,257-token
table; seeded) with a byte-level BPE trained on the file, so the compute is realistic
without the Hub. Writes its section of ``benchmarks/RESULTS.md``.

Usage::

    .venv/bin/python benchmarks/bench_selection.py                       # ~10 minutes on 2 shared cores
    .venv/bin/python benchmarks/bench_selection.py --questions 40 --naive-questions 10 --threads 1   # smoke run
"""

from __future__ import annotations

import argparse
import datetime
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
from _report import (
    RESULTS_PATH,
    PeakRSS,
    machine_line,
    markdown_table,
    section_text,
    write_section,
)
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    GPT2Config,
    GPT2LMHeadModel,
    PreTrainedTokenizerFast,
)

from dialeval.datasets_scripts.dailydialog_pp.dailydialog_pp import RECORD_LAYOUTS, read_records
from dialeval.metrics.engines.lm_scorer import CandidateScorer
from dialeval.metrics.response_selection import response_selection

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_FILE = REPO_ROOT.parent / "shared" / "data" / "dailydialog-plusplus" / "dev.json"
SCRIPT = "bench_selection"
TARGET_SPEEDUP = 4.0
NUM_QUESTIONS = 1019
LOSS_TOLERANCE = 1e-3  # absolute, on summed NLLs of ~100 nats


def questions_from_dailydialog_pp(path: Path, count: int) -> tuple[list, list, list]:
    id_field, response_fields = RECORD_LAYOUTS["default"]
    records = read_records(str(path), id_field, response_fields)[:count]
    contexts = [record["context"][-3:] for record in records]
    candidates = [
        [record["positive_responses"][0], *record["adversarial_negative_responses"][:3]]
        for record in records
    ]
    return contexts, candidates, [0] * len(records)


def build_model(
    directory: Path,
    texts: list[str],
    tokenizer_vocab: int = 30000,
    shape: tuple[int, int, int] = (768, 6, 12),
    model_vocab: int | None = 50257,
) -> str:
    """A seeded random GPT-2 and a byte-level BPE of ``tokenizer_vocab`` tokens trained on
    ``texts``; ``shape`` is (width, layers, heads) and ``model_vocab`` the embedding table's rows
    (None: the tokenizer's): distilgpt2's by default."""
    width, layers, heads = shape
    bpe = Tokenizer(models.BPE(unk_token="<|endoftext|>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=tokenizer_vocab,
            special_tokens=["<|endoftext|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        model_max_length=1024,
        eos_token="<|endoftext|>",
        bos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
    )
    config = GPT2Config(
        vocab_size=len(tokenizer) if model_vocab is None else model_vocab,
        n_positions=1024,
        n_embd=width,
        n_layer=layers,
        n_head=heads,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    GPT2LMHeadModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def naive_nll_sums(path: str, contexts, candidates) -> list[list[float]]:
    """One tokenizer call and one forward per candidate; transformers' mean loss x scored tokens."""
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    separator = tokenizer.eos_token
    out = []
    with torch.no_grad():
        for turns, options in zip(contexts, candidates):
            prefix = tokenizer(separator.join(turns) + separator, add_special_tokens=False)[
                "input_ids"
            ]
            row = []
            for option in options:
                target = tokenizer(option, add_special_tokens=False)["input_ids"] + [
                    tokenizer.eos_token_id
                ]
                labels = torch.tensor([[-100] * len(prefix) + target])
                loss = model(input_ids=torch.tensor([prefix + target]), labels=labels).loss
                row.append(float(loss) * len(target))
            out.append(row)
    return out


def flop_bound(path: str, contexts, candidates) -> dict:
    """Mean token counts and the naive/ours ratio of matrix-multiply FLOPs per candidate they imply.

    Per token, the transformer blocks cost 2 x their parameters and the output layer 2 x its
    weights. Naive: blocks and output layer over context + candidate, per candidate. Ours: the
    blocks over the context once per question plus over each candidate, the output layer over
    the candidate only. (Attention scores are left out: small at these lengths.)
    """
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    separator = tokenizer.eos_token
    context = np.mean(
        [len(tokenizer(separator.join(turns) + separator)["input_ids"]) for turns in contexts]
    )
    candidate = np.mean(
        [len(tokenizer(option)["input_ids"]) + 1 for options in candidates for option in options]
    )
    per_question = np.mean([len(options) for options in candidates])
    blocks = 2 * sum(parameter.numel() for parameter in model.transformer.h.parameters())
    head = 2 * model.get_output_embeddings().weight.numel()
    naive = (context + candidate) * (blocks + head)
    ours = (context / per_question + candidate) * blocks + candidate * head
    return {
        "context_tokens": float(context),
        "candidate_tokens": float(candidate),
        "flop_ratio": float(naive / ours),
    }


def timed(function, *args, **kwargs):
    with PeakRSS() as memory:
        start = time.perf_counter()
        result = function(*args, **kwargs)
        seconds = time.perf_counter() - start
    return result, seconds, memory.growth_mib


def bench(
    path: str, contexts, candidates, labels, naive_questions: int, batch_size: int, threads: int
) -> dict:
    torch.set_num_threads(threads)
    # load once, outside the timings
    scorer = CandidateScorer(path, device="cpu", batch_size=batch_size)
    single_pass = CandidateScorer(path, device="cpu", batch_size=batch_size, share_context=False)
    subset = (contexts[:naive_questions], candidates[:naive_questions], labels[:naive_questions])
    load_before = os.getloadavg()[0]
    naive, naive_s, naive_mib = timed(naive_nll_sums, path, subset[0], subset[1])
    ours, ours_s, ours_mib = timed(response_selection, *subset, scorer=scorer)
    single, single_s, _ = timed(response_selection, *subset, scorer=single_pass)
    full, full_s, full_mib = timed(response_selection, contexts, candidates, labels, scorer=scorer)

    def max_difference(result) -> float:
        return max(
            float(np.abs(np.array(row["nll_sums"]) - np.array(reference)).max())
            for row, reference in zip(result["per_question"], naive)
        )

    def same_selection(result) -> bool:
        return all(
            row["selected"] == int(np.argmin(reference))
            for row, reference in zip(result["per_question"], naive)
        )

    max_abs_diff = max(max_difference(ours), max_difference(single))
    agree = same_selection(ours) and same_selection(single)
    return {
        "threads": threads,
        "num_questions": len(contexts),
        "naive_questions": len(subset[0]),
        "candidates_subset": sum(len(options) for options in subset[1]),
        "candidates_all": sum(len(options) for options in candidates),
        "scored_tokens": int(sum(sum(row["num_tokens"]) for row in full["per_question"])),
        "naive_s": naive_s,
        "ours_s": ours_s,
        "single_s": single_s,
        "full_s": full_s,
        "naive_mib": naive_mib,
        "ours_mib": ours_mib,
        "full_mib": full_mib,
        "load": (load_before, os.getloadavg()[0]),
        "max_abs_diff": max_abs_diff,
        "same_selection": agree,
        "accuracy": full["accuracy"],
        "ok": agree and max_abs_diff <= LOSS_TOLERANCE,
        "batch_size": batch_size,
    }


def render(runs: list[dict], bound: dict, command: str) -> str:
    first = runs[0]
    lines = [
        "## bench_selection: response-selection losses, batched questions vs. one forward per candidate",
        "",
        f"- Date: {datetime.date.today().isoformat()}",
        f"- Command: `{command}`",
        machine_line()
        + " (shared with other jobs: the 1-minute load average before and after each thread "
        "setting is in the table)",
        f"- Versions: Python {platform.python_version()}, torch {torch.__version__}, transformers {transformers.__version__}",
        (
            "- Model: randomly initialized `GPT2LMHeadModel` of distilgpt2's shape (6 x 768, 50,257-token table, seeded), "
            "byte-level BPE trained on the file; CPU, float32; summed token NLL of each candidate plus EOS."
        ),
        (
            f"- Data: {first['num_questions']:,} questions x 4 candidates = {first['candidates_all']:,} candidates "
            f"({first['scored_tokens']:,} scored tokens) from DailyDialog++ dev (last 3 context turns, 1 relevant + 3 "
            "adversarial responses): DailyDialog text of the Sato et al. test set's shape, whose own text is not on this "
            f"machine. The naive loop runs on the first {first['naive_questions']:,} questions "
            f"({first['candidates_subset']:,} candidates); ours on those (the ratio) and on all of them."
        ),
        (
            f"- Ours: `response_selection(..., batch_size={first['batch_size']})`, {first['batch_size']} questions per "
            "forward. Default (`share_context=True`): one row per question, `context cand1 cand2 cand3 cand4` with a 4D "
            "attention mask, output layer on the scored positions only. `share_context=False`: one left-padded row per "
            "context + candidate, logits for the candidates' positions only. Peak memory: growth of the process RSS "
            "during the call."
        ),
        "",
    ]
    rows = []
    for t in runs:
        naive_rate = t["candidates_subset"] / t["naive_s"]
        ratio = t["naive_s"] / t["ours_s"]
        verdict = "meets" if ratio >= TARGET_SPEEDUP else "**misses**"
        full_rate = t["candidates_all"] / t["full_s"]
        setting = f"{t['threads']} ({t['load'][0]:.1f} → {t['load'][1]:.1f})"
        rows += [
            (
                setting,
                "naive: one `tokenizer()` + forward (`labels=`) per candidate",
                f"{t['naive_questions']:,}",
                f"{t['candidates_subset']:,}",
                f"{t['naive_s']:.1f} s",
                f"{naive_rate:.1f}",
                "1.0x",
                f"{t['naive_mib']:.0f} MiB",
            ),
            (
                setting,
                "ours",
                f"{t['naive_questions']:,}",
                f"{t['candidates_subset']:,}",
                f"{t['ours_s']:.1f} s",
                f"{t['candidates_subset'] / t['ours_s']:.1f}",
                f"**{ratio:.1f}x** ({verdict} the {TARGET_SPEEDUP:.0f}x target)",
                f"{t['ours_mib']:.0f} MiB",
            ),
            (
                setting,
                "ours, `share_context=False`",
                f"{t['naive_questions']:,}",
                f"{t['candidates_subset']:,}",
                f"{t['single_s']:.1f} s",
                f"{t['candidates_subset'] / t['single_s']:.1f}",
                f"{t['naive_s'] / t['single_s']:.1f}x",
                "–",
            ),
            (
                setting,
                "ours, all questions",
                f"{t['num_questions']:,}",
                f"{t['candidates_all']:,}",
                f"{t['full_s']:.1f} s",
                f"{full_rate:.1f}",
                f"{full_rate / naive_rate:.1f}x",
                f"{t['full_mib']:.0f} MiB",
            ),
        ]
    lines += markdown_table(
        (
            "torch threads (load avg)",
            "implementation",
            "questions",
            "candidates",
            "wall time",
            "candidates / s",
            "speed-up",
            "peak RSS growth",
        ),
        "llrrrrrr",
        rows,
    )
    ok = all(t["ok"] for t in runs)
    lines += [
        "",
        (
            f"Equality on the naive subset (both of ours, every thread setting): same selected candidate for every question: "
            f"**{all(t['same_selection'] for t in runs)}**; max |Δ summed NLL| per candidate = "
            f"{max(t['max_abs_diff'] for t in runs):.1e} nats (tolerance {LOSS_TOLERANCE:.0e}: padding changes float32 "
            f"summation order) → **{'passed' if ok else 'FAILED'}**. (Accuracy of this random model on all questions: "
            f"{first['accuracy']:.3f}; meaningless except as a check that the paths select alike.)"
        ),
        "",
        (
            "Why the ratios are what they are: per candidate the naive loop runs the model over context + candidate and the "
            "50,257-wide output layer over every position; ours runs each context once per question and the output layer "
            f"on the candidate's tokens only. With {bound['context_tokens']:.1f} context and {bound['candidate_tokens']:.1f} "
            f"candidate tokens on average (EOS included), ours needs {bound['flop_ratio']:.1f}x fewer matrix-multiply FLOPs per "
            'candidate: the ratio to expect where both run at the same FLOP rate. The "all questions" rows divide by the '
            "naive rate on the first questions, a different set. Larger ratios with more threads come from batched matrix "
            "products using the cores better than one short sequence does, and from the naive loop's many small forwards "
            "suffering more from the other jobs' load (first column) on this shared machine."
        ),
    ]
    return section_text(SCRIPT, lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-file", type=Path, default=DATA_FILE)
    parser.add_argument("--questions", type=int, default=NUM_QUESTIONS)
    parser.add_argument(
        "--naive-questions",
        type=int,
        default=60,
        help="questions the naive loop scores (the ratio)",
    )
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument(
        "--threads",
        type=int,
        nargs="+",
        default=[1, torch.get_num_threads()],
        help="torch thread counts to measure, each in turn (default: 1 and torch's default)",
    )
    parser.add_argument("--results", type=Path, default=RESULTS_PATH)
    args = parser.parse_args(argv)
    if not args.data_file.is_file():
        print(
            f"bench_selection: {args.data_file} not found (the papers' data lives in ../shared/data); nothing measured"
        )
        return 1
    contexts, candidates, labels = questions_from_dailydialog_pp(args.data_file, args.questions)
    texts = [text for turns, options in zip(contexts, candidates) for text in (*turns, *options)]
    with tempfile.TemporaryDirectory() as workdir:
        path = build_model(Path(workdir) / "distilgpt2-shape", texts)
        bound = flop_bound(path, contexts, candidates)
        runs = []
        for threads in dict.fromkeys(args.threads):  # in order, each once
            runs.append(
                bench(
                    path,
                    contexts,
                    candidates,
                    labels,
                    args.naive_questions,
                    args.batch_size,
                    threads,
                )
            )
            print(runs[-1])
    command = "python benchmarks/bench_selection.py " + shlex.join(
        argv if argv is not None else sys.argv[1:]
    )
    write_section(args.results, SCRIPT, render(runs, bound, command.strip()))
    print(f"wrote {args.results}")
    return 0 if all(run["ok"] for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
