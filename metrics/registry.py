"""THE metric registry: every metric's name, functions, evaluate module, CLI names and models.

One :class:`RegisteredMetric` per subpackage of :mod:`dialeval.metrics` (named as its evaluate
module folder). Its :class:`SetScorer` entries are the per-response-set figures the command line
computes: ``dialeval meta-eval --metric NAME[=MODEL]`` takes their names, and ``dialeval
evaluate`` runs the model-backed ones once per model given with their ``--*-model`` flag.
Adding a metric is its subpackage plus one entry in :data:`METRICS` (CONTRIBUTING.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dialeval.hub import EMBEDDED_SENTENCE_MODEL
from dialeval.metrics.compression_ratio import compression_ratio_scores
from dialeval.metrics.compression_ratio import job as compression_ratio_job
from dialeval.metrics.embedding_distances import job as embedding_distances_job
from dialeval.metrics.engines.job_steps import JobStep
from dialeval.metrics.expectation_adjusted_distinct import expectation_adjusted_distinct_scores
from dialeval.metrics.expectation_adjusted_distinct import job as ead_job
from dialeval.metrics.homogenization import DEFAULT_HOMOGENIZATION_MODEL as HOMOGENIZATION_MODEL
from dialeval.metrics.homogenization import job as homogenization_job
from dialeval.metrics.lexical_diversity import job as lexical_job
from dialeval.metrics.mtld import job as mtld_job
from dialeval.metrics.mtld import mtld_scores
from dialeval.metrics.nli_diversity import job as nli_job
from dialeval.metrics.nli_diversity.nli import DEFAULT_NLI_MODEL as NLI_MODEL
from dialeval.metrics.pos_templates import job as pos_templates_job
from dialeval.metrics.pos_templates import pos_template_scores
from dialeval.metrics.response_selection import job as selection_job
from dialeval.metrics.self_repetition import job as self_repetition_job
from dialeval.metrics.self_repetition import self_repetition_scores
from dialeval.metrics.sem_ent import job as sem_ent_job
from dialeval.metrics.similarity_diversity import job as similarity_job
from dialeval.metrics.similarity_diversity.bertscore import (
    DEFAULT_BERTSCORE_MODEL as BERTSCORE_MODEL,
)
from dialeval.metrics.similarity_diversity.cross_encoder import (
    DEFAULT_CROSS_ENCODER as CROSS_ENCODER_MODEL,
)
from dialeval.metrics.vendi_score import job as vendi_job
from dialeval.validation import ArgumentError

METRICS_DIR = Path(__file__).resolve().parent
#: The Hub namespace of the published modules: ``dialeval push-metrics --namespace dialeval`` makes
#: the Space ``dialeval/<name>`` of each, the name the docstring examples and cards load
#: (``evaluate.load("dialeval/<name>")``); tests map it to the local folder, as evaluate's own
#: doctest harness maps its module names.
HUB_NAMESPACE = "dialeval"

#: ``run(response_sets, model, batch_size=, device=, allow_empty=, progress=)`` -> a dict of
#: summary figures with ``per_set``: one dict of figures per set.
SetRun = Callable[..., dict]


@dataclass(frozen=True)
class SetScorer:
    """A per-response-set figure the CLI computes.

    Attributes:
        name: its name for ``dialeval meta-eval --metric`` (and in reports).
        figure: the key of the figure in each ``per_set`` row of ``run``'s result.
        run: computes the figures of every set (see :data:`SetRun`).
        default_model: the model used when none is given; None for a model-free figure.
        model_flag: the ``dialeval evaluate`` flag that lists its models (None: not in that job).
        more_is_diverse: False for a homogeneity figure (compression ratio, homogenization, ...),
            whose correlation with a diversity parameter is negative when it works.
    """

    name: str
    figure: str
    run: SetRun
    default_model: str | None = None
    model_flag: str | None = None
    more_is_diverse: bool = True

    @property
    def needs_model(self) -> bool:
        return self.default_model is not None


@dataclass(frozen=True)
class RegisteredMetric:
    """A metric subpackage ``dialeval.metrics.<name>`` and its evaluate module
    ``metrics/<name>/<name>.py``."""

    name: str
    summary: str
    functions: tuple[str, ...]
    needs_model: bool = False
    default_model: str | None = None
    set_scorers: tuple[SetScorer, ...] = field(default_factory=tuple)
    #: What ``dialeval evaluate`` runs of it (``metrics/<name>/job.py``), in order.
    job_steps: tuple[JobStep, ...] = field(default_factory=tuple)

    @property
    def module_dir(self) -> Path:
        """The evaluate module's folder, for ``evaluate.load(str(module_dir))``."""
        return METRICS_DIR / self.name

    @property
    def hub_name(self) -> str:
        """The name a Hub user loads: ``evaluate.load(hub_name)`` (see :data:`HUB_NAMESPACE`)."""
        return f"{HUB_NAMESPACE}/{self.name}"


