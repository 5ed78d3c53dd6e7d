"""What a metric tells ``dialeval evaluate`` about itself: its job steps, their scope, models and
settings.

Each metric subpackage lists its steps in ``metrics/<name>/job.py`` and its declaration
(``metrics/<name>/spec.py``, found by :mod:`dialeval.metrics.registry`) names them: the command
line runs every registered step
that fits the input's scope and whose model is on the machine, so adding a metric to the job
needs no edit under ``dialeval/cli/``.

A step runs over a :class:`JobData` (the response sets of the input, or a corpus of responses)
with the job's settings (one object holding every registered settings dataclass's fields, see
``dialeval.cli.evaluate_options.EvaluationOptions``) and returns a :class:`StepOutcome`. A
model-backed step runs once per model its ``models`` hook lists (``--nli-model A --nli-model
B``); a step that needs a sentence embedding says which texts it embeds with which model
(``sentence_texts``), so the job encodes each distinct text once per model before the steps run
and every step reads the shared vectors
(:mod:`dialeval.metrics.engines.shared_outputs`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from dialeval.hub import EMBEDDED_SENTENCE_MODEL
from dialeval.io import read_text_lines
from dialeval.option_fields import backend_field, models_or_none, option
from dialeval.runtimes import check_backend
from dialeval.validation import check_int, check_texts

#: Input scopes: response sets (one list of responses per context) or a corpus (responses alone).
SCOPES = ("response_set", "corpus")

Progress = Callable[[int], object]
#: A step's settings: one object with the fields of every settings dataclass it declares (the
#: evaluate job's ``EvaluationOptions``, or :func:`~dialeval.metrics.engines.metric_spec.
#: step_settings` for another command), read by attribute.
Settings: TypeAlias = Any


def announce_work(progress: Progress | None, total: int, unit: str) -> None:
    """Tell a job step's progress bar how much work an engine is about to report, in its own unit
    (sentences encoded, pairs scored), so the bar counts real work with an ETA. A plain callable
    (``tqdm.update``) has no ``restart`` and is left as it is."""
    restart = getattr(progress, "restart", None)
    if callable(restart):
        restart(total, unit)


@dataclass(frozen=True)
class JobData:
    """The input of a job: its response sets (None for a corpus) and every response, pooled."""

    scope: str
    responses: list[str]
    sets: list[list[str]] | None = None

    def __post_init__(self) -> None:
        # The job encodes every text with its sentence models before any metric checks it: text
        # that no tokenizer can encode (a lone surrogate) is refused here, by set and index.
        if self.sets is not None:
            for index, responses in enumerate(self.sets):
                check_texts(responses, f"sets[{index}].responses")
        else:
            check_texts(self.responses, "responses")

    def response_sets(self) -> list[list[str]]:
        """The response sets, for a step whose scopes are response sets only."""
        if self.sets is None:
            raise ValueError("this step scores response sets, and the input is a corpus")
        return self.sets

    @property
    def num_units(self) -> int:
        """Sets of a response-set input, responses of a corpus: what a per-unit step counts."""
        return len(self.sets) if self.sets is not None else len(self.responses)


@dataclass
class StepOutcome:
    """``summary``: figure -> value; ``per_set``: one dict of figures per set, or None.

    ``scope`` is what the figures are computed over (the report's ``scope``): by default
    ``"response_set"`` (averaged over sets) when there are per-set figures, else ``"corpus"``.
    ``kept``: by-products of the run that the step's ``resampling`` hook reads (per-unit counts,
    per-response scores); never written to the report or a checkpoint.
    """

    summary: dict
    per_set: list[dict] | None = None
    scope: str | None = None
    kept: Any = None

    def __post_init__(self) -> None:
        if self.scope is None:
            self.scope = "response_set" if self.per_set is not None else "corpus"


class StepSkipped(Exception):
    """A step cannot run on this input (a reference corpus too small to fit, ...); the job goes
    on."""


#: Distinct responses of a corpus above which a step that compares every pair of them
#: (homogenization, chamfer distance: n^2 / 2 pairs) runs only when asked for with ``--metric``:
#: 10,000 is 5e7 pairs, seconds for ROUGE-L, BLEU and chamfer; a 1M-response corpus would be 5e11.
PAIRWISE_CORPUS_LIMIT = 10_000


def check_pairwise_corpus(step_name: str, data: JobData, options: object) -> None:
    """Raise :class:`StepSkipped` when ``step_name`` would compare every pair of a corpus larger
    than :data:`PAIRWISE_CORPUS_LIMIT` distinct responses and the user did not name it in
    ``--metric``."""
    if data.sets is not None or step_name in (getattr(options, "metrics", None) or ()):
        return
    distinct = len(set(data.responses))
    if distinct > PAIRWISE_CORPUS_LIMIT:
        raise StepSkipped(
            f"it compares every pair of the corpus's {distinct:,} distinct responses "
            f"({distinct * (distinct - 1) // 2:,} pairs), so it runs on a corpus of more than "
            f"{PAIRWISE_CORPUS_LIMIT:,} only when asked for: --metric {step_name}"
        )


@dataclass(frozen=True)
class JobStep:
    """One computation of ``dialeval evaluate``.

    Attributes:
        name: its ``--metric`` name; the report key (``name[MODEL]`` for a model-backed step,
            with ``report_name`` instead of ``name`` when given).
        scopes: the input scopes (:data:`SCOPES`) it runs on.
        run: ``run(data, model, options, progress) -> StepOutcome``; ``progress(n)`` after each
            ``n`` units of :attr:`unit` (``total`` of them).
        options: the settings dataclasses it reads (their fields join the command line).
        models: ``models(options) -> list[str]``: the models to run it with (None: model-free).
        model_flag: the flag those models come from (for errors and ``skipped`` entries).
        applies: ``applies(options) -> bool``: False when the input lacks what the step needs
            (Sem-Ent without a reference corpus or saved clusters); it is then not run, unless
            asked for with ``--metric``, which is an error saying why (``needs``).
        needs: what the step needs when ``applies`` is False (for that error).
        blocked: ``blocked(options) -> str | None``: why the step cannot run with these settings
            on this machine (no tagger installed, fewer reference texts than clusters), None when
            it can. The job records the reason under ``skipped``; a step asked for with
            ``--metric`` is an error saying it, before any step runs.
        sentence_texts: ``sentence_texts(data, options, model) -> [(sentence_model, texts)]``:
            the texts the step embeds with a sentence-transformers model, encoded by the job
            once per model before the steps run.
        unit, total: the progress bar's unit and ``total(data, options)`` (default: one per
            set, or per response of a corpus).
        resampling: ``resampling(data, outcome, options, model) -> {figure: UnitStatistic}``
            (:class:`dialeval.resampling.UnitStatistic`): each summary figure that is not the mean
            of the outcome's per-set values, as a function of how often each unit (set, or
            response of a corpus) is drawn, built from what the run kept (``outcome.kept``) and
            the data, so that ``--ci`` recomputes it on resamples without running a model again.
            A per-set figure's interval needs no hook: the job takes the per-set values
            (:func:`~dialeval.metrics.engines.figure_statistics.figure_statistics` joins both).
            ``outcome.kept`` is None for a step taken from a ``--resume`` checkpoint: a model-free
            hook rebuilds what it needs from the data, a model-backed one leaves out what only
            its model could give.
    """

    name: str
    scopes: tuple[str, ...]
    run: Callable[..., StepOutcome]
    options: tuple[type, ...] = ()
    models: Callable[[Settings], list[str]] | None = None
    model_flag: str | None = None
    report_name: str | None = None
    applies: Callable[[Settings], bool] | None = None
    needs: str | None = None
    blocked: Callable[[Settings], str | None] | None = None
    sentence_texts: Callable[..., list[tuple[str, list[str]]]] | None = None
    unit: str = "set"
    total: Callable[[JobData, Settings], int] | None = None
    resampling: Callable[..., dict[str, Any]] | None = None

    def label(self, model: str | None) -> str:
        """The step's key in a report: ``name`` or ``name[MODEL]``."""
        base = self.report_name or self.name
        return base if model is None else f"{base}[{model}]"

    def work(self, data: JobData, options: Settings) -> int:
        return self.total(data, options) if self.total is not None else data.num_units


