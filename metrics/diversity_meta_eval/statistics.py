"""Meta-evaluation of a diversity metric (Tevet & Berant 2021, §3, §6.3-6.4).

A good diversity metric m_div correlates with the diversity parameter d that produced each
set: Spearman's rho between the two (decTest: d is the softmax temperature; conTest: d is the
binary content-diversity class), and for a binary d the optimal single-threshold classifier
accuracy (OCA, §6.4): the best accuracy of "predict high diversity iff m_div(S) > eta" over
every threshold eta.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np
from scipy.stats import pearsonr, spearmanr

from dialeval.validation import (
    ArgumentError,
    arguments_named,
    as_float_array,
    check_flag,
    check_int,
    check_real,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike


class UndefinedStatisticError(ValueError):
    """A statistic that is 0/0 for this input (a constant side): the message names the argument and
    why."""


#: Scores closer than this count as equal when placing a threshold between them.
OCA_TOLERANCE = 1e-5
#: Most bootstrap resamples: each costs one Spearman's rho (~0.1 ms), so this bounds the time to
#: seconds; Stasaski & Hearst draw 1,000.
MAX_RESAMPLES = 100_000
#: Fewest sets a resample may hold: Spearman's rho needs two values.
MIN_RESAMPLE_SIZE = 2


def check_numbers(values: object, argument: str) -> None:
    """``values`` must be a list of real numbers (evaluate would otherwise fail deep inside
    pyarrow)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise ArgumentError(argument, f"must be a list of numbers, got {type(values).__name__}")
    for index, value in enumerate(cast("Sequence[object]", values)):  # a list: checked above
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ArgumentError(
                f"{argument}[{index}]", f"must be a number, got {type(value).__name__}: {value!r}"
            )


