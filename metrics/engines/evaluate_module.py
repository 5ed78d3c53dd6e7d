"""The base of every dialeval ``evaluate`` module: evaluate's contract, kept by one class.

``evaluate.Metric`` queues the inputs of ``add`` / ``add_batch`` (and of
``compute(predictions=...)``) in an Arrow cache, gathers them, from every process in its distributed
mode, on process 0 and calls ``_compute`` on them there. :class:`DialevalMetric` keeps that
contract:

- ``compute(predictions=X)`` equals ``add_batch`` in chunks then ``compute()`` and ``add`` one by
  one then ``compute()``: the metric validates the gathered inputs in ``_compute``;
- each batch's raw types are checked before evaluate encodes it (evaluate would stringify a
  nested item or a number silently), with errors naming the user's argument (``predictions[3]``,
  or ``prediction`` for ``add``);
- an error in ``add``, ``add_batch`` or ``compute`` discards every queued input, so the next
  ``compute`` scores only what it is given (otherwise a rejected batch is scored again later);
- ``compute`` refuses an option that ``_compute`` does not list with a ``TypeError`` that names
  the options it has.

A module subclasses it, declares its features in ``_info`` and its options as ``_compute``'s
keyword arguments, and checks a batch's raw types in :meth:`DialevalMetric._check_batch`.
"""

from __future__ import annotations

import abc
import inspect
from typing import Any

import datasets
import evaluate
from datasets import Value

from dialeval.metrics.engines.evaluate_state import discard_queued, queued_feature_format
from dialeval.validation import (
    ArgumentError,
    ArgumentProblem,
    as_plain_python,
    check_module_predictions,
)


