"""``dialeval evaluate`` as a command: its files, kept safe, around the job of :mod:`.evaluate_job`.

Before anything runs: every input is opened (format, columns, split, Hub cache), every output is
planned (:func:`~dialeval.cli.report_formats.plan_outputs`, :func:`planned_outputs`), an output
that is also an input is refused, so is one over a file dialeval did not write (unless
``--overwrite``; :func:`~dialeval.cli.safe_output.check_outputs`), and each system's report is
locked (``REPORT.lock``). Then each system (one per input)
runs the job, checkpointing each finished step beside its report (``REPORT.partial/``, for
``--resume``), in one store of model outputs, so that a text several systems share is encoded
once. Reports are written whole (temporary file + rename); the checkpoints are removed when every
report is written. Ctrl-C or SIGTERM stops with a line saying what was kept.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

from dialeval.cli.checkpoints import (
    CheckpointsInTheWay,
    checkpoint_folder,
    is_checkpoint_folder,
    open_checkpoints,
    resume_note,
    run_identity,
)
from dialeval.cli.commands import EvaluateCommand
from dialeval.cli.compare import (
    PLOT_FILE,
    figure_columns,
    systems_from_inputs,
    write_run_outputs,
)
from dialeval.cli.evaluate_job import (
    EvaluationOptions,
    evaluate_corpus,
    format_table,
    models_used,
    planned_steps,
)
from dialeval.cli.options import build, flag_names, used_options
from dialeval.cli.provenance import format_provenance, provenance
from dialeval.cli.report_formats import (
    format_per_set_table,
    format_report,
    plan_outputs,
    write_text,
)
from dialeval.cli.safe_output import (
    Interrupted,
    PlannedOutput,
    check_outputs,
    held_output,
    refuse_outputs_over_inputs,
)
from dialeval.cli.set_insights import format_agreement, format_drill_down
from dialeval.cli.significance import (
    check_baseline,
    compare_systems,
    match_sets,
    pairing_refused,
)
from dialeval.distributed import end_processes, process_state, split_work
from dialeval.io import open_input
from dialeval.metrics.engines.metric_spec import SystemReport
from dialeval.metrics.engines.shared_outputs import shared_model_outputs
from dialeval.metrics.registry import OUTPUT_HOOKS
from dialeval.option_fields import cli_fields

if TYPE_CHECKING:  # types only
    from dialeval.cli.report_formats import OutputPlan
    from dialeval.io import ResponseSet
    from dialeval.metrics.engines.job_steps import JobStep, Settings


def metric_outputs(
    args: argparse.Namespace, systems: dict[str, str]
) -> list[tuple[str, Path | str]]:
    """``(flag, path)`` of every file the metrics' output hooks may write (their plots, saved
    state), from each metric's spec (:data:`dialeval.metrics.registry.OUTPUT_HOOKS`)."""
    given = vars(args)
    return [entry for hook in OUTPUT_HOOKS for entry in hook.planned(given, list(systems))]


def shared_input_options() -> list[str]:
    """The options that name files every system of a run reads: those a metric's settings mark
    ``reads_path`` (a new metric's file option is protected and hashed without an edit here)."""
    return [field.name for field, cli in cli_fields(EvaluationOptions) if cli.reads_path]


def input_files(args: argparse.Namespace, systems: dict[str, str]) -> list[tuple[str, str | None]]:
    """``(flag, path)`` of every file or folder the command reads."""
    given, flags = vars(args), flag_names(EvaluationOptions)
    return [("INPUT", source) for source in systems.values()] + [
        (flags[name], given.get(name)) for name in shared_input_options()
    ]


