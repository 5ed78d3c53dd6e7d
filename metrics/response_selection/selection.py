"""Evaluating generation systems via response selection (Sato et al. 2020, "Evaluating Dialogue
Generation Systems via Response Selection", ACL 2020).

§4.1.2: a response generation system computes its softmax cross-entropy loss ℓ_r for every
candidate r of a question given the context c, and selects r̂ = argmin_r ℓ_r. Its accuracy over
the questions ranks it among other systems; the ranking is compared with the human ranking by
Spearman's ρ (§4.2, Table 3). With randomly sampled false candidates (RANDOM) the ρ is averaged
over 100 trials (Table 3 footnote 5) and its spread is the instability of §4.3 (Fig. 2).

- :class:`~dialeval.metrics.engines.lm_scorer.CandidateScorer` (the engine): the loss of every
  candidate under a causal or seq2seq ``transformers`` model.
- :func:`response_selection`: losses, argmin selection, accuracy and per-question details.
- :func:`system_ranking_correlation` / :func:`random_protocol_correlation`: Table 3's ρ.

ℓ_r is the **summed** token negative log-likelihood of the candidate by default (= -log p(r|c),
the sequence's cross-entropy); ``reduction="mean"`` divides by the candidate's token count.
The paper does not say which it used; README.md (the metric card) discusses it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias, cast

import numpy as np
from scipy.stats import ConstantInputWarning, spearmanr

from dialeval.io import iter_jsonl, iter_lines
from dialeval.metrics.engines.lm_scorer import (
    DEFAULT_BATCH_SIZE,
    CandidateScorer,
    check_questions,
    check_reduction,
    describe,
)
from dialeval.runtimes import check_backend
from dialeval.validation import ArgumentError, ArgumentProblem, check_real, require_collection

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from dialeval.hub import ModelSource
    from dialeval.metrics.engines.lm_scorer import Contexts
    from dialeval.type_aliases import DeviceLike, ResponseSets, StrPath

    #: Scores of systems: a system -> score mapping, or one score per system in a fixed order.
    SystemScores: TypeAlias = Mapping[str, float] | Sequence[float]

# --------------------------------------------------------------------------------------------
# Selection and accuracy
# --------------------------------------------------------------------------------------------


#: Two losses closer than ``TIE_RTOL * max(1, |ℓ_min|)`` are a tie. The scorer works in float32
#: (24-bit mantissa, relative rounding 6e-8 per operation): its batched paths reorder the sums of
#: attention and of the per-token losses, and the same candidate scored at two places of a
#: packed row differs in the 7th significant digit (e.g. 27.4744067 vs 27.4744058, 3e-8
#: relative). 1e-6 leaves over 10x room for longer candidates and deeper models while staying
#: far below a real preference: two candidates within it differ in probability by a factor
#: below exp(1e-6 · ℓ) (1.00003 at ℓ = 30 nats). Identical candidates tie exactly regardless
#: (the scorer scores each distinct candidate once). Losses from half-precision models carry
#: rounding far above this (bfloat16: 4e-3 relative): pass a larger ``tie_rtol`` there.
TIE_RTOL = 1e-6


def select_by_loss(
    losses: Sequence[ArrayLike], labels: Sequence[int], *, tie_rtol: float = TIE_RTOL
) -> dict:
    """Argmin selection (§4.1.2) and accuracy from per-question candidate losses.

    A question counts as correct only when the ground truth's loss is **strictly** the lowest:
    with the ground truth listed first (as released), ``argmin``'s first-index tie-break would
    otherwise reward a model that gives every candidate the same loss. Losses within
    ``tie_rtol * max(1, |ℓ_min|)`` of the minimum share it (:data:`TIE_RTOL`: float32 rounding,
    not a preference). ``selected`` is the first index of the minimum; ``tie`` says it is shared.
    """
    require_collection(losses, "losses", "a list of per-question candidate losses")
    require_collection(labels, "labels", "a list of ground-truth indexes")
    if len(losses) != len(labels) or not len(losses):
        raise ArgumentError(
            "losses",
            f"and `labels` must be non-empty and of equal length, got {len(losses)} and "
            f"{len(labels)}",
        )
    tie_rtol = check_real(tie_rtol, "tie_rtol", 0, 1, open_bounds=(False, True))
    per_question = []
    for i, (values, label) in enumerate(zip(losses, labels)):
        values = np.asarray(values, dtype=np.float64)
        if values.ndim != 1 or len(values) < 2 or not np.isfinite(values).all():
            raise ArgumentError(
                f"losses[{i}]",
                f"must be at least 2 finite numbers, got {describe(values.tolist())}",
            )
        if isinstance(label, bool) or not isinstance(label, (int, np.integer)):
            raise ArgumentError(
                f"labels[{i}]",
                f"must be an int index of losses[{i}], got {type(label).__name__}: {label!r}",
            )
        if not 0 <= label < len(values):
            raise ArgumentError(f"labels[{i}]", f"= {label} is not an index of losses[{i}]")
        selected = int(values.argmin())
        tolerance = tie_rtol * max(1.0, abs(values[selected]))
        tie = int((values - values[selected] <= tolerance).sum()) > 1
        per_question.append(
            {
                "selected": selected,
                "label": int(label),
                "correct": selected == label and not tie,
                "tie": tie,
            }
        )
    num_correct = sum(row["correct"] for row in per_question)
    return {
        "accuracy": num_correct / len(per_question),
        "num_correct": num_correct,
        "num_questions": len(per_question),
        "num_ties": sum(row["tie"] for row in per_question),
        "per_question": per_question,
    }


def response_selection(
    contexts: Contexts,
    candidates: ResponseSets,
    labels: Sequence[int],
    model: ModelSource | None = None,
    *,
    scorer: CandidateScorer | None = None,
    reduction: str = "sum",
    batch_size: int = DEFAULT_BATCH_SIZE,
    device: DeviceLike = None,
    dtype: str | None = None,
    turn_separator: str | None = None,
    candidate_eos: bool = True,
    share_context: bool = True,
    progress: Callable[[int], object] | None = None,
    tie_rtol: float = TIE_RTOL,
    backend: str | None = None,
) -> dict:
    """Response-selection accuracy of one LM (Sato et al. 2020, §4.1.2).

    Args:
        contexts: per question, its context turns (oldest first) or one string.
        candidates: per question, its candidate responses (>= 2).
        labels: per question, the index of the ground truth among its candidates.
        model: a causal or seq2seq LM (Hub id in the local cache, or a directory); or pass
            ``scorer`` (a :class:`CandidateScorer`) to reuse a loaded one.
        reduction: ``"sum"`` (default: ℓ_r = -log p(r|c)) or ``"mean"`` (per candidate token).
        batch_size, device, dtype, turn_separator, candidate_eos, share_context, backend: see
            :class:`CandidateScorer`.
        tie_rtol: relative tolerance under which two losses tie (:data:`TIE_RTOL`, see
            :func:`select_by_loss`).

    Returns:
        ``accuracy``, ``num_correct``, ``num_questions``, ``num_ties``,
        ``num_truncated_contexts``, ``reduction``, ``model``, and ``per_question``: per
        question ``losses`` (under ``reduction``), ``nll_sums``, ``num_tokens``, ``selected``,
        ``label``, ``correct`` and ``tie``.
    """
    check_reduction(reduction)
    _, _, labels = check_questions(contexts, candidates, labels)
    backend = check_backend(backend)  # checked even when a ready scorer makes it moot
    if scorer is None:
        if model is None:
            raise ArgumentError(
                "model", "is required (a causal or seq2seq LM id or directory), or pass `scorer`"
            )
        scorer = CandidateScorer(
            model,
            device=device,
            dtype=dtype,
            batch_size=batch_size,
            turn_separator=turn_separator,
            candidate_eos=candidate_eos,
            share_context=share_context,
            backend=backend,
        )
    scored = scorer.score(contexts, candidates, progress=progress)
    losses = scored.losses(reduction)
    result = select_by_loss(losses, labels, tie_rtol=tie_rtol)
    for row, values, sums, counts in zip(
        result["per_question"], losses, scored.nll_sums, scored.num_tokens
    ):
        row.update(
            {"losses": values.tolist(), "nll_sums": sums.tolist(), "num_tokens": counts.tolist()}
        )
    result.update(
        {
            "num_truncated_contexts": scored.num_truncated_contexts,
            "reduction": reduction,
            "model": scorer.lm.name,
        }
    )
    return result


# --------------------------------------------------------------------------------------------
# Question files
# --------------------------------------------------------------------------------------------


#: A question's fields as one record of a question file names them.
_RECORD_FIELDS = {"contexts[0]": "context", "candidates[0]": "candidates", "labels[0]": "label"}


def _check_question(where: str, context: object, candidates: object, label: object) -> None:
    """One question of a file checked as it is read, so that an error names its ``FILE:LINE``
    and the record's field (``q.jsonl:4: `candidates[1]` must be a non-empty string``)."""
    try:
        # any values: the checker says what is wrong with them
        check_questions(
            cast("Contexts", [context]),
            cast("ResponseSets", [candidates]),
            cast("list[int]", [label]),
        )
    except ArgumentProblem as error:
        raise ValueError(f"{where}: {error.renamed(_RECORD_FIELDS)}") from None