# -- the per-set runners: thin adapters from the CLI's uniform call to each metric's function --


def _lexical(
    sets, model=None, batch_size=64, device=None, allow_empty=False, progress=None
) -> dict:
    from dialeval.metrics.lexical_diversity import set_lexical_diversity

    return set_lexical_diversity(sets, allow_empty=allow_empty, progress=progress)


def _similarity(kind: str, **defaults) -> SetRun:
    def run(
        sets, model=None, batch_size=64, device=None, allow_empty=False, progress=None, **options
    ) -> dict:
        """``options``: the similarity's own (BERTScore: ``rescale_with_baseline``,
        ``baseline``)."""
        from dialeval.metrics.similarity_diversity import similarity_diversity

        options = {**defaults, **options}
        result = similarity_diversity(
            sets,
            kind,
            model,
            batch_size=batch_size,
            device=device,
            allow_empty=allow_empty,
            **options,
        )
        figure = f"{kind}_diversity"
        if progress is not None:
            progress(len(sets))
        return {
            figure: result["similarity_diversity"],
            "per_set": [{figure: row["similarity_diversity"]} for row in result["per_set"]],
        }

    return run


def _nli(sets, model=None, batch_size=64, device=None, allow_empty=False, progress=None) -> dict:
    from dialeval.metrics.nli_diversity import nli_diversity

    return nli_diversity(
        sets,
        model,
        batch_size=batch_size,
        device=device,
        allow_empty=allow_empty,
        progress=progress,
    )


def _vendi(sets, model=None, batch_size=64, device=None, allow_empty=False, progress=None) -> dict:
    from dialeval.metrics.vendi_score import vendi_score

    result = vendi_score(sets, model, batch_size=batch_size, device=device, allow_empty=allow_empty)
    if progress is not None:
        progress(len(sets))
    return result


def _model_free(scores: Callable[..., dict]) -> SetRun:
    """A model-free figure's runner: ``scores(sets, allow_empty=)`` returns ``per_set`` (and the
    mean)."""

    def run(sets, model=None, batch_size=64, device=None, allow_empty=False, progress=None) -> dict:
        result = scores([list(s) for s in sets], allow_empty=allow_empty)
        if progress is not None:
            progress(len(sets))
        return result

    return run


#: Both template figures come from one run (meta-eval computes each runner once per test).
def _ead_of_a_test_set(
    sets, model=None, batch_size=64, device=None, allow_empty=False, progress=None
) -> dict:
    """EAD of each set of a meta-evaluated test, with V the distinct tokens of the test's own
    responses (the reference implementation's ``dataForVocabCal``): a test set does not say which
    model generated it, and EAD has no default V."""
    sets = [list(s) for s in sets]
    result = expectation_adjusted_distinct_scores(
        sets,
        vocab_size=None,
        vocab_texts=[text for s in sets for text in s],
        allow_empty=allow_empty,
    )
    if progress is not None:
        progress(len(sets))
    return result


