"""The RANDOM protocol of Sato et al. (2020): accuracies over many trials and Fig. 2.

§4.2 (footnote 5): RANDOM's ρ is the mean over 100 trials, each a test set whose false
candidates are sampled with another seed; §4.3, Fig. 2: the box plot of those ρ, with CHOSEN's
as a blue dot. :func:`~dialeval.metrics.response_selection.construction.random_trial` builds one
trial; :func:`random_protocol_accuracies` scores a system on all of them; then
:func:`~dialeval.metrics.response_selection.selection.random_protocol_correlation` gives the ρ
per trial and :func:`random_protocol_figure` draws Fig. 2.

A candidate's loss depends only on its context and itself (ℓ_r, §4.1.2), so each distinct
candidate of a question is scored once for all trials: the ground truth once instead of once
per trial, and a drawn utterance once however often it is drawn.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from dialeval.metrics.engines.lm_scorer import CandidateScorer, check_reduction
from dialeval.metrics.response_selection.selection import TIE_RTOL, select_by_loss
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from dialeval.metrics.engines.lm_scorer import Contexts
    from dialeval.type_aliases import ResponseSets

#: Candidates per scored group: the packed path's row (and its attention mask) grows with the
#: number of candidates of a question, so the union over 100 trials is scored in groups.
CANDIDATES_PER_GROUP = 8


def candidate_losses(
    scorer: CandidateScorer,
    contexts: Contexts,
    candidate_lists: ResponseSets,
    reduction: str = "sum",
    group_size: int = CANDIDATES_PER_GROUP,
) -> list[dict[str, float]]:
    """Per question, ``{candidate: loss}`` for every distinct candidate of
    ``candidate_lists[i]``."""
    check_reduction(reduction)
    group_contexts, groups, owners = [], [], []
    for q, (context, candidates) in enumerate(zip(contexts, candidate_lists)):
        distinct = list(dict.fromkeys(candidates))
        for start in range(0, len(distinct), group_size):
            group = distinct[start : start + group_size]
            group_contexts.append(context)
            # the scorer takes >= 2; a repeat is scored once
            groups.append(group if len(group) > 1 else group * 2)
            owners.append(q)
    scored = scorer.score(group_contexts, groups)
    losses: list[dict[str, float]] = [{} for _ in candidate_lists]
    for q, group, values in zip(owners, groups, scored.losses(reduction)):
        losses[q].update(zip(group, values.tolist()))
    return losses


def random_protocol_accuracies(
    scorer: CandidateScorer,
    trials: Sequence[Sequence[dict]],
    reduction: str = "sum",
    tie_rtol: float = TIE_RTOL,
) -> list[float]:
    """One system's selection accuracy on every RANDOM trial (argmin of ℓ_r, §4.1.2).

    ``trials``: one list of question rows (``context``, ``candidates``, ``label``) per trial,
    e.g. from :func:`~dialeval.metrics.response_selection.construction.random_trial`; question
    ``i`` must have the same context in every trial.
    """
    if isinstance(trials, (str, dict)) or not isinstance(trials, Sequence) or not trials:
        raise ArgumentError(
            "trials", "must be a non-empty list with one list of questions per trial"
        )
    num_questions = len(trials[0])
    for t, trial in enumerate(trials):
        if len(trial) != num_questions or not num_questions:
            raise ArgumentError(
                f"trials[{t}]",
                f"has {len(trial)} questions; every trial must have the same {num_questions} (> 0)",
            )
        for i, question in enumerate(trial):
            if question["context"] != trials[0][i]["context"]:
                raise ArgumentError(
                    f"trials[{t}][{i}]",
                    f"has another context than `trials[0][{i}]`; trials must share their "
                    "questions' contexts",
                )
    contexts = [question["context"] for question in trials[0]]
    union = [
        [candidate for trial in trials for candidate in trial[i]["candidates"]]
        for i in range(num_questions)
    ]
    losses = candidate_losses(scorer, contexts, union, reduction)
    accuracies = []
    for trial in trials:
        values = [
            [losses[i][candidate] for candidate in question["candidates"]]
            for i, question in enumerate(trial)
        ]
        accuracies.append(
            select_by_loss(values, [question["label"] for question in trial], tie_rtol=tie_rtol)[
                "accuracy"
            ]
        )
    return accuracies


def random_protocol_figure(
    random_result: dict, chosen_spearman: float | None = None, title: str | None = None
) -> Figure:
    """Fig. 2: the box plot of RANDOM's per-trial ρ, with CHOSEN's ρ as a blue dot.

    ``random_result``: what ``random_protocol_correlation`` returns. Returns a
    ``matplotlib.figure.Figure`` (no pyplot state): ``figure.savefig(path)`` writes it.
    Trials with an undefined ρ (None) are left out and counted in the x label; an undefined CHOSEN ρ
    (pass NaN when ``system_ranking_correlation`` gave None: every system equally accurate) is
    written instead of drawn.
    """
    # matplotlib: deferred to the one path that needs it
    from matplotlib.figure import Figure

    per_trial = random_result.get("spearman_per_trial") if isinstance(random_result, dict) else None
    if not per_trial:
        raise ArgumentError(
            "random_result",
            "must be the dict random_protocol_correlation returns (with 'spearman_per_trial')",
        )
    # None is random_protocol_correlation's undefined trial (NaN from results saved before it said
    # None)
    defined = [rho for rho in per_trial if rho is not None and not math.isnan(rho)]
    if not defined:
        raise ArgumentError("random_result", "has no trial with a defined Spearman ρ to plot")
    figure = Figure(figsize=(3.2, 4.0))
    axes = figure.add_subplot()
    axes.boxplot([defined], widths=0.5)
    if chosen_spearman is not None:
        if isinstance(chosen_spearman, bool) or not isinstance(
            chosen_spearman, (int, float, np.floating)
        ):
            raise ArgumentError("chosen_spearman", f"must be a number, got {chosen_spearman!r}")
        if math.isnan(chosen_spearman):  # every system equally accurate: no ranking, no dot
            axes.text(1, -0.95, "CHOSEN ρ undefined", ha="center", color="tab:blue")
        else:
            axes.plot([1], [chosen_spearman], "o", color="tab:blue", label="CHOSEN")
            axes.legend(loc="lower right")
    undefined = len(per_trial) - len(defined)
    axes.set_xticks(
        [1],
        [f"RANDOM ({len(defined)} trials" + (f", {undefined} undefined)" if undefined else ")")],
    )
    axes.set_ylabel("Spearman's ρ with the human ranking")
    axes.set_ylim(-1.05, 1.05)
    if title:
        axes.set_title(title)
    figure.tight_layout()
    return figure