def evaluate_files(
    args: argparse.Namespace, systems: dict[str, str], plan: OutputPlan
) -> tuple[list[tuple[str, str | None]], list[tuple[str, Path | str | None]]]:
    """``(flag, path)`` of every file or folder the command reads, and of every file it writes."""
    given = vars(args)
    inputs = input_files(args, systems)
    outputs: list[tuple[str, Path | str | None]] = [
        ("--output", path) for path in plan.reports.values()
    ]
    outputs += [("--output", path) for path in (plan.table, plan.comparison)]
    outputs.append(("--per-set-csv", plan.per_set_csv))
    outputs += [(flag, path) for flag, path in metric_outputs(args, systems) if str(path)]
    if given.get("plot"):
        outputs.append(("--plot", Path(given["plot"]) / PLOT_FILE))
    return inputs, outputs


def planned_outputs(
    args: argparse.Namespace, systems: dict[str, str], plan: OutputPlan
) -> list[PlannedOutput]:
    """Every file the command may write, with the flag that put it there, for
    :func:`~dialeval.cli.safe_output.check_outputs`: reports (named by ``--output``, beside a
    table, or by default beside the input), tables, checkpoint folders, clusters, plots."""
    output = vars(args).get("output")
    planned = []
    for name, report in plan.reports.items():
        if output is None or (output == "-" and str(report) != "-"):
            flag = f"--output (by default, the report of {systems[name]})"
        elif len(systems) > 1:
            flag = f"--output (the report of system {name}, beside the comparison)"
        elif plan.table is not None:
            flag = "--output (the JSON report beside the table)"
        else:
            flag = "--output"
        planned.append(PlannedOutput(flag, report))
        planned.append(
            PlannedOutput(
                f"the checkpoint folder of {flag}",
                checkpoint_folder(plan.anchor(name)),
                recognised=is_checkpoint_folder,
                folder=True,
            )
        )
    planned += [PlannedOutput("--output", path) for path in (plan.table, plan.comparison) if path]
    if plan.per_set_csv is not None:
        planned.append(PlannedOutput("--per-set-csv", plan.per_set_csv))
    _, written = evaluate_files(args, systems, plan)
    reports = {"--output", "--per-set-csv"}  # planned above, with the flags that explain them
    planned += [
        PlannedOutput(flag, path)
        for flag, path in written
        if flag not in reports and path is not None
    ]
    # an empty path, refused by its flag
    planned += [
        PlannedOutput(flag, path) for flag, path in metric_outputs(args, systems) if not str(path)
    ]
    return planned


def _resume_notes(plan: OutputPlan) -> str | None:
    notes = [note for note in (resume_note(plan.anchor(name)) for name in plan.reports) if note]
    return "\n".join(notes) or None


def run_evaluate_command(args: argparse.Namespace) -> int:
    """The ``dialeval evaluate`` command (see the module docstring)."""
    command = build(EvaluateCommand, args)
    systems = systems_from_inputs(
        command.input
    )  # name -> input; one input keeps the single-report behaviour
    check_baseline(
        command.baseline_system, list(systems), bool(vars(args).get("ci")), command.pairing
    )
    # The paths as given first (a report over its input is the error to show, not its suffix), then
    # every planned one.
    refuse_outputs_over_inputs(
        input_files(args, systems),
        [("--output", command.output), ("--per-set-csv", command.per_set_csv)],
    )
    plan = plan_outputs(systems, command.output, command.output_format, command.per_set_csv)
    refuse_outputs_over_inputs(*evaluate_files(args, systems, plan))
    check_outputs(planned_outputs(args, systems, plan), overwrite=command.overwrite)
    with contextlib.ExitStack() as locks:
        for name in plan.reports:
            locks.enter_context(held_output(plan.anchor(name), "dialeval evaluate"))
        try:
            return _run(args, command, systems, plan)
        except Interrupted as stop:
            stop.detail = _resume_notes(plan) or "no metric had finished yet: nothing to resume"
            raise
        except CheckpointsInTheWay:  # its message already says how to go on
            raise
        except (ValueError, OSError) as error:  # the finished steps are kept: say so
            note = _resume_notes(plan)
            if note is None:
                raise
            raise (ValueError if isinstance(error, ValueError) else OSError)(
                f"{error}\n{note}"
            ) from error


