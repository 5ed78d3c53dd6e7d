"""The options of the commands that list the metric registry's metrics (``meta-eval``,
``push-metrics``), apart from :mod:`dialeval.cli.commands`: the other commands' parsers are built
without loading the registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dialeval.cli.commands import overwrite_field
from dialeval.cli.meta_eval_job import TASKS, TESTS
from dialeval.cli.options import option
from dialeval.metrics.registry import METRICS, SET_SCORERS


@dataclass(kw_only=True)
class MetaEvalCommand:
    metrics: list[str] = field(
        default_factory=lambda: [name for name, scorer in SET_SCORERS.items() if scorer.by_default],
        metadata=option(
            "--metric",
            metavar="NAME[=MODEL]",
            repeatable=True,
            aliases=("metric",),
            help=", ".join(SET_SCORERS)
            + ", or released:<averaged_distinct_n|ngram_cosine|sent_bert|bertscore> (the release's "
            "stored scores)",
        ),
    )
    test: str = field(metadata=option("--test", choices=sorted(TESTS), help="the test set"))
    tasks: list[str] = field(
        default_factory=lambda: list(TASKS),
        metadata=option(
            "--task",
            repeatable=True,
            choices=tuple(TASKS),
            aliases=("task",),
            help="the generation task",
        ),
    )
    human: bool = field(
        default=True, metadata=option("--no-human", help="leave out the absHDS row")
    )
    plot: str | None = field(
        default=None,
        metadata=option(
            "--plot",
            metavar="DIR",
            help="write the per-metric PNGs (class histograms, Fig. 1/4; score vs temperature, "
            "Fig. 3)",
        ),
    )
    output: str | None = field(
        default=None,
        metadata=option(
            "--output", "-o", help="also write the figures as JSON (- for standard output)"
        ),
    )
    overwrite: bool = overwrite_field()


@dataclass(kw_only=True)
class PushMetricsCommand:
    namespace: str | None = field(
        default=None,
        metadata=option(
            "--namespace",
            metavar="ORG",
            help="Hub user or organization: each metric becomes the Space ORG/<metric>",
        ),
    )
    to: str | None = field(
        default=None,
        metadata=option(
            "--to",
            metavar="DIR",
            help="write each metric's Space folder to DIR/<metric> (offline without --namespace)",
        ),
    )
    metrics: list[str] | None = field(
        default=None,
        metadata=option(
            "--metric",
            repeatable=True,
            choices=sorted(metric.name for metric in METRICS),
            help="metric to push (default: all)",
        ),
    )
    private: bool = field(
        default=False, metadata=option("--private", help="create the Spaces as private")
    )
    overwrite: bool = overwrite_field()
