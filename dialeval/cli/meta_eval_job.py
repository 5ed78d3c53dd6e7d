"""``dialeval meta-eval``: score Tevet & Berant's test sets with diversity metrics and meta-evaluate
them.

For one test (decTest, conTest, McDiv, McDiv_nuggets) and task, every set is scored by each
requested metric and the scores are compared with the diversity parameter
(:func:`~dialeval.metrics.diversity_meta_eval.statistics.diversity_meta_evaluation`): Spearman's
rho, and OCA where the parameter is binary (Tevet & Berant §6.3-6.4, Tables 2, 4, 8-10). absHDS, the
human score, is added as a row from the file that has it (decTest, conTest, McDiv_nuggets).

Metric names (``--metric``) are the per-set figures of :mod:`dialeval.metrics.registry`, with an
optional ``=MODEL`` for model-based ones:

- ``averaged_distinct_n``, ``ngram_cosine``: the paper's averaged distinct-n and n-gram cosine
  diversity ("distinct-n" and "cos-sim"; the old names ``distinct_n`` and ``cos_sim`` still work,
  with a warning, until dialeval 0.3.0).
- ``sent_bert``, ``bertscore``, ``cross_encoder``: similarity-to-diversity reduction (§5);
  ``sent_bert`` defaults to the embedded all-MiniLM-L6-v2.
- ``nli``, ``nli_neutral``, ``nli_confidence``: NLI Diversity (Stasaski & Hearst §4).
- ``vendi``: Vendi Score over sentence embeddings; ``compression_ratio``: gzip compression ratio.
- ``released:averaged_distinct_n|ngram_cosine|sent_bert|bertscore``: the score columns stored in
  the release (its ``distinct_n``, ``cos_sim``, ``sent_bert``, ``bert_score``), under our names.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dialeval.cli.options import name_flags, option
from dialeval.cli.progress import StepBar
from dialeval.cli.release_data import (
    DATA_DIR_VARIABLE,
    RELEASE_FOLDER,
    local_release,
    missing_release,
    offline,
)
from dialeval.datasets_scripts import load
from dialeval.datasets_scripts._sources import SourceNotAvailableError
from dialeval.deprecation import warn_renamed
from dialeval.hub import ModelNotAvailableError, resolve_model_path
from dialeval.metrics.registry import RENAMED_SET_SCORERS, SET_SCORERS
from dialeval.option_fields import backend_field
from dialeval.runtimes import check_backend
from dialeval.validation import ArgumentError, check_int

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class MetaEvalTest:
    family: str  # the diversity_eval config family scored by the metrics
    hds_family: str | None  # where absHDS comes from (only rated sets have it)
    binary: bool  # content-diversity class (OCA applies) rather than temperature


TESTS = {
    "dectest": MetaEvalTest("dec_test_1000", "dec_test_200", binary=False),
    "contest": MetaEvalTest("con_test_200", "con_test_200", binary=True),
    "mcdiv": MetaEvalTest("mcdiv_all", None, binary=True),
    "mcdiv_nuggets": MetaEvalTest("mcdiv_nuggets", "mcdiv_nuggets_200", binary=True),
}
TASKS = {"story": "story_gen", "resp": "resp_gen", "prompt": "prompt_gen"}
DISPLAY_NAMES = {
    "dectest": "decTest",
    "contest": "conTest",
    "mcdiv": "McDiv",
    "mcdiv_nuggets": "McDiv_nuggets",
}
HUMAN_ROW = "absHDS"
#: The most decimals ``--round-scores`` takes: past them rounding changes nothing in a float64.
MAX_ROUND_DECIMALS = 15


RELEASED_PREFIX = "released:"
#: released:<our scorer's name> -> the release's column (diversity_eval's ``released_scores``
#: field).
RELEASED_SCORES = {
    "averaged_distinct_n": "distinct_n",
    "ngram_cosine": "cos_sim",
    "sent_bert": "sent_bert",
    "bertscore": "bert_score",
}
#: Old ``--metric`` names (old -> new), accepted with a warning until dialeval's REMOVED_IN release.
RENAMED_METRICS = {
    **RENAMED_SET_SCORERS,
    **{
        RELEASED_PREFIX + old: RELEASED_PREFIX + new
        for old, new in {
            "distinct_n": "averaged_distinct_n",
            "cos_sim": "ngram_cosine",
            "bert_score": "bertscore",
        }.items()
    },
}


@dataclass
class MetaEvalOptions:
    """How ``dialeval meta-eval`` scores and meta-evaluates; every field with an ``option`` is a
    flag."""

    batch_size: int = field(
        default=64, metadata=option("--batch-size", help="texts or pairs per forward pass")
    )
    device: str | None = field(
        default=None,
        metadata=option(
            "--device", help="torch device for model-based metrics (default: Accelerate's choice)"
        ),
    )
    backend: str | None = backend_field()
    # the release stores 3 decimals; OCA depends on the ties that makes
    round_scores: int | None = field(
        default=None,
        metadata=option(
            "--round-scores",
            metavar="DECIMALS",
            help="round scores before ranking, as the release's 3-decimal files do (OCA depends on "
            "the ties this makes)",
        ),
    )
    bootstrap: bool = field(
        default=False,
        metadata=option(
            "--bootstrap",
            help="add the 95%% CI of rho (Stasaski & Hearst App. A: 1000 resamples of 50%%)",
        ),
    )
    num_resamples: int = field(
        default=1000, metadata=option("--num-resamples", help="bootstrap resamples")
    )
    seed: int = field(
        default=0,
        metadata=option("--seed", help="seed of the bootstrap and of decTest's 200-set subsets"),
    )
    data_dir: str | None = field(
        default=None,
        metadata=option(
            "--data-dir",
            help="folder with the released CSVs (an unzipped data.zip); default: the folder "
            f"${DATA_DIR_VARIABLE} names, a checkout's ../shared/data/{RELEASE_FOLDER}, the "
            "datasets cache, then the pinned download (sha256-checked)",
        ),
    )
    cache_dir: str | None = field(
        default=None, metadata=option("--cache-dir", help="datasets cache directory")
    )
    verify_checksums: bool = field(
        default=True,
        metadata=option(
            "--no-verify", help="accept released CSVs whose sha256 differs from the release"
        ),
    )
    # score the sets with absHDS (the *_200 file) instead of the full test
    rated_subset: bool = field(
        default=False,
        metadata=option(
            "--rated",
            help="score the human-rated sets (decTest 200, conTest, McDiv_nuggets 200) so every "
            "row covers the same sets as absHDS",
        ),
    )
    progress: bool = field(
        default=True, metadata=option("--no-progress", help="hide progress bars")
    )

    def __post_init__(self) -> None:
        # Every setting is checked before the test set is read, whichever the run uses.
        check_int(self.batch_size, "batch_size")
        self.backend = check_backend(self.backend)
        if self.round_scores is not None:
            check_int(self.round_scores, "round_scores", 0)
            if self.round_scores > MAX_ROUND_DECIMALS:
                raise ArgumentError(
                    "round_scores",
                    f"must be at most {MAX_ROUND_DECIMALS} (a float64 holds about 15 significant "
                    f"decimals; numpy's rounding overflows to nan further on), got "
                    f"{self.round_scores!r}",
                )
        check_int(self.num_resamples, "num_resamples", 2)
        check_int(self.seed, "seed", 0)


@dataclass
class MetricSpec:
    name: str
    model: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name}[{self.model}]" if self.model else self.name

    @property
    def option(self) -> str:
        """How the command line asked for it."""
        return f"--metric {self.name}" + (f"={self.model}" if self.model else "")


def parse_metric(text: str) -> MetricSpec:
    """``NAME`` or ``NAME=MODEL``; see the module docstring for the names."""
    name, _, model = text.partition("=")
    if name in RENAMED_METRICS:
        # FutureWarning, not DeprecationWarning: the person typing the command line must see it.
        warn_renamed(
            f"--metric {name}", f"--metric {RENAMED_METRICS[name]}", category=FutureWarning
        )
        name = RENAMED_METRICS[name]
    if name.startswith(RELEASED_PREFIX):
        if name[len(RELEASED_PREFIX) :] not in RELEASED_SCORES or model:
            raise ArgumentError(
                "metric",
                f"{text!r}: released scores are {[RELEASED_PREFIX + s for s in RELEASED_SCORES]}",
            )
        return MetricSpec(name)
    if name not in SET_SCORERS:
        raise ArgumentError(
            "metric",
            f"must be one of {sorted(SET_SCORERS)} or released:<{'|'.join(RELEASED_SCORES)}>, got "
            f"{name!r}",
        )
    if model and not SET_SCORERS[name].needs_model:
        raise ArgumentError("metric", f"{name!r} uses no model, got {text!r}")
    return MetricSpec(name, model or None)


def _check_choice(value: str, choices: Iterable[str], argument: str) -> None:
    if value not in choices:
        raise ArgumentError(argument, f"must be one of {sorted(choices)}, got {value!r}")


def load_test_sets(test: str, task: str, options: MetaEvalOptions, hds: bool = False) -> Any:
    """The ``datasets.Dataset`` the metrics score (``hds=False``) or the rated one absHDS comes
    from."""
    # datasets, pandas: deferred so `dialeval meta-eval --help` loads no data stack
    from dialeval.datasets_scripts.diversity_eval.diversity_eval import source_file

    family = TESTS[test].hds_family if hds or options.rated_subset else TESTS[test].family
    if family is None:
        raise ArgumentError("test", f"{test!r} has no human-rated subset")
    source = source_file(family, TASKS[task])
    data_dir = options.data_dir
    if data_dir is None:  # the local places first (release_data's docstring), then the cache
        data_dir = local_release(source.local_paths)
    try:
        return load(
            "diversity_eval",
            f"{family}_{TASKS[task]}",
            data_dir=data_dir,
            split="test",
            cache_dir=options.cache_dir,
            verify_checksums=options.verify_checksums,
        )
    except SourceNotAvailableError as error:
        if data_dir is not None:
            raise  # a folder was given or found: its error names it and the file it lacks
        failure = error.__context__
        detail = (
            "this machine is offline (HF_DATASETS_OFFLINE or HF_HUB_OFFLINE), so no download "
            "was tried"
            if offline()
            else "its download failed"
            + (f" ({type(failure).__name__})" if failure is not None else "")
        )
        raise SourceNotAvailableError(missing_release(source.name, detail)) from None


@dataclass
class MetricRow:
    label: str
    scores: np.ndarray
    parameters: np.ndarray
    result: dict
    errors: np.ndarray | None = None  # absHDS standard deviations, for Fig. 3's error bars


@dataclass
class MetaEvalReport:
    test: str
    task: str
    binary: bool
    config: str = ""  # the diversity_eval config the metrics scored
    rows: list[MetricRow] = field(default_factory=list)
    skipped: list[dict] = field(
        default_factory=list
    )  # {"metric", "reason"}: its model is not on this machine

    @property
    def title(self) -> str:
        return f"{DISPLAY_NAMES[self.test]} {self.task}Gen"


def score_metric(
    spec: MetricSpec, dataset: Any, options: MetaEvalOptions, computed: dict | None = None
) -> np.ndarray:
    """The per-set scores of ``spec`` on ``dataset``. ``computed`` holds the runs made so far in
    the job, by (runner, model): figures of one computation (Baseline, Neutral and Confidence NLI
    Diversity; distinct-n and cos-sim) come from one run."""
    # numpy: deferred so `dialeval meta-eval --help` loads no scientific stack
    import numpy as np

    computed = computed if computed is not None else {}
    if spec.name.startswith(RELEASED_PREFIX):
        column = RELEASED_SCORES[spec.name[len(RELEASED_PREFIX) :]]
        scores = [row[column] for row in dataset["released_scores"]]
        if None in scores:
            raise ArgumentError(
                "metric",
                f"{spec.name!r}: the files read hold no released scores (raw/ files); use "
                "with_metrics/",
            )
    else:
        # tqdm.auto (asyncio): deferred for a light --help; read at call time, as tests patch it
        from tqdm.auto import tqdm

        scorer = SET_SCORERS[spec.name]
        model = spec.model or scorer.default_model
        if model is not None:
            resolve_model_path(model)  # not on this machine: skipped before any work
        responses = dataset["responses"]
        if (scorer.run, model) not in computed:
            with tqdm(
                total=len(responses),
                desc=spec.label,
                unit="set",
                disable=not options.progress,
                leave=False,
            ) as bar:
                computed[scorer.run, model] = scorer.run(
                    responses,
                    model,
                    batch_size=options.batch_size,
                    device=options.device,
                    backend=options.backend,
                    allow_empty=True,
                    progress=StepBar(bar),
                )
        scores = [row[scorer.figure] for row in computed[scorer.run, model]["per_set"]]
    figures = np.asarray(scores, dtype=np.float64)
    return figures.round(options.round_scores) if options.round_scores is not None else figures


def _meta_evaluate(
    scores: np.ndarray, parameters: np.ndarray, binary: bool, options: MetaEvalOptions
) -> dict:
    # numpy, scipy: deferred so `dialeval meta-eval --help` loads no scientific stack
    from dialeval.metrics.diversity_meta_eval import diversity_meta_evaluation, subsampled_spearman
    from dialeval.metrics.diversity_meta_eval.statistics import UndefinedStatisticError

    result = diversity_meta_evaluation(
        scores,
        parameters,
        bootstrap=options.bootstrap,
        num_resamples=options.num_resamples,
        seed=options.seed,
    )
    if (
        not binary
    ):  # decTest: the paper reports rho's mean (std) over 200-set subsets (§6.3, Table 2)
        try:
            result["spearman_subsets_mean"], result["spearman_subsets_std"] = subsampled_spearman(
                scores, parameters, sample_size=min(200, len(scores)), seed=options.seed
            )
        # a constant metric: the row stays, with its reason
        except UndefinedStatisticError as error:
            result["spearman_subsets_mean"] = result["spearman_subsets_std"] = None
            result["undefined_reason"] = result["undefined_reason"] or str(error)
    return result


def _figure(value: float | None, spec: str) -> str:
    """A report cell: "undefined" for a figure the row's ``undefined_reason`` explains (never a bare
    nan)."""
    return "undefined" if value is None else format(value, spec)


def run_meta_eval(
    metrics: list[str],
    test: str,
    task: str,
    options: MetaEvalOptions | None = None,
    human: bool = True,
) -> MetaEvalReport:
    """Score every set of ``test``/``task`` with ``metrics`` and meta-evaluate each (plus absHDS
    when ``human``)."""
    # numpy: deferred so `dialeval meta-eval --help` loads no scientific stack
    import numpy as np

    # numpy: deferred so `dialeval meta-eval --help` loads no scientific stack
    from dialeval.metrics.engines.shared_outputs import shared_model_outputs

    options = options or MetaEvalOptions()
    _check_choice(test, TESTS, "test")
    _check_choice(task, TASKS, "task")
    specs = [parse_metric(metric) for metric in metrics]
    if not specs and not (human and TESTS[test].hds_family):
        raise ArgumentError(
            "metrics", "is empty and this test has no human scores: nothing to meta-evaluate"
        )
    definition = TESTS[test]
    dataset = load_test_sets(test, task, options)
    report = MetaEvalReport(test, task, definition.binary, dataset.info.config_name)
    parameters = np.asarray(dataset["diversity_parameter"], dtype=np.float64)
    computed: dict = {}
    with shared_model_outputs():  # sent-BERT and Vendi on one model encode each text once
        for spec in specs:
            try:
                scores = score_metric(spec, dataset, options, computed)
            except ModelNotAvailableError as error:
                report.skipped.append(
                    {"metric": spec.label, "reason": name_flags(error, {"model": spec.option})}
                )
                continue
            except (ValueError, OSError) as error:  # e.g. a directory that holds no model
                message = f"{spec.option}: {name_flags(error, {'model': spec.option})}"
                raise (ValueError if isinstance(error, ValueError) else OSError)(message) from error
            report.rows.append(
                MetricRow(
                    spec.label,
                    scores,
                    parameters,
                    _meta_evaluate(scores, parameters, definition.binary, options),
                )
            )
    if human and definition.hds_family:
        rated = load_test_sets(test, task, options, hds=True)
        hds = np.asarray(rated["abs_hds_mean"], dtype=np.float64)
        rated_parameters = np.asarray(rated["diversity_parameter"], dtype=np.float64)
        report.rows.append(
            MetricRow(
                HUMAN_ROW,
                hds,
                rated_parameters,
                _meta_evaluate(hds, rated_parameters, definition.binary, options),
                errors=np.asarray(rated["abs_hds_std"], dtype=np.float64),
            )
        )
    return report


def format_report(report: MetaEvalReport) -> str:
    """The paper-style table: one row per metric; rho (and OCA for a binary parameter)."""
    header = ["metric", "rho"]
    if report.binary:
        header.append("OCA")
    else:
        header.append("rho 200-subsets mean (std)")
    bootstrap = any("spearman_ci" in row.result for row in report.rows)
    if bootstrap:
        header.append("rho 95% CI")
    header += ["p-value", "sets"]
    lines = []
    for row in report.rows:
        r = row.result
        cells = [row.label, _figure(r["spearman"], ".3f")]
        if report.binary:
            cells.append(_figure(r["oca"], ".3f"))
        elif r["spearman_subsets_mean"] is None:
            cells.append("undefined")
        else:
            cells.append(f"{r['spearman_subsets_mean']:.3f} ({r['spearman_subsets_std']:.3f})")
        if bootstrap:
            cells.append(
                "undefined"
                if r.get("spearman_ci") is None
                else "[{:.3f}, {:.3f}]".format(*r["spearman_ci"])
            )
        # scipy's p-value underflows to 0 for rho near 1 over ~1000 sets
        p_value = r["spearman_pvalue"]
        cells += [
            "undefined" if p_value is None else f"{p_value:.2g}" if p_value > 0 else "<1e-300",
            str(r["num_sets"]),
        ]
        lines.append(cells)
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *lines)]
    parameter = "content-diversity class" if report.binary else "temperature"
    out = [f"{report.title}: {report.config}, rho with the {parameter}"]
    out.append("  ".join(cell.ljust(w) for cell, w in zip(header, widths)).rstrip())
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(cell.ljust(w) for cell, w in zip(cells, widths)).rstrip() for cells in lines]
    out += [
        f"undefined for {row.label}: {row.result['undefined_reason']}"
        for row in report.rows
        if row.result.get("undefined_reason")
    ]
    out += [f"skipped {skipped['metric']}: {skipped['reason']}" for skipped in report.skipped]
    return "\n".join(out)


def report_as_dict(report: MetaEvalReport) -> dict:
    """JSON-ready: the test, task and each row's meta-evaluation figures (not the per-set
    scores)."""
    return {
        "test": report.test,
        "task": report.task,
        "config": report.config,
        "rows": {row.label: row.result for row in report.rows},
        "skipped": report.skipped,
    }