def _read_input(
    scope: str, items: Iterable, source: str, allow_empty: bool
) -> list[ResponseSet] | list[str]:
    """A system's input as the job takes it: its response sets, or a corpus's responses (read
    line by line, nothing but the texts kept; a blank line is refused here, by its FILE:LINE,
    unless ``--allow-empty``, since the job is not given each line's place)."""
    if scope == "response_set":
        return list(items)
    responses = []
    for where, text in items:
        if not allow_empty and not text.strip():
            raise ValueError(
                f"{where}: the response is {'empty' if not text else 'white space only'} (a corpus "
                "holds one response per line); pass --allow-empty to score it as a response "
                "without tokens"
            )
        responses.append(text)
    if not responses:
        raise ValueError(f"{source}: no responses found (one response per line)")
    return responses


def _check_metric_outputs(
    args: argparse.Namespace,
    options: Settings,
    num_systems: int,
    planned: list[tuple[JobStep, str | None]],
) -> None:
    """Each metric's output hook refuses a file flag its planned steps cannot serve (``--plot``
    on one input without the metric that draws it), before any step runs."""
    names = [step.name for step, _ in planned]
    for hook in OUTPUT_HOOKS:
        if hook.check is not None:
            hook.check(vars(args), options, names, num_systems)


def _run(
    args: argparse.Namespace, command: EvaluateCommand, systems: dict[str, str], plan: OutputPlan
) -> int:
    # read from evaluate_job at call time: tests stub the job there
    from dialeval.cli.evaluate_job import evaluate_response_sets

    options: Settings = build(EvaluationOptions, args)
    shared_inputs = input_files(args, systems)[len(systems) :]
    # Every input is opened (format, columns, split, Hub cache) before any model runs.
    inputs = {
        name: open_input(source, **command.input_selection()) for name, source in systems.items()
    }
    for (
        scope,
        _,
    ) in inputs.values():  # a --metric that cannot run on one input fails before any system runs
        _check_metric_outputs(args, options, len(systems), planned_steps(scope, options))
    if options.ci and command.pairing == "paired":
        _check_pairing(command, systems)
    reports, checkpoints = {}, []
    # what each system's figures are computed from, kept for the comparison of the systems
    statistics: dict[str, dict] | None = {} if options.ci and len(systems) > 1 else None
    # One store of model outputs for the whole command: a text that several systems share is
    # encoded once, and each model loads once for all of them.
    with shared_model_outputs():
        for name, source in systems.items():
            scope, items = inputs.pop(name)
            data = _read_input(scope, items, source, options.allow_empty)
            # Under `accelerate launch`, every process runs the job on the same input and the
            # model-backed metrics share their pairs / texts among the processes; the main process
            # writes the report.
            with split_work():
                identity = run_identity(
                    {
                        **used_options(args, EvaluateCommand, EvaluationOptions),
                        "input": str(source),
                    },
                    [("input", source), *shared_inputs],
                )
                checkpoint = open_checkpoints(
                    plan.anchor(name),
                    identity,
                    resume=command.resume,
                    num_sets=len(data) if scope == "response_set" else None,
                )
                kept = statistics.setdefault(name, {}) if statistics is not None else None
                if scope == "response_set":
                    report = evaluate_response_sets(
                        cast("list[ResponseSet]", data), options, checkpoint, kept
                    )
                else:
                    report = evaluate_corpus(
                        cast("list[str]", data), options, checkpoint=checkpoint, statistics=kept
                    )
            checkpoints.append(checkpoint)
            del data
            if process_state().is_main_process:
                reports[name] = _write_system(
                    args, command, name, source, report, plan, len(systems)
                )
    if process_state().is_main_process:
        comparison = None
        if statistics is not None:
            comparison = compare_systems(
                reports,
                statistics,
                figure_columns(reports),
                check_baseline(command.baseline_system, list(systems), True, command.pairing),
                command.pairing,
                options,
            )
        # per-set CSV, comparison
        outputs = write_run_outputs(
            reports, plan, command.decimals, command.plot, comparison, _render_page
        )
        for line in outputs:
            print(line, file=_human(plan))
    for checkpoint in checkpoints:
        checkpoint.remove()  # last: a run stopped before this point can still be resumed
    end_processes()
    return 0