_POS_TEMPLATES = _model_free(
    pos_template_scores
)  # no tagger installed: TaggerNotAvailableError, "skipped" in meta-eval


def _embedding_distance(figure: str) -> SetRun:
    def run(sets, model=None, batch_size=64, device=None, allow_empty=False, progress=None) -> dict:
        from dialeval.metrics.embedding_distances import embedding_distances

        result = embedding_distances(
            sets, model, (figure,), batch_size=batch_size, device=device, allow_empty=allow_empty
        )
        if progress is not None:
            progress(len(sets))
        return result

    return run


def _homogenization(measure: str) -> SetRun:
    def run(sets, model=None, batch_size=64, device=None, allow_empty=False, progress=None) -> dict:
        from dialeval.metrics.homogenization import homogenization_score

        result = homogenization_score(
            [list(s) for s in sets],
            measure=measure,
            model=model,
            batch_size=batch_size,
            device=device,
            allow_empty=allow_empty,
            progress=progress,
        )
        figure = f"homogenization_{measure}"
        return {
            figure: result["homogenization"],
            "per_set": [{figure: row["homogenization"]} for row in result["per_set"]],
        }

    return run


METRICS: tuple[RegisteredMetric, ...] = (
    RegisteredMetric(
        "lexical_diversity",
        "distinct-n and n-gram cosine per set (Tevet & Berant); Dist/Ent-n, LF, Self-BLEU "
        "per corpus",
        (
            "lexical_diversity",
            "set_lexical_diversity",
            "corpus_lexical_diversity",
            "averaged_distinct_n",
            "ngram_cosine_diversity",
            "distinct_n",
            "entropy_n",
            "lf",
            "self_bleu",
        ),
        set_scorers=(
            SetScorer("averaged_distinct_n", "averaged_distinct_n", _lexical),
            SetScorer("ngram_cosine", "ngram_cosine_diversity", _lexical),
        ),
        job_steps=lexical_job.STEPS,
    ),
    RegisteredMetric(
        "similarity_diversity",
        "§5 reduction over sent-BERT, BERTScore, STS cross-encoder or n-gram cosine similarity",
        (
            "similarity_diversity",
            "sent_bert_diversity",
            "bertscore_diversity",
            "similarity_matrices",
        ),
        needs_model=True,
        default_model=EMBEDDED_SENTENCE_MODEL,
        set_scorers=(
            SetScorer(
                "sent_bert",
                "sent_bert_diversity",
                _similarity("sent_bert"),
                EMBEDDED_SENTENCE_MODEL,
                "--sentence-model",
            ),
            # unrescaled: the baseline rescale is one affine map for every pair of a model, so it
            # moves no rank (rho, OCA) and lets any encoder run, including those bert-score has no
            # baseline for
            SetScorer(
                "bertscore",
                "bertscore_diversity",
                _similarity("bertscore", rescale_with_baseline=False),
                BERTSCORE_MODEL,
                "--bertscore-model",
            ),
            SetScorer(
                "cross_encoder",
                "cross_encoder_diversity",
                _similarity("cross_encoder"),
                CROSS_ENCODER_MODEL,
                "--cross-encoder-model",
            ),
        ),
        job_steps=similarity_job.STEPS,
    ),
    RegisteredMetric(
        "nli_diversity",
        "NLI Diversity: Baseline, Neutral and Confidence (Stasaski & Hearst 2022)",
        ("nli_diversity", "nli_pair_matrices", "iter_nli_pair_matrices"),
        needs_model=True,
        default_model=NLI_MODEL,
        set_scorers=(
            SetScorer("nli", "nli_diversity", _nli, NLI_MODEL, "--nli-model"),
            SetScorer("nli_neutral", "nli_diversity_neutral", _nli, NLI_MODEL),
            SetScorer("nli_confidence", "nli_diversity_confidence", _nli, NLI_MODEL),
        ),
        job_steps=nli_job.STEPS,
    ),
    RegisteredMetric(
        "vendi_score",
        "Vendi Score of sentence embeddings (Friedman & Dieng 2023)",
        ("vendi_score", "vendi_score_from_embeddings", "vendi_score_from_kernel"),
        needs_model=True,
        default_model=EMBEDDED_SENTENCE_MODEL,
        set_scorers=(
            SetScorer("vendi", "vendi_score", _vendi, EMBEDDED_SENTENCE_MODEL, "--sentence-model"),
        ),
        job_steps=vendi_job.STEPS,
    ),
    RegisteredMetric(
        "sem_ent",
        "Sem-Ent: entropy of the semantic-cluster distribution (Han et al. 2022)",
        ("sem_ent", "SemanticClusters"),
        needs_model=True,
        default_model=EMBEDDED_SENTENCE_MODEL,
        job_steps=sem_ent_job.STEPS,
    ),
    RegisteredMetric(
        "diversity_meta_eval",
        "meta-evaluation of a diversity metric: Spearman, Pearson, OCA (Tevet & Berant)",
        (
            "diversity_meta_evaluation",
            "spearman",
            "optimal_classification_accuracy",
            "bootstrap_spearman_ci",
        ),
    ),
    RegisteredMetric(
        "response_selection",
        "response-selection accuracy of an LM (Sato et al. 2020)",
        ("response_selection", "system_ranking_correlation", "random_protocol_correlation"),
        needs_model=True,
        job_steps=selection_job.STEPS,
    ),
    RegisteredMetric(
        "nbest_contradiction",
        "Certainty and Variety of n-best lists (Sato et al. 2022)",
        ("nbest_contradiction", "certainty_variety"),
    ),
    RegisteredMetric(
        "compression_ratio",
        "compression ratio of sets or a corpus (the `diversity` package's figure)",
        ("compression_ratio", "compression_ratio_per_set"),
        set_scorers=(
            SetScorer(
                "compression_ratio",
                "compression_ratio",
                _model_free(compression_ratio_scores),
                more_is_diverse=False,
            ),
        ),
        job_steps=compression_ratio_job.STEPS,
    ),
    RegisteredMetric(
        "expectation_adjusted_distinct",
        "EAD: distinct n-grams over their expected number (Liu et al. 2022)",
        (
            "expectation_adjusted_distinct",
            "expectation_adjusted_distinct_scores",
            "expected_distinct",
        ),
        set_scorers=(SetScorer("ead", "ead", _ead_of_a_test_set),),
        job_steps=ead_job.STEPS,
    ),
    RegisteredMetric(
        "pos_templates",
        "part-of-speech template rate and templates per token (the `diversity` package's figures)",
        ("template_rate", "templates_per_token", "extract_templates", "pos_template_scores"),
        set_scorers=(
            SetScorer("template_rate", "template_rate", _POS_TEMPLATES, more_is_diverse=False),
            SetScorer(
                "templates_per_token", "templates_per_token", _POS_TEMPLATES, more_is_diverse=False
            ),
        ),
        job_steps=pos_templates_job.STEPS,
    ),
    RegisteredMetric(
        "embedding_distances",
        "remote clique and chamfer distance of sentence embeddings (Cox et al. 2021; the "
        "`diversity` package's)",
        (
            "embedding_distances",
            "remote_clique",
            "chamfer_distance",
            "remote_clique_from_embeddings",
            "chamfer_distance_from_embeddings",
        ),
        needs_model=True,
        default_model=EMBEDDED_SENTENCE_MODEL,
        set_scorers=(
            SetScorer(
                "remote_clique",
                "remote_clique",
                _embedding_distance("remote_clique"),
                EMBEDDED_SENTENCE_MODEL,
                "--sentence-model",
            ),
            SetScorer(
                "chamfer_distance",
                "chamfer_distance",
                _embedding_distance("chamfer_distance"),
                EMBEDDED_SENTENCE_MODEL,
                "--sentence-model",
            ),
        ),
        job_steps=embedding_distances_job.STEPS,
    ),
    RegisteredMetric(
        "self_repetition",
        "self-repetition score of sets or a corpus (Salkar et al. 2022; the `diversity` package's)",
        ("self_repetition", "self_repetition_per_set", "self_repetition_scores"),
        set_scorers=(
            SetScorer(
                "self_repetition",
                "self_repetition",
                _model_free(self_repetition_scores),
                more_is_diverse=False,
            ),
        ),
        job_steps=self_repetition_job.STEPS,
    ),
    RegisteredMetric(
        "homogenization",
        "homogenization score: mean ROUGE-L / BLEU / BERTScore of every text to the others (the "
        "`diversity` package's)",
        ("homogenization", "homogenization_per_set", "homogenization_score"),
        set_scorers=(
            SetScorer(
                "homogenization_rougel",
                "homogenization_rougel",
                _homogenization("rougel"),
                more_is_diverse=False,
            ),
            SetScorer(
                "homogenization_bleu",
                "homogenization_bleu",
                _homogenization("bleu"),
                more_is_diverse=False,
            ),
            SetScorer(
                "homogenization_bertscore",
                "homogenization_bertscore",
                _homogenization("bertscore"),
                HOMOGENIZATION_MODEL,
                "--homogenization-model",
                more_is_diverse=False,
            ),
        ),
        job_steps=homogenization_job.STEPS,
    ),
    RegisteredMetric(
        "mtld",
        "MTLD, the measure of textual lexical diversity (McCarthy & Jarvis 2010; "
        "lexicalrichness's)",
        ("mtld", "mtld_scores", "mtld_words"),
        set_scorers=(SetScorer("mtld", "mtld", _model_free(mtld_scores)),),
        job_steps=mtld_job.STEPS,
    ),
)

