"""Benchmark DRESSTrainer's per-step overhead against plain ``transformers.Trainer`` (target <= 5%).

Same model, same batches, same run: a GPT-2 built in code (``--width`` x ``--layers``, vocab
``--vocab``, causal, DialoGPT-style examples of ``--length`` tokens whose second half is the
response, so the loss covers half the tokens), per-device batch ``--batch-size``, AdamW, on
``--device`` (the CPU by default).

1. Per-step time: ``Trainer`` (the model's own loss, transformers 5's ``num_items_in_batch``
   normalization) vs ``DRESSTrainer`` with ``negative_training=False`` (the weighted NLL of
   Eq. 4-5: a ``dress_weight`` column, our own token-normalized loss). Both train from the same
   initial weights on the same data order. Each run: ``--warmup`` steps, then ``--steps`` timed
   steps (``on_step_begin`` to ``on_step_end`` of a callback, i.e. data fetch + forward +
   backward + optimizer step); runs alternate plain, DRESS, plain, DRESS, ... ``--repeats``
   times so that drifting machine load hits both alike. Reported: each run's median step, the
   ratio DRESS / plain as the median over the (plain, DRESS) pairs of the ratio of their run
   medians (the headline, judged against the 5% target), and the ratio of the fastest steps
   (the least disturbed estimate on a loaded machine).
2. Negative-training cycle, reported separately: one ``run_negative_cycle`` (greedy generation
   of ``--cycle-max-new-tokens`` tokens for ``--cycle-contexts`` contexts in batches of 64,
   cluster assignment with a stand-in embedder (random fixed vectors: embedding cost is the
   embedder's, measured by ``bench_sem_ent.py``), negative selection), with its time split into
   generation and the rest, and expressed in training steps.

Other processes' share of the machine's CPU time during the measurements (``/proc/stat``) is
reported; above 10% the section says the timings are disturbed. Writes its section of
``benchmarks/RESULTS.md`` (or ``--results``).

Usage::

    .venv/bin/python benchmarks/bench_dress.py       # ~5 minutes on 2 cores
    .venv/bin/python benchmarks/bench_dress.py --steps 5 --warmup 2 --repeats 1 --cycle-contexts 32 \\
        --results /tmp/bench_dress_smoke.md          # smoke run
"""

from __future__ import annotations

import os

for _name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_name, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse
import datetime
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

import datasets
import numpy as np
import torch
import transformers
from _report import (
    RESULTS_PATH,
    cpu_ticks,
    machine_line,
    markdown_table,
    others_share,
    section_text,
    write_section,
)
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments

from dialeval.metrics.sem_ent.clusters import SemanticClusters
from dialeval.trainers import DialogueCollator, DRESSConfig, DRESSTrainer

SCRIPT = "bench_dress.py"
TOPIC_TEXTS = 200  # distinct response texts: the stand-in embedder clusters them


class StandInEmbedder:
    """A fixed random vector per distinct text (seeded by the text): cheap, deterministic clusters."""

    def identity(self):
        return {"kind": "benchmark", "model": "random-vectors", "dim": 16}

    def embed(self, texts):
        return np.stack(
            [
                np.random.default_rng(sum(map(ord, text)) + len(text)).standard_normal(16)
                for text in texts
            ]
        ).astype(np.float32)


class StepTimer(TrainerCallback):
    """Each step's wall time; on a GPU the device is synchronized at both ends, so a step's
    queued kernels count in the step that queued them."""

    def __init__(self, device: str):
        self.durations: list[float] = []
        self.cuda = device.startswith("cuda")

    def _now(self) -> float:
        if self.cuda:
            torch.cuda.synchronize()
        return time.perf_counter()

    def on_step_begin(self, args, state, control, **kwargs):
        self._start = self._now()

    def on_step_end(self, args, state, control, **kwargs):
        self.durations.append(self._now() - self._start)


def build_data(args) -> datasets.Dataset:
    rng = np.random.default_rng(0)
    rows = {"input_ids": [], "attention_mask": [], "labels": [], "response": []}
    examples = args.batch_size * (args.warmup + args.steps)
    half = args.length // 2
    for index in range(examples):
        ids = rng.integers(2, args.vocab, size=args.length).tolist()
        rows["input_ids"].append(ids)
        rows["attention_mask"].append([1] * args.length)
        rows["labels"].append([-100] * half + ids[half:])
        rows["response"].append(f"response text {index % TOPIC_TEXTS}")
    return datasets.Dataset.from_dict(rows)


