"""NLI Diversity (Stasaski & Hearst 2022, "Semantic Diversity in Dialogue with Natural Language
Inference").

For a response set u_1..u_n an NLI model classifies every ordered pair (premise u_i,
hypothesis u_j), i != j: n(n-1) predictions (§3.1). With the argmax class of each pair:

- Baseline NLI Diversity (§3.1): sum over pairs of +1 (contradiction), 0 (neutral), -1 (entailment);
- Neutral NLI Diversity (§3.2): +1 / +1 / -1;
- Confidence NLI Diversity (§3.3): +p(contradiction) / 0 / -p(entailment), the softmax mass of
  the predicted class;
- # Contradiction / # Neutral / # Entailment: the class counts (§3.1, Table 3).

Scores are *sums* over the set's pairs, as in the paper (Figure 1: 2 contradictions, 3
neutrals and 1 entailment give 1), so they grow with n; compare sets of equal size.

The paper's model is ``roberta-large-mnli`` ("NLI Diversity - MNL", §4.1, now
``FacebookAI/roberta-large-mnli``); ``ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli``
is its "Combined" model. Any 3-class NLI ``AutoModelForSequenceClassification`` works: the
classes are found from ``config.id2label`` by name, since label orders differ between models.

The per-set pair matrices (:class:`NLIPairMatrix`) are part of the API because Diversity
Threshold Generation (§5) re-scores leave-one-out subsets from them without new NLI calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np

from dialeval.metrics.engines.pair_scorer import PairScoringStats, load_pair_classifier, score_pairs
from dialeval.metrics.nli_diversity.defaults import DEFAULT_NLI_MODEL, NLI_FIGURES
from dialeval.runtimes import check_backend
from dialeval.validation import (
    ArgumentError,
    check_flag,
    check_int,
    check_progress,
    check_response_set,
    check_response_sets,
    check_texts,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from dialeval.hub import ModelSource
    from dialeval.type_aliases import DeviceLike

    class PairProbabilities(Protocol):
        """What NLI Diversity calls on a scorer (an :class:`NLIScorer` or a stand-in)."""

        def pair_probabilities(self, premises: list[str], hypotheses: list[str]) -> np.ndarray: ...


#: The canonical class order of every probability array in this module.
NLI_CLASSES = ("contradiction", "neutral", "entailment")
CONTRADICTION, NEUTRAL, ENTAILMENT = range(3)

# Value of each predicted class under the Baseline (§3.1) and Neutral (§3.2) variants.
_BASELINE_VALUES = np.array([1.0, 0.0, -1.0])
_NEUTRAL_VALUES = np.array([1.0, 1.0, -1.0])


def nli_label_indices(id2label: dict, label_map: dict | None = None) -> tuple[int, int, int]:
    """Output indices of (contradiction, neutral, entailment) in a classifier's logits.

    Labels are matched by name, ignoring case (``CONTRADICTION``, ``entailment``, ...).
    ``label_map`` (e.g. ``{"contradiction": 0, "neutral": 1, "entailment": 2}``) overrides the
    lookup for models whose config says ``LABEL_0``...

    Raises:
        ValueError: the labels cannot be mapped to the three NLI classes one-to-one.
    """
    if label_map is not None:
        if not isinstance(label_map, dict) or sorted(label_map) != sorted(NLI_CLASSES):
            raise ArgumentError(
                "label_map", f"must map exactly {NLI_CLASSES} to output indices, got {label_map!r}"
            )
        indices = tuple(label_map[name] for name in NLI_CLASSES)
        if len(set(indices)) != 3 or not all(isinstance(i, int) and i in id2label for i in indices):
            raise ArgumentError(
                "label_map",
                f"must give three distinct output indices among {sorted(id2label)}, got "
                f"{label_map!r}",
            )
        return indices
    by_name = {str(label).strip().lower(): int(index) for index, label in id2label.items()}
    if len(id2label) != 3 or any(name not in by_name for name in NLI_CLASSES):
        raise ArgumentError(
            "model",
            f"has labels {dict(id2label)} that cannot be mapped to {NLI_CLASSES}: NLI Diversity "
            "needs a 3-class NLI model whose config.id2label names the classes; for a model "
            "labelled LABEL_0.. pass "
            "label_map={'contradiction': i, 'neutral': j, 'entailment': k}",
        )
    return cast("tuple[int, int, int]", tuple(by_name[name] for name in NLI_CLASSES))


class NLIScorer:
    """Probabilities of (contradiction, neutral, entailment) for (premise, hypothesis) pairs.

    Anything with a ``pair_probabilities(premises, hypotheses) -> array (k, 3)`` method in the
    canonical :data:`NLI_CLASSES` order can stand in for it (tests use a controlled one).

    Args:
        model: a Hub id, a local directory, or a :class:`~dialeval.hub.LoadedModel`.
        device: torch device; default Accelerate's device for this process.
        dtype: None (the checkpoint's), "float32", or "float16"/"bfloat16" (for GPUs).
        batch_size: pairs per forward pass.
        label_map: see :func:`nli_label_indices`.
        backend: the runtime, "torch", "onnx" or "openvino" (:mod:`dialeval.runtimes`).
    """

    def __init__(
        self,
        model: ModelSource = DEFAULT_NLI_MODEL,
        device: DeviceLike = None,
        dtype: str | None = None,
        batch_size: int = 32,
        label_map: dict[str, int] | None = None,
        backend: str | None = None,
    ) -> None:
        self.classifier = load_pair_classifier(model, device=device, dtype=dtype, backend=backend)
        self.class_indices = list(nli_label_indices(self.classifier.id2label, label_map))
        self.batch_size = batch_size
        self.stats = PairScoringStats()

    def pair_probabilities(self, premises: list[str], hypotheses: list[str]) -> np.ndarray:
        check_texts(premises, "premises")
        check_texts(hypotheses, "hypotheses")
        probabilities = score_pairs(
            self.classifier, premises, hypotheses, self.batch_size, self.stats
        )
        return probabilities[:, self.class_indices]


def ordered_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Premise and hypothesis indices of the n(n-1) ordered pairs i != j, row-major."""
    first, second = np.nonzero(~np.eye(n, dtype=bool))
    return first, second


def nli_scores(probabilities: np.ndarray, weights: np.ndarray | None = None) -> dict[str, float]:
    """The six NLI Diversity figures of one set from its pairs' class probabilities ``(k, 3)``.

    ``weights``: how many ordered pairs of the set each row stands for (identical responses make
    identical pairs, scored once); default one each.
    """
    probabilities = np.asarray(probabilities, dtype=np.float64)
    weights = (
        np.ones(len(probabilities), dtype=np.int64)
        if weights is None
        else np.asarray(weights, dtype=np.int64)
    )
    predicted = probabilities.argmax(axis=1)
    confidence = probabilities[np.arange(len(predicted)), predicted]
    counts = np.bincount(predicted, weights=weights, minlength=3).astype(np.int64)
    signed_confidence = np.where(
        predicted == CONTRADICTION, confidence, np.where(predicted == ENTAILMENT, -confidence, 0.0)
    )
    return {
        "nli_diversity": float((_BASELINE_VALUES[predicted] * weights).sum()),
        "nli_diversity_neutral": float((_NEUTRAL_VALUES[predicted] * weights).sum()),
        "nli_diversity_confidence": float((signed_confidence * weights).sum()),
        "num_contradiction": int(counts[CONTRADICTION]),
        "num_neutral": int(counts[NEUTRAL]),
        "num_entailment": int(counts[ENTAILMENT]),
    }


@dataclass(frozen=True)
class NLIPairMatrix:
    """All ordered-pair NLI results of one response set.

    ``probabilities[i, j]`` holds P(contradiction, neutral, entailment) for premise
    ``responses[i]`` and hypothesis ``responses[j]``; the diagonal is NaN (a response is not
    compared with itself).
    """

    responses: tuple[str, ...]
    probabilities: np.ndarray

    @property
    def size(self) -> int:
        return len(self.responses)

    @property
    def predicted(self) -> np.ndarray:
        """Argmax class index per ordered pair (see :data:`NLI_CLASSES`); -1 on the diagonal."""
        predicted = np.nan_to_num(self.probabilities, nan=-1.0).argmax(axis=2)
        np.fill_diagonal(predicted, -1)
        return predicted

    def scores(self, members: ArrayLike | None = None) -> dict[str, float]:
        """The six figures of the set, or of the subset ``members`` (indices) without new NLI
        calls."""
        members = np.arange(self.size) if members is None else np.asarray(members, dtype=np.int64)
        first, second = ordered_pairs(len(members))
        return nli_scores(self.probabilities[members[first], members[second]])

    def leave_one_out_scores(self, figure: str = "nli_diversity") -> np.ndarray:
        """``figure`` of every subset that drops one response (DTG, §5), from the cached pairs."""
        if figure not in NLI_FIGURES:
            raise ArgumentError("figure", f"must be one of {NLI_FIGURES}, got {figure!r}")
        everyone = np.arange(self.size)
        return np.array([self.scores(np.delete(everyone, dropped))[figure] for dropped in everyone])


def _check_chunk_pairs(max_pairs_per_chunk: int) -> None:
    check_int(max_pairs_per_chunk, "max_pairs_per_chunk")


@dataclass(frozen=True)
class _DistinctPairs:
    """One set's NLI results over its distinct responses: ``probabilities[a, b]`` for distinct
    premise ``a`` and hypothesis ``b`` (``[a, a]`` scored only when ``a`` occurs twice or more),
    ``rows[i]`` the distinct response of ``responses[i]``."""

    responses: tuple[str, ...]
    rows: np.ndarray
    probabilities: np.ndarray

    def scores(self) -> dict[str, float]:
        counts = np.bincount(self.rows, minlength=len(self.probabilities))
        weights = np.outer(counts, counts) - np.diag(counts)  # ordered pairs i != j per (a, b)
        premise, hypothesis = np.nonzero(weights)
        return nli_scores(self.probabilities[premise, hypothesis], weights[premise, hypothesis])

    def matrix(self) -> NLIPairMatrix:
        full = self.probabilities[self.rows][:, self.rows].copy()
        full[np.arange(len(self.rows)), np.arange(len(self.rows))] = np.nan
        return NLIPairMatrix(self.responses, full)


def _check_set_pairs(
    response_set: list[str], index: int, max_pairs_per_set: int, full_matrix: bool
) -> None:
    distinct = len(set(response_set))
    repeated = len(response_set) - distinct
    needed = distinct * (distinct - 1) + min(repeated, distinct)
    stored = len(response_set) * (len(response_set) - 1) if full_matrix else needed
    if max(needed, stored) > max_pairs_per_set:
        raise ArgumentError(
            f"response_sets[{index}]",
            f"({len(response_set)} responses, {distinct} distinct) needs {max(needed, stored):,} "
            f"ordered pairs, more than `max_pairs_per_set` = {max_pairs_per_set:,}; score smaller "
            "sets (NLI Diversity grows with n(n-1)) or raise the limit",
        )


def _iter_distinct_pairs(
    response_sets: Iterable[list[str]],
    scorer: PairProbabilities,
    max_pairs_per_chunk: int,
    allow_empty: bool,
    max_pairs_per_set: int,
    full_matrix: bool,
) -> Iterator[_DistinctPairs]:
    _check_chunk_pairs(max_pairs_per_chunk)
    max_pairs_per_set = check_int(max_pairs_per_set, "max_pairs_per_set")
    chunk: list[list[str]] = []
    chunk_pairs = 0
    for index, response_set in enumerate(response_sets):
        response_set = check_response_set(
            response_set, f"response_sets[{index}]", min_size=2, allow_empty=allow_empty
        )
        _check_set_pairs(response_set, index, max_pairs_per_set, full_matrix)
        chunk.append(response_set)
        distinct = len(set(response_set))
        chunk_pairs += distinct * distinct
        if chunk_pairs >= max_pairs_per_chunk:
            yield from _score_chunk(chunk, scorer)
            chunk, chunk_pairs = [], 0
    if chunk:
        yield from _score_chunk(chunk, scorer)


def iter_nli_pair_matrices(
    response_sets: Iterable[list[str]],
    scorer: PairProbabilities,
    max_pairs_per_chunk: int = 16384,
    allow_empty: bool = False,
    max_pairs_per_set: int = 1_000_000,
) -> Iterator[NLIPairMatrix]:
    """Yield one :class:`NLIPairMatrix` per set, in order, scoring about ``max_pairs_per_chunk``
    pairs at a time.

    ``response_sets`` may be any iterable (a generator over a file of 100k sets): only one
    chunk of sets and their probabilities is in memory at a time, never the whole corpus's.
    Identical responses are scored once; a set whose n(n-1) pairs exceed ``max_pairs_per_set``
    is refused (its matrix alone would take 24 bytes per pair).
    """
    for pairs in _iter_distinct_pairs(
        response_sets, scorer, max_pairs_per_chunk, allow_empty, max_pairs_per_set, True
    ):
        yield pairs.matrix()


def _score_chunk(chunk: list[list[str]], scorer: PairProbabilities) -> Iterator[_DistinctPairs]:
    premises: list[str] = []
    hypotheses: list[str] = []
    layouts: list[tuple[list[str], list[str], np.ndarray, np.ndarray, np.ndarray, int]] = []
    for response_set in chunk:
        distinct = list(dict.fromkeys(response_set))
        position = {text: k for k, text in enumerate(distinct)}
        rows = np.array([position[text] for text in response_set], dtype=np.int64)
        counts = np.bincount(rows, minlength=len(distinct))
        # Ordered pairs of distinct responses, and (a, a) where a response occurs twice or more.
        wanted = ~np.eye(len(distinct), dtype=bool) | np.diag(counts > 1)
        first, second = np.nonzero(wanted)
        layouts.append((response_set, distinct, rows, first, second, len(premises)))
        premises += [distinct[i] for i in first]
        hypotheses += [distinct[j] for j in second]
    probabilities = np.asarray(scorer.pair_probabilities(premises, hypotheses), dtype=np.float64)
    if probabilities.shape != (len(premises), 3):
        raise ValueError(
            f"the NLI scorer must return shape ({len(premises)}, 3), got {probabilities.shape}"
        )
    for response_set, distinct, rows, first, second, start in layouts:
        matrix = np.full((len(distinct), len(distinct), 3), np.nan)
        matrix[first, second] = probabilities[start : start + len(first)]
        yield _DistinctPairs(tuple(response_set), rows, matrix)


def nli_pair_matrices(
    response_sets: list[list[str]],
    scorer: PairProbabilities | None = None,
    **scorer_options: Any,  # NLIScorer's keywords
) -> list[NLIPairMatrix]:
    """:class:`NLIPairMatrix` of every set (held in memory; for streaming see
    :func:`iter_nli_pair_matrices`)."""
    response_sets = check_response_sets(response_sets, "response_sets", min_size=2)
    scorer = scorer if scorer is not None else NLIScorer(**scorer_options)
    return list(iter_nli_pair_matrices(response_sets, scorer))


def nli_diversity(
    response_sets: Iterable[list[str]],
    model: ModelSource = DEFAULT_NLI_MODEL,
    batch_size: int = 32,
    device: DeviceLike = None,
    dtype: str | None = None,
    label_map: dict | None = None,
    scorer: PairProbabilities | None = None,
    max_pairs_per_chunk: int = 16384,
    allow_empty: bool = False,
    return_matrices: bool = False,
    progress: Callable[[int], object] | None = None,
    max_pairs_per_set: int = 1_000_000,
    backend: str | None = None,
) -> dict:
    """NLI Diversity of each response set and the means over sets.

    Args:
        response_sets: one list of at least two responses per context (any iterable; it is
            streamed, so 100k sets never hold all their probabilities at once).
        model: NLI classifier id or directory (default the paper's
            ``FacebookAI/roberta-large-mnli``).
        scorer: a ready :class:`NLIScorer` (or any object with ``pair_probabilities``);
            overrides ``model``/``device``/``dtype``/``label_map``/``backend``.
        max_pairs_per_chunk: pairs scored per chunk (the memory bound).
        return_matrices: also return every set's :class:`NLIPairMatrix` under ``"matrices"``.
        progress: called with the number of sets finished after each set (e.g. ``tqdm.update``).
        backend: the classifier's runtime, "torch", "onnx" or "openvino"
            (:mod:`dialeval.runtimes`).
        max_pairs_per_set: the most ordered pairs of distinct responses one set may need (and, with
            ``return_matrices``, the most pairs its matrix may hold); a larger set is refused with
            a ValueError. Identical responses are scored once: 10,000 copies of one response need
            one pair.

    Returns:
        The means of :data:`NLI_FIGURES` over sets, ``per_set`` (one dict of the six figures
        per set), ``num_sets``, and the engine's ``num_pairs``, ``num_unique_pairs`` and
        ``num_truncated`` (pairs cut to the model's maximum length).
    """
    if isinstance(response_sets, (str, dict)) or not hasattr(response_sets, "__iter__"):
        raise ArgumentError(
            "response_sets",
            "must be a list of response sets (lists of strings), got "
            f"{type(response_sets).__name__}",
        )
    return_matrices = check_flag(return_matrices, "return_matrices")
    check_progress(progress)
    backend = check_backend(backend)  # checked even when a ready scorer makes it moot
    scorer = (
        scorer
        if scorer is not None
        else NLIScorer(
            model,
            device=device,
            dtype=dtype,
            batch_size=batch_size,
            label_map=label_map,
            backend=backend,
        )
    )
    stats = getattr(scorer, "stats", None)
    before = stats.as_dict() if isinstance(stats, PairScoringStats) else None
    per_set, matrices, num_pairs = [], [], 0
    for pairs in _iter_distinct_pairs(
        response_sets, scorer, max_pairs_per_chunk, allow_empty, max_pairs_per_set, return_matrices
    ):
        per_set.append(pairs.scores())
        num_pairs += len(pairs.responses) * (len(pairs.responses) - 1)
        if return_matrices:
            matrices.append(pairs.matrix())
        if progress is not None:
            progress(1)
    if not per_set:
        raise ArgumentError("response_sets", "is empty: give at least one response set")
    result: dict[str, float | list[dict[str, float]] | list[NLIPairMatrix]] = {
        figure: float(np.mean([row[figure] for row in per_set])) for figure in NLI_FIGURES
    }
    result["num_sets"] = len(per_set)
    if before is not None:  # a reused scorer keeps counting: report this call's share
        assert isinstance(stats, PairScoringStats)  # before was read from it
        after = stats.as_dict()
        result.update(
            {name: after[name] - before[name] for name in ("num_unique_pairs", "num_truncated")}
        )
        result["num_pairs"] = (
            num_pairs  # the sets' ordered pairs; identical ones went to the model once
        )
    result["per_set"] = per_set
    if return_matrices:
        result["matrices"] = matrices
    return result
