"""What ``--ci`` costs: ``dialeval evaluate`` over 10 systems of 10,000 responses, with and
without intervals and paired tests (1,000 resamples).

Both runs are the same command line, as a user runs it, each in a fresh process: ``dialeval
evaluate S0.jsonl ... S9.jsonl -o cmp.json --no-progress`` with the three large models off
(``--nli-model none --bertscore-model none --cross-encoder-model none
--homogenization-model none``: they are not on the 2-core machine) and ``--metric`` naming
``bench_job.STEPS``, the whole job as ``bench_job.py`` measures it against the peers' script
(set-level distinct-n and n-gram cosine, corpus Dist-n / Ent-n / LF, sent-BERT and Vendi on the
embedded all-MiniLM-L6-v2); the other adds ``--ci --num-resamples 1000``. The runs alternate (``--repeats`` rounds, default 1:
a run is minutes long; the order rotated each round; ``--warm-up`` adds an untimed first round);
medians reported, with each run's CPU time and peak memory (``_report.run_process_tree``).

Data: ``bench_job.draw_sets`` (DailyDialog++ responses in sets of 10), 10,000 sets cut into 10
systems of 1,000 sets; each system's sets carry the ids 0..999, so the systems are paired by id
(the paired tests run, the costlier path).

Checks before a time counts: the two runs' point figures are equal (every summary figure of every
system's report, exactly: ``--ci`` adds intervals, it changes no figure), every summary figure of
the ``--ci`` run has an interval entry, and the comparison holds a test per figure and system.

Target: ``--ci`` adds at most ``TARGET_OVERHEAD`` (25%) to the job's wall time. Written to
``benchmarks/RESULTS.md`` between ``<!-- bench_ci_cost:start -->`` and ``<!-- bench_ci_cost:end
-->``.

Usage::

    .venv/bin/python benchmarks/bench_ci_cost.py               # 10 x 10,000 responses, 1 round
    .venv/bin/python benchmarks/bench_ci_cost.py --smoke       # 3 x 200 responses; not a measurement
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from _report import (
    DAILYDIALOG,
    RESULTS_PATH,
    Contention,
    details_head,
    log,
    markdown_table,
    package_versions,
    run_process_tree,
    section_text,
    set_offline_environment,
    write_section,
)
from bench_job import MODELS_OFF as JOB_MODELS_OFF
from bench_job import SET_SIZE, STEPS, dialeval_command, draw_sets

SCRIPT = "bench_ci_cost"
NUM_SYSTEMS = 10
RESPONSES_PER_SYSTEM = 10_000
RESAMPLES = 1000
REPEATS = 1
TARGET_OVERHEAD = 0.25
MODELS_OFF = (*JOB_MODELS_OFF, "--homogenization-model", "none")


def write_systems(folder: Path, num_systems: int, responses_per_system: int) -> list[Path]:
    """``num_systems`` files of ``responses_per_system / SET_SIZE`` sets each, ids 0.. in every
    file (the systems answer the same contexts)."""
    per_system = responses_per_system // SET_SIZE
    sets = draw_sets(num_systems * responses_per_system)
    paths = []
    for system in range(num_systems):
        path = folder / f"S{system}.jsonl"
        chunk = sets[system * per_system : (system + 1) * per_system]
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(
                json.dumps({"id": index, "responses": responses}) + "\n"
                for index, responses in enumerate(chunk)
            )
        paths.append(path)
    return paths


def command(paths: list[Path], output: Path, ci: bool, resamples: int) -> list[str]:
    argv = [*dialeval_command(), "evaluate", *map(str, paths), "-o", str(output)]
    argv += ["--no-progress", *MODELS_OFF]
    argv += [flag for step in STEPS for flag in ("--metric", step)]
    return argv + (["--ci", "--num-resamples", str(resamples)] if ci else [])


def _figures(output: Path) -> dict:
    """system -> metric -> summary, without the intervals, from the reports beside ``output``."""
    figures = {}
    for row in json.loads(output.read_text(encoding="utf-8"))["systems"]:
        report = json.loads(Path(row["report"]).read_text(encoding="utf-8"))
        figures[row["system"]] = {
            name: {key: value for key, value in summary.items() if key != "intervals"}
            for name, summary in report["metrics"].items()
        }
    return figures


def check_equal(plain: Path, with_ci: Path) -> list[str]:
    """What differs between the two runs' point figures, and what the --ci run lacks."""
    problems = []
    if _figures(plain) != _figures(with_ci):
        problems.append("a point figure differs between the runs with and without --ci")
    comparison = json.loads(with_ci.read_text(encoding="utf-8"))
    if not comparison.get("differences"):
        problems.append("the --ci comparison holds no test")
    for row in comparison["systems"]:
        report = json.loads(Path(row["report"]).read_text(encoding="utf-8"))
        for name, summary in report["metrics"].items():
            if "intervals" not in summary:
                problems.append(f"{row['system']}: {name} has no interval")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--smoke", action="store_true", help="3 systems x 200 responses")
    parser.add_argument("--warm-up", action="store_true", help="an untimed first round")
    args = parser.parse_args()
    if not DAILYDIALOG.exists():
        raise SystemExit(f"no DailyDialog++ release at {DAILYDIALOG}: see its SOURCE.md")
    set_offline_environment()
    num_systems, size = (3, 200) if args.smoke else (NUM_SYSTEMS, RESPONSES_PER_SYSTEM)
    resamples = 100 if args.smoke else RESAMPLES
    runs: dict[bool, list] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as folder, Contention() as contention:
        work = Path(folder)
        paths = write_systems(work, num_systems, size)
        outputs = {}
        first = 0 if args.warm_up else 1
        for round_index in range(first, args.repeats + 1):
            order = (False, True) if round_index % 2 == 0 else (True, False)
            for ci in order:
                output = work / f"cmp-{int(ci)}-{round_index}.json"
                run = run_process_tree(
                    command(paths, output, ci, resamples), log_path=output.with_suffix(".log")
                )
                if run.returncode != 0:
                    raise SystemExit(f"exit {run.returncode}:\n{run.log_tail}")
                label = "--ci" if ci else "plain"
                log(f"round {round_index}: {label} {run.wall:.1f} s wall, {run.cpu:.1f} s CPU")
                if round_index:  # the first round warms the file cache
                    runs[ci].append(run)
                outputs[ci] = output
        problems = check_equal(outputs[False], outputs[True])
    plain = statistics.median(run.wall for run in runs[False])
    with_ci = statistics.median(run.wall for run in runs[True])
    overhead = with_ci / plain - 1
    meets = overhead <= TARGET_OVERHEAD and not problems
    rows = [
        [
            label,
            f"{statistics.median(run.wall for run in runs[ci]):.1f} s",
            f"{statistics.median(run.cpu for run in runs[ci]):.1f} s",
            f"{max(run.peak_rss for run in runs[ci]) / 2**20:,.0f} MiB",
        ]
        for label, ci in (("without --ci", False), (f"--ci --num-resamples {resamples}", True))
    ]
    lines = [
        "## bench_ci_cost: what `--ci` adds to the job",
        "",
        (
            f"`dialeval evaluate` over {num_systems} systems x {size:,} responses (sets of "
            f"{SET_SIZE}, paired by id), the whole job as bench_job measures it "
            f"({', '.join(STEPS)}), median of {args.repeats} alternating runs."
        ),
        "",
        *markdown_table(["run", "wall", "CPU", "peak RSS (process tree)"], "lrrr", rows),
        "",
        (
            f"**--ci adds {overhead:+.1%}** to the wall time (target: at most "
            f"{TARGET_OVERHEAD:.0%}): {'met' if meets else 'NOT met'}. Point figures equal between "
            f"the runs: {'yes' if not problems else 'NO: ' + '; '.join(problems)}."
        ),
        "",
        *details_head(f"benchmarks/bench_ci_cost.py{' --smoke' if args.smoke else ''}"),
        f"- Packages: {package_versions(['numpy', 'scipy', 'torch'])}",
        f"- Other processes took {contention.share:.0%} of the CPU meanwhile.",
    ]
    section = section_text(SCRIPT, lines)
    if not args.smoke:
        write_section(RESULTS_PATH, SCRIPT, section)
    print(section)
    return 0 if meets else 1


if __name__ == "__main__":
    raise SystemExit(main())