def make_args(cls, out: Path, args, **extra):
    return cls(
        output_dir=str(out),
        max_steps=args.warmup + args.steps,
        per_device_train_batch_size=args.batch_size,
        learning_rate=1e-4,
        report_to="none",
        use_cpu=args.device == "cpu",
        save_strategy="no",
        logging_strategy="no",
        seed=0,
        data_seed=0,
        disable_tqdm=True,
        dataloader_num_workers=0,
        **extra,
    )


def timed_run(kind: str, args, data, initial_state, clusters, workdir: Path) -> dict:
    config = GPT2Config(
        vocab_size=args.vocab,
        n_positions=args.length + args.cycle_max_new_tokens,
        n_embd=args.width,
        n_layer=args.layers,
        n_head=4,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=1,
    )
    model = GPT2LMHeadModel(config)
    model.load_state_dict(initial_state)
    timer = StepTimer(args.device)
    if kind == "plain":
        trainer = Trainer(
            model,
            make_args(TrainingArguments, workdir / kind, args),
            train_dataset=data.remove_columns("response"),
            data_collator=DialogueCollator(0),
            callbacks=[timer],
        )
    else:
        dress_args = make_args(
            DRESSConfig,
            workdir / kind,
            args,
            negative_training=False,
            gamma=30.0,
            num_clusters=clusters.num_clusters,
            response_text_column="response",
        )
        trainer = DRESSTrainer(
            model, dress_args, train_dataset=data, semantic_clusters=clusters, callbacks=[timer]
        )
    start = cpu_ticks()
    trainer.train()
    timed = timer.durations[args.warmup :]
    return {
        "kind": kind,
        "median_s": statistics.median(timed),
        "min_s": min(timed),
        "others": others_share(start, cpu_ticks()),
    }


def time_cycle(args, data, initial_state, clusters, workdir: Path) -> dict:
    config = GPT2Config(
        vocab_size=args.vocab,
        n_positions=args.length + args.cycle_max_new_tokens,
        n_embd=args.width,
        n_layer=args.layers,
        n_head=4,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=1,
    )
    model = GPT2LMHeadModel(config)
    model.load_state_dict(initial_state)
    dress_args = make_args(
        DRESSConfig,
        workdir / "cycle",
        args,
        negative_training=True,
        gamma=30.0,
        num_clusters=clusters.num_clusters,
        response_text_column="response",
        negative_contexts_per_cycle=args.cycle_contexts,
        negative_generation_batch_size=64,
        negative_max_new_tokens=args.cycle_max_new_tokens,
    )

    class TextTokenizer:  # the cycle decodes generations for the embedder: any deterministic text will do
        def decode(self, ids, skip_special_tokens=True):
            return " ".join(map(str, ids[:3]))

    trainer = DRESSTrainer(model, dress_args, train_dataset=data, semantic_clusters=clusters)
    trainer.tokenizer_for_text = TextTokenizer()
    generate = trainer.generate_responses
    spent = {}

    def timed_generate(prompts):
        tick = time.perf_counter()
        result = generate(prompts)
        spent["generation_s"] = time.perf_counter() - tick
        return result

    trainer.generate_responses = timed_generate
    start = cpu_ticks()
    stats = trainer.run_negative_cycle()
    return {
        "seconds": stats["seconds"],
        "generation_s": spent["generation_s"],
        "num_generated": stats["num_generated"],
        "num_negatives": stats["num_negatives"],
        "others": others_share(start, cpu_ticks()),
    }


def device_name(device: str) -> str:
    if device.startswith("cuda"):
        return f"{device} ({torch.cuda.get_device_name(torch.device(device))}, CUDA {torch.version.cuda})"
    return "CPU"