BY_NAME: dict[str, RegisteredMetric] = {metric.name: metric for metric in METRICS}
#: Every step of ``dialeval evaluate``, in registry order.
JOB_STEPS: tuple[JobStep, ...] = tuple(step for metric in METRICS for step in metric.job_steps)
#: Every per-set figure by its CLI name (``dialeval meta-eval --metric``).
SET_SCORERS: dict[str, SetScorer] = {
    scorer.name: scorer for metric in METRICS for scorer in metric.set_scorers
}
#: Per-set scorer names renamed (old -> new), still accepted for one release with a warning:
#: ``distinct_n`` is corpus Dist-n everywhere else in dialeval, and the n-gram cosine measure has
#: one name, the similarity's (``similarity="ngram_cosine"``) as ``sent_bert`` / ``bertscore`` do.
RENAMED_SET_SCORERS = {"distinct_n": "averaged_distinct_n", "cos_sim": "ngram_cosine"}


def get(name: str) -> RegisteredMetric:
    """The registered metric ``name``; a ValueError lists the names otherwise."""
    if name not in BY_NAME:
        raise ArgumentError("name", f"must be one of the metrics {sorted(BY_NAME)}, got {name!r}")
    return BY_NAME[name]


def set_scorer(name: str) -> SetScorer:
    """The per-set figure ``name`` (``dialeval meta-eval --metric`` names); a ValueError lists them
    otherwise."""
    if name not in SET_SCORERS:
        raise ArgumentError("metric", f"must be one of {sorted(SET_SCORERS)}, got {name!r}")
    return SET_SCORERS[name]


def job_option_classes() -> tuple[type, ...]:
    """The settings dataclasses of every job step, each once, in registry order."""
    return tuple(dict.fromkeys(cls for step in JOB_STEPS for cls in step.options))
