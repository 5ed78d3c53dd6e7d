"""DTG over many contexts: fixed batches, one seed per batch, split across Accelerate processes.

Each batch of ``batch_size`` consecutive contexts is seeded with ``seed + batch index`` before
its DTG run, so a batch's result depends only on its contexts, the seed and the model: the same
on one process or many (``accelerate launch``), and the same when a killed run resumes at a
batch boundary. Processes take batches round-robin; after every round the results are gathered
on all processes and handed to ``on_batch`` in context order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch

from dialeval.distributed import process_state
from dialeval.generation.dtg import DTGResult, build_objective, diversity_threshold_generate
from dialeval.validation import ArgumentError, check_int

if TYPE_CHECKING:
    from dialeval.generation.generation_settings import GenerativeModel
    from dialeval.type_aliases import Tokenizer


def run_dtg(
    model: GenerativeModel,
    tokenizer: Tokenizer,
    contexts: Sequence[str],
    *,
    seed: int = 0,
    batch_size: int = 8,
    start_batch: int = 0,
    on_batch: Callable[[int, list[DTGResult]], None] | None = None,
    **dtg_options: Any,
) -> list[DTGResult]:
    """:func:`diversity_threshold_generate` over ``contexts`` in seeded batches, split across
    processes.

    Args:
        contexts: context strings (already formatted for the model).
        seed: batch ``k`` runs under ``torch.manual_seed(seed + k)``.
        batch_size: contexts per batch (and per ``generate`` call); part of the result's identity.
        start_batch: skip the batches before this one (resuming a run).
        on_batch: called as ``on_batch(k, results_of_batch_k)`` for every batch in order, on every
            process (write files from the main process only).
        dtg_options: ``metric``, ``threshold``, ``num_responses``, ``decoding``, ... and
            ``generate`` kwargs.

    Returns:
        The results of every batch from ``start_batch`` on, in context order, on every process.
    """
    # accelerate: deferred, so importing this module loads no model stack
    from accelerate.utils import gather_object

    if isinstance(contexts, str) or not all(isinstance(context, str) for context in contexts):
        raise ArgumentError("contexts", "must be a sequence of strings")
    check_int(batch_size, "batch_size", 1)
    check_int(start_batch, "start_batch", 0)
    check_int(seed, "seed", 0)
    state = process_state()
    num_batches = -(-len(contexts) // batch_size)
    if isinstance(dtg_options.get("metric", "nli"), str):
        # One objective for the whole run: its model is loaded once, not per batch.
        dtg_options["metric"] = build_objective(
            dtg_options.get("metric", "nli"),
            dtg_options.pop("metric_options", None),
            dtg_options.pop("nli_objective", None),
            dtg_options.pop("nli_model", None),
        )
    results: list[DTGResult] = []
    for round_start in range(start_batch, num_batches, state.num_processes):
        batch_index = round_start + state.process_index
        mine = []
        if batch_index < num_batches:
            torch.manual_seed(seed + batch_index)
            batch = list(contexts[batch_index * batch_size : (batch_index + 1) * batch_size])
            mine = [
                (batch_index, diversity_threshold_generate(model, tokenizer, batch, **dtg_options))
            ]
        gathered = gather_object(mine) if state.num_processes > 1 else mine
        for index, batch_results in sorted(gathered, key=lambda item: item[0]):
            if on_batch is not None:
                on_batch(index, batch_results)
            results.extend(batch_results)
    return results
