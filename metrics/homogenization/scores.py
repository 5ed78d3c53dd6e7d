"""The functions :mod:`dialeval.metrics.homogenization` exports; its docstring describes the
measure."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from dialeval.metrics.engines.job_steps import announce_work
from dialeval.metrics.homogenization.bleu import bleu_against_each
from dialeval.metrics.homogenization.defaults import DEFAULT_HOMOGENIZATION_MODEL
from dialeval.metrics.homogenization.rouge_l import rouge_l_pair_sum, rouge_tokens
from dialeval.metrics.similarity_diversity import bertscore
from dialeval.validation import (
    ArgumentError,
    check_flag,
    check_int,
    check_progress,
    check_response_set,
    split_scope,
)

if TYPE_CHECKING:
    from dialeval.type_aliases import DeviceLike, Progress

MEASURES = ("rougel", "bleu", "bertscore")
# bert_score.utils.model2layers: the layer bert_score (and so the package) uses for these models.
_BERT_SCORE_LAYERS = {
    DEFAULT_HOMOGENIZATION_MODEL: 9,
    "microsoft/deberta-large-mnli": 18,
    "microsoft/deberta-xlarge-mnli": 40,
}


#: Most ROUGE-L scorer threads: rapidfuzz takes a C long and starts that many threads.
MAX_WORKERS = 1024


def _check_options(
    measure: str,
    use_stemmer: bool,
    progress: Progress | None,
    encoder_options: tuple[str | None, int | None, int, DeviceLike, str | None, int, str | None],
) -> int:
    """Every option checked whatever ``measure`` reads (a BERTScore option given to ROUGE-L is
    refused when it is malformed, not ignored); returns ``workers`` as an int."""
    if measure not in MEASURES:
        raise ArgumentError("measure", f"must be one of {MEASURES}, got {measure!r}")
    check_flag(use_stemmer, "use_stemmer")
    check_progress(progress)
    model, num_layers, batch_size, device, dtype, workers, backend = encoder_options
    bertscore.check_encoder_options(model, num_layers, batch_size, device, dtype, backend)
    if workers == -1:
        return os.cpu_count() or 1
    return check_int(workers, "workers", maximum=MAX_WORKERS)


#: Distinct texts of one corpus or set above which BERTScore homogenization is refused: the engine
#: holds every text's token embeddings and a dense (distinct x distinct) float64 F1 matrix
#: (0.8 GB at 10,000; 80 GB at 100,000). ROUGE-L and BLEU stream and have no such limit.
MAX_BERTSCORE_TEXTS = 10_000


def _bertscore_homogenization(
    response_sets: list[list[str]],
    model: str | None,
    num_layers: int | None,
    batch_size: int,
    device: DeviceLike,
    dtype: str | None,
    allow_empty: bool,
    progress: Progress | None,
    argument: str = "predictions",
    kept: list | None = None,
    backend: str | None = None,
) -> list[float]:
    """Each set's BERTScore homogenization; ``kept`` (a list) receives each set's
    :class:`~dialeval.metrics.engines.reduction.UnitSimilarity` (what a resample is scored from)."""
    for index, response_set in enumerate(response_sets):
        distinct = len({text.strip() for text in response_set})
        if distinct > MAX_BERTSCORE_TEXTS:
            where = argument if len(response_sets) == 1 else f"{argument}[{index}]"
            raise ArgumentError(
                where,
                f"holds {distinct:,} distinct texts: BERTScore homogenization keeps a dense "
                f"{distinct:,} x {distinct:,} matrix ({distinct * distinct * 8 / 2**30:.1f} GiB), "
                f"so it takes at most {MAX_BERTSCORE_TEXTS:,}; score a sample, or use "
                "measure='rougel' or 'bleu'",
            )
    model = DEFAULT_HOMOGENIZATION_MODEL if model is None else model
    if num_layers is None:
        num_layers = _BERT_SCORE_LAYERS.get(model)
    result = bertscore.compute_bertscore_matrices(
        response_sets,
        model=model,
        num_layers=num_layers,
        rescale_with_baseline=False,
        batch_size=batch_size,
        device=device,
        dtype=dtype,
        allow_empty=allow_empty,
        progress=progress,
        backend=backend,
    )
    if kept is not None:
        kept.extend(result.unit_similarities)
    scores = []
    for units in result.unit_similarities:
        counts = units.counts.astype(float)
        size = counts.sum()
        # F1 is symmetric: the ordered pairs of positions are every unit pair weighted m_a m_b, less
        # each position with itself (the diagonal's self-score).
        total = counts @ units.unit_matrix @ counts - counts @ units.unit_matrix.diagonal()
        scores.append(float(total / (size * (size - 1))))
    return scores


def _lexical_homogenization(
    texts: list[str], measure: str, use_stemmer: bool, workers: int, progress: Progress | None
) -> float:
    size = len(texts)
    if measure == "rougel":
        return rouge_l_pair_sum(texts, use_stemmer, workers, progress) / (size * (size - 1))
    scores, counts = bleu_against_each(texts)
    if progress is not None:
        progress(len(counts))
    return float(counts @ scores / size)


def corpus_bertscore_homogenization(
    texts: list[str],
    model: str | None = None,
    batch_size: int = 64,
    device: DeviceLike = None,
    allow_empty: bool = False,
    progress: Progress | None = None,
    backend: str | None = None,
) -> tuple[float, Any]:
    """:func:`homogenization` of ``texts`` under BERTScore, and the texts'
    :class:`~dialeval.metrics.engines.reduction.UnitSimilarity` (the F1 of every pair of distinct
    texts), from which ``dialeval evaluate --ci`` scores resamples without the model."""
    _check_options(
        "bertscore", False, progress, (model, None, batch_size, device, None, 1, backend)
    )
    texts = check_response_set(texts, "texts", min_size=2, allow_empty=allow_empty)
    kept: list = []
    score = _bertscore_homogenization(
        [texts],
        model,
        None,
        batch_size,
        device,
        None,
        allow_empty,
        progress,
        "texts",
        kept,
        backend,
    )[0]
    return score, kept[0]


def homogenization_per_set(
    response_sets: list[list[str]],
    measure: str = "rougel",
    use_stemmer: bool = False,
    model: str | None = None,
    num_layers: int | None = None,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    workers: int = 1,
    allow_empty: bool = False,
    progress: Progress | None = None,
    backend: str | None = None,
) -> list[float]:
    """:func:`homogenization` of each response set (at least two responses each)."""
    workers = _check_options(
        measure,
        use_stemmer,
        progress,
        (model, num_layers, batch_size, device, dtype, workers, backend),
    )
    if isinstance(response_sets, (str, bytes)) or not isinstance(response_sets, (list, tuple)):
        raise ArgumentError(
            "response_sets",
            "must be a list of response sets (lists of strings), got "
            f"{type(response_sets).__name__}",
        )
    if not response_sets:
        raise ArgumentError("response_sets", "is empty: give at least one response set")
    sets = [
        check_response_set(
            responses, f"response_sets[{index}]", min_size=2, allow_empty=allow_empty
        )
        for index, responses in enumerate(response_sets)
    ]
    if measure == "bertscore":
        return _bertscore_homogenization(
            sets,
            model,
            num_layers,
            batch_size,
            device,
            dtype,
            allow_empty,
            progress,
            argument="response_sets",
            backend=backend,
        )
    announce_work(progress, len(sets), "set")
    scores = []
    for responses in sets:
        scores.append(_lexical_homogenization(responses, measure, use_stemmer, workers, None))
        if progress is not None:
            progress(1)
    return scores


def homogenization(
    texts: list[str],
    measure: str = "rougel",
    use_stemmer: bool = False,
    model: str | None = None,
    num_layers: int | None = None,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    workers: int = 1,
    allow_empty: bool = False,
    progress: Progress | None = None,
    backend: str | None = None,
) -> float:
    """Mean over texts ``i`` of the mean similarity of every other text to ``t_i`` (in [0, 1]).

    Args:
        texts: a corpus, or one response set: at least two texts.
        measure: ``"rougel"`` (ROUGE-L F-measure, default), ``"bleu"`` (BLEU-4 of the others
            against each text) or ``"bertscore"`` (BERTScore F1, unrescaled).
        use_stemmer: Porter-stem ROUGE-L's tokens longer than 3 characters (``rouge_score``'s
            ``use_stemmer``); ROUGE-L only.
        model: BERTScore's encoder (a Hub id in the local cache or a directory); default
            ``microsoft/deberta-base-mnli``, the package's.
        num_layers: BERTScore's layer; None means bert_score's choice for the deberta-mnli models
            (9 for deberta-base-mnli) and the engine's default otherwise (17 for roberta-large,
            else the last layer).
        batch_size, device, dtype: BERTScore's encoder batches, torch device and weight dtype.
        backend: BERTScore's encoder runtime, "torch", "onnx" or "openvino"
            (:mod:`dialeval.runtimes`).
            The BERTScore options are checked with every ``measure``: a malformed one is
            refused, never ignored.
        workers: threads of the ROUGE-L scorer (``-1``: one per CPU; at most 1,024).
        allow_empty: accept empty / whitespace-only texts (they match nothing: similarity 0).
        progress: called with the units of work done (rows of distinct texts for ROUGE-L,
            sentences encoded for BERTScore), e.g. ``tqdm(total=...).update``.

    Raises:
        ValueError: fewer than two texts, a non-string or (without ``allow_empty``) empty text,
            an unknown ``measure``, or a bad option, naming the argument.
        ModelNotAvailableError: BERTScore's model is not on this machine.
    """
    workers = _check_options(
        measure,
        use_stemmer,
        progress,
        (model, num_layers, batch_size, device, dtype, workers, backend),
    )
    texts = check_response_set(texts, "texts", min_size=2, allow_empty=allow_empty)
    if measure == "bertscore":
        return _bertscore_homogenization(
            [texts],
            model,
            num_layers,
            batch_size,
            device,
            dtype,
            allow_empty,
            progress,
            argument="texts",
            backend=backend,
        )[0]
    if measure == "rougel":
        announce_work(progress, len(set(texts)), "text")
    return _lexical_homogenization(texts, measure, use_stemmer, workers, progress)


def homogenization_score(
    predictions: list[str] | list[list[str]],
    measure: str = "rougel",
    use_stemmer: bool = False,
    model: str | None = None,
    num_layers: int | None = None,
    batch_size: int = 64,
    device: DeviceLike = None,
    dtype: str | None = None,
    workers: int = 1,
    allow_empty: bool = False,
    progress: Progress | None = None,
    backend: str | None = None,
) -> dict:
    """The figures of the evaluate module: one score for a corpus (a flat list), or per set and
    their mean."""
    options: dict[str, Any] = dict(
        measure=measure,
        use_stemmer=use_stemmer,
        model=model,
        num_layers=num_layers,
        batch_size=batch_size,
        device=device,
        dtype=dtype,
        workers=workers,
        allow_empty=allow_empty,
        progress=progress,
        backend=backend,
    )
    described = {"measure": measure}
    if measure == "bertscore":
        described["model"] = DEFAULT_HOMOGENIZATION_MODEL if model is None else model
    if split_scope(predictions, "predictions") == "corpus":
        corpus = check_response_set(predictions, "predictions", min_size=2, allow_empty=allow_empty)
        return {
            "scope": "corpus",
            "homogenization": homogenization(corpus, **options),
            **described,
            "num_responses": len(corpus),
        }
    sets = [
        check_response_set(responses, f"predictions[{index}]", min_size=2, allow_empty=allow_empty)
        for index, responses in enumerate(predictions)
    ]
    per_set = homogenization_per_set(sets, **options)
    return {
        "scope": "response_set",
        "homogenization": sum(per_set) / len(per_set),
        **described,
        "num_sets": len(per_set),
        "per_set": [{"homogenization": value} for value in per_set],
    }


__all__ = [
    "DEFAULT_HOMOGENIZATION_MODEL",
    "MEASURES",
    "homogenization",
    "homogenization_per_set",
    "homogenization_score",
    "rouge_tokens",
]
