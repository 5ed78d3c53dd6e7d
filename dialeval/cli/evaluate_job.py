"""The main job: every registered metric that fits the input, over a file of response sets or a
corpus.

The steps come from the registry (:data:`dialeval.metrics.registry.JOB_STEPS`, declared in each
metric's ``metrics/<name>/job.py``): the job runs every step whose scope fits the input (response
sets, or a corpus of responses one per line), that has what it needs (Sem-Ent: a reference
corpus or saved clusters) and whose model is on the machine; ``--metric NAME`` restricts it to
the steps named. A step whose model is missing raises
:class:`~dialeval.hub.ModelNotAvailableError` and is recorded under ``skipped`` with the reason;
the job carries on.

One pass per model: the job runs inside
:func:`~dialeval.metrics.engines.shared_outputs.shared_model_outputs`, and right before the
first step that embeds with a sentence model it encodes every distinct text all the steps will
embed with that model (sent-BERT, Vendi and Sem-Ent's reference corpus and responses), behind one
progress bar; the steps then read the shared vectors. Every other model runs in one step (NLI:
one pass of the pairs for all its figures). A step that a checkpoint holds (``--resume``) is
taken from it and its model does not run.

The job's settings are one dataclass, :data:`EvaluationOptions`, made of every step's settings
dataclasses (their fields carry the command-line flags) and :class:`JobControl`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tqdm.auto import tqdm

from dialeval.cli.evaluate_options import EvaluationOptions, step_names
from dialeval.cli.options import name_flags
from dialeval.cli.progress import StepBar
from dialeval.cli.provenance import summary_models
from dialeval.cli.report_formats import render_table, summary_table
from dialeval.cli.set_insights import agreement, drill_down
from dialeval.cli.significance import add_intervals
from dialeval.deprecation import renamed_attributes
from dialeval.hub import ModelNotAvailableError, resolve_model_path
from dialeval.io import ResponseSet, as_response_sets
from dialeval.metrics import registry
from dialeval.metrics.engines.embedders import encode_for_job
from dialeval.metrics.engines.figure_statistics import figure_statistics
from dialeval.metrics.engines.job_steps import (
    JobData,
    JobStep,
    Settings,
    StepOutcome,
    StepSkipped,
)
from dialeval.metrics.engines.shared_outputs import shared_model_outputs
from dialeval.validation import ArgumentError, ArgumentProblem

if TYPE_CHECKING:  # types only: the checkpoints import this module's report helpers
    from dialeval.cli.checkpoints import MetricCheckpoints
    from dialeval.resampling import UnitStatistic


def planned_steps(scope: str, options: Settings) -> list[tuple[JobStep, str | None]]:
    """The ``(step, model)`` pairs a job on a ``scope`` input runs, in order."""
    names = step_names()
    wanted = None
    if options.metrics is not None:
        unknown = [name for name in options.metrics if name not in names]
        if unknown:
            raise ArgumentError("metrics", f"must name steps of {names}, got {unknown}")
        wanted = set(options.metrics)
    plan = []
    for step in registry.JOB_STEPS:
        if wanted is not None and step.name not in wanted:
            continue
        if scope not in step.scopes:
            if wanted is not None:
                raise ArgumentError(
                    "metrics",
                    f": {step.name} does not run on a {scope.replace('_', '-')} input "
                    f"(it runs on: {', '.join(step.scopes)})",
                )
            continue
        if step.applies is not None and not step.applies(options):
            if wanted is not None:
                raise ArgumentError("metrics", f": {step.name} needs {step.needs}")
            continue
        reason = step.blocked(options) if step.blocked is not None else None
        if reason is not None and wanted is not None:
            raise _cannot_run(step, reason)
        models = step.models(options) if step.models is not None else [None]
        if not models and wanted is not None:
            raise ArgumentError(
                "metrics",
                f": {step.name} was asked for but its model is turned off "
                "(a model flag set to 'none', or --no-sentence-model)",
            )
        plan += [(step, model) for model in models]
    return plan


def _cannot_run(step: JobStep, reason: str) -> ArgumentError:
    """The error for a step the user named in ``--metric`` that cannot run: asked for by name,
    its absence from the report would read as success."""
    return ArgumentError("metrics", f": {step.name} was asked for but cannot run: {reason}")


def _asked_for(step: JobStep, options: Settings) -> bool:
    return options.metrics is not None and step.name in options.metrics


def _about(step: JobStep, model: str | None, error: Exception) -> str:
    """``error``'s message naming the option that asked for the step instead of the argument
    ``model``."""
    if step.model_flag is None:
        return str(error)
    message = name_flags(error, {"model": step.model_flag})
    if isinstance(error, (ModelNotAvailableError, StepSkipped)):
        return message
    if model is None and isinstance(error, ArgumentProblem) and error.root != "model":
        return message  # about another option, which it names: not about the step's model flag
    return f"{step.model_flag}{'' if model is None else ' ' + model}: {message}"


def _named(step: JobStep, model: str | None, error: Exception) -> Exception:
    return (ValueError if isinstance(error, ValueError) else OSError)(_about(step, model, error))


def _sentence_texts(
    plan: list[tuple[JobStep, str | None]], data: JobData, options: Settings
) -> dict[str, tuple[list[list[str]], tuple[JobStep, str | None]]]:
    """Per sentence model: the texts the planned steps will embed with it, and the first step
    asking."""
    wanted: dict[str, tuple[list[list[str]], tuple[JobStep, str | None]]] = {}
    for step, model in plan:
        for sentence_model, texts in (
            step.sentence_texts(data, options, model) if step.sentence_texts else []
        ):
            wanted.setdefault(sentence_model, ([], (step, model)))[0].append(texts)
    return wanted


def _encode_once(
    sentence_model: str,
    groups: list[list[str]],
    asked_by: tuple[JobStep, str | None],
    options: Settings,
) -> None:
    """Encode every distinct text of ``groups`` with ``sentence_model`` into the job's store, behind
    one bar."""
    try:
        resolve_model_path(sentence_model)
    except ModelNotAvailableError:
        return  # each step that needs it is skipped, with the reason
    # a path typed that is not there: an error naming the flag, never a skip
    except ValueError as error:
        raise _named(*asked_by, error) from error
    distinct = list(dict.fromkeys(text for texts in groups for text in texts))
    with tqdm(
        total=len(distinct),
        desc=f"sentence embeddings ({sentence_model})",
        unit="text",
        disable=not options.progress,
        leave=False,
    ) as bar:
        try:
            encode_for_job(
                distinct, sentence_model, options.batch_size, options.device, progress=bar.update
            )
        except (ValueError, OSError) as error:  # e.g. a directory that holds no model
            raise _named(*asked_by, error) from error


def _record(report: dict, per_set: list[dict] | None, name: str, outcome: StepOutcome) -> None:
    report["metrics"][name] = {"scope": outcome.scope, **outcome.summary}
    for row, values in zip(per_set or [], outcome.per_set or []):
        for key, value in values.items():
            # Two models of one metric would overwrite each other's per-set figures.
            row[f"{key}[{outcome.summary.get('model', name)}]" if key in row else key] = value


def run_steps(
    data: JobData,
    options: Settings,
    report: dict,
    per_set: list[dict] | None = None,
    checkpoint: MetricCheckpoints | None = None,
    statistics: dict[str, dict[str, UnitStatistic]] | None = None,
) -> None:
    """Run the job's steps over ``data``, recording figures and skipped steps in ``report`` and the
    per-set figures in ``per_set`` (one row per set).

    ``checkpoint`` (e.g. :class:`~dialeval.cli.checkpoints.MetricCheckpoints`, for ``--resume``):
    ``get(step) -> StepOutcome | None`` before each step (a kept outcome is used as it is, and its
    model is not run), ``put(step, outcome)`` after a step ran; ``step`` is its report name.
    """
    plan = planned_steps(data.scope, options)
    kept = {
        step.label(model): checkpoint.get(step.label(model)) if checkpoint is not None else None
        for step, model in plan
    }
    # Why a step cannot run with these settings (asked for by name it was refused when planned):
    # such a step is skipped, and nothing is encoded for it.
    blocked = {
        step.label(model): step.blocked(options) if step.blocked is not None else None
        for step, model in plan
    }
    to_encode = _sentence_texts(
        [
            (step, model)
            for step, model in plan
            if kept[step.label(model)] is None and blocked[step.label(model)] is None
        ],
        data,
        options,
    )
    with shared_model_outputs():
        for step, model in plan:
            name = step.label(model)
            outcome = kept[name]
            if outcome is not None:
                _record(report, per_set, name, outcome)
                if statistics is not None:
                    statistics[name] = figure_statistics(step, data, outcome, options, model)
                continue
            if blocked[name] is not None:
                report["skipped"].append({"metric": name, "reason": blocked[name]})
                continue
            # Each sentence model encodes, right before its first step, what all its steps embed:
            # the model-free steps before it never share the memory with its vectors.
            for sentence_model, _ in (
                step.sentence_texts(data, options, model) if step.sentence_texts else []
            ):
                if sentence_model in to_encode:
                    _encode_once(sentence_model, *to_encode.pop(sentence_model), options)
            try:
                if model is not None:
                    resolve_model_path(model)  # fail fast (-> skipped) before any work
                with tqdm(
                    total=step.work(data, options),
                    desc=name,
                    unit=step.unit,
                    disable=not options.progress,
                    leave=False,
                ) as bar:
                    progress = StepBar(bar)
                    outcome = step.run(data, model, options, progress)
                    progress.finish()
            except (ModelNotAvailableError, StepSkipped) as error:
                if _asked_for(step, options):
                    raise _cannot_run(step, _about(step, model, error)) from error
                report["skipped"].append({"metric": name, "reason": _about(step, model, error)})
                continue
            except (ValueError, OSError) as error:
                raise _named(step, model, error) from error
            if checkpoint is not None:
                checkpoint.put(name, outcome)
            _record(report, per_set, name, outcome)
            if statistics is not None:
                statistics[name] = figure_statistics(step, data, outcome, options, model)
            outcome.kept = None  # what the statistics need, they hold; the rest goes now


def check_sets(sets: list[ResponseSet], allow_empty: bool = False) -> None:
    """Every set holds at least two responses (the metrics compare pairs), none of them empty
    unless ``allow_empty``; an error names the set's ``FILE:LINE``."""
    if not sets:
        raise ValueError("no response sets to evaluate")
    for index, response_set in enumerate(sets):
        where = response_set.where or f"`sets[{index}]`"
        if len(response_set.responses) < 2:
            raise ValueError(
                f"{where}: a response set needs at least 2 responses (the metrics compare pairs), "
                f"got {len(response_set.responses)}"
            )
        if not allow_empty:
            for position, response in enumerate(response_set.responses):
                if not response.strip():
                    raise ValueError(
                        f"{where}: response {position} is "
                        f"{'empty' if not response else 'white space only'}; pass allow_empty=True "
                        "to score it as a response without tokens"
                    )


