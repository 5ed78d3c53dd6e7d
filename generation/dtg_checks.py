"""DTG's own settings checked before anything is loaded or generated, so none runs silently.

``threshold`` is compared with ``>`` against a diversity: NaN is never exceeded, ``inf`` never
reached, a string or a bool compares by accident, so each is refused. ``top_p`` is nucleus
sampling's mass, in (0, 1] (transformers accepts 0 and values above 1 without a word), and
``min_new_tokens`` above ``max_new_tokens`` (or below 0) cannot be honoured. ``temperature`` and
``repetition_penalty`` divide the logits: transformers refuses NaN and 0 but samples uniformly at
``inf`` (and names ``repetition_penalty`` ``penalty``), so both must be finite and positive. Errors
name the Python argument in backticks, which the CLI turns into its flag.
"""

from __future__ import annotations

import math
import numbers
from typing import TypeGuard

from dialeval.validation import ArgumentError, check_flag, check_int

#: The largest set size ``n`` (§6.1 uses 5). The first set costs n(n-1) NLI pairs per context and
#: each generate call returns n rows per context: beyond this a run would not end in useful time.
MAX_NUM_RESPONSES = 1024
#: The most resamples ``S`` after the first n (§6.1 uses 20): each is one generate call per context
#: still below the threshold, and an unreachable threshold runs all of them.
MAX_SAMPLES = 10_000
#: The most beams of App. D's variant (25 there): one beam search holds them all in memory.
MAX_NUM_BEAMS = 1024


def _is_real(value: object) -> TypeGuard[float]:  # any real number, bool excepted
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_threshold(threshold: object) -> float | None:
    """``threshold`` as a finite float (None stays None: the metric's default)."""
    if threshold is None:
        return None
    if not _is_real(threshold) or not math.isfinite(threshold):
        raise ArgumentError(
            "threshold",
            "must be a finite number (DTG stops once the diversity is above it), "
            f"got {type(threshold).__name__}: {threshold!r:.60}",
        )
    return float(threshold)


def check_top_p(top_p: object) -> None:
    """``top_p`` in (0, 1] (None: unset)."""
    if top_p is not None and (not _is_real(top_p) or not 0 < top_p <= 1):
        raise ArgumentError(
            "top_p",
            "must be a number in (0, 1] (nucleus sampling's probability mass), "
            f"got {type(top_p).__name__}: {top_p!r:.60}",
        )


def check_new_token_bounds(min_new_tokens: object, max_new_tokens: object) -> None:
    """``min_new_tokens`` no larger than ``max_new_tokens`` when both are set."""
    if _is_real(min_new_tokens) and _is_real(max_new_tokens) and min_new_tokens > max_new_tokens:
        raise ArgumentError(
            "min_new_tokens",
            f"({min_new_tokens}) must not exceed `max_new_tokens` ({max_new_tokens}): "
            "no response could be both",
        )


#: The smallest ``temperature`` / ``repetition_penalty``: float32's machine epsilon. Dividing the
#: logits by less overflows float32 for ordinary logits (a subnormal 2e-309 gives inf, then NaN
#: probabilities and torch.multinomial's RuntimeError), and at that scale sampling is already
#: greedy.
MIN_LOGIT_DIVISOR = 2.0**-23
#: The largest: float32's largest finite number (generate() processes logits in float32, where a
#: larger value is inf and -inf / inf gives NaN probabilities).
MAX_LOGIT_DIVISOR = (2 - 2.0**-23) * 2.0**127


def check_positive_finite(value: object, argument: str) -> None:
    """``value`` a number in [:data:`MIN_LOGIT_DIVISOR`,
    :data:`MAX_LOGIT_DIVISOR`] (None: unset)."""
    if value is not None and (
        not _is_real(value) or not MIN_LOGIT_DIVISOR <= value <= MAX_LOGIT_DIVISOR
    ):
        raise ArgumentError(
            argument,
            f"must be a finite number in [{MIN_LOGIT_DIVISOR:.3g}, {MAX_LOGIT_DIVISOR:.3g}] (it "
            "divides the logits, in float32: outside that range they overflow; decode greedily "
            f"for a near-zero temperature), got {type(value).__name__}: {value!r:.60}",
        )


def check_min_new_tokens(min_new_tokens: object) -> None:
    """``min_new_tokens`` an int >= 0 (None: unset)."""
    if min_new_tokens is not None and (
        not isinstance(min_new_tokens, numbers.Integral)
        or isinstance(min_new_tokens, bool)
        or min_new_tokens < 0
    ):
        raise ArgumentError(
            "min_new_tokens",
            f"must be an int >= 0, got {type(min_new_tokens).__name__}: {min_new_tokens!r:.60}",
        )


def check_bounded_int(value: object, argument: str, minimum: int, maximum: int, why: str) -> int:
    """``value`` as an int in [``minimum``, ``maximum``] (numpy ints accepted, bools refused)."""
    value = check_int(value, argument, minimum)
    if value > maximum:
        raise ArgumentError(argument, f"must be at most {maximum} ({why}), got {value}")
    return value


def check_num_responses(num_responses: object, argument: str = "num_responses") -> int:
    """n, the set size: an int in [2, :data:`MAX_NUM_RESPONSES`]."""
    return check_bounded_int(
        num_responses,
        argument,
        2,
        MAX_NUM_RESPONSES,
        "the first set alone costs n(n-1) NLI pairs per context; §6.1 uses 5",
    )


def check_max_samples(max_samples: object) -> int:
    """S, the most resamples: an int in [0, :data:`MAX_SAMPLES`]."""
    return check_bounded_int(
        max_samples,
        "max_samples",
        0,
        MAX_SAMPLES,
        "each resample is a generate call; §6.1 uses 20",
    )


def check_num_beams(num_beams: object, num_responses: int) -> int:
    """App. D's beams: an int in [``num_responses``, :data:`MAX_NUM_BEAMS`]."""
    if (
        isinstance(num_beams, bool)
        or not isinstance(num_beams, numbers.Integral)
        or num_beams < num_responses
    ):
        raise ArgumentError(
            "num_beams", f"must be an int >= `num_responses` ({num_responses}), got {num_beams!r}"
        )
    return check_bounded_int(
        num_beams, "num_beams", num_responses, MAX_NUM_BEAMS, "one beam search holds them all"
    )


def check_max_new_tokens(max_new_tokens: object) -> None:
    """``max_new_tokens`` a positive int (None: unset)."""
    if max_new_tokens is not None:
        check_int(max_new_tokens, "max_new_tokens", 1)


def check_optional_flag(value: object, argument: str) -> bool | None:
    """None (the generation config decides) or True / False; ``"yes"`` or ``1`` is refused."""
    return None if value is None else check_flag(value, argument)


def check_dtg_settings(
    threshold: object = None,
    top_p: object = None,
    min_new_tokens: object = None,
    max_new_tokens: object = None,
    temperature: object = None,
    repetition_penalty: object = None,
) -> float | None:
    """Every check above; returns the threshold as a float (or None)."""
    check_top_p(top_p)
    check_positive_finite(temperature, "temperature")
    check_positive_finite(repetition_penalty, "repetition_penalty")
    check_min_new_tokens(min_new_tokens)
    check_max_new_tokens(max_new_tokens)
    check_new_token_bounds(min_new_tokens, max_new_tokens)
    return check_threshold(threshold)