def _paired(scores: ArrayLike, parameters: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    scores = as_float_array(scores, "scores")
    parameters = as_float_array(parameters, "parameters")
    if scores.ndim != 1 or scores.shape != parameters.shape:
        raise ArgumentError(
            "scores",
            f"and `parameters` must be 1-D and of equal length, got {scores.shape} and "
            f"{parameters.shape}",
        )
    if len(scores) < 2:
        raise ArgumentError("scores", f"must hold at least 2 values, got {len(scores)}")
    if not (np.isfinite(scores).all() and np.isfinite(parameters).all()):
        raise ArgumentError("scores", "and `parameters` must be finite numbers")
    return scores, parameters


def constant_input_reason(
    scores: ArrayLike,
    parameters: ArrayLike,
    undefined: str = "a correlation is undefined",
    arguments: tuple[str, str] = ("scores", "parameters"),
) -> str | None:
    """Why ``statistic`` is undefined for these paired values (a constant side), or None when it is
    defined.

    The reason names the constant argument and its value, e.g. "`scores` is constant (all 1.0):
    Spearman's rho is undefined". A correlation divides by each side's spread, so a side that
    never varies leaves it 0/0: scipy returns NaN with a warning; dialeval says which side.
    ``arguments`` are the two inputs' names as the caller knows them (the evaluate module's
    ``predictions`` / ``references``).
    """
    for argument, values in zip(arguments, (scores, parameters)):
        values = np.asarray(values, dtype=np.float64)
        if len(values) and np.ptp(values) == 0:
            return f"`{argument}` is constant (all {float(values[0])!r}): {undefined}"
    return None


def constant_resamples_reason(arguments: tuple[str, str] = ("scores", "parameters")) -> str:
    """Why the bootstrap interval is undefined when every resample is constant, naming ``arguments``
    as the caller knows them (as :func:`constant_input_reason`)."""
    return (
        f"every bootstrap resample was constant; `{arguments[0]}` or `{arguments[1]}` has too "
        "little variation"
    )


def _defined(statistic: float, name: str) -> float:
    # scipy's other NaN (none known for finite, varying input): never passed on
    if not np.isfinite(statistic):
        raise UndefinedStatisticError(
            f"{name} of `scores` and `parameters` is undefined (scipy returned {statistic!r})"
        )
    return float(statistic)


def spearman(scores: ArrayLike, parameters: ArrayLike) -> tuple[float, float]:
    """Spearman's rho between metric scores and diversity parameters, and its p-value (scipy).

    With two values scipy's p-value is NaN; it is 1.0 here, as scipy's ``pearsonr`` gives for two
    points: two points are always perfectly (anti-)correlated, so they are no evidence against
    independence.

    Raises a ValueError naming the constant argument when ``scores`` or ``parameters`` holds one
    value only (rho is 0/0 there, and scipy's NaN would pass silently into an average).
    """
    scores, parameters = _paired(scores, parameters)
    reason = constant_input_reason(scores, parameters, "Spearman's rho is undefined")
    if reason is not None:
        raise UndefinedStatisticError(reason)
    result = spearmanr(scores, parameters)
    rho = _defined(result.statistic, "Spearman's rho")
    p_value = 1.0 if len(scores) == 2 else float(result.pvalue)
    return rho, p_value


def pearson(scores: ArrayLike, parameters: ArrayLike) -> tuple[float, float]:
    """Pearson's r and its p-value (scipy); Tevet & Berant §6.3 contrast it with Spearman's rho.

    Raises a ValueError naming the constant argument, as :func:`spearman` does.
    """
    scores, parameters = _paired(scores, parameters)
    reason = constant_input_reason(scores, parameters, "Pearson's r is undefined")
    if reason is not None:
        raise UndefinedStatisticError(reason)
    result = pearsonr(scores, parameters)
    return _defined(result.statistic, "Pearson's r"), float(result.pvalue)


def optimal_classification_accuracy(
    scores: ArrayLike, labels: ArrayLike, tolerance: float = OCA_TOLERANCE
) -> tuple[float, float]:
    """OCA (§6.4) and its threshold, for binary ``labels`` (1 = high diversity, 0 = low).

    Every observed score is tried as a threshold: a set is predicted high when its score is
    above the threshold by more than ``tolerance``. A metric that ranks the classes the wrong
    way round is as informative, so each threshold's accuracy is ``max(acc, 1 - acc)``.
    """
    with arguments_named({"parameters": "labels"}):
        scores, labels = _paired(scores, labels)
    if (
        isinstance(tolerance, bool)
        or not isinstance(tolerance, (int, float, np.integer, np.floating))
        or not 0 <= tolerance < np.inf
    ):
        raise ArgumentError("tolerance", f"must be a finite number >= 0, got {tolerance!r}")
    if not np.isin(labels, (0.0, 1.0)).all():
        raise ArgumentError("labels", "must be 0 (low diversity) or 1 (high diversity)")
    thresholds = np.unique(np.concatenate([scores, [scores.min() - 1.0]]))
    predicted_high = scores[None, :] > thresholds[:, None] + tolerance
    accuracy = (predicted_high == labels[None, :].astype(bool)).mean(axis=1)
    accuracy = np.maximum(accuracy, 1.0 - accuracy)
    best = int(accuracy.argmax())
    return float(accuracy[best]), float(thresholds[best])


def subsampled_spearman(
    scores: ArrayLike,
    parameters: ArrayLike,
    sample_size: int = 200,
    repeats: int = 100,
    seed: int = 0,
) -> tuple[float, float]:
    """decTest's protocol (§6.3): mean and standard deviation of rho over ``repeats`` random
    subsets.

    A ValueError names the constant argument when ``scores`` or ``parameters`` is constant. A
    subset that happens to be constant on one side has no rho: it is left out of the mean and
    the spread (as :func:`bootstrap_spearman_ci` leaves out constant resamples), and when every
    subset is constant a ValueError says so; no NaN is returned.
    """
    scores, parameters = _paired(scores, parameters)
    reason = constant_input_reason(scores, parameters, "Spearman's rho is undefined")
    if reason is not None:
        raise UndefinedStatisticError(reason)
    sample_size, repeats, seed = (
        check_int(sample_size, "sample_size", 2),
        check_int(repeats, "repeats"),
        check_int(seed, "seed", 0),
    )
    if sample_size > len(scores):
        raise ArgumentError(
            "sample_size", f"must be between 2 and {len(scores)}, got {sample_size}"
        )
    rng = np.random.default_rng(seed)
    subsets = (rng.choice(len(scores), sample_size, replace=False) for _ in range(repeats))
    values = [
        spearman(scores[idx], parameters[idx])[0]
        for idx in subsets
        if np.ptp(scores[idx]) > 0 and np.ptp(parameters[idx]) > 0
    ]
    if not values:
        raise UndefinedStatisticError(
            f"every one of the {repeats} subsets of {sample_size} sets was constant in `scores` "
            "or `parameters`: Spearman's rho is undefined on each; raise `sample_size`"
        )
    return float(np.mean(values)), float(np.std(values))


def bootstrap_spearman_ci(
    scores: ArrayLike,
    parameters: ArrayLike,
    num_resamples: int = 1000,
    sample_fraction: float = 0.5,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile confidence interval of rho by Stasaski & Hearst's App. A protocol.

    ``num_resamples`` samples of ``sample_fraction`` of the sets (110 of conTest's 220 in the
    paper), drawn with replacement; rho of each; the central ``confidence`` interval.
    """
    scores, parameters = _paired(scores, parameters)
    num_resamples, size, confidence, seed = _bootstrap_options(
        num_resamples, sample_fraction, confidence, seed, len(scores)
    )
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(num_resamples):
        idx = rng.integers(0, len(scores), size)
        # A resample whose scores or parameters are all equal has no rank correlation.
        if np.ptp(scores[idx]) > 0 and np.ptp(parameters[idx]) > 0:
            values.append(spearman(scores[idx], parameters[idx])[0])
    if not values:
        raise UndefinedStatisticError(constant_resamples_reason())
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def _bootstrap_options(
    num_resamples: object,
    sample_fraction: object,
    confidence: object,
    seed: object,
    num_sets: int | None,
) -> tuple[int, int, float, int]:
    """The bootstrap's options checked (numpy numbers accepted): the number of resamples, the
    sets per resample (``sample_fraction`` of ``num_sets``, rounded; not checked when
    ``num_sets`` is None), the confidence and the seed."""
    num_resamples = check_int(num_resamples, "num_resamples", 2, maximum=MAX_RESAMPLES)
    fraction = check_real(sample_fraction, "sample_fraction", 0, 1, open_bounds=(True, False))
    confidence = check_real(confidence, "confidence", 0, 1, open_bounds=(True, True))
    seed = check_int(seed, "seed", 0)
    if num_sets is None:
        return num_resamples, 0, confidence, seed
    size = round(fraction * num_sets)
    if size < MIN_RESAMPLE_SIZE:
        # A resample of one set has no rank correlation; padding it to two would make every
        # rho +-1 and the interval meaningless.
        raise ArgumentError(
            "sample_fraction",
            f"={sample_fraction!r} leaves {size} of the {num_sets} sets per resample; "
            f"Spearman's rho needs at least {MIN_RESAMPLE_SIZE}: give at least "
            f"{MIN_RESAMPLE_SIZE}/{num_sets}",
        )
    return num_resamples, size, confidence, seed


def diversity_meta_evaluation(
    scores: ArrayLike,
    parameters: ArrayLike,
    bootstrap: bool = False,
    num_resamples: int = 1000,
    sample_fraction: float = 0.5,
    seed: int = 0,
) -> dict:
    """Spearman (+ p-value) and Pearson against the diversity parameter; OCA when it is binary
    (§6.4); with ``bootstrap=True`` the 95% interval of rho (Stasaski & Hearst, App. A).

    A report over many metrics keeps going when one metric gives every set the same score:
    the correlations (and the interval) are then None, never NaN, and ``undefined_reason`` says
    why (e.g. "`scores` is constant (all 0.0): Spearman's rho and Pearson's r are undefined");
    it is None when every figure is defined. OCA stays: it is defined for a constant score.
    """
    scores, parameters = _paired(scores, parameters)
    bootstrap = check_flag(bootstrap, "bootstrap")
    # Checked without bootstrap too: a malformed option is refused, never ignored (whether the
    # fraction leaves enough sets per resample matters only when resampling).
    _bootstrap_options(
        num_resamples, sample_fraction, 0.95, seed, len(scores) if bootstrap else None
    )
    reason = constant_input_reason(
        scores, parameters, "Spearman's rho and Pearson's r are undefined"
    )
    rho: float | None
    rho_p: float | None
    r: float | None
    r_p: float | None
    if reason is None:
        rho, rho_p = spearman(scores, parameters)
        r, r_p = pearson(scores, parameters)
    else:
        rho = rho_p = r = r_p = None
    result: dict[str, float | str | list[float] | None] = {
        "spearman": rho,
        "spearman_pvalue": rho_p,
        "pearson": r,
        "pearson_pvalue": r_p,
        "num_sets": len(scores),
        "undefined_reason": reason,
    }
    if np.isin(parameters, (0.0, 1.0)).all():
        result["oca"], result["oca_threshold"] = optimal_classification_accuracy(scores, parameters)
    if bootstrap:
        result["spearman_ci"] = None
        if reason is None:
            try:
                result["spearman_ci"] = list(
                    bootstrap_spearman_ci(
                        scores, parameters, num_resamples, sample_fraction, seed=seed
                    )
                )
            except UndefinedStatisticError as error:
                result["undefined_reason"] = f"spearman_ci: {error}"
    return result
