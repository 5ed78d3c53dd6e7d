"""Benchmark the whole job: ``dialeval evaluate`` against the script a user would write with the peers.

Both sides run as the user runs them, each in a fresh process per run:

- ours: ``dialeval evaluate SETS.jsonl -o OUT.json --no-progress --nli-model none
  --bertscore-model none --cross-encoder-model none --metric lexical_diversity --metric
  corpus_lexical_diversity --metric sent_bert --metric vendi``: set-level averaged distinct-n and
  n-gram cosine diversity per set, corpus Dist-1..3 / Ent-1..3 / LF, sent-BERT diversity and the
  Vendi score per set with the embedded all-MiniLM-L6-v2;
- peers: ``benchmarks/peer_job.py`` (its docstring lists what it calls: Tevet & Berant's released
  set-level metrics, Dist / Ent / LF over NLTK casual tokens (each response tokenized once) with a
  ``Counter``, one ``SentenceTransformer.encode`` of the responses, ``vendi_score.vendi.score_X``
  per set), which writes the same figures to a JSON file.

Data: sets of 10 responses drawn deterministically from DailyDialog++ (``../shared/data/
dailydialog-plusplus``; skipped with a message when absent), ``SIZES`` responses (1k, 10k, 100k;
``--sizes``). Two pairings of the files' groups of 5 responses make sets of 10:
A: a dev/test record's positive + adversarial responses; the random-negative responses of dev/test
records 2i and 2i+1 (within a file); the positive responses of ``data_positives`` records 2i and
2i+1; A uses each of the 70,755 responses once (7,075 sets). B: a dev/test record's positive +
random-negative responses; the adversarial responses of records 2i+1 and 2i+2; ``data_positives``
records 2i+1 and 2i+2 (7,073 sets). The draw is A in the order of a seeded permutation (seed 0),
then B (seed 1), then A again (seed 2), ...; a size takes the first sets of that sequence (so
the 1k sets are in the 10k ones). DailyDialog++ holds 56,527 distinct response texts, so the
100k size repeats texts; the table states the distinct texts of each size (ours embeds each
distinct text once, the peers' ``encode`` embeds every response).

Timing (as ``bench_peers.py``): per size, the two sides' runs are interleaved (``--repeats``
rounds, the order rotated each round), after one untimed run of each side on the smallest size
(file cache, compiled bytecode); medians reported. Per run: wall time of the whole process
(start to reaped), CPU time of the process tree (``os.wait4``: the process and the descendants it
reaped), and peak resident memory of the process tree: the larger of psutil's sum of RSS over
the process and its live descendants, polled every 0.1 s, and ``wait4``'s ``ru_maxrss`` (the
largest single process of the tree, exact); both are lower bounds of the true peak. The share of
the machine's CPU other processes took during each size (``/proc/stat``) is reported.
``--threads N`` sets ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS`` and ``OPENBLAS_NUM_THREADS`` for
both sides' processes (torch's and BLAS's thread pools; default: one per core).

Equality before a time counts: every per-set figure and every summary figure of the last run of
each side, within ``TOLERANCES`` (stated there with the reason for each); any difference marks the
size **NO** and the script exits 1.

Report: wall time, CPU time and peak RSS per side and size, ours / peer per size (and the
speed-up, peer / ours), and the scaling exponent of each side (the slope of log wall time vs log
responses between consecutive sizes). The goals: at least ``TARGETS[size]``x the peers' script
at each size of ``TARGETS`` (2.0x at 10,000, 3.5x at 100,000 responses), and no worse than
linear growth (exponent <= 1 between the
sizes; ``LINEAR_SLACK`` is allowed for timing noise). Written to ``benchmarks/RESULTS.md`` between
``<!-- bench_job:start -->`` and ``<!-- bench_job:end -->`` (``--smoke``: a temporary file).

``--backend`` passes ``--backend`` to ours (default: dialeval's own default backend).

``--corpus-1m``: instead, ``dialeval evaluate corpus.txt -o OUT.json --no-progress`` (the three
``--*-model none`` as above) ``--metric corpus_lexical_diversity --metric self_bleu --metric vendi
--metric compression_ratio`` (the corpus steps the job had when it was measured, but Sem-Ent, which needs a
reference corpus) on a
corpus of ``--corpus-size`` (1,000,000) responses, one per line: every
DailyDialog++ response (70,755, file order) followed by ``bench_lexical.synthetic_corpus(rest,
seed=0)`` (mostly distinct texts, the hard case for memory; 794,456 distinct texts of 1,000,000,
25 MiB); one run, its wall time and peak RSS against the 4 GiB limit. Section
``bench_job_corpus``. ``--corpus-reference-backend B`` (e.g. ``torch``, the runtime of the run the
goal halves) then runs the same job with ``--backend B`` on the same corpus and machine, checks its
figures against ours (``CORPUS_TOLERANCES``) and reports ours / the reference's wall time as a
same-machine ratio beside the fixed goal. It needs ``dialeval evaluate`` to read a ``.txt`` corpus (one response per
line); where it does not, the section says so and the script exits 1.

Usage::

    .venv/bin/python benchmarks/bench_job.py                 # 1k, 10k, 100k; ~20-30 min on 2 idle cores (estimate)
    .venv/bin/python benchmarks/bench_job.py --smoke         # tiny sizes, checks the figures; not a measurement
    .venv/bin/python benchmarks/bench_job.py --corpus-1m     # the 1M-response corpus job; ~20-30 min on 2 idle cores (estimate)
    .venv/bin/python benchmarks/bench_job.py --corpus-1m --corpus-reference-backend torch  # and on torch, same machine
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import math
import os
import platform
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _report import (
    DAILYDIALOG,
    RESULTS_PATH,
    Contention,
    TreeRun,
    dailydialog_records,
    details_head,
    interleaved,
    log,
    machine_line,
    markdown_table,
    package_versions,
    run_process_tree,
    section_text,
    set_offline_environment,
    write_section,
)

SCRIPT = "bench_job"
CORPUS_SCRIPT = "bench_job_corpus"
PEER_SCRIPT = Path(__file__).resolve().parent / "peer_job.py"
SET_SIZE = 10
SIZES = (1_000, 10_000, 100_000)
SMOKE_SIZES = (60, 200)
REPEATS = 3
STEPS = ("lexical_diversity", "corpus_lexical_diversity", "sent_bert", "vendi")
CORPUS_STEPS = ("corpus_lexical_diversity", "self_bleu", "vendi", "compression_ratio")
MODELS_OFF = ("--nli-model", "none", "--bertscore-model", "none", "--cross-encoder-model", "none")
CORPUS_SIZE = 1_000_000
CORPUS_RSS_LIMIT = 4 * 2**30  # the 1M-response corpus job's memory bound
#: responses -> the speed-up over the peers' script the job must reach at that size
TARGETS = {10_000: 2.0, 100_000: 3.5}
#: the 1M-response corpus job's wall time before the runtime backends (benchmarks/RESULTS.md,
#: 2026-11-26); the goal is less than half of it
CORPUS_BASELINE_SECONDS = 1543.0
#: the corpus job's figures between two backends: the lexical ones are counts of the same tokens;
#: Vendi reads the float32 embeddings (bench_job's Vendi tolerance above)
CORPUS_TOLERANCES = {"vendi_score": 1e-5}
LINEAR_SLACK = 0.05
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")

#: figure -> (kind, tolerance, why). "abs": |ours - peer| <= tolerance; "rel": relative to |peer|.
TOLERANCES = {
    "averaged_distinct_n": (
        "abs",
        1e-12,
        (
            "the released tokenization and counts: ours is bit-identical per set "
            "(bench_lexical), JSON keeps every float exactly; the mean over sets may differ in its "
            "last bits (summation order)"
        ),
    ),
    "ngram_cosine_diversity": ("abs", 1e-12, "as averaged distinct-n"),
    **{f"distinct_{n}": ("abs", 0.0, "a ratio of the same two integer counts") for n in (1, 2, 3)},
    **{
        f"entropy_{n}": ("rel", 1e-9, "the same terms summed in another order (bench_lexical)")
        for n in (1, 2, 3)
    },
    "lf": ("abs", 0.0, "a ratio of the same two integer counts"),
    "sent_bert_diversity": (
        "abs",
        1e-5,
        (
            "float32 embeddings from batches composed differently (ours groups "
            "texts by token length, `encode` by characters): padding and summation order move a "
            "vector by ~1e-7 (bench_peers)"
        ),
    ),
    "vendi_score": (
        "rel",
        1e-5,
        ("those float32 embeddings; the package takes the eigenvalues in float32, ours in float64"),
    ),
}


# ---------------------------------------------------------------- data


def _pairs(groups: list[list[str]], offset: int) -> list[list[str]]:
    """Groups ``offset + 2i`` and ``offset + 2i + 1`` joined."""
    return [groups[i] + groups[i + 1] for i in range(offset, len(groups) - 1, 2)]


def dailydialog_pairings() -> tuple[list[list[str]], list[list[str]]]:
    """Pairings A and B of DailyDialog++'s groups of 5 into sets of 10 (the module docstring)."""
    dev, test = dailydialog_records(("dev.json",)), dailydialog_records(("test.json",))
    positives = [
        record["positive_responses"] for record in dailydialog_records(("data_positives.json",))
    ]

    def key(records, name):
        return [record[name] for record in records]

    a = [r["positive_responses"] + r["adversarial_negative_responses"] for r in dev + test]
    a += _pairs(key(dev, "random_negative_responses"), 0) + _pairs(
        key(test, "random_negative_responses"), 0
    )
    a += _pairs(positives, 0)
    b = [r["positive_responses"] + r["random_negative_responses"] for r in dev + test]
    b += _pairs(key(dev, "adversarial_negative_responses"), 1) + _pairs(
        key(test, "adversarial_negative_responses"), 1
    )
    b += _pairs(positives, 1)
    return a, b