def render(args, runs, cycle, command) -> str:
    plain = [run["median_s"] for run in runs if run["kind"] == "plain"]
    dress = [run["median_s"] for run in runs if run["kind"] == "dress"]
    pair_ratios = [d / p for p, d in zip(plain, dress)]
    ratio = statistics.median(pair_ratios)
    overhead = (ratio - 1) * 100
    plain_min = min(run["min_s"] for run in runs if run["kind"] == "plain")
    dress_min = min(run["min_s"] for run in runs if run["kind"] == "dress")
    worst_others = max(run["others"] for run in runs)
    params = sum(
        p.numel()
        for p in GPT2LMHeadModel(
            GPT2Config(
                vocab_size=args.vocab,
                n_positions=args.length + args.cycle_max_new_tokens,
                n_embd=args.width,
                n_layer=args.layers,
                n_head=4,
            )
        ).parameters()
    )
    lines = [
        "## bench_dress: DRESSTrainer per-step overhead vs plain Trainer",
        "",
        f"- Date: {datetime.date.today().isoformat()}",
        f"- Command: `{command}`",
        machine_line(),
        f"- torch {torch.__version__} ({torch.get_num_threads()} threads), transformers {transformers.__version__}",
        f"- Device: {device_name(args.device)}; float32 training",
        (
            f"- Model: GPT-2 built in code, {params / 1e6:.2f} M parameters (width {args.width}, {args.layers} layers, "
            f"vocab {args.vocab}); batch {args.batch_size} x {args.length} tokens (loss on the last {args.length // 2}); "
            f"AdamW; {args.warmup} warm-up + {args.steps} timed steps per run, {args.repeats} alternating runs per trainer"
        ),
        "",
        *markdown_table(
            (
                "Trainer",
                "fastest step (s)",
                "median of runs' medians (s)",
                "runs' median steps (s)",
            ),
            "llll",
            [
                (
                    "plain `Trainer` (model's own loss)",
                    f"{plain_min:.4f}",
                    f"{statistics.median(plain):.4f}",
                    ", ".join(f"{v:.4f}" for v in plain),
                ),
                (
                    "`DRESSTrainer`, weighted NLL (DRESS(-NT))",
                    f"{dress_min:.4f}",
                    f"{statistics.median(dress):.4f}",
                    ", ".join(f"{v:.4f}" for v in dress),
                ),
            ],
        ),
        "",
        (
            f"- **Ratio DRESS / plain (median of the per-pair ratios of run medians): {ratio:.3f} ({overhead:+.1f}%)**; "
            f"per-pair ratios {', '.join(f'{r:.3f}' for r in pair_ratios)}; ratio of the fastest steps "
            f"{dress_min / plain_min:.3f}. Target: overhead <= 5%: {'met' if overhead <= 5 else 'NOT met'}."
        ),
        (
            f"- Negative-training cycle (separate from the step time): {cycle['num_generated']} contexts, greedy "
            f"{args.cycle_max_new_tokens} new tokens in batches of 64: {cycle['seconds']:.2f} s "
            f"({cycle['generation_s']:.2f} s generation, {cycle['seconds'] - cycle['generation_s']:.2f} s decoding, "
            f"stand-in clustering and negative selection) = {cycle['seconds'] / statistics.median(plain):.0f} plain "
            "training steps; with MiniLM add its embedding time for the generated texts (bench_sem_ent.py)."
        ),
        f"- Other processes took up to {worst_others:.0%} of the machine's CPU during a training run and "
        f"{cycle['others']:.0%} during the cycle (/proc/stat)"
        + (
            "; **timings disturbed** by concurrent load (the alternation spreads it over both trainers)."
            if max(worst_others, cycle["others"]) > 0.10
            else "."
        ),
    ]
    return section_text(SCRIPT, lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--length", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--cycle-contexts", type=int, default=256)
    parser.add_argument("--cycle-max-new-tokens", type=int, default=24)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (1: on a loaded 2-core machine, 2 threads trained >10x slower than 1 in our runs)",
    )
    parser.add_argument(
        "--device",
        default="cpu",
        help="cpu (default) or a CUDA device: the Trainer's, the steps timed with the device synchronized",
    )
    parser.add_argument("--results", type=Path, default=RESULTS_PATH)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    transformers.logging.set_verbosity_error()
    datasets.disable_progress_bars()

    data = build_data(args)
    clusters = SemanticClusters.fit(
        [f"response text {i}" for i in range(TOPIC_TEXTS)],
        StandInEmbedder(),
        num_clusters=20,
        seed=0,
    )
    torch.manual_seed(0)
    initial_state = GPT2LMHeadModel(
        GPT2Config(
            vocab_size=args.vocab,
            n_positions=args.length + args.cycle_max_new_tokens,
            n_embd=args.width,
            n_layer=args.layers,
            n_head=4,
            pad_token_id=0,
            eos_token_id=1,
            bos_token_id=1,
        )
    ).state_dict()
    runs = []
    with tempfile.TemporaryDirectory() as folder:
        workdir = Path(folder)
        for repeat in range(args.repeats):
            for kind in ("plain", "dress"):
                run = timed_run(kind, args, data, initial_state, clusters, workdir)
                runs.append(run)
                print(
                    f"repeat {repeat} {kind}: median step {run['median_s']:.4f} s (others {run['others']:.0%})",
                    flush=True,
                )
        cycle = time_cycle(args, data, initial_state, clusters, workdir)
    print(f"cycle: {cycle}")
    command = "python benchmarks/bench_dress.py " + shlex.join(
        sys.argv[1:] if argv is None else argv
    )
    section = render(args, runs, cycle, command.strip())
    write_section(args.results, SCRIPT, section)
    print(section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