def _input_row(response_set: ResponseSet) -> dict:
    """What the input said about a set: where it was, its ``id``, context and other fields."""
    fields = dict(response_set.metadata)
    row = {
        "where": response_set.where,
        "id": fields.pop("id", None),
        "context": response_set.context,
    }
    if fields:
        row["fields"] = fields
    return row


def evaluate_response_sets(
    sets: list[ResponseSet],
    options: Settings = None,
    checkpoint: MetricCheckpoints | None = None,
    statistics: dict[str, dict[str, UnitStatistic]] | None = None,
) -> dict:
    """Run every step that fits response sets; returns the JSON-ready report.

    ``sets`` may be a pandas DataFrame (column ``responses``, optional ``context``, other columns
    kept as metadata). ``options``: an :data:`EvaluationOptions` (default: every default). Every
    model sees each distinct text once in the call (the module docstring says how).
    ``checkpoint``: see :func:`run_steps`. With ``options.ci``, every summary figure gets its
    interval (``intervals`` in its entry, the settings under ``uncertainty``), and
    ``statistics``, when given, receives what they were computed from (for comparing systems).
    The report names the sets that drive each per-set figure (``drill_down``) and how the per-set
    figures agree across sets (``agreement``, Spearman's rho).
    """
    sets = list(as_response_sets(sets))
    options = options if options is not None else EvaluationOptions()
    check_sets(sets, options.allow_empty)
    data = JobData(
        "response_set",
        [response for s in sets for response in s.responses],
        [s.responses for s in sets],
    )
    report = {
        "scope": "response_set",
        "num_sets": len(sets),
        "num_responses": len(data.responses),
        "metrics": {},
        "skipped": [],
    }
    per_set = [_input_row(s) for s in sets]
    kept = _statistics(options, statistics)
    run_steps(data, options, report, per_set, checkpoint, kept)
    report["per_set"] = per_set
    if kept is not None:
        add_intervals(report, kept, options)
    report["drill_down"] = drill_down(per_set, data.response_sets())
    report["agreement"] = agreement(per_set)
    return report


