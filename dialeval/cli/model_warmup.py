"""Model start-up overlapped with the job's first work: ``dialeval evaluate`` starts importing the
model stack (torch, sentence-transformers or transformers, the accelerator's context) in a
background thread as soon as its plan is checked, while the main thread reads the input and runs
the model-free steps; once the input is read, the job hands it the sentence models it will
encode with (:func:`load_ahead`). Every step that may run a model first waits until the thread
is done (:func:`settle_before`): the two threads never import or load a model at once. The
encoding of each sentence model then takes its model (:func:`wait_for_model`), where an
exception of the thread is raised as it was raised there.

The thread loads through :func:`dialeval.hub.load_model` with the arguments the encoding itself
uses (:func:`sentence_model_loading`), so the step finds the loaded model in that function's
cache: the same weights on the same device, the same figures with and without the thread.
"""

from __future__ import annotations

import contextlib
import contextvars
from concurrent import futures
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

    from dialeval.metrics.engines.job_steps import JobStep, Settings

_CURRENT: contextvars.ContextVar[ModelWarmUp | None] = contextvars.ContextVar(
    "dialeval_model_warm_up", default=None
)


def sentence_model_loading(model: str, options: Settings) -> dict[str, Any]:
    """The arguments of :func:`dialeval.hub.load_model` for ``model`` as the job's encoding loads
    it (``encode_for_job``: the job's ``--device``, the default dtype)."""
    return {
        "model": model,
        "kind": "sentence_transformers",
        "device": options.device,
        "dtype": None,
    }


def _import_model_stack(sentence_models: bool, device: str | None) -> None:
    """What every model step of the job needs before its model: torch, the loading library, the
    device (on an accelerator, its context: seconds)."""
    # torch and the loaders: deferred to this thread, the point of it
    import torch

    from dialeval.hub import resolve_device

    if sentence_models:
        import sentence_transformers  # noqa: F401 - imported for its start-up cost only
    else:
        from transformers import PreTrainedModel  # noqa: F401 - imported for its start-up cost
    resolved = resolve_device(device)
    if resolved.type != "cpu":
        torch.empty(0, device=resolved)  # the accelerator's context is created on first use


def _load(arguments: dict[str, Any]) -> None:
    # the loader: deferred to this thread, the point of it
    from dialeval.hub import load_model

    load_model(**arguments)


class ModelWarmUp:
    """One background thread that prepares the job's models in order: the model stack first, then
    each sentence model :meth:`load` is given."""

    def __init__(self, sentence_models: bool, device: str | None) -> None:
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dialeval-warm-up")
        self._loads: dict[str, Future[None]] = {}
        # its failure (no torch, a bad --device) is the first model step's to report, as it would
        self._stack = self._thread.submit(_import_model_stack, sentence_models, device)

    def load(self, model: str, options: Settings) -> None:
        if model not in self._loads:
            self._loads[model] = self._thread.submit(_load, sentence_model_loading(model, options))

    def settle(self) -> None:
        """Until the thread has done all it was given, whether that worked or not."""
        futures.wait([self._stack, *self._loads.values()])

    def wait(self, model: str) -> None:
        """Until ``model`` is loaded, if it was asked for; its loading's exception, unchanged."""
        loading = self._loads.get(model)
        if loading is not None:
            loading.result()

    def close(self) -> None:
        """Drop what has not started; wait for what has (a thread left importing torch at exit
        could leave the interpreter half torn down under it)."""
        self._thread.shutdown(wait=True, cancel_futures=True)


def uses_models(plan: list[tuple[JobStep, str | None]]) -> tuple[bool, bool]:
    """Whether the planned steps run a model at all, and whether one embeds with a
    sentence-transformers model."""
    sentence = any(step.sentence_texts is not None for step, _ in plan)
    return sentence or any(model is not None for _, model in plan), sentence


@contextlib.contextmanager
def warming_up(plan: list[tuple[JobStep, str | None]], options: Settings) -> Iterator[None]:
    """The block runs with a :class:`ModelWarmUp` started, when ``plan`` runs a model."""
    needed, sentence = uses_models(plan)
    if not needed:
        yield
        return
    warm_up = ModelWarmUp(sentence, options.device)
    token = _CURRENT.set(warm_up)
    try:
        yield
    finally:
        _CURRENT.reset(token)
        warm_up.close()


def load_ahead(models: list[str], options: Settings) -> None:
    """Inside :func:`warming_up`, start loading each sentence model of ``models`` in the
    background thread; elsewhere nothing."""
    warm_up = _CURRENT.get()
    if warm_up is not None:
        for model in models:
            warm_up.load(model, options)


def settle_before(step: JobStep, model: str | None) -> None:
    """Inside :func:`warming_up`, before a step that may run a model: wait until the thread has
    done all it was given, so that it never imports or loads while this thread does
    (transformers' lazy module is not safe under concurrent first imports); only the model-free
    steps and the reading run beside it."""
    warm_up = _CURRENT.get()
    may_run_a_model = (
        model is not None or step.model_flag is not None or step.sentence_texts is not None
    )
    if warm_up is not None and may_run_a_model:
        warm_up.settle()


def wait_for_model(model: str) -> None:
    """Inside :func:`warming_up`, wait for ``model``'s loading (raising its exception); elsewhere
    nothing."""
    warm_up = _CURRENT.get()
    if warm_up is not None:
        warm_up.wait(model)
