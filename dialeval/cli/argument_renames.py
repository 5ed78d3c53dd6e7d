"""An error of a function a job calls, in the job's own argument names.

A job passes its setting ``metric_model`` to a scorer as ``model``: the scorer's error says
```model```, which the command line would then read as the job's own ``--model`` (the generator).
:func:`in_caller_names` rewrites such an error in the names the caller's settings have, which the
command line maps to its flags like any other.
"""

from __future__ import annotations

from collections.abc import Mapping

from dialeval.cli.options import name_flags
from dialeval.hub import ModelNotAvailableError
from dialeval.validation import ArgumentProblem

#: What ``dialeval dtg`` passes to its diversity objective, by the objective's argument name.
DTG_METRIC_ARGUMENTS = {
    "model": "metric_model",
    "dtype": "metric_dtype",
    "batch_size": "nli_batch_size",
}
#: What ``dialeval dtg-summary`` passes to BERTScore, by BERTScore's argument name.
DTG_SUMMARY_BERTSCORE_ARGUMENTS = {"model": "bertscore_model"}


def in_caller_names(error: Exception, names: Mapping[str, str]) -> Exception:
    """``error`` (a ValueError or OSError) with each callee argument name in ``names`` written as
    the caller's: an :class:`~dialeval.validation.ArgumentError` is renamed (it stays structured,
    for the command line's own mapping); a missing model stays
    a :class:`~dialeval.hub.ModelNotAvailableError`."""
    if isinstance(error, ArgumentProblem):
        return error.renamed(names)
    message = name_flags(error, names)
    if isinstance(error, ModelNotAvailableError):
        return ModelNotAvailableError(message)
    return (ValueError if isinstance(error, ValueError) else OSError)(message)