def read_selection_questions(path: StrPath) -> dict[str, list]:
    """Questions from a file, as ``{"contexts", "candidates", "labels"}``.

    - ``.jsonl`` / ``.json``: one ``{"context": [turns] or str, "candidates": [...], "label": int}``
      per line (the builder's rows, exported, also fit: extra keys are ignored).
    - any other name (``.tsv``, ``.txt``, none): the test-set format of Sato et al.'s
      ``create_test.sh``: 7 tab-separated fields per line, 3 context turns, the ground truth,
      3 false candidates; the label is 0.
    """
    path = Path(path)
    if not path.is_file():
        raise ArgumentError("path", f"={str(path)!r}: question file does not exist")
    contexts, candidates, labels = [], [], []
    if path.suffix in {".jsonl", ".json"}:
        for where, record in iter_jsonl(path):
            if (
                not isinstance(record, dict)
                or not {"context", "candidates", "label"} <= record.keys()
            ):
                raise ValueError(
                    f"{where}: expected an object with keys 'context', 'candidates' and 'label'"
                )
            _check_question(where, record["context"], record["candidates"], record["label"])
            contexts.append(record["context"])
            candidates.append(record["candidates"])
            labels.append(record["label"])
    else:
        for where, line in iter_lines(path):
            fields = line.split("\t")
            if len(fields) != 7:
                raise ValueError(
                    f"{where}: expected 7 tab-separated fields (3 context turns, ground truth, 3 "
                    f"false candidates), got {len(fields)}"
                )
            _check_question(where, fields[:3], fields[3:], 0)
            contexts.append(fields[:3])
            candidates.append(fields[3:])
            labels.append(0)
    if not contexts:
        raise ArgumentError("path", f"={str(path)!r}: question file holds no questions")
    check_questions(contexts, candidates, labels)
    return {"contexts": contexts, "candidates": candidates, "labels": labels}