class DialevalMetric(evaluate.Metric, metaclass=abc.ABCMeta):
    """``evaluate.Metric`` with checked batches, explicit options and nothing queued after an error.

    Abstract, so that ``evaluate.load`` (which takes the first concrete ``EvaluationModule`` in a
    module script's namespace) picks the module's own class, not this imported base.
    """

    #: The ``_compute`` option that ``compute(references=...)`` fills when ``references`` is not a
    #: per-input feature (Sem-Ent's reference corpus has its own length); None: ``references`` is
    #: refused.
    references_option: str | None = None

    # -- hooks for the modules ---------------------------------------------------------------

    @abc.abstractmethod
    def _info(self) -> evaluate.MetricInfo:
        """The module's description, citation and input features."""

    @abc.abstractmethod
    def _compute(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The figures of the gathered inputs; its keyword arguments are the module's options,
        listed explicitly."""

    def _check_batch(self, batch: dict[str, list]) -> dict[str, list]:
        """Check one batch's raw types (one list per feature) and return the batch to store.

        Errors name the user's arguments (``predictions[3]``); :meth:`add` renames them for its
        single input. Sizes that depend on options are checked in ``_compute``, on the gathered
        inputs.
        """
        return batch

    # -- evaluate's entry points ---------------------------------------------------------------

    def compute(
        self, *, predictions: Any = None, references: Any = None, **kwargs: Any
    ) -> dict[str, Any] | None:
        """Score the given inputs together with every input queued by ``add`` / ``add_batch``.

        Returns the figures on the main process (``process_id`` 0) and None on the others. Any
        error discards the queued inputs. The module's inputs and options:
        """
        try:
            if references is not None and "references" not in self._input_names():
                kwargs[self._references_option()] = as_plain_python(references)
                references = None
            self._check_options(kwargs)
            if "references" in self._input_names():
                kwargs["references"] = references
            return super().compute(predictions=predictions, **kwargs)
        except BaseException:
            self._discard_queued()
            raise

    def add_batch(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> None:
        """Queue a batch of inputs (one list per input feature) for the next ``compute()``.

        Any error discards every queued input. The module's inputs:
        """
        try:
            batch = self._checked(self._batch_of(predictions, references, kwargs))
            super().add_batch(**batch)
        except BaseException:
            self._discard_queued()
            raise

    def add(self, *, prediction: Any = None, reference: Any = None, **kwargs: Any) -> None:
        """Queue one input (``prediction=``, or one value per input feature) for the next
        ``compute()``.

        Any error discards every queued input. The module's inputs:
        """
        try:
            # evaluate.combine's add passes the plural names; accept both, as evaluate's add does.
            example = {"predictions": prediction, "references": reference, **kwargs}
            names = {"predictions": "prediction", "references": "reference"}
            names.update({name: name for name in kwargs})
            rows = {name: None if value is None else [value] for name, value in example.items()}
            try:
                batch = self._checked(
                    self._batch_of(rows.pop("predictions"), rows.pop("references"), rows)
                )
            # the checks name `predictions[0]`; the user passed `prediction`
            except ArgumentProblem as error:
                raise error.renamed(_single_input_names(names)) from None
            super().add_batch(**batch)
        except BaseException:
            self._discard_queued()
            raise

    # -- the machinery -----------------------------------------------------------------------------

    def _references_option(self) -> str:
        if self.references_option is None:
            raise ArgumentError(
                "references", f"is not used by {self.name}; pass only {self._inputs_text()}"
            )
        return self.references_option

    def _input_names(self) -> list[str]:
        """The input features' names, in order (of the first format where ``features`` lists
        several, as evaluate reads them)."""
        features = self.features
        return list((features[0] if isinstance(features, list) else features).keys())

    def _inputs_text(self) -> str:
        return ", ".join(f"`{name}`" for name in self._input_names())

    def compute_options(self) -> list[str]:
        """The options ``compute`` takes: ``_compute``'s keyword arguments that are not input
        features (``references`` in place of :attr:`references_option`)."""
        inputs = set(self._input_names())
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        names = [
            p.name for p in inspect.signature(self._compute).parameters.values() if p.kind in kinds
        ]
        return [
            "references" if name == self.references_option else name
            for name in names
            if name not in inputs
        ]

    def _check_options(self, kwargs: dict[str, Any]) -> None:
        options = self.compute_options()
        unknown = sorted(
            set(kwargs) - set(options) - {self.references_option} - set(self._input_names())
        )
        if unknown:
            raise TypeError(
                f"{self.name}.compute() got unexpected keyword "
                f"argument{'s' if len(unknown) > 1 else ''} {unknown}; its inputs are "
                f"{self._input_names()} and its options {options}"
            )

    def _batch_of(
        self, predictions: Any, references: Any, kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        features = self._input_names()
        unknown = sorted(set(kwargs) - set(features))
        if unknown:
            raise ValueError(
                f"{unknown} are not inputs of {self.name}: its inputs are {features}; options go "
                "to compute()"
            )
        if references is not None and "references" not in features:
            if self.references_option is not None:
                raise ArgumentError(
                    "references",
                    f"of {self.name} is not one value per input: give it to "
                    "compute(references=...)",
                )
            self._references_option()
        # evaluate's base takes arrays, tensors and Series where it takes lists: the checks see
        # Python lists.
        given: dict[str, Any] = {
            name: as_plain_python(value)
            for name, value in {
                "predictions": predictions,
                "references": references,
                **kwargs,
            }.items()
        }
        missing = [name for name in features if given.get(name) is None]
        if missing:
            # An ArgumentError, so that ``add`` names its own input (``prediction``).
            raise ArgumentError(missing[0], f"is missing: {self.name} needs {self._inputs_text()}")
        for name in features:
            if isinstance(given[name], str) or not hasattr(given[name], "__len__"):
                raise ArgumentError(
                    name, f"must be a list (one item per input), got {type(given[name]).__name__}"
                )
        lengths = {name: len(given[name]) for name in features}
        if len(set(lengths.values())) > 1:
            names = " and ".join(f"`{name}`" for name in features)
            raise ValueError(
                f"{names} must have equal length (one item per input), got "
                f"{' and '.join(map(str, lengths.values()))}"
            )
        return {name: given[name] for name in features}

    def _checked(self, batch: dict[str, Any]) -> dict[str, Any]:
        batch = self._check_batch(batch)
        if not any(len(column) for column in batch.values()):
            raise ArgumentError(f"{next(iter(batch))}", "is empty: give at least one input")
        self._check_same_scope(batch)
        return batch

    def _check_same_scope(self, batch: dict[str, Any]) -> None:
        """A module with several feature formats (response sets or a corpus) takes one per
        compute."""
        queued_format = queued_feature_format(self)
        if queued_format is None or not isinstance(self.features, list):
            return
        queued_corpus = isinstance(queued_format["predictions"], Value)
        batch_corpus = isinstance(batch["predictions"][0], str)
        if queued_corpus != batch_corpus:
            kinds = ("corpus-scope input (strings)", "response sets (lists of strings)")
            raise ArgumentError(
                "predictions",
                f"is {kinds[not batch_corpus]} but the inputs queued before are "
                f"{kinds[not queued_corpus]}; one compute scores one scope (the queued inputs "
                "were discarded)",
            )

    def _discard_queued(self) -> None:
        """Drop every queued input, its cache files and their locks, as if nothing had been
        added."""
        discard_queued(self)


#: The ``predictions`` feature of each input scope: response sets (``list[list[str]]``) or a corpus
#: (``list[str]``).
PREDICTION_FEATURES = {
    "sets": datasets.Features({"predictions": datasets.Sequence(datasets.Value("string"))}),
    "corpus": datasets.Features({"predictions": datasets.Value("string")}),
}


class ResponsesMetric(DialevalMetric, metaclass=abc.ABCMeta):
    """A module whose one input is ``predictions``: response sets and/or a corpus (:attr:`scopes`).

    Its ``_info`` passes ``features=self.prediction_features()``; each batch is checked for the
    scopes' shapes.
    """

    #: The input scopes the module takes ("sets", "corpus"); a set-only or corpus-only module
    #: narrows it.
    scopes: tuple[str, ...] = ("sets", "corpus")

    def prediction_features(self) -> datasets.Features | list[datasets.Features]:
        """evaluate's features for :attr:`scopes`: one ``Features``, or the list evaluate tries in
        turn."""
        features = [PREDICTION_FEATURES[scope] for scope in self.scopes]
        return features[0] if len(features) == 1 else features

    def _check_batch(self, batch: dict[str, list]) -> dict[str, list]:
        check_module_predictions(batch["predictions"], scopes=self.scopes)
        return batch


def _single_input_names(names: dict[str, str]) -> dict[str, str]:
    """``add`` takes one input: the batch checks' ``predictions[0]`` (and ``predictions``) is
    ``prediction``."""
    return {
        key: name for input_name, name in names.items() for key in (input_name, f"{input_name}[0]")
    }
