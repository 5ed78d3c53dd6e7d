"""Building response-selection test sets over your own corpora (Sato et al. 2020, §3, App. A).

§3.1 in three steps, each a function here:

1. **Retrieve** M utterances related to the ground truth r^true from a repository U
   (:func:`retrieve_candidate_pools`). App. A uses two retrieval methods "to make false
   candidates in each pool diverse": lexical (Lucene) and embedding cosine similarity. Any
   object with ``rank(queries, k) -> list[list[int]]`` is a retriever; two are given,
   :class:`BM25Retriever` (``bm25s``: Lucene's BM25 scoring, ``pip install dialeval[selection]``)
   and :class:`EmbeddingRetriever` (any :mod:`dialeval.metrics.engines.embedders` embedder).
   §3.2: M = 10, and the repository holds no utterance of the systems' training data
   (:func:`build_repository` removes them).
2. **Score** each retrieved utterance and the ground truth by five annotators, 1-5, 0 for
   ungrammatical (human work: :func:`scoring_sheet` writes what they see).
3. **Filter** (:func:`filter_pool`): a retrieved utterance with three or more scores >= 3 is
   acceptable and removed, one with three or more 0s is ungrammatical and removed; a question
   whose ground truth got three or more scores <= 3 is dropped. :func:`assemble_questions` then
   builds the questions of §3.2: the ground truth and 3 remaining false candidates, and for a
   pool with 6 or more remaining, a second question on the same context whose ground truth is a
   removed acceptable utterance.

The RANDOM protocol (§4.2, footnote 5; §4.3, Fig. 2) draws the false candidates uniformly from
the same repository instead: :func:`random_trial` gives one trial's questions, reproducible on
its own (``numpy.random.default_rng([seed, trial])``, the scheme of the ``response_selection``
builder's ``random`` config, so both give the same draws from the same lines).

Where the paper leaves a choice open (how the two retrievers share the M slots, which
acceptable utterance becomes the new ground truth, which false candidates go to which
question), the choice is stated in the function and in README.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

import numpy as np

from dialeval.metrics.engines.embedders import load_embedder
from dialeval.validation import ArgumentError, check_int

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from dialeval.metrics.engines.embedders import TextEmbedder
    from dialeval.metrics.engines.lm_scorer import Contexts
    from dialeval.type_aliases import StrPath

#: §3.2: "We retrieve 10 utterances (per question) from the repository".
NUM_RETRIEVED = 10
NUM_FALSE_CANDIDATES = 3
#: §3.1: "three or more annotators".
RULE_MIN_ANNOTATORS = 3
#: RANDOM draws per question and trial; the first usable ones are kept (as the builder does).
RANDOM_DRAWS_PER_QUESTION = 10


def normalize_utterance(text: str) -> str:
    """Case- and whitespace-insensitive key: two utterances with the same key are the same
    utterance."""
    return " ".join(text.lower().split())


def _check_texts(texts: object, name: str) -> list[str]:
    if isinstance(texts, str) or not isinstance(texts, Iterable):
        raise ArgumentError(name, f"must be a list of strings, got {type(texts).__name__}")
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise ArgumentError(f"{name}[{i}]", f"must be a string, got {type(text).__name__}")
    return texts


def build_repository(utterances: Iterable[str], exclude: Iterable[str] = ()) -> list[str]:
    """The utterance repository U: distinct non-empty utterances (stripped), first occurrence kept,
    without any utterance of ``exclude`` (§3.2: "the repository does not contain the utterances
    in the dialogue data used to train response generation systems"). Matching is on
    :func:`normalize_utterance`.
    """
    excluded = {normalize_utterance(text) for text in _check_texts(exclude, "exclude")}
    seen, repository = set(), []
    for text in _check_texts(utterances, "utterances"):
        key = normalize_utterance(text)
        if key and key not in seen and key not in excluded:
            seen.add(key)
            repository.append(text.strip())
    if not repository:
        raise ArgumentError(
            "utterances",
            "leave the repository empty after removing empty, repeated and excluded utterances",
        )
    return repository


# --------------------------------------------------------------------------------------------
# Retrievers (App. A)
# --------------------------------------------------------------------------------------------


@runtime_checkable
class Retriever(Protocol):
    """Ranks repository utterances (by index) for each query, most related first."""

    name: str

    def rank(self, queries: list[str], k: int) -> list[list[int]]:
        """Per query, up to ``k`` indices into the repository the retriever was built on."""


class BM25Retriever:
    """Lexical retrieval with BM25 as Lucene scores it (App. A used Lucene, whose default
    similarity is BM25 with k1 = 1.2, b = 0.75), through ``bm25s`` (``method="lucene"``).

    Tokens: ``bm25s.tokenize`` (lower-cased words), English stopwords removed by default so that
    the ranking rests on content words (§3.1: "similarities of the content words").
    """

    name = "bm25"

    def __init__(
        self,
        repository: Sequence[str],
        k1: float = 1.2,
        b: float = 0.75,
        stopwords: str | None = "en",
    ):
        try:
            # bm25s: deferred to the one path that needs it
            import bm25s
        except ImportError:
            raise ImportError(
                "BM25Retriever needs bm25s: `pip install dialeval[selection]` (or `pip install "
                "bm25s`)"
            ) from None
        self.repository = _check_texts(repository, "repository")
        if not self.repository:
            raise ArgumentError("repository", "is empty")
        self.stopwords = stopwords
        self._bm25s = bm25s
        self._index = bm25s.BM25(k1=k1, b=b, method="lucene")
        self._index.index(
            bm25s.tokenize(self.repository, stopwords=stopwords, show_progress=False),
            show_progress=False,
        )

    def rank(self, queries: list[str], k: int) -> list[list[int]]:
        queries = _check_texts(queries, "queries")
        k = min(check_int(k, "k"), len(self.repository))
        tokens = self._bm25s.tokenize(
            queries, stopwords=self.stopwords, show_progress=False, return_ids=False
        )
        out: list[list[int]] = []
        for words in tokens:
            if not words:  # only stopwords: nothing lexical to match
                out.append([])
                continue
            indices, scores = self._index.retrieve([words], k=k, show_progress=False)
            # A document sharing no word with the query scores 0: it is not related, so not
            # retrieved.
            out.append([int(i) for i, score in zip(indices[0], scores[0]) if score > 0])
        return out


class EmbeddingRetriever:
    """Embedding-based retrieval: cosine similarity of sentence vectors (App. A: SIF-weighted
    ELMo averages; here any embedder with ``embed(texts) -> array``, by default the project's
    sentence-transformers model, see :func:`dialeval.metrics.engines.embedders.load_embedder`).

    The repository is embedded once, when the retriever is built.
    """

    name = "embedding"

    def __init__(
        self, repository: Sequence[str], embedder: TextEmbedder | None = None, batch_size: int = 256
    ):
        self.repository = _check_texts(repository, "repository")
        if not self.repository:
            raise ArgumentError("repository", "is empty")
        self.embedder = load_embedder() if embedder is None else embedder
        if not callable(getattr(self.embedder, "embed", None)):
            raise ArgumentError(
                "embedder", f"must have an embed(texts) method, got {self.embedder!r}"
            )
        self.batch_size = check_int(batch_size, "batch_size")
        self._vectors = self._unit(self.embedder.embed(self.repository))

    @staticmethod
    def _unit(vectors: ArrayLike) -> np.ndarray:
        vectors = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)

    def rank(self, queries: list[str], k: int) -> list[list[int]]:
        queries = _check_texts(queries, "queries")
        k = min(check_int(k, "k"), len(self.repository))
        out = []
        for start in range(0, len(queries), self.batch_size):
            similarity = (
                self._unit(self.embedder.embed(queries[start : start + self.batch_size]))
                @ self._vectors.T
            )
            top = np.argpartition(-similarity, k - 1, axis=1)[:, :k]
            for row, candidates in zip(similarity, top):
                # Most similar first; equal similarities in repository order (stable).
                order = sorted(candidates.tolist(), key=lambda i: (-row[i], i))
                out.append(order)
        return out


# --------------------------------------------------------------------------------------------
# Step 1: candidate pools
# --------------------------------------------------------------------------------------------


@dataclass
class CandidatePool:
    """One question before scoring: its context, ground truth and the M retrieved utterances."""

    question_id: int
    context: list[str]
    ground_truth: str
    retrieved: list[str]
    retrieved_by: list[str] = field(default_factory=list)  # per utterance, the retriever's name

    def to_dict(self) -> dict:
        return {
            "question_id": self.question_id,
            "context": self.context,
            "ground_truth": self.ground_truth,
            "retrieved": self.retrieved,
            "retrieved_by": self.retrieved_by,
        }


def retrieve_candidate_pools(
    contexts: Contexts,
    ground_truths: Sequence[str],
    repository: Sequence[str],
    retrievers: Sequence[Retriever],
    num_retrieved: int = NUM_RETRIEVED,
) -> list[CandidatePool]:
    """§3.1 step 1: M = ``num_retrieved`` utterances related to each ground truth.

    The ground truth is the query (§2: "We retrieve false candidates using the ground-truth
    responses"). The retrievers take turns (round robin, in the order given) until M distinct
    utterances are chosen, each taking its best-ranked utterance not chosen yet (our choice: App.
    A does not say how the two methods share the pool). An utterance equal to the ground truth
    or to a context turn (:func:`normalize_utterance`) is never chosen. A pool with fewer than
    M after every retriever's ranking is exhausted is a ``ValueError``.
    """
    contexts = [[context] if isinstance(context, str) else list(context) for context in contexts]
    ground_truths = _check_texts(ground_truths, "ground_truths")
    if len(contexts) != len(ground_truths) or not contexts:
        raise ArgumentError(
            "contexts",
            f"and `ground_truths` must be non-empty and of equal length, got {len(contexts)} and "
            f"{len(ground_truths)}",
        )
    num_retrieved = check_int(num_retrieved, "num_retrieved")
    if isinstance(retrievers, Retriever) or not isinstance(retrievers, Sequence) or not retrievers:
        raise ArgumentError(
            "retrievers", "must be a non-empty list of retrievers (objects with rank(queries, k))"
        )
    for retriever in retrievers:
        if not callable(getattr(retriever, "rank", None)):
            raise ArgumentError("retrievers", f": {retriever!r} has no rank(queries, k) method")
    # Ask each retriever for more than M: some of its best may be taken by another or be the ground
    # truth.
    depth = min(
        len(repository), num_retrieved * (len(retrievers) + 1) + len(max(contexts, key=len)) + 1
    )
    rankings = [retriever.rank(ground_truths, depth) for retriever in retrievers]
    pools = []
    for q, (context, ground_truth) in enumerate(zip(contexts, ground_truths)):
        taken = {normalize_utterance(ground_truth), *map(normalize_utterance, context)}
        cursors = [0] * len(retrievers)
        retrieved: list[str] = []
        retrieved_by: list[str] = []
        while len(retrieved) < num_retrieved and any(
            c < len(r[q]) for c, r in zip(cursors, rankings)
        ):
            for which, retriever in enumerate(retrievers):
                ranking = rankings[which][q]
                while cursors[which] < len(ranking):
                    text = repository[ranking[cursors[which]]]
                    cursors[which] += 1
                    if normalize_utterance(text) not in taken:
                        taken.add(normalize_utterance(text))
                        retrieved.append(text)
                        retrieved_by.append(getattr(retriever, "name", type(retriever).__name__))
                        break
                if len(retrieved) == num_retrieved:
                    break
        if len(retrieved) < num_retrieved:
            raise ValueError(
                f"question {q}: the retrievers found only {len(retrieved)} related utterances for "
                f"the ground truth {ground_truth!r}; `num_retrieved` asks for {num_retrieved}"
            )
        turns = cast("list[str]", context)  # made a list of turns above
        pools.append(CandidatePool(q, turns, ground_truth, retrieved, retrieved_by))
    return pools


def scoring_sheet(pools: Sequence[CandidatePool], path: StrPath | None = None) -> list[dict]:
    """What annotators score (§3.1 step 2): per question, the context and the ground truth with
    the retrieved utterances (ground truth first, as in ``human_scores.jsonl``). Shuffle the
    candidates in your annotation tool; scores must come back in this order. Written as JSON
    Lines to ``path`` when given.
    """
    rows = [
        {
            "question_id": pool.question_id,
            "context": pool.context,
            "candidates": [pool.ground_truth, *pool.retrieved],
        }
        for pool in pools
    ]
    if path is not None:
        Path(path).write_text(
            "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8"
        )
    return rows


# --------------------------------------------------------------------------------------------
# Step 3: filtering and the questions
# --------------------------------------------------------------------------------------------


@dataclass
class FilteredPool:
    """The §3.1 verdicts on one pool's scores."""

    ground_truth_kept: bool
    usable: list[int]  # retrieved utterances kept as false candidates (indices into ``retrieved``)
    acceptable: list[int]  # removed: three or more scores >= 3
    ungrammatical: list[int]  # removed: three or more 0s


def _scores_of(scores: ArrayLike, num_candidates: int | None, argument: str) -> np.ndarray:
    try:
        array = np.asarray(scores)
    except ValueError:
        array = None
    expected = (
        "the ground truth and each retrieved utterance"
        if num_candidates is None
        else f"{num_candidates} candidates"
    )
    if (
        array is None
        or array.ndim != 2
        or array.shape[0] < 2
        or array.shape[1] < RULE_MIN_ANNOTATORS
        or (num_candidates is not None and array.shape[0] != num_candidates)
    ):
        raise ArgumentError(
            argument,
            f": expected one row of scores for {expected} (ground truth first), "
            f"each from at least {RULE_MIN_ANNOTATORS} annotators",
        )
    if not np.issubdtype(array.dtype, np.integer) or array.min() < 0 or array.max() > 5:
        raise ArgumentError(argument, ": scores must be integers 0 (ungrammatical) to 5")
    return array


def filter_pool(scores: ArrayLike) -> FilteredPool:
    """§3.1 step 3 on one pool's scores: rows = ground truth, then the retrieved utterances;
    columns = annotators (five in the paper)."""
    array = _scores_of(scores, None, "scores")
    ground_truth, retrieved = array[0], array[1:]
    acceptable = [i for i, row in enumerate(retrieved) if (row >= 3).sum() >= RULE_MIN_ANNOTATORS]
    ungrammatical = [
        i for i, row in enumerate(retrieved) if (row == 0).sum() >= RULE_MIN_ANNOTATORS
    ]
    removed = set(acceptable) | set(ungrammatical)
    return FilteredPool(
        ground_truth_kept=bool((ground_truth <= 3).sum() < RULE_MIN_ANNOTATORS),
        usable=[i for i in range(len(retrieved)) if i not in removed],
        acceptable=acceptable,
        ungrammatical=ungrammatical,
    )


def assemble_questions(
    pools: Sequence[CandidatePool],
    scores: Sequence[ArrayLike],
    num_false: int = NUM_FALSE_CANDIDATES,
) -> list[dict]:
    """The questions of §3.2 from the scored pools (``scores[i]``: pool i's rows, ground truth
    first).

    Per pool whose ground truth is kept and that has at least ``num_false`` usable false
    candidates: a question with the ground truth and the first ``num_false`` usable ones (in
    pool order). With ``2 * num_false`` or more usable, a second question follows on the same
    context (§3.2: "new questions with the same context but different candidates"): its ground
    truth is the first removed acceptable utterance that itself passes the ground-truth rule
    (fewer than three scores <= 3), its false candidates the next ``num_false`` usable ones.
    Rows: ``context``, ``candidates`` (ground truth first), ``label`` 0, ``scores`` (the rows of
    the chosen candidates), ``question_id``, ``pool_id``, ``ground_truth_source``
    (``"dialogue"`` or ``"retrieved"``): the format ``read_selection_questions`` and the metric
    read.
    """
    num_false = check_int(num_false, "num_false")
    if len(scores) != len(pools):
        raise ArgumentError(
            "scores", f"must hold one entry per pool: {len(scores)} for {len(pools)} pools"
        )
    questions: list[dict] = []
    for pool, pool_scores in zip(pools, scores):
        array = _scores_of(pool_scores, 1 + len(pool.retrieved), f"scores[{pool.question_id}]")
        verdict = filter_pool(array)
        if not verdict.ground_truth_kept or len(verdict.usable) < num_false:
            continue
        rows = array[1:]

        def question(
            ground_truth: str,
            ground_truth_scores: np.ndarray,
            false: list[int],
            source: str,
            pool: CandidatePool = pool,
            rows: np.ndarray = rows,
        ) -> dict:
            return {
                "question_id": len(questions),
                "pool_id": pool.question_id,
                "context": list(pool.context),
                "candidates": [ground_truth, *(pool.retrieved[i] for i in false)],
                "label": 0,
                "scores": [
                    list(map(int, ground_truth_scores)),
                    *(list(map(int, rows[i])) for i in false),
                ],
                "ground_truth_source": source,
            }

        questions.append(
            question(pool.ground_truth, array[0], verdict.usable[:num_false], "dialogue")
        )
        if len(verdict.usable) >= 2 * num_false:
            new_truths = [
                i for i in verdict.acceptable if (rows[i] <= 3).sum() < RULE_MIN_ANNOTATORS
            ]
            if new_truths:
                truth = new_truths[0]
                questions.append(
                    question(
                        pool.retrieved[truth],
                        rows[truth],
                        verdict.usable[num_false : 2 * num_false],
                        "retrieved",
                    )
                )
    return questions


# --------------------------------------------------------------------------------------------
# RANDOM (§4.2, §4.3)
# --------------------------------------------------------------------------------------------


def random_draws(num_questions: int, repository_size: int, seed: int, trial: int) -> np.ndarray:
    """Trial ``trial``'s repository indices, ``RANDOM_DRAWS_PER_QUESTION`` per question, in draw
    order: uniform with ``numpy.random.default_rng([seed, trial])`` (the ``response_selection``
    builder's scheme, so a trial drawn here and there from the same lines is the same)."""
    for name, value in (("seed", seed), ("trial", trial)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ArgumentError(name, f"must be a non-negative int, got {value!r}")
    rng = np.random.default_rng([int(seed), int(trial)])
    return rng.integers(0, repository_size, size=(num_questions, RANDOM_DRAWS_PER_QUESTION))


def random_trial(
    questions: Sequence[dict],
    repository: Sequence[str],
    seed: int = 0,
    trial: int = 0,
    exclude: Iterable[str] = (),
    num_false: int = NUM_FALSE_CANDIDATES,
) -> list[dict]:
    """One RANDOM trial: each question keeps its context and ground truth and gets ``num_false``
    false candidates drawn uniformly from ``repository`` (:func:`random_draws`), the first drawn
    ones that are non-empty, differ from the ground truth and from each other, and are not in
    ``exclude`` (the systems' training utterances, §3.2: they are not in the repository).

    ``questions``: rows with ``context``, ``candidates`` and ``label`` (the ground truth is
    ``candidates[label]``). Returned rows keep every other field and add ``trial``, ``seed`` and
    ``false_candidate_lines`` (the repository indices).
    """
    repository = _check_texts(repository, "repository")
    if not repository:
        raise ArgumentError("repository", "is empty")
    excluded = {normalize_utterance(text) for text in _check_texts(exclude, "exclude")}
    num_false = check_int(num_false, "num_false")
    draws = random_draws(len(questions), len(repository), seed, trial)
    out = []
    for q, (question, row) in enumerate(zip(questions, draws)):
        ground_truth = question["candidates"][question["label"]]
        chosen, texts = [], []
        seen = {normalize_utterance(ground_truth)}
        for line in row.tolist():
            key = normalize_utterance(repository[line])
            if key and key not in seen and key not in excluded:
                seen.add(key)
                chosen.append(line)
                texts.append(repository[line].strip())
                if len(texts) == num_false:
                    break
        if len(texts) < num_false:
            raise ValueError(
                f"question {q}, trial {trial}: only {len(texts)} of {RANDOM_DRAWS_PER_QUESTION} "
                "drawn repository utterances are usable (non-empty, not the ground truth, "
                "distinct, not excluded); is most of the repository excluded?"
            )
        out.append(
            {
                **question,
                "candidates": [ground_truth, *texts],
                "label": 0,
                "trial": trial,
                "seed": seed,
                "false_candidate_lines": chosen,
            }
        )
    return out