# --------------------------------------------------------------------------------------------
# Ranking correlation (Table 3, Fig. 2)
# --------------------------------------------------------------------------------------------


def _aligned_scores(
    human_scores: SystemScores, metric_scores: SystemScores, argument: str
) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(human_scores, Mapping) != isinstance(metric_scores, Mapping):
        raise ArgumentError(
            "human_scores",
            f"and `{argument}` must both be mappings (system -> score) or both sequences",
        )
    human: Sequence[float] | np.ndarray
    metric: Sequence[float] | np.ndarray
    if isinstance(human_scores, Mapping):
        assert isinstance(metric_scores, Mapping)  # both or neither, checked above
        if set(human_scores) != set(metric_scores):
            raise ArgumentError(
                argument,
                "must score the same systems as `human_scores`: missing "
                f"{sorted(map(str, set(human_scores) - set(metric_scores)))}, extra "
                f"{sorted(map(str, set(metric_scores) - set(human_scores)))}",
            )
        systems = list(human_scores)
        human, metric = [human_scores[s] for s in systems], [metric_scores[s] for s in systems]
    else:
        assert not isinstance(metric_scores, Mapping)  # both or neither, checked above
        require_collection(
            human_scores, "human_scores", "a system -> score mapping or a list of scores"
        )
        require_collection(metric_scores, argument, "a system -> score mapping or a list of scores")
        human, metric = list(human_scores), list(metric_scores)
        if len(human) != len(metric):
            raise ArgumentError(
                argument,
                f"must have one score per system of `human_scores` ({len(human)}), got "
                f"{len(metric)}",
            )
    if len(human) < 3:
        raise ValueError(f"a ranking correlation needs at least 3 systems, got {len(human)}")
    try:
        human, metric = np.asarray(human, dtype=np.float64), np.asarray(metric, dtype=np.float64)
    except (TypeError, ValueError):
        raise ArgumentError("human_scores", f"and `{argument}` must hold numbers") from None
    if human.ndim != 1 or metric.ndim != 1:
        raise ArgumentError(
            "human_scores",
            f"and `{argument}` must hold one number per system, got shapes {human.shape} and "
            f"{metric.shape}",
        )
    if not (np.isfinite(human).all() and np.isfinite(metric).all()):
        raise ArgumentError("human_scores", f"and `{argument}` must hold finite numbers")
    return human, metric


