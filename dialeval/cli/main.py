"""``dialeval`` command line: ``evaluate`` (the main job), ``meta-eval``, ``export-dataset``,
``push-metrics``, ``dtg`` and ``dtg-summary``.

Every parser is built from option dataclasses (:mod:`dialeval.cli.options`): the jobs' own
(``EvaluationOptions``, ``MetaEvalOptions``, ``DTGOptions``) and each command's files
(:mod:`dialeval.cli.commands`), so a default is written once, in its field.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from dialeval import __version__
from dialeval.cli.options import add_options, build, flag_names, name_flags
from dialeval.cli.progress import library_progress_bars
from dialeval.cli.reproducibility import request_reproducible_math


def _evaluate(args: argparse.Namespace) -> int:
    # a command's modules load when it runs: --version and --help import no model stack
    from dialeval.cli.evaluate_command import run_evaluate_command

    return run_evaluate_command(args)


def _meta_eval(args: argparse.Namespace) -> int:
    # a command's modules load when it runs: --version and --help import no model stack
    from dialeval.cli.meta_eval_job import (
        MetaEvalOptions,
        format_report,
        report_as_dict,
        run_meta_eval,
    )
    from dialeval.cli.metric_commands import MetaEvalCommand
    from dialeval.cli.plots import PLOT_PATTERNS
    from dialeval.cli.safe_output import (
        PlannedOutput,
        check_outputs,
        refuse_outputs_over_inputs,
        standard_output_named,
        write_report,
    )

    command = build(MetaEvalCommand, args)
    options = build(MetaEvalOptions, args)
    planned = [PlannedOutput("--output", command.output)] if command.output is not None else []
    if command.plot is not None:
        planned += [
            PlannedOutput("--plot", command.plot, pattern=f"{command.test}_{task}_{pattern}")
            for task in command.tasks
            for pattern in PLOT_PATTERNS
        ]
    refuse_outputs_over_inputs(
        [("--data-dir", options.data_dir)], [("--output", command.output)], "--overwrite"
    )
    check_outputs(planned, overwrite=command.overwrite)
    human = sys.stderr if standard_output_named(command.output) else sys.stdout
    reports = []
    for task in command.tasks:
        report = run_meta_eval(command.metrics, command.test, task, options, human=command.human)
        reports.append(report)
        print(format_report(report) + "\n", file=human)
        if command.plot:
            # plots: matplotlib, loaded only when a plot is asked for
            from dialeval.cli.plots import write_plots

            for path in write_plots(report, command.plot):
                print(f"plot: {path}", file=human)
    if command.output:
        write_report(command.output, [report_as_dict(r) for r in reports])
    return 0


def _push_metrics(args: argparse.Namespace) -> int:
    # a command's modules load when it runs: --version and --help import no model stack
    from dialeval.cli.metric_commands import PushMetricsCommand
    from dialeval.cli.push_metrics import planned_folders, run
    from dialeval.cli.safe_output import check_outputs

    command = build(PushMetricsCommand, args)
    if command.to is not None:
        check_outputs(planned_folders(command.to, command.metrics), overwrite=command.overwrite)
    return run(command.namespace, command.to, command.metrics, private=command.private)


def _export_dataset(args: argparse.Namespace) -> int:
    # a command's modules load when it runs: --version and --help import no model stack
    from dialeval.cli.commands import ExportDatasetCommand
    from dialeval.cli.safe_output import PlannedOutput, check_outputs, refuse_outputs_over_inputs
    from dialeval.datasets_scripts import export_dataset
    from dialeval.datasets_scripts.export import CARD_FILE, parquet_pattern

    command = build(ExportDatasetCommand, args)
    refuse_outputs_over_inputs(
        [("--data-dir", command.data_dir)], [("--to", command.to)], "--overwrite"
    )
    check_outputs(
        [
            PlannedOutput("--to", Path(command.to) / CARD_FILE),
            PlannedOutput("--to", command.to, pattern=parquet_pattern()),
        ],
        overwrite=command.overwrite,
    )
    out = export_dataset(
        command.name,
        command.to,
        configs=command.configs,
        data_dir=command.data_dir,
        cache_dir=command.cache_dir,
        verify_checksums=command.verify_checksums,
        push_to_hub=command.push_to_hub,
        private=command.private,
    )
    pushed = (
        f"; pushed to https://huggingface.co/datasets/{command.push_to_hub}"
        if command.push_to_hub
        else ""
    )
    print(f"wrote {out}/README.md and Parquet files" + pushed)
    return 0


def _dtg(args: argparse.Namespace) -> int:
    # a command's modules load when it runs: --version and --help import no model stack
    from dialeval.cli.commands import DTGCommand
    from dialeval.cli.dtg_contexts import read_contexts
    from dialeval.cli.dtg_job import run_dtg_job
    from dialeval.cli.dtg_options import DTGOptions
    from dialeval.cli.dtg_summary import format_summary_table
    from dialeval.cli.dtg_writer import is_dtg_output, settings_path
    from dialeval.cli.safe_output import (
        PlannedOutput,
        check_outputs,
        held_output,
        refuse_outputs_over_inputs,
    )
    from dialeval.distributed import end_processes, process_state

    command = build(DTGCommand, args)
    if command.output in ("", "-"):
        raise ValueError(
            f"--output {command.output!r}: dtg appends to a file it can resume; name a file"
        )
    refuse_outputs_over_inputs(
        [("--input", command.input), ("--data-dir", command.data_dir)],
        [("--output", command.output), ("--output", settings_path(command.output))],
        "--overwrite",
    )
    check_outputs(
        [
            PlannedOutput("--output", command.output, recognised=is_dtg_output),
            PlannedOutput("--output (its OUTPUT.run.json)", settings_path(command.output)),
        ],
        overwrite=command.overwrite,
    )
    settings = build(
        DTGOptions,
        args,
        contexts_from=f"{command.dataset}:{command.split}"
        if command.dataset
        else str(command.input),
    )
    with held_output(command.output, "dialeval dtg"):
        contexts = read_contexts(
            command.dataset,
            command.split,
            command.input,
            data_dir=command.data_dir,
            limit=settings.limit,
            verify_checksums=command.verify_checksums,
        )
        row = run_dtg_job(
            settings,
            contexts,
            command.output,
            overwrite=command.overwrite,
            device=command.device,
            progress=command.progress,
        )
    state = process_state()
    if state.is_main_process:
        print(format_summary_table([row]))
        print(
            f"\n{row['num_contexts']} contexts ({state.num_processes} process(es)); stopped by "
            f"{row['stop_reasons']}; results: {command.output}"
        )
    end_processes()
    return 0


def _dtg_summary(args: argparse.Namespace) -> int:
    # a command's modules load when it runs: --version and --help import no model stack
    from dialeval.cli.commands import DTGSummaryCommand
    from dialeval.cli.dtg_summary import format_summary_table, read_run, summarize
    from dialeval.cli.dtg_writer import settings_path
    from dialeval.cli.safe_output import (
        PlannedOutput,
        check_outputs,
        refuse_outputs_over_inputs,
        standard_output_named,
        write_report,
    )

    command = build(DTGSummaryCommand, args)
    # each run is read with its OUTPUT.run.json beside it: neither may be overwritten by the summary
    runs = [("RUN", run) for run in command.runs] + [
        ("RUN's settings", settings_path(run)) for run in command.runs
    ]
    refuse_outputs_over_inputs(runs, [("--output", command.output)])
    if command.output is not None:
        check_outputs([PlannedOutput("--output", command.output)], overwrite=command.overwrite)
    rows = [
        summarize(*read_run(path), bertscore_model=command.bertscore_model, device=command.device)
        for path in command.runs
    ]
    human = sys.stderr if standard_output_named(command.output) else sys.stdout
    print(format_summary_table(rows), file=human)
    if command.output:
        write_report(command.output, rows)
    return 0


# A command's options, imported when that command is parsed: each job's options read the metric
# registry or a model stack, which `dialeval --version` and `dialeval --help` never need.
def _evaluate_options() -> tuple[type, ...]:
    # loaded when this command is parsed: `dialeval --version` and `--help` skip it
    from dialeval.cli.commands import EvaluateCommand
    from dialeval.cli.evaluate_options import EvaluationOptions

    return (EvaluateCommand, EvaluationOptions)


def _meta_eval_options() -> tuple[type, ...]:
    # loaded when this command is parsed: `dialeval --version` and `--help` skip it
    from dialeval.cli.meta_eval_job import MetaEvalOptions
    from dialeval.cli.metric_commands import MetaEvalCommand

    return (MetaEvalCommand, MetaEvalOptions)


def _export_dataset_options() -> tuple[type, ...]:
    # loaded when this command is parsed: `dialeval --version` and `--help` skip it
    from dialeval.cli.commands import ExportDatasetCommand

    return (ExportDatasetCommand,)


def _push_metrics_options() -> tuple[type, ...]:
    # loaded when this command is parsed: `dialeval --version` and `--help` skip it
    from dialeval.cli.metric_commands import PushMetricsCommand

    return (PushMetricsCommand,)


def _dtg_options() -> tuple[type, ...]:
    # loaded when this command is parsed: `dialeval --version` and `--help` skip it
    from dialeval.cli.commands import DTGCommand
    from dialeval.cli.dtg_options import DTGOptions

    return (DTGOptions, DTGCommand)


def _dtg_summary_options() -> tuple[type, ...]:
    # loaded when this command is parsed: `dialeval --version` and `--help` skip it
    from dialeval.cli.commands import DTGSummaryCommand

    return (DTGSummaryCommand,)


Handler = Callable[[argparse.Namespace], int]

#: Each command: its name, its line in `dialeval --help`, its handler and its option classes.
COMMANDS: tuple[tuple[str, str, Handler, Callable[[], tuple[type, ...]]], ...] = (
    (
        "evaluate",
        "score a file of response sets with every metric available offline",
        _evaluate,
        _evaluate_options,
    ),
    (
        "meta-eval",
        "how well diversity metrics track diversity on Tevet & Berant's decTest / conTest / McDiv",
        _meta_eval,
        _meta_eval_options,
    ),
    (
        "export-dataset",
        "write a test set as Parquet + dataset card (and push it to the Hub)",
        _export_dataset,
        _export_dataset_options,
    ),
    (
        "push-metrics",
        "upload the evaluate modules as Hugging Face Spaces (or write their folders)",
        _push_metrics,
        _push_metrics_options,
    ),
    (
        "dtg",
        (
            "Diversity Threshold Generation over a test set (JSONL, resumable; runs under "
            "accelerate launch)"
        ),
        _dtg,
        _dtg_options,
    ),
    (
        "dtg-summary",
        "Table 4 of one or more `dialeval dtg` outputs",
        _dtg_summary,
        _dtg_summary_options,
    ),
)


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The ``dialeval`` parser; only the ``commands`` named (every one when None) get their
    options, the others are listed by name and help line alone."""
    parser = argparse.ArgumentParser(
        prog="dialeval", description="Diversity evaluation of multi-response dialogue generation."
    )
    parser.add_argument("--version", action="version", version=f"dialeval {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name, help_line, handler, option_classes in COMMANDS:
        command_parser = subparsers.add_parser(name, help=help_line)
        if commands is not None and name not in commands:
            continue
        classes = option_classes()
        for cls in classes:
            add_options(command_parser, cls)
        command_parser.set_defaults(
            handler=handler, option_classes=classes, command_parser=command_parser
        )
    return parser


def _command_named(argv: Sequence[str]) -> set[str]:
    """The command ``argv`` names (the top-level parser has options only before it): the one
    whose options the parser needs."""
    return {next((arg for arg in argv if not arg.startswith("-")), "")}


def main(argv: list[str] | None = None) -> int:
    # Before any model runs (oneMKL reads it once): a batch gives the same bits in every process.
    request_reproducible_math()
    arguments = sys.argv[1:] if argv is None else list(argv)
    args, unknown = build_parser(_command_named(arguments)).parse_known_args(arguments)
    command_parser = vars(args).pop("command_parser")
    # argparse reports them with the top-level usage; the command's own usage lists its flags
    if unknown:
        command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    # imported once a command runs: --version and --help have exited above
    from dialeval.cli.safe_output import Interrupted, stop_signals_raise

    try:
        # The line is printed while the stop handlers are still in place: a second signal meanwhile
        # is absorbed, and the process exits with 128 + signal, not by the signal.
        with stop_signals_raise():
            try:
                with library_progress_bars(vars(args).get("progress", True)):
                    return args.handler(args)
            except Interrupted as stop:  # Ctrl-C or SIGTERM: what was kept, how to go on
                print(
                    f"dialeval {args.command}: interrupted by {stop.signal_name}"
                    + (f"; {stop.detail}" if stop.detail else ""),
                    file=sys.stderr,
                )
                return stop.exit_code
    except (
        ValueError,
        OSError,
    ) as error:  # bad input, a missing model or data file: a message, not a traceback
        # The jobs name their Python arguments; the user typed flags.
        message = name_flags(error, flag_names(*args.option_classes))
        print(f"dialeval {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
