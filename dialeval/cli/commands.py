"""What each command reads and writes: the command-line options that are not the job's own.

The jobs' options live with the jobs (:class:`~dialeval.cli.evaluate_options.EvaluationOptions`,
:class:`~dialeval.cli.meta_eval_job.MetaEvalOptions`,
:class:`~dialeval.cli.dtg_options.DTGOptions`); these dataclasses hold the rest of each
command line (input and output files, what to print), spelled with the same
:func:`~dialeval.cli.options.option` metadata, so ``main.py`` builds every parser from fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dialeval.cli.options import option
from dialeval.cli.report_formats import DEFAULT_DECIMALS, OUTPUT_FORMATS, check_decimals
from dialeval.cli.significance import PAIRINGS
from dialeval.datasets_scripts.registry import BUILDERS
from dialeval.io import INPUT_FORMATS
from dialeval.metrics.registry import OUTPUT_HOOKS
from dialeval.validation import ArgumentError


def overwrite_field() -> bool:
    """``--overwrite`` of a command that writes files: without it,
    :func:`dialeval.cli.safe_output.check_outputs` refuses files dialeval did not write."""
    return field(
        default=False,
        metadata=option(
            "--overwrite",
            help="replace existing files at the output paths that dialeval did not write "
            "(its own outputs are replaced without it)",
        ),
    )


@dataclass(kw_only=True)
class EvaluateCommand:
    input: list[str] = field(
        metadata=option(
            metavar="input",
            nargs="+",
            help='response sets: JSONL ({"context": ..., "responses": [...]} per line), a .json '
            "array of them, a Tevet & Berant CSV, Parquet, a datasets folder or Hub dataset id; "
            "several inputs (one per system, NAME=INPUT to name one) give one table with a row per "
            "system",
        )
    )
    format: str = field(
        default="auto",
        metadata=option(
            "--format",
            choices=("auto", *INPUT_FORMATS),
            aliases=("file_format",),
            help="the input's format (auto: by its suffix; a folder or Hub id is a dataset; "
            ".txt is lines, one response per line)",
        ),
    )
    responses_column: str = field(
        default="responses",
        metadata=option(
            "--responses-column",
            metavar="NAME",
            help="the key / column holding each set's responses",
        ),
    )
    context_column: str = field(
        default="context",
        metadata=option(
            "--context-column", metavar="NAME", help="the key / column holding each set's context"
        ),
    )
    split: str | None = field(
        default=None,
        metadata=option(
            "--split",
            help="the split of a datasets folder or Hub dataset (needed when it has several)",
        ),
    )
    dataset_config: str | None = field(
        default=None,
        metadata=option(
            "--dataset-config",
            metavar="NAME",
            help="the configuration of a Hub dataset or data-files folder",
        ),
    )
    output: str | None = field(
        default=None,
        metadata=option(
            "--output",
            "-o",
            help="the report: .json (the full report), .csv, .md or .tex (the summary table, with "
            "the JSON report beside it); with several inputs, the comparison table (each system's "
            "report beside it as STEM.NAME.json); - for standard output (default: INPUT with "
            "suffix .diversity.json)",
        ),
    )
    output_format: str | None = field(
        default=None,
        metadata=option(
            "--output-format",
            choices=OUTPUT_FORMATS,
            help="the format of --output when its suffix does not say it",
        ),
    )
    per_set_csv: str | None = field(
        default=None,
        metadata=option(
            "--per-set-csv",
            metavar="FILE.csv",
            help="also write one row per response set (id, where, context, fields, every per-set "
            "figure; with several inputs a system column first)",
        ),
    )
    decimals: int = field(
        default=DEFAULT_DECIMALS,
        metadata=option(
            "--decimals",
            metavar="N",
            help="decimals of the numbers in CSV, Markdown and LaTeX tables",
        ),
    )
    plot: str | None = field(
        default=None,
        metadata=option(
            "--plot",
            metavar="DIR",
            help="write "
            + "; ".join(hook.plot_help for hook in OUTPUT_HOOKS if hook.plot_help)
            + "; with several inputs also per_set_distributions.png "
            "(a box per system for each per-set figure)",
        ),
    )
    per_set: bool = field(
        default=False,
        metadata=option("--per-set", help="also print one row of figures per response set"),
    )
    resume: bool = field(
        default=False,
        metadata=option(
            "--resume",
            help="reuse the metrics that an interrupted run with the same options and inputs "
            "finished (kept in OUTPUT.partial/ until the report is written)",
        ),
    )
    overwrite: bool = overwrite_field()
    baseline_system: str | None = field(
        default=None,
        metadata=option(
            "--baseline",
            metavar="NAME",
            default_text="the first input",
            help="with --ci and several inputs: the system every other is compared with",
        ),
    )
    pairing: str = field(
        default="auto",
        metadata=option(
            "--pairing",
            choices=PAIRINGS,
            help="with --ci and several inputs: pair two systems' sets by id or context when "
            "they answer the same contexts (auto), require it (paired), or compare them as "
            "independent samples (unpaired)",
        ),
    )

    def __post_init__(self) -> None:
        check_decimals(self.decimals)  # before the job runs, not when its tables are written
        if self.context_column == self.responses_column:
            # One key cannot be both: each set's responses would be read as its context too.
            raise ArgumentError(
                "context_column",
                f"names the same key / column as `responses_column` ({self.responses_column!r}): "
                "a set's context and its responses are two different keys / columns",
            )

    def input_selection(self) -> dict:
        """What :func:`dialeval.io.iter_response_sets` takes besides the path."""
        return {
            "file_format": self.format,
            "responses_column": self.responses_column,
            "context_column": self.context_column,
            "split": self.split,
            "dataset_config": self.dataset_config,
        }


@dataclass(kw_only=True)
class ExportDatasetCommand:
    name: str = field(metadata=option(choices=sorted(BUILDERS), help="the test set"))
    to: str = field(
        metadata=option("--to", metavar="DIR", help="folder for the Parquet files and the card")
    )
    configs: list[str] | None = field(
        default=None,
        metadata=option("--config", repeatable=True, help="config to export (default: all)"),
    )
    data_dir: str | None = field(
        default=None,
        metadata=option(
            "--data-dir",
            help="folder with the released files (default: download, pinned and sha256-checked)",
        ),
    )
    cache_dir: str | None = field(
        default=None, metadata=option("--cache-dir", help="datasets cache directory")
    )
    verify_checksums: bool = field(
        default=True,
        metadata=option(
            "--no-verify", help="accept source files whose sha256 differs from the release"
        ),
    )
    push_to_hub: str | None = field(
        default=None,
        metadata=option(
            "--push-to-hub",
            metavar="REPO",
            help="dataset repo id to create (if needed) and upload to",
        ),
    )
    private: bool = field(
        default=False, metadata=option("--private", help="create the Hub repo as private")
    )
    overwrite: bool = overwrite_field()


@dataclass(kw_only=True)
class DTGCommand:
    dataset: str | None = field(
        default=None,
        metadata=option(
            "--dataset",
            one_of="contexts",
            help="a dialeval test set with a `context` column, e.g. dailydialog_pp",
        ),
    )
    input: str | None = field(
        default=None,
        metadata=option(
            "--input",
            one_of="contexts",
            help='JSONL file, one {"context": [turns...] or "text", "id": ...} per line',
        ),
    )
    split: str = field(
        default="dev",
        metadata=option("--split", help="split of --dataset: dev (= validation), test, train"),
    )
    data_dir: str | None = field(
        default=None,
        metadata=option(
            "--data-dir", help="folder with the dataset's released files (default: pinned download)"
        ),
    )
    verify_checksums: bool = field(
        default=True,
        metadata=option(
            "--no-verify",
            help="accept --dataset source files whose sha256 differs from the release",
        ),
    )
    output: str = field(
        metadata=option(
            "--output", "-o", help="JSONL results (resumed if it exists with the same settings)"
        )
    )
    overwrite: bool = field(
        default=False,
        metadata=option(
            "--overwrite",
            help="start over instead of resuming, replacing --output and its OUTPUT.run.json "
            "even when dialeval did not write them",
        ),
    )
    device: str | None = field(
        default=None,
        metadata=option(
            "--device", help="torch device (default: Accelerate's choice for this process)"
        ),
    )
    progress: bool = field(
        default=True, metadata=option("--no-progress", help="hide the progress bar")
    )


@dataclass(kw_only=True)
class DTGSummaryCommand:
    runs: list[str] = field(metadata=option(nargs="+", help="JSONL outputs of dialeval dtg"))
    output: str | None = field(
        default=None,
        metadata=option(
            "--output", "-o", help="also write the rows as JSON (- for standard output)"
        ),
    )
    overwrite: bool = overwrite_field()
    bertscore_model: str | None = field(
        default=None,
        metadata=option(
            "--bertscore-model",
            help="BERTScore model for Table 5's relevance (the paper's: FacebookAI/roberta-large)",
        ),
    )
    device: str | None = field(
        default=None, metadata=option("--device", help="torch device for --bertscore-model")
    )