def draw_sets(num_responses: int) -> list[list[str]]:
    """The first ``num_responses / 10`` sets of the draw (the module docstring)."""
    if num_responses % SET_SIZE or num_responses < 2 * SET_SIZE:
        raise ValueError(
            f"a size must be a multiple of {SET_SIZE} responses, at least {2 * SET_SIZE}; got {num_responses}"
        )
    pairings, count, out, draw = dailydialog_pairings(), num_responses // SET_SIZE, [], 0
    while len(out) < count:
        pool = pairings[draw % 2]
        out += [pool[i] for i in np.random.default_rng(draw).permutation(len(pool))]
        draw += 1
    return out[:count]


def write_sets(path: Path, sets: list[list[str]]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(
            json.dumps({"id": index, "responses": responses}) + "\n"
            for index, responses in enumerate(sets)
        )


# ---------------------------------------------------------------- the two sides


def dialeval_command() -> list[str]:
    """The ``dialeval`` console script of this environment."""
    script = Path(sys.executable).with_name("dialeval")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dialeval.cli"]


def ours_command(
    path: Path, output: Path, device: str | None, steps=STEPS, backend: str | None = None
) -> list[str]:
    command = [
        *dialeval_command(),
        "evaluate",
        str(path),
        "-o",
        str(output),
        "--no-progress",
        *MODELS_OFF,
    ]
    command += [flag for step in steps for flag in ("--metric", step)]
    command += ["--backend", backend] if backend else []
    return command + (["--device", device] if device else [])


def peer_command(path: Path, output: Path, device: str | None, model: str) -> list[str]:
    return [sys.executable, str(PEER_SCRIPT), str(path), "-o", str(output), "--model", model] + (
        ["--device", device] if device else []
    )


def job_environment(threads: int | None) -> dict[str, str]:
    env = dict(os.environ)
    if threads is not None:
        env.update({name: str(threads) for name in THREAD_VARIABLES})
    return env


class Side:
    """One side's runs: each call runs the command on a fresh output path and checks it succeeded."""

    def __init__(self, name: str, build, env: dict[str, str], workdir: Path):
        self.name, self.build, self.env, self.workdir, self.count = name, build, env, workdir, 0

    def __call__(self, path: Path) -> tuple[TreeRun, Path]:
        self.count += 1
        output = self.workdir / f"{self.name}-{path.stem}-{self.count}.json"
        run = run_process_tree(
            self.build(path, output), env=self.env, log_path=output.with_suffix(".log")
        )
        if run.returncode != 0 or not output.exists():
            raise RuntimeError(
                f"{self.name} failed (exit {run.returncode}): {shlex.join(run.command)}\n{run.log_tail}"
            )
        return run, output


# ---------------------------------------------------------------- figures


def ours_figures(report: dict) -> tuple[dict, list[dict]]:
    """(summary figures, per-set figures) of a ``dialeval evaluate`` report, by figure name."""
    summary = {}
    for values in report["metrics"].values():
        summary.update({key: value for key, value in values.items() if key in TOLERANCES})
    per_set = [
        {key: value for key, value in row.items() if key in TOLERANCES} for row in report["per_set"]
    ]
    return summary, per_set


def compare(figure: str, ours: list[float], peer: list[float]) -> dict:
    kind, tolerance, _ = TOLERANCES[figure]
    ours_array, peer_array = np.asarray(ours, dtype=np.float64), np.asarray(peer, dtype=np.float64)
    difference = np.abs(ours_array - peer_array)
    if kind == "rel":
        difference = difference / np.maximum(np.abs(peer_array), np.finfo(np.float64).tiny)
    worst = float(difference.max()) if difference.size else 0.0
    return {
        "figure": figure,
        "count": int(difference.size),
        "max_difference": worst,
        "kind": kind,
        "tolerance": tolerance,
        "equal": bool(difference.size and worst <= tolerance),
    }


def check_figures(ours_report: dict, peer_report: dict) -> list[dict]:
    """Every summary figure and every per-set figure, ours vs the peer's (``TOLERANCES``)."""
    ours_summary, ours_per_set = ours_figures(ours_report)
    checks = []
    for figure in TOLERANCES:
        if figure not in ours_summary or figure not in peer_report["summary"]:
            checks.append(
                {
                    "figure": figure,
                    "count": 0,
                    "max_difference": math.inf,
                    "kind": "missing",
                    "tolerance": 0.0,
                    "equal": False,
                }
            )
            continue
        check = compare(figure, [ours_summary[figure]], [peer_report["summary"][figure]])
        if figure in peer_report["per_set"][0]:
            if len(ours_per_set) != len(peer_report["per_set"]):
                check["equal"] = False
            else:
                per_set = compare(
                    figure,
                    [row.get(figure, math.nan) for row in ours_per_set],
                    [row[figure] for row in peer_report["per_set"]],
                )
                check["count"] += per_set["count"]
                check["max_difference"] = max(check["max_difference"], per_set["max_difference"])
                check["equal"] = (
                    check["equal"]
                    and per_set["equal"]
                    and not math.isnan(per_set["max_difference"])
                )
        checks.append(check)
    return checks


# ---------------------------------------------------------------- measurement


def sentence_model_path() -> str:
    from dialeval.hub import EMBEDDED_SENTENCE_MODEL, resolve_model_path

    return str(resolve_model_path(EMBEDDED_SENTENCE_MODEL))


def summarize(runs: list[TreeRun], walls: list[float]) -> dict:
    return {
        "wall": walls,
        "cpu": [run.cpu for run in runs],
        "peak_rss": [run.peak_rss for run in runs],
        "tree_rss": [run.peak_tree_rss for run in runs],
        "max_rss": [run.max_rss for run in runs],
    }


def measure(
    sizes,
    repeats: int,
    workdir: Path,
    device: str | None = None,
    threads: int | None = None,
    warmup: bool = True,
    backend: str | None = None,
) -> dict:
    """Both sides at every size; the raw numbers (``render_rows`` turns them into a table)."""
    env, model = job_environment(threads), sentence_model_path()
    ours = Side(
        "ours",
        lambda path, output: ours_command(path, output, device, backend=backend),
        env,
        workdir,
    )
    peer = Side(
        "peer", lambda path, output: peer_command(path, output, device, model), env, workdir
    )
    files, drawn = {}, {}
    for size in sizes:
        drawn[size] = sets = draw_sets(size)
        files[size] = workdir / f"sets-{size}.jsonl"
        write_sets(files[size], sets)
        log(
            f"{size:,} responses: {len(sets):,} sets of {SET_SIZE}, {len({t for s in sets for t in s}):,} distinct texts"
        )
    if warmup:
        log(f"warm-up: one untimed run of each side on {min(sizes):,} responses")
        ours(files[min(sizes)])
        peer(files[min(sizes)])
    rows = []
    for size in sizes:
        sets = drawn[size]
        log(f"{size:,} responses: {repeats} interleaved rounds")
        with Contention() as contention:
            timings = interleaved(
                {
                    "ours": lambda path=files[size]: ours(path),
                    "peer": lambda path=files[size]: peer(path),
                },
                repeats,
            )
        (_, ours_output), (_, peer_output) = timings["ours"].value, timings["peer"].value
        peer_report = json.loads(peer_output.read_text(encoding="utf-8"))
        checks = check_figures(json.loads(ours_output.read_text(encoding="utf-8")), peer_report)
        rows.append(
            {
                "responses": size,
                "sets": len(sets),
                "distinct": len({text for s in sets for text in s}),
                "ours": summarize([run for run, _ in timings["ours"].values], timings["ours"].wall),
                "peer": summarize([run for run, _ in timings["peer"].values], timings["peer"].wall)
                | {"parts": peer_report["seconds"]},
                "others": contention.share,
                "checks": checks,
                "equal": all(check["equal"] for check in checks),
            }
        )
        row = rows[-1]
        log(
            f"{size:,}: ours {statistics.median(row['ours']['wall']):.2f} s, peer {statistics.median(row['peer']['wall']):.2f} s; "
            f"equal figures: {row['equal']}"
        )
    return {
        "rows": rows,
        "repeats": repeats,
        "warmup": warmup,
        "device": device or "default",
        "backend": backend or "default",
        "threads": threads,
        "scaling": scaling(rows),
    }


def scaling(rows: list[dict]) -> list[dict]:
    """Slope of log(median wall) vs log(responses) between consecutive sizes, per side."""
    out = []
    for low, high in itertools.pairwise(rows):
        span = math.log(high["responses"] / low["responses"])
        out.append(
            {
                "from": low["responses"],
                "to": high["responses"],
                **{
                    side: math.log(
                        statistics.median(high[side]["wall"]) / statistics.median(low[side]["wall"])
                    )
                    / span
                    for side in ("ours", "peer")
                },
            }
        )
    return out


# ---------------------------------------------------------------- report


def _gib(value: float) -> str:
    return f"{value / 2**30:.2f} GiB"


def _median(values) -> float:
    return statistics.median(values)


def _size(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


def goal_lines(result: dict) -> list[str]:
    rows = {row["responses"]: row for row in result["rows"]}
    lines = []
    for size, wanted in TARGETS.items():
        target = rows.get(size)
        if target is None:
            lines.append(
                f"Goal: at least {wanted}x the peers' script at {size:,} responses: "
                "not measured at that size."
            )
            continue
        speedup = _median(target["peer"]["wall"]) / _median(target["ours"]["wall"])
        verdict = "**met**" if speedup >= wanted and target["equal"] else "**not met**"
        lines.append(
            f"Goal: at least {wanted}x the peers' script at {size:,} responses: "
            f"{verdict} ({speedup:.2f}x)."
        )
    if result["scaling"]:
        worst = max(step["ours"] for step in result["scaling"])
        verdict = "**met**" if worst <= 1 + LINEAR_SLACK else "**not met**"
        lines.append(
            f"Goal, no worse than linear growth (ours' exponent <= 1 between every two sizes, {LINEAR_SLACK} "
            f"allowed for noise): {verdict} (largest exponent {worst:.2f})."
        )
    return lines


def warmup_text(result: dict) -> str:
    return (
        "after one untimed run of each side"
        if result["warmup"]
        else "(no untimed run first: --smoke)"
    )


def render_rows(result: dict) -> list[str]:
    """The table, scaling, goals and checks of a :func:`measure` result (also used by bench_gpu)."""
    size_rows = []
    for row in result["rows"]:
        ours, peer = row["ours"], row["peer"]
        ratio = _median(ours["wall"]) / _median(peer["wall"])
        failed = [check["figure"] for check in row["checks"] if not check["equal"]]
        size_rows.append(
            (
                f"{row['responses']:,} ({row['sets']:,}; {row['distinct']:,})",
                f"{_median(ours['wall']):.2f} / {_median(ours['cpu']):.2f} s",
                f"{_median(peer['wall']):.2f} / {_median(peer['cpu']):.2f} s",
                f"{ratio:.2f} (**{1 / ratio:.2f}x**)",
                _gib(max(ours["peak_rss"])),
                _gib(max(peer["peak_rss"])),
                f"{max(ours['peak_rss']) / max(peer['peak_rss']):.2f}",
                f"{row['others']:.0%}",
                "yes" if row["equal"] else f"**NO**: {', '.join(failed)}",
            )
        )
    lines = markdown_table(
        (
            "responses (sets; distinct texts)",
            "ours: wall / CPU",
            "peers: wall / CPU",
            "ours / peers, wall (speed-up)",
            "ours: peak RSS",
            "peers: peak RSS",
            "ours / peers, RSS",
            "others' CPU",
            "equal figures",
        ),
        "lrrrrrrrl",
        size_rows,
    )
    lines.append("")
    if result["scaling"]:
        lines.append(
            "Scaling exponent (slope of log wall time vs log responses): "
            + "; ".join(
                f"{_size(step['from'])} → {_size(step['to'])}: ours **{step['ours']:.2f}**, peers {step['peer']:.2f}"
                for step in result["scaling"]
            )
            + ". Both include a fixed start-up (imports, model load), which "
            "lowers the exponent between the small sizes."
        )
        lines.append("")
    lines += goal_lines(result)
    disturbed = [row for row in result["rows"] if row["others"] > 0.10]
    if disturbed:
        lines += [
            "",
            (
                f"**Disturbed**: other processes took more than 10% of the machine's CPU during {len(disturbed)} of "
                f"{len(result['rows'])} sizes (up to {max(row['others'] for row in disturbed):.0%}); the times are "
                "indicative only: re-measure on an idle machine."
            ),
        ]
    largest = result["rows"][-1]
    parts = largest["peer"]["parts"]
    lines += [
        "",
        (
            f"Where the peers' script spends its time at {largest['responses']:,} responses (its own timer, last "
            "run; imports not included): "
            + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in parts.items())
            + ". Its corpus part tokenizes each response once (NLTK casual) and counts n-grams with a Counter."
        ),
    ]
    checks = largest["checks"]
    lines += [
        "",
        f"Figures compared ({largest['responses']:,} responses; every size is checked the same way):",
        "",
        *markdown_table(
            ("figure", "values compared", "max difference", "tolerance", "why that tolerance"),
            "lrrll",
            [
                (
                    check["figure"],
                    f"{check['count']:,}",
                    f"{check['max_difference']:.1e}",
                    f"{check['tolerance']:.0e} {check['kind']}",
                    TOLERANCES[check["figure"]][2],
                )
                for check in checks
            ],
        ),
    ]
    return lines


def versions() -> str:
    return f"Python {platform.python_version()}, " + package_versions(
        (
            "dialeval",
            "torch",
            "sentence-transformers",
            "transformers",
            "nltk",
            "vendi-score",
            "numpy",
            "scipy",
        )
    )


def render(result: dict, command: str) -> str:
    threads = result["threads"]
    lines = [
        "## bench_job: the whole job, `dialeval evaluate` vs the peers' script",
        "",
        (
            "Ours: `dialeval evaluate SETS.jsonl -o OUT.json --no-progress --nli-model none --bertscore-model none "
            "--cross-encoder-model none --metric lexical_diversity --metric corpus_lexical_diversity --metric sent_bert "
            "--metric vendi`. Peers: `benchmarks/peer_job.py` (Tevet & Berant's released set-level metrics, the Sem-Ent "
            "paper's Dist / Ent / LF over NLTK casual tokens (tokenized once) with a Counter, one `SentenceTransformer.encode` of all responses, "
            "`vendi_score.vendi.score_X` per set). Each run is a fresh process; the same figures are checked equal before a "
            "time counts. DailyDialog++ sets of 10 (the script's docstring says how they are drawn); all-MiniLM-L6-v2, "
            f"batch 64, float32, device {result['device']}, backend {result.get('backend', 'default')} "
            f"(`--backend`; default: dialeval's). {result['repeats']} interleaved rounds per size "
            f"{warmup_text(result)}; medians; peak RSS: the largest of the runs, of the whole process tree."
        ),
        "",
        *render_rows(result),
        "",
        *details_head(command),
        f"- Versions: {versions()}",
        (
            f"- Threads: {'`--threads ' + str(threads) + '` (OMP / MKL / OpenBLAS thread variables of both sides)' if threads else 'default (torch and BLAS: one per core)'}."
        ),
        (
            "- Timing: wall time of each process from start to reaped (`time.perf_counter`); CPU time from `os.wait4` "
            "(the process and its reaped descendants; CPU > wall: several cores worked). Peak RSS: the larger of psutil's "
            "sum over the process tree, polled every 0.1 s, and `wait4`'s `ru_maxrss` (largest single process)."
        ),
        "",
        "All runs (wall seconds; ours | peers):",
        "",
    ]
    for row in result["rows"]:
        lines.append(
            f"- {row['responses']:,}: {', '.join(f'{t:.2f}' for t in row['ours']['wall'])} | "
            f"{', '.join(f'{t:.2f}' for t in row['peer']['wall'])}"
        )
    return section_text(SCRIPT, lines)


# ---------------------------------------------------------------- the 1M-response corpus


def build_corpus(path: Path, size: int) -> dict:
    """Every DailyDialog++ response (file order), then ``synthetic_corpus`` up to ``size`` lines."""
    from bench_lexical import synthetic_corpus

    records = dailydialog_records()
    texts = [
        text
        for record in records
        for key in record
        if key.endswith("_responses")
        for text in record[key]
    ][:size]
    dailydialog = len(texts)
    texts += synthetic_corpus(size - dailydialog, seed=0) if size > dailydialog else []
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(text.replace("\n", " ") + "\n" for text in texts)
    return {
        "responses": len(texts),
        "dailydialog": dailydialog,
        "synthetic": len(texts) - dailydialog,
        "distinct": len(set(texts)),
    }


def corpus_figure_differences(ours: dict, reference: dict) -> list[dict]:
    """Each numeric figure of the two corpus reports: the relative difference and whether it is
    within ``CORPUS_TOLERANCES`` (0 for a figure not named there)."""
    rows = []
    for metric, figures in ours.items():
        for key, value in figures.items():
            other = reference.get(metric, {}).get(key)
            if other is None:
                rows.append({"figure": f"{metric}.{key}", "difference": None, "equal": False})
                continue
            difference = abs(value - other) / max(abs(other), 1e-300) if value != other else 0.0
            tolerance = CORPUS_TOLERANCES.get(key, 0.0)
            rows.append(
                {
                    "figure": f"{metric}.{key}",
                    "difference": difference,
                    "equal": difference <= tolerance,
                }
            )
    missing = {f"{m}.{k}" for m, f in reference.items() for k in f} - {
        row["figure"] for row in rows
    }
    rows += [{"figure": name, "difference": None, "equal": False} for name in sorted(missing)]
    return rows


def run_corpus_job(
    path: Path,
    workdir: Path,
    device: str | None,
    threads: int | None,
    backend: str | None,
    side: str,
) -> dict:
    """One run of the corpus job on ``backend`` (None: dialeval's default); ``side`` names its
    output and log files."""
    label = backend or "default"
    output = workdir / f"corpus-report-{side}.json"

    def command_for(corpus_path: str, output_path: str) -> list[str]:
        command = ["evaluate", corpus_path, "-o", output_path, "--no-progress", *MODELS_OFF]
        return (
            command
            + [flag for step in CORPUS_STEPS for flag in ("--metric", step)]
            + (["--backend", backend] if backend else [])
            + (["--device", device] if device else [])
        )

    command = [*dialeval_command(), *command_for(str(path), str(output))]
    log(f"running {shlex.join(command)}")
    with Contention() as contention:
        run = run_process_tree(
            command, env=job_environment(threads), log_path=workdir / f"corpus-{side}.log"
        )
    log(f"{label}: {run.wall:.1f} s wall, {run.cpu:.1f} s CPU, exit {run.returncode}")
    result = {
        "backend": backend,
        "command": shlex.join(command_for("corpus.txt", "OUT.json")),
        "wall": run.wall,
        "cpu": run.cpu,
        "peak_rss": run.peak_rss,
        "tree_rss": run.peak_tree_rss,
        "max_rss": run.max_rss,
        "others": contention.share,
        "returncode": run.returncode,
    }
    if run.returncode != 0 or not output.exists():
        result["error"] = run.log_tail.strip()[-1500:]
        return result
    report = json.loads(output.read_text(encoding="utf-8"))
    result["num_responses"] = report.get("num_responses")
    result["figures"] = {
        name: {key: value for key, value in values.items() if isinstance(value, (int, float))}
        for name, values in report.get("metrics", {}).items()
    }
    result["skipped"] = report.get("skipped", [])
    result["provenance"] = {
        model: (entry.get("backend"), entry.get("precision"))
        for model, entry in report.get("provenance", {}).get("models", {}).items()
    }
    return result


def measure_corpus(
    size: int,
    workdir: Path,
    device: str | None,
    threads: int | None,
    backend: str | None = None,
    reference_backend: str | None = None,
) -> dict:
    path = workdir / "corpus.txt"
    corpus = build_corpus(path, size)
    log(
        f"corpus: {corpus['responses']:,} responses ({corpus['dailydialog']:,} DailyDialog++, {corpus['synthetic']:,} "
        f"synthetic), {corpus['distinct']:,} distinct; {path.stat().st_size / 2**20:.0f} MiB"
    )
    result = {
        "corpus": corpus,
        "threads": threads,
        **run_corpus_job(path, workdir, device, threads, backend, "ours"),
    }
    if reference_backend is not None and "error" not in result:
        reference = run_corpus_job(path, workdir, device, threads, reference_backend, "reference")
        result["reference"] = reference
        if "error" not in reference:
            result["comparison"] = corpus_figure_differences(
                result["figures"], reference["figures"]
            )
    return result


def _corpus_run_row(run: dict) -> tuple:
    backend = run["backend"] or "default"
    used = ", ".join(sorted({f"{b} {p}" for b, p in run.get("provenance", {}).values()}))
    return (
        f"`{backend}`" + (f" ({used})" if used else ""),
        f"{run['wall']:.1f} s",
        f"{run['cpu']:.1f} s",
        _gib(run["peak_rss"]),
        _gib(run["max_rss"]),
        f"{run['others']:.0%}",
        ("**under**" if run["peak_rss"] < CORPUS_RSS_LIMIT else "**over**") + " 4 GiB",
    )


def _run_error(run: dict) -> list[str]:
    return [
        (
            f"**Not measured** (`--backend {run['backend'] or 'default'}`): the job exited with "
            f"{run['returncode']} after {run['wall']:.1f} s:"
        ),
        "",
        "```",
        run["error"],
        "```",
    ]


def render_corpus(result: dict, command: str) -> str:
    corpus = result["corpus"]
    reference = result.get("reference")
    lines = [
        f"## bench_job --corpus-1m: `dialeval evaluate` on a {corpus['responses']:,}-response corpus",
        "",
        (
            f"Corpus: {corpus['responses']:,} responses, one per line: every DailyDialog++ response ({corpus['dailydialog']:,}, "
            f"file order) then `bench_lexical.synthetic_corpus({corpus['synthetic']:,}, seed=0)`; **{corpus['distinct']:,} "
            f"distinct texts**. Command: `dialeval {result['command']}` (one run"
            + (
                f"; then the same with `--backend {reference['backend']}`, the reference, on the same corpus and machine)."
                if reference
                else ")."
            )
        ),
        "",
    ]
    if "error" in result:
        lines += _run_error(result)
    else:
        runs = [result] + ([reference] if reference and "error" not in reference else [])
        half = CORPUS_BASELINE_SECONDS / 2
        time_verdict = "**met**" if result["wall"] < half else "**not met**"
        lines += [
            *markdown_table(
                (
                    "backend (provenance)",
                    "wall",
                    "CPU",
                    "peak RSS (process tree)",
                    "largest single process",
                    "others' CPU",
                    "issue's limit",
                ),
                "lrrrrrl",
                [_corpus_run_row(run) for run in runs],
            ),
            "",
            f"Report: `num_responses` {result['num_responses']:,}; "
            + "; ".join(
                f"{name}: "
                + ", ".join(
                    f"{key} {value:,}" if isinstance(value, int) else f"{key} {value:.4g}"
                    for key, value in figures.items()
                    if key != "num_responses"
                )
                for name, figures in result["figures"].items()
            )
            + (f"; skipped: {result['skipped']}" if result["skipped"] else "")
            + ".",
            "",
            (
                f"Goal: less than half of the {CORPUS_BASELINE_SECONDS:,.0f} s measured before the "
                f"runtime backends ({half:,.0f} s, on another machine), under 4 GiB: {time_verdict} "
                f"({result['wall']:.0f} s, {_gib(result['peak_rss'])})."
            ),
        ]
        if reference and "error" in reference:
            lines += ["", *_run_error(reference)]
        elif reference:
            comparison = result["comparison"]
            equal = all(row["equal"] for row in comparison)
            largest = max(
                (row["difference"] for row in comparison if row["difference"] is not None),
                default=0.0,
            )
            ratio = result["wall"] / reference["wall"]
            lines += [
                "",
                (
                    f"Same machine: ours / `--backend {reference['backend']}` = {ratio:.2f} "
                    f"(**{1 / ratio:.2f}x**); half of the reference's time: "
                    + ("**met**" if ratio < 0.5 else "**not met**")
                    + f". Figures: {len(comparison)} compared, "
                    + ("all equal" if equal else "**some differ**")
                    + f" (largest relative difference {largest:.1e}; Vendi within "
                    f"{CORPUS_TOLERANCES['vendi_score']:.0e}, the others exact)."
                ),
            ]
    lines += [
        "",
        f"- Date: {datetime.date.today().isoformat()}; command: `{command}`",
        machine_line(),
        f"- Versions: {versions()}",
        (
            "- Peak RSS: the larger of psutil's sum over the process tree (polled every 0.1 s) and `wait4`'s "
            "`ru_maxrss`; threads: "
            + (f"`--threads {result['threads']}`" if result["threads"] else "default")
            + "."
        ),
    ]
    return section_text(CORPUS_SCRIPT, lines)


# ---------------------------------------------------------------- main


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"sizes {SMOKE_SIZES}, one round, no warm-up; not a measurement",
    )
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=None, help=f"responses per size (default {SIZES})"
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=None,
        help=f"interleaved rounds per size (default {REPEATS}; smoke 1)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="OMP / MKL / OpenBLAS threads of both sides (default: the cores)",
    )
    parser.add_argument(
        "--device",
        default=None,
        help="both sides' torch device (default: ours Accelerate's choice, the peers' "
        "sentence-transformers' choice)",
    )
    parser.add_argument(
        "--corpus-1m",
        action="store_true",
        help="measure the corpus job instead (see the docstring)",
    )
    parser.add_argument(
        "--corpus-size",
        type=int,
        default=CORPUS_SIZE,
        help=f"responses of --corpus-1m (default {CORPUS_SIZE:,})",
    )
    parser.add_argument(
        "--corpus-reference-backend",
        default=None,
        help="with --corpus-1m: then run the same job with this --backend (e.g. torch) on the same "
        "machine and report the ratio",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="where the inputs and outputs go (default: a temporary folder)",
    )
    parser.add_argument(
        "--backend",
        default=None,
        help="ours' --backend (torch, onnx, openvino; default: dialeval's own default)",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the raw numbers here")
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help="Markdown file to update (default RESULTS.md; smoke: a temp file)",
    )
    args = parser.parse_args(argv)
    set_offline_environment()  # for both sides' processes, which inherit it
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be positive")
    if args.corpus_reference_backend is not None and not args.corpus_1m:
        parser.error("--corpus-reference-backend needs --corpus-1m")
    if not DAILYDIALOG.exists():
        print(
            f"{SCRIPT}: {DAILYDIALOG} not found (DailyDialog++ lives in ../shared/data); nothing measured"
        )
        return 0
    sizes = sorted(args.sizes or (SMOKE_SIZES if args.smoke else SIZES))
    repeats = args.repeats or (1 if args.smoke else REPEATS)
    results = args.results or (
        Path(tempfile.gettempdir()) / f"{SCRIPT}_smoke.md" if args.smoke else RESULTS_PATH
    )
    command = ".venv/bin/python benchmarks/bench_job.py " + shlex.join(
        argv if argv is not None else sys.argv[1:]
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"{SCRIPT}_", dir=args.workdir) as workdir:
        if args.corpus_1m:
            result = measure_corpus(
                args.corpus_size,
                Path(workdir),
                args.device,
                args.threads,
                args.backend,
                args.corpus_reference_backend,
            )
            write_section(results, CORPUS_SCRIPT, render_corpus(result, command.strip()))
            failed = "error" in result or "error" in result.get("reference", {})
            failed = failed or not all(row["equal"] for row in result.get("comparison", []))
            print(render_corpus(result, command.strip()))
        else:
            result = measure(
                sizes,
                repeats,
                Path(workdir),
                args.device,
                args.threads,
                warmup=not args.smoke,
                backend=args.backend,
            )
            write_section(results, SCRIPT, render(result, command.strip()))
            print("\n".join(render_rows(result)))
            failed = not all(row["equal"] for row in result["rows"])
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(f"wrote {results} after {time.perf_counter() - started:.0f} s")
    if failed:
        print(
            "ERROR: "
            + (
                "the corpus job failed or its figures differ between the backends"
                if args.corpus_1m
                else "the figures differ (see the table)"
            ),
            file=sys.stderr,
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