def _statistics(
    options: Settings, given: dict[str, dict[str, UnitStatistic]] | None
) -> dict[str, dict[str, UnitStatistic]] | None:
    """Where the job keeps the figures' statistics: ``given``, a new dict, or nowhere without
    ``--ci``."""
    if not options.ci:
        return None
    return given if given is not None else {}


def check_corpus_responses(
    responses: list[str], where: list[str] | None = None, allow_empty: bool = False
) -> None:
    """A corpus holds at least one response, none of them empty unless ``allow_empty``; an error
    names the response's ``FILE:LINE`` (``where[i]``) when given."""
    if not responses:
        raise ValueError("no responses to evaluate")
    for index, response in enumerate(responses):
        if not isinstance(response, str):
            raise ArgumentError(
                f"responses[{index}]", f"must be a string, got {type(response).__name__}"
            )
        if not allow_empty and not response.strip():
            place = where[index] if where else f"`responses[{index}]`"
            raise ValueError(
                f"{place}: the response is {'empty' if not response else 'white space only'}; "
                "pass allow_empty=True to score it as a response without tokens"
            )


def evaluate_corpus(
    responses: list[str],
    options: Settings = None,
    where: list[str] | None = None,
    checkpoint: MetricCheckpoints | None = None,
    statistics: dict[str, dict[str, UnitStatistic]] | None = None,
) -> dict:
    """Run every step that fits a corpus (responses without sets: Dist-n, Ent-n, LF, Self-BLEU,
    Vendi, compression ratio, Sem-Ent with a reference corpus or saved clusters); returns the
    JSON-ready report. ``where``: each response's ``FILE:LINE``, for error messages; ``checkpoint``:
    see :func:`run_steps`; ``statistics``: see :func:`evaluate_response_sets` (the unit resampled
    is a response)."""
    options = options if options is not None else EvaluationOptions()
    responses = list(responses)
    check_corpus_responses(responses, where, options.allow_empty)
    report = {"scope": "corpus", "num_responses": len(responses), "metrics": {}, "skipped": []}
    kept = _statistics(options, statistics)
    run_steps(JobData("corpus", responses), options, report, checkpoint=checkpoint, statistics=kept)
    if kept is not None:
        add_intervals(report, kept, options)
    return report


def models_used(report: dict) -> list[str]:
    """The models behind the report's figures (skipped metrics excluded), in report order."""
    return list(
        dict.fromkeys(
            model for summary in report["metrics"].values() for model in summary_models(summary)
        )
    )


def format_table(report: dict) -> str:
    """A plain-text table of the summary figures and the skipped metrics."""
    lines = [render_table(summary_table(report), "text")]
    lines += [f"skipped {skipped['metric']}: {skipped['reason']}" for skipped in report["skipped"]]
    if "uncertainty" in report:
        settings = report["uncertainty"]
        lines.append(
            f"intervals: {settings['confidence']:.0%}, {settings['num_resamples']} resamples of "
            f"the {settings['unit']}s, seed {settings['seed']}"
        )
    return "\n".join(lines)


#: ``MetricSkipped`` and ``MetricOutcome``, this module's names of the job steps' exceptions and
#: outcomes, served with a warning until the REMOVED_IN release (CONTRIBUTING.md, "Renaming").
__getattr__ = renamed_attributes(
    __name__, {"MetricSkipped": "StepSkipped", "MetricOutcome": "StepOutcome"}
)