def _check_pairing(command: EvaluateCommand, systems: dict[str, str]) -> None:
    """``--pairing paired``: every system's sets match the baseline's, checked on the inputs'
    ids and contexts before any system runs."""
    keys = {}
    for name, source in systems.items():
        scope, items = open_input(source, **command.input_selection())
        rows = (
            [{"id": s.metadata.get("id"), "context": s.context} for s in items]
            if scope == "response_set"
            else []
        )
        keys[name] = {"scope": scope, "per_set": rows}
    baseline = check_baseline(command.baseline_system, list(systems), True, command.pairing)
    for name in systems:
        if name != baseline:
            found = match_sets(keys[name], keys[baseline])
            if isinstance(found, str):
                raise pairing_refused(name, baseline, found)


def _render_page(reports: dict[str, dict], comparison: dict | None) -> str:
    """The HTML page of a run (``-o report.html``)."""
    # the page: matplotlib for its plots, loaded only when a page is asked for
    from dialeval.cli.html_report import render_html_report

    return render_html_report(reports, comparison)


def _human(plan: OutputPlan) -> TextIO:
    """Where the printed tables and notes go: standard error when an output is standard
    output."""
    return sys.stderr if plan.uses_standard_output else sys.stdout


def _write_system(
    args: argparse.Namespace,
    command: EvaluateCommand,
    name: str,
    source: str,
    report: dict,
    plan: OutputPlan,
    num_systems: int,
) -> dict:
    """Write one system's report (and its table) and print it; returns the report."""
    report["input"] = str(source)
    report["provenance"] = (
        provenance(  # each system's report names its own input, as a single run's does
            "evaluate",
            {**used_options(args, EvaluateCommand, EvaluationOptions), "input": str(source)},
            source,
            models_used(report),
        )
    )
    human = _human(plan)
    output = write_text(plan.reports[name], format_report(report, "json"))
    if plan.table is not None and plan.output_format == "html":
        write_text(plan.table, _render_page({name: report}, None))
    elif plan.table is not None:
        write_text(plan.table, format_report(report, plan.output_format, command.decimals))
    if num_systems > 1:
        print(f"== {name}: {source}", file=human)
    if command.per_set and "per_set" in report:
        print(format_per_set_table(report) + "\n", file=human)
        if report.get("drill_down"):
            print(format_drill_down(report["drill_down"]) + "\n", file=human)
    print(format_table(report), file=human)
    if len(report.get("agreement", {}).get("figures", [])) > 1:
        print("\n" + format_agreement(report["agreement"]), file=human)
    print(
        "\n"
        + format_provenance(
            report["provenance"],
            used_options(argparse.Namespace(), EvaluateCommand, EvaluationOptions),
        ),
        file=human,
    )
    written = SystemReport(name, str(source), report, num_systems)
    for hook in OUTPUT_HOOKS:  # each metric's own files (Sem-Ent's plot, ...)
        for line in hook.write(vars(args), written) if hook.write is not None else []:
            print(line, file=human)
    processes = process_state().num_processes
    table = f"; table: {plan.table}" if plan.table is not None else ""
    counts = (
        f"{report['num_sets']} response sets, {report['num_responses']} responses"
        if "num_sets" in report
        else f"a corpus of {report['num_responses']} responses"
    )
    launched = f" ({processes} processes)" if processes > 1 else ""
    print(f"\n{counts}{launched}; report: {output}{table}", file=human)
    return report