@dataclass
class JobOptions:
    """Settings every step may read: the reference corpus, batch size, device, runtime backend,
    empty responses."""

    reference_corpus: list[str] | None = field(
        default=None,
        metadata=option(
            "--reference-corpus",
            metavar="TXT",
            reads_path=True,
            convert=read_text_lines,
            help=(
                "UTF-8 text file, one reference (e.g. training) response per line: LF counts "
                "token frequencies in it (default: the evaluated responses themselves, as the "
                "Sem-Ent released code) and Sem-Ent fits its clusters on it"
            ),
        ),
    )
    allow_empty: bool = field(
        default=False,
        metadata=option(
            "--allow-empty",
            help='score "" as a response without tokens instead of failing (Sem-Ent, which embeds '
            "each response, is skipped then)",
        ),
    )
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

    def __post_init__(self) -> None:
        check_int(self.batch_size, "batch_size")  # before any step runs
        # resolved and its package looked for before any step runs
        self.backend = check_backend(self.backend)


@dataclass
class SentenceModelOptions:
    """The sentence-transformers models of the steps that embed responses (sent-BERT, Vendi,
    embedding distances)."""

    sentence_models: list[str] = field(
        default_factory=lambda: [EMBEDDED_SENTENCE_MODEL],
        metadata=option(
            "--sentence-model",
            metavar="MODEL",
            repeatable=True,
            default_text="the embedded all-MiniLM-L6-v2",
            convert=models_or_none,
            help=(
                "sentence-transformers id or directory for sent-BERT diversity, the Vendi score, "
                "remote clique and chamfer distance; 'none' to skip"
            ),
            off_flag="--no-sentence-model",
            off_value=[],
            off_help=(
                "skip sent-BERT diversity, the Vendi score, remote clique and chamfer distance"
            ),
        ),
    )
