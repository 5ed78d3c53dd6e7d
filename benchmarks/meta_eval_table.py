"""Which diversity measure should a user trust? Every registered per-set measure, meta-evaluated.

Runs ``dialeval meta-eval``'s own code (:func:`dialeval.cli.meta_eval_job.run_meta_eval`) with
every measure of the metric registry (``dialeval meta-eval --metric NAME`` names: the papers', the
``diversity`` package's, EAD) on Tevet & Berant's decTest (1,000 sets a task; Spearman's rho with
the sampling temperature, and its mean over 100 random 200-set subsets, Table 2), conTest (rho
with the content-diversity class and OCA, Table 4) and McDiv (the same, Tables 8-10), for the three
tasks, and writes one table per test into benchmarks/RESULTS.md (section ``meta_eval_table``) and
every figure as JSON.

Models: a model-backed measure runs on its default model when that is on this machine, else on
the embedded all-MiniLM-L6-v2 where it takes any encoder (sentence embeddings; BERTScore's token
embeddings); a measure with neither (NLI, the STS cross-encoder: no embedded model) and the
part-of-speech templates without a tagger installed are listed as skipped with the reason.

rho is given in the diversity reading: a homogeneity measure (``SetScorer.more_is_diverse``
False: compression ratio, homogenization, self-repetition) is negated, so that for every row a
higher rho is better; OCA does not depend on the direction.

Command (the one that rebuilds the tables; 7.5 minutes on 2 idle cores, measured 2026-11-26)::

    .venv/bin/python benchmarks/meta_eval_table.py --data-dir ../shared/data/tevet-diversity-eval

``--tests`` / ``--tasks`` / ``--metrics`` narrow a run (then ``--results`` elsewhere to keep the
published tables whole); ``--merge`` adds a run's tables to those of the JSON already written.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _report

_report.set_offline_environment()

from dialeval.cli.meta_eval_job import DISPLAY_NAMES, TESTS, MetaEvalOptions, run_meta_eval
from dialeval.hub import EMBEDDED_SENTENCE_MODEL, ModelNotAvailableError, resolve_model_path
from dialeval.metrics.registry import SET_SCORERS

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
DEFAULT_TESTS = ("dectest", "contest", "mcdiv", "mcdiv_nuggets")
TASKS = ("story", "resp", "prompt")
#: The model flags whose measures take any encoder, so the embedded MiniLM can stand in.
ANY_ENCODER_FLAGS = ("--sentence-model", "--bertscore-model", "--homogenization-model")
HUMAN_ROW = "absHDS"


def _available(model: str) -> bool:
    try:
        resolve_model_path(model)
    except ModelNotAvailableError:
        return False
    return True


def metric_specs(names) -> tuple[list[str], dict[str, str]]:
    """``NAME[=MODEL]`` for every measure that can run here, and the reason for each that cannot."""
    specs, skipped = [], {}
    for name in names:
        scorer = SET_SCORERS[name]
        if not scorer.needs_model or _available(scorer.default_model):
            specs.append(name)
        elif scorer.model_flag in ANY_ENCODER_FLAGS:
            specs.append(f"{name}={EMBEDDED_SENTENCE_MODEL}")
        else:
            skipped[name] = (
                f"its model {scorer.default_model} is not on this machine and no embedded model can stand in"
            )
    return specs, skipped


def _diversity_sign(label: str) -> int:
    name = label.split("[", 1)[0]
    return -1 if name in SET_SCORERS and not SET_SCORERS[name].more_is_diverse else 1


def run(tests, tasks, metrics, data_dir: str | None) -> dict:
    specs, skipped = metric_specs(metrics)
    options = MetaEvalOptions(data_dir=data_dir, progress=False)
    figures: dict = {"specs": specs, "skipped": dict(skipped), "tables": {}}
    for test in tests:
        for task in tasks:
            started = time.perf_counter()
            report = run_meta_eval(specs, test, task, options)
            _report.log(
                f"{test} {task}: {time.perf_counter() - started:.0f} s, {len(report.rows)} rows"
            )
            for entry in report.skipped:  # e.g. a tagger that is not installed
                figures["skipped"].setdefault(
                    entry["metric"].split("[", 1)[0].split("=", 1)[0], entry["reason"]
                )
            figures["tables"][f"{test}/{task}"] = {
                "config": report.config,
                "binary": report.binary,
                "rows": {
                    row.label: {**row.result, "diversity_sign": _diversity_sign(row.label)}
                    for row in report.rows
                },
            }
    return figures


def _cell(result: dict, binary: bool) -> str:
    # a measure constant over the sets: its undefined_reason is in the JSON
    if result["spearman"] is None:
        return "undefined" + (f" / {result['oca']:.3f}" if binary else "")
    rho = result["spearman"] * result["diversity_sign"]
    if binary:
        return f"{rho:.3f} / {result['oca']:.3f}"
    if result["spearman_subsets_mean"] is None:
        return f"{rho:.3f} (undefined)"
    return f"{rho:.3f} ({result['spearman_subsets_mean'] * result['diversity_sign']:.3f})"


def _mean_cell(rows: list[dict | None], binary: bool) -> str:
    """The mean over the tasks of the row's figures (blank unless every task has them)."""
    if not rows or any(row is None or row["spearman"] is None for row in rows):
        return ""
    rho = sum(row["spearman"] * row["diversity_sign"] for row in rows) / len(rows)
    if binary:
        return f"{rho:.3f} / {sum(row['oca'] for row in rows) / len(rows):.3f}"
    return f"{rho:.3f}"