def _constant_side(human: np.ndarray, metric: np.ndarray, argument: str) -> str | None:
    """Why rho is undefined here (a side that gives every system one score), or None."""
    for name, values in (("human_scores", human), (argument, metric)):
        if np.ptp(values) == 0:
            return (
                f"`{name}` is constant (all {float(values[0])!r}): Spearman's rho of the system "
                "ranking is undefined"
            )
    return None


def _spearman(
    human: np.ndarray, metric: np.ndarray, argument: str
) -> tuple[float | None, float | None, str | None]:
    """(rho, p-value, None), or (None, None, reason) when a constant side makes rho 0/0 (never
    NaN)."""
    reason = _constant_side(human, metric, argument)
    if reason is not None:
        return None, None, reason
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantInputWarning)
        result = spearmanr(human, metric)
    if not np.isfinite(result.statistic):
        return (
            None,
            None,
            (
                f"Spearman's rho of `human_scores` and `{argument}` is undefined (scipy returned "
                f"{result.statistic!r})"
            ),
        )
    return float(result.statistic), float(result.pvalue), None


def system_ranking_correlation(human_scores: SystemScores, metric_scores: SystemScores) -> dict:
    """Spearman's ρ between the system ranking by human scores and by a metric (§4.2, Table 3).

    ``human_scores`` / ``metric_scores``: system -> score mappings with the same keys (or two
    aligned sequences), e.g. the mean human score s^final and the selection accuracy of each
    system. When either side gives every system the same score, ρ is 0/0: ``spearman`` and
    ``p_value`` are then None (never NaN) and ``undefined_reason`` names the constant argument;
    it is None otherwise.
    """
    human, metric = _aligned_scores(human_scores, metric_scores, "metric_scores")
    rho, p_value, reason = _spearman(human, metric, "metric_scores")
    return {
        "spearman": rho,
        "p_value": p_value,
        "num_systems": len(human),
        "undefined_reason": reason,
    }


def random_protocol_correlation(
    human_scores: SystemScores, metric_scores_per_trial: Sequence[SystemScores]
) -> dict:
    """The RANDOM protocol (§4.2 footnote 5, §4.3 Fig. 2): ρ per trial and its mean.

    ``metric_scores_per_trial``: one system -> score mapping (or sequence) per trial, each trial
    a test set whose false candidates were sampled with a different seed. Returns the mean ρ
    (Table 3's RANDOM row), every trial's ρ, and the spread Fig. 2 shows as a box plot.
    A trial where ρ is undefined (a constant ranking) has None in ``spearman_per_trial``, is
    counted in ``num_undefined_trials`` and left out of the summary figures; when every trial is
    undefined the summary figures are None and ``undefined_reason`` gives the first trial's
    reason (None when some trial is defined).
    """
    if (
        isinstance(metric_scores_per_trial, (str, Mapping))
        or not isinstance(metric_scores_per_trial, Sequence)
        or not metric_scores_per_trial
    ):
        raise ArgumentError(
            "metric_scores_per_trial",
            "must be a non-empty list with one system -> score mapping per trial",
        )
    per_trial, reasons = [], []
    for t, scores in enumerate(metric_scores_per_trial):
        argument = f"metric_scores_per_trial[{t}]"
        human, metric = _aligned_scores(human_scores, scores, argument)
        rho, _, reason = _spearman(human, metric, argument)
        per_trial.append(rho)
        if reason is not None:
            reasons.append(reason)
    defined = np.array([rho for rho in per_trial if rho is not None])
    summary = dict.fromkeys(("mean", "min", "q1", "median", "q3", "max"))
    if len(defined):
        q1, median, q3 = np.percentile(defined, [25, 50, 75])
        summary = {
            "mean": float(defined.mean()),
            "min": float(defined.min()),
            "q1": float(q1),
            "median": float(median),
            "q3": float(q3),
            "max": float(defined.max()),
        }
    return {
        "spearman_mean": summary["mean"],
        "spearman_per_trial": per_trial,
        **{f"spearman_{k}": v for k, v in summary.items() if k != "mean"},
        "num_trials": len(per_trial),
        "num_undefined_trials": len(per_trial) - len(defined),
        "undefined_reason": None if len(defined) else reasons[0],
    }
