"""Diversity objectives for Diversity Threshold Generation (Stasaski & Hearst 2022, §5-6).

DTG keeps a set of n responses, asks for its diversity, for the diversity of every leave-one-out
subset of size n-1, and swaps one member for a new sample. An objective holds the state of the
current set so that a swap costs only what changed:

- pairwise metrics (NLI contradictions, Sent-BERT cosine) keep the matrix of pair scores: a new
  member costs its 2(n-1) ordered NLI pairs (or one embedding and n-1 cosines), and every
  leave-one-out value comes from the cached matrix;
- distinct-n is not pairwise and is recomputed directly.

``pair_evaluations`` counts the model pair scorings (NLI pairs; cosines for Sent-BERT).
Optional ``start_many`` / ``replace_many`` do the same for several sets at once, so that DTG
scores the new pairs of all its active contexts in one model call (one batch) per round.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dialeval.generation.dtg_thresholds import PAPER_SENT_BERT_MODEL, sent_bert_threshold
from dialeval.metrics.engines import embedders
from dialeval.metrics.lexical_diversity.set_level import averaged_distinct_n
from dialeval.metrics.nli_diversity.nli import (
    CONTRADICTION,
    DEFAULT_NLI_MODEL,
    ENTAILMENT,
    NLIScorer,
    ordered_pairs,
)
from dialeval.validation import ArgumentError, check_int

if TYPE_CHECKING:
    from dialeval.type_aliases import DeviceLike, SentenceEncoder


@dataclass
class SetState:
    responses: list[str]
    matrix: np.ndarray | None = None  # pair scores (NLI: predicted class; Sent-BERT: cosine)
    vectors: np.ndarray | None = None  # Sent-BERT: unit embeddings of the members


class NLIContradictions:
    """NLI over the set's ordered pairs (§3.1, §6.2).

    The threshold quantity (:meth:`value`) is the number of contradicting ordered pairs: §6.2's
    threshold is "# Contradictions is greater than 10 out of a total of 20". Leave-one-out subsets
    (:meth:`leave_one_out`) are ranked by ``nli_objective``:

    - ``"nli_diversity"`` (default): Baseline NLI Diversity, +1 per contradiction and -1 per
      entailment (§3.1). §6.2 names it as the NLI metric DTG runs with ("we use this version for
      experimentation") and Table 4 reports it, so we read §5's ``div_metric`` as this figure.
    - ``"contradictions"``: the number of contradictions, the threshold's own quantity.

    Args:
        scorer: anything with ``pair_probabilities`` (default: an :class:`NLIScorer` on ``model``).
        model: the NLI classifier (default ``FacebookAI/roberta-large-mnli``).
        nli_objective: see above.
        scorer_options: ``device``, ``dtype``, ``batch_size`` (pairs per forward), ``label_map``.
    """

    name = "nli"
    default_threshold = 10.0
    NLI_OBJECTIVES = ("nli_diversity", "contradictions")
    #: Where ``scorer_options`` go: DTG's ``metric_options`` are checked against both signatures.
    options_forwarded_to = NLIScorer

    def __init__(
        self,
        scorer: NLIScorer | None = None,
        model: str | None = None,
        nli_objective: str = "nli_diversity",
        **scorer_options: Any,
    ) -> None:
        if nli_objective not in self.NLI_OBJECTIVES:
            raise ArgumentError(
                "nli_objective", f"must be one of {self.NLI_OBJECTIVES}, got {nli_objective!r}"
            )
        if scorer is not None and (model is not None or scorer_options):
            raise ArgumentError(
                "scorer",
                "is given along with `model` or its options: give either `scorer` or `model` and "
                "its options, not both",
            )
        self.scorer = (
            scorer
            if scorer is not None
            else NLIScorer(model or DEFAULT_NLI_MODEL, **scorer_options)
        )
        self.nli_objective = nli_objective
        self.pair_evaluations = 0

    def _classes(self, premises: list[str], hypotheses: list[str]) -> np.ndarray:
        self.pair_evaluations += len(premises)
        return np.asarray(self.scorer.pair_probabilities(premises, hypotheses)).argmax(axis=1)

    def start(self, responses: list[str]) -> SetState:
        return self.start_many([responses])[0][0]

    def start_many(self, response_sets: list[list[str]]) -> tuple[list[SetState], list[int]]:
        """The states of several sets from one scorer call; also each set's pair count."""
        premises, hypotheses, counts = [], [], []
        for responses in response_sets:
            first, second = ordered_pairs(len(responses))
            premises += [responses[i] for i in first]
            hypotheses += [responses[j] for j in second]
            counts.append(len(first))
        classes = self._classes(premises, hypotheses)
        states, offset = [], 0
        for responses, count in zip(response_sets, counts):
            n = len(responses)
            first, second = ordered_pairs(n)
            matrix = np.full((n, n), -1, dtype=np.int64)
            matrix[first, second] = classes[offset : offset + count]
            offset += count
            states.append(SetState(list(responses), matrix=matrix))
        return states, counts

    def value(self, state: SetState) -> float:
        assert state.matrix is not None  # every NLI state has its matrix (start_many)
        return float((state.matrix == CONTRADICTION).sum())

    def report(self, state: SetState) -> dict:
        """# contradictions and Baseline NLI Diversity (§3.1: +1 contradiction, -1 entailment), as
        Table 4."""
        assert state.matrix is not None  # every NLI state has its matrix (start_many)
        contradictions = int((state.matrix == CONTRADICTION).sum())
        return {
            "contradictions": contradictions,
            "nli_diversity": float(contradictions - (state.matrix == ENTAILMENT).sum()),
        }

    def leave_one_out(self, state: SetState) -> np.ndarray:
        """Each subset without member ``i``, scored by ``nli_objective``."""
        assert state.matrix is not None  # every NLI state has its matrix (start_many)
        pair_values = (state.matrix == CONTRADICTION).astype(np.int64)
        if self.nli_objective == "nli_diversity":
            pair_values -= state.matrix == ENTAILMENT
        # Pairs that involve member i leave with it: its row and its column.
        return pair_values.sum() - pair_values.sum(axis=1) - pair_values.sum(axis=0)

    def replace(self, state: SetState, index: int, response: str) -> None:
        self.replace_many([state], [index], [response])

    def replace_many(
        self, states: list[SetState], indices: list[int], responses: list[str]
    ) -> list[int]:
        """Swap one member in each of several sets; their 2(n-1) new ordered pairs go in one scorer
        call."""
        premises, hypotheses, others_of = [], [], []
        for state, index, response in zip(states, indices, responses):
            others = [j for j in range(len(state.responses)) if j != index]
            state.responses[index] = response
            premises += [response] * len(others) + [state.responses[j] for j in others]
            hypotheses += [state.responses[j] for j in others] + [response] * len(others)
            others_of.append(others)
        classes = self._classes(premises, hypotheses)
        offset = 0
        for state, index, others in zip(states, indices, others_of):
            assert state.matrix is not None  # every NLI state has its matrix (start_many)
            state.matrix[index, others] = classes[offset : offset + len(others)]
            state.matrix[others, index] = classes[offset + len(others) : offset + 2 * len(others)]
            offset += 2 * len(others)
        return [2 * len(others) for others in others_of]


class SentBertDiversity:
    """Negated mean cosine of the members' sentence embeddings (§6.2).

    The threshold is an embedder's: §6.2 takes the 90th percentile of this value over
    DailyDialog++'s human sets, -0.179 with the paper's BERT embedder (the caption of the paper's
    Table 4 says -0.164; we follow the text). ``default_threshold`` is the one calibrated for
    ``model`` (:data:`~dialeval.generation.dtg_thresholds.SENT_BERT_THRESHOLDS`: the default
    all-MiniLM-L6-v2 -0.1597, by the same procedure on the dev set here; the paper's
    bert-large-nli-stsb-mean-tokens -0.179). For any other embedder it is the paper's -0.179 and
    ``threshold_warning`` says so: DTG warns unless ``threshold=`` is given.

    Args:
        model: a sentence-transformers id or directory (default all-MiniLM-L6-v2), or a loaded
            model with ``encode``.
        device, dtype: where and in which precision a named model is loaded.
        batch_size: sentences per ``encode`` batch.
    """

    name = "sent_bert"
    #: §6.2's threshold, measured with the paper's BERT sentence embeddings.
    paper_threshold = -0.179

    def __init__(
        self,
        model: str | os.PathLike[str] | SentenceEncoder | None = None,
        device: DeviceLike = None,
        dtype: str | None = None,
        batch_size: int = 64,
    ) -> None:
        self.batch_size = check_int(batch_size, "batch_size")
        if model is None or isinstance(model, (str, os.PathLike)):  # a str has .encode() too
            self.encoder: SentenceEncoder = embedders.load_sentence_model(
                model or embedders.DEFAULT_SENTENCE_MODEL, device=device, dtype=dtype
            )
        elif hasattr(model, "encode"):
            if device is not None or dtype is not None:
                raise ArgumentError(
                    "device", "and `dtype` apply to a model given by name, not to a loaded one"
                )
            self.encoder = model
        else:
            raise ArgumentError(
                "model",
                "must be a sentence-transformers id, a directory or a model with encode(), got "
                f"{model!r}",
            )
        self.default_threshold, self.threshold_warning = _sent_bert_default_threshold(model)
        self.pair_evaluations = 0

    def _embed(self, texts: list[str]) -> np.ndarray:
        vectors = self.encoder.encode(
            texts,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float64)

    def start(self, responses: list[str]) -> SetState:
        return self.start_many([responses])[0][0]

    def start_many(self, response_sets: list[list[str]]) -> tuple[list[SetState], list[int]]:
        """The states of several sets from one encode call; also each set's cosine count."""
        vectors = self._embed([response for responses in response_sets for response in responses])
        states, counts, offset = [], [], 0
        for responses in response_sets:
            n = len(responses)
            members = vectors[offset : offset + n].copy()
            offset += n
            states.append(SetState(list(responses), matrix=members @ members.T, vectors=members))
            counts.append(n * (n - 1) // 2)
        self.pair_evaluations += sum(counts)
        return states, counts

    @staticmethod
    def _negated_mean(matrix: np.ndarray, members: np.ndarray) -> float:
        sub = matrix[np.ix_(members, members)]
        n = len(members)
        return float(-(sub.sum() - np.trace(sub)) / (n * (n - 1)))

    def value(self, state: SetState) -> float:
        assert state.matrix is not None  # every Sent-BERT state has its matrix (start_many)
        return self._negated_mean(state.matrix, np.arange(len(state.responses)))

    def report(self, state: SetState) -> dict:
        return {"sent_bert": self.value(state)}

    def leave_one_out(self, state: SetState) -> np.ndarray:
        assert state.matrix is not None  # every Sent-BERT state has its matrix (start_many)
        n = len(state.responses)
        return np.array(
            [self._negated_mean(state.matrix, np.delete(np.arange(n), i)) for i in range(n)]
        )

    def replace(self, state: SetState, index: int, response: str) -> None:
        self.replace_many([state], [index], [response])

    def replace_many(
        self, states: list[SetState], indices: list[int], responses: list[str]
    ) -> list[int]:
        """Swap one member in each of several sets; the new responses are embedded in one call."""
        vectors = self._embed(list(responses))
        counts = []
        for state, index, response, vector in zip(states, indices, responses, vectors):
            # every Sent-BERT state has its matrix and vectors (start_many)
            assert state.matrix is not None and state.vectors is not None
            state.responses[index] = response
            state.vectors[index] = vector
            state.matrix[index, :] = state.vectors @ state.vectors[index]
            state.matrix[:, index] = state.matrix[index, :]
            counts.append(len(state.responses) - 1)
        self.pair_evaluations += sum(counts)
        return counts


def _sent_bert_default_threshold(model: object) -> tuple[float, str | None]:
    """The threshold calibrated for ``model``'s embedder, or the paper's and why it may not fit."""
    calibrated = sent_bert_threshold(model)
    if calibrated is not None:
        return calibrated.threshold, None
    described = (
        model if isinstance(model, (str, os.PathLike)) else f"a loaded {type(model).__name__}"
    )
    return SentBertDiversity.paper_threshold, (
        f"no Sent-BERT threshold is calibrated for the embedder {described!s}: DTG uses the "
        f"paper's {SentBertDiversity.paper_threshold}, measured with {PAPER_SENT_BERT_MODEL} "
        "(cosines of other embedders lie on other scales); pass `threshold` (`dialeval dtg "
        "--threshold`) explicitly, e.g. one measured by "
        "examples/reproduce/calibrate_dtg_threshold.py --sentence-model MODEL"
    )


class DistinctN:
    """Tevet's averaged distinct-n (n = 1..5), recomputed per subset (§6.2; threshold 0.98)."""

    name = "distinct_n"
    default_threshold = 0.98

    def __init__(self, max_n: int = 5) -> None:
        self.max_n = max_n
        self.pair_evaluations = 0

    def _score(self, responses: list[str]) -> float:
        return float(averaged_distinct_n(responses, max_n=self.max_n, allow_empty=True))

    def start(self, responses: list[str]) -> SetState:
        return SetState(list(responses))

    def value(self, state: SetState) -> float:
        return self._score(state.responses)

    def report(self, state: SetState) -> dict:
        return {"distinct_n": self.value(state)}

    def leave_one_out(self, state: SetState) -> np.ndarray:
        n = len(state.responses)
        return np.array(
            [self._score([r for j, r in enumerate(state.responses) if j != i]) for i in range(n)]
        )

    def replace(self, state: SetState, index: int, response: str) -> None:
        state.responses[index] = response