def markdown(figures: dict, tests, tasks, command: str) -> str:
    start, end = _report.section_markers("meta_eval_table")
    lines = [
        start,
        "## meta_eval_table: which diversity measure should a user trust?",
        "",
        (
            "Every measure of the metric registry, meta-evaluated by `dialeval meta-eval`'s own code on Tevet & "
            "Berant's released test sets (per task: story, resp, prompt). decTest: Spearman's rho with the sampling "
            "temperature over all sets, and in brackets its mean over 100 random 200-set subsets (the paper's Table 2 "
            "protocol). conTest and McDiv: rho with the content-diversity class / OCA. rho is in the diversity "
            "reading: homogeneity measures (marked †) are negated, so higher is better on every row. "
            f"{HUMAN_ROW} is the human score where the test has one (its rated subset). Models: "
            "model-backed measures run on the embedded all-MiniLM-L6-v2 (`=MODEL` in the row name) unless their "
            "default model is on the machine."
        ),
        "",
    ]
    for test in tests:
        binary = TESTS[test].binary
        present = [task for task in tasks if f"{test}/{task}" in figures["tables"]]
        if not present:
            continue
        labels = list(
            dict.fromkeys(
                label for task in present for label in figures["tables"][f"{test}/{task}"]["rows"]
            )
        )
        configs = ", ".join(figures["tables"][f"{test}/{task}"]["config"] for task in present)
        what = "rho / OCA" if binary else "rho (200-subset mean)"
        table_rows = []
        for label in labels:
            rows = [figures["tables"][f"{test}/{task}"]["rows"].get(label) for task in present]
            cells = [_cell(row, binary) if row else "" for row in rows]
            mark = " †" if _diversity_sign(label) < 0 else ""
            table_rows.append((f"`{label}`{mark}", *cells, _mean_cell(rows, binary)))
        lines += [
            f"### {DISPLAY_NAMES[test]} ({configs}): {what}",
            "",
            *_report.markdown_table(
                ("measure", *(f"{task}Gen" for task in present), "mean"),
                "l" + "r" * (len(present) + 1),
                table_rows,
            ),
            "",
        ]
    if figures["skipped"]:
        lines += ["Not in the tables:", ""]
        lines += [f"- `{name}`: {reason}" for name, reason in sorted(figures["skipped"].items())]
        lines.append("")
    lines += _report.details_head(command)
    lines += [
        f"- Versions: {_report.package_versions(['torch', 'transformers', 'sentence-transformers', 'scipy'])}",
        f"- Figures as JSON: `{figures.get('json_path', '')}`",
        "",
        end,
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir",
        default=None,
        help="folder with Tevet & Berant's released CSVs (raw/, with_metrics/)",
    )
    parser.add_argument("--tests", nargs="+", default=list(DEFAULT_TESTS), choices=sorted(TESTS))
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    parser.add_argument(
        "--metrics", nargs="+", default=list(SET_SCORERS), choices=sorted(SET_SCORERS)
    )
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument(
        "--json",
        type=Path,
        default=Path(__file__).resolve().parent / "meta_eval_runs" / "meta_eval_table.json",
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="add this run's tables to those already in --json (e.g. one more test) instead of replacing them",
    )
    args = parser.parse_args(argv)
    figures = run(args.tests, args.tasks, args.metrics, args.data_dir)
    if args.merge and args.json.exists():
        earlier = json.loads(args.json.read_text(encoding="utf-8"))
        figures["tables"] = {**earlier["tables"], **figures["tables"]}
        figures["skipped"] = {**earlier["skipped"], **figures["skipped"]}
        figures["specs"] = list(dict.fromkeys([*earlier["specs"], *figures["specs"]]))
        tested = {key.split("/")[0] for key in figures["tables"]}
        args.tests = [test for test in DEFAULT_TESTS if test in tested] + sorted(
            tested - set(DEFAULT_TESTS)
        )
        args.tasks = list(TASKS)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(figures, indent=1, sort_keys=True), encoding="utf-8")
    figures["json_path"] = (
        str(args.json.relative_to(Path(__file__).resolve().parent.parent))
        if args.json.is_relative_to(Path(__file__).resolve().parent.parent)
        else str(args.json)
    )
    command = "python benchmarks/meta_eval_table.py" + "".join(
        f" {arg}" for arg in (argv if argv is not None else sys.argv[1:])
    )
    _report.write_section(
        args.results, "meta_eval_table", markdown(figures, args.tests, args.tasks, command)
    )
    print(markdown(figures, args.tests, args.tasks, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
