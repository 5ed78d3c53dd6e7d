"""``dialeval dtg``: Diversity Threshold Generation over a test set, written as JSONL, resumable.

One line per context (in order) holds the context and its :class:`~dialeval.generation.DTGResult`;
``OUTPUT.run.json`` records the run's settings. Lines are written and flushed a batch at a
time by the main process; a killed run restarted with the same settings keeps every complete
batch, drops a half-written one, and continues from there. Batches are seeded by their index
(:func:`dialeval.generation.dtg_runner.run_dtg`), so the resumed file equals an uninterrupted
run's. ``--trials K`` repeats the run K times (§6.1: "all experiments are averaged over 10
trials"), trial ``t`` seeding batch ``k`` with ``seed + t * num_batches + k``; the lines of trial
``t`` follow those of trial ``t - 1``, each with its ``trial`` number.

The summary is the paper's Table 4 (starting / ending diversity, number resampled), App. C's
utterance overlap and, when the contexts come with human responses, Table 5's relevance (BLEU and
BERTScore of the starting and ending sets; :mod:`dialeval.cli.dtg_relevance`); over several trials,
the mean and standard deviation of each figure across trials.

``OUTPUT.run.json`` records the settings, the format version and the effective decoding settings
(:func:`dialeval.generation.dtg_decoding.decoding_record`). Format 2 changed what ``max_samples``
means (S counts resamples, not the first n draws): a file of format 1 (no ``format`` key) is
still summarized (its ``num_sampled`` minus n is its number of resamples) but not resumed.

The command is laid out as ``evaluate`` is: :mod:`~dialeval.cli.dtg_options` (the options),
:mod:`~dialeval.cli.dtg_contexts` (the reader), :mod:`~dialeval.cli.dtg_writer` (the resumable
output), :mod:`~dialeval.cli.dtg_summary` (the run reader and the tables) and this module, the
runner.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm.auto import tqdm

from dialeval.cli.argument_renames import DTG_METRIC_ARGUMENTS, in_caller_names
from dialeval.cli.dtg_contexts import DTGContext, contexts_sha256, format_context
from dialeval.cli.dtg_options import SAMPLING_OPTIONS, DTGOptions, sampling_defaults
from dialeval.cli.dtg_summary import read_run, summarize
from dialeval.cli.dtg_writer import ResumableJsonl
from dialeval.cli.safe_output import Interrupted
from dialeval.deprecation import renamed_attributes
from dialeval.distributed import broadcast_int, process_state
from dialeval.generation.dtg import DTGResult, build_objective, context_token_limit
from dialeval.generation.dtg_decoding import decoding_record, dtg_generation_config
from dialeval.generation.dtg_runner import run_dtg
from dialeval.hub import load_model
from dialeval.type_aliases import DeviceLike, Tokenizer
from dialeval.validation import ArgumentError, check_int

if TYPE_CHECKING:
    from transformers import PreTrainedModel


def load_generator(
    model: str, device: DeviceLike = None, dtype: str | None = None
) -> tuple[PreTrainedModel, Tokenizer]:
    """A causal or seq2seq model (by its config) and its tokenizer,
    through :func:`dialeval.hub.load_model`."""
    loaded = load_model(model, "language_model", device=device, dtype=dtype)
    return loaded.model, loaded.tokenizer


def _metric_options(settings: DTGOptions, device: DeviceLike) -> dict[str, Any]:
    if settings.metric == "distinct_n":
        if settings.metric_model:
            raise ArgumentError("metric_model", "does not apply to distinct_n (a lexical metric)")
        if settings.metric_dtype:
            raise ArgumentError("metric_dtype", "does not apply to distinct_n (a lexical metric)")
        return {}
    options: dict[str, Any] = {
        "device": device,
        "dtype": settings.metric_dtype,
        "batch_size": settings.nli_batch_size,
    }
    if settings.metric_model:
        options["model"] = settings.metric_model
    if settings.metric == "nli":
        options["nli_objective"] = settings.nli_objective
    return options


def _generation_options(settings: DTGOptions) -> dict[str, Any]:
    options: dict[str, Any] = {"max_new_tokens": settings.max_new_tokens}
    sampling = {name: getattr(settings, name) for name in SAMPLING_OPTIONS}
    if settings.decoding == "sample":
        options.update(sampling)
    else:
        defaults = sampling_defaults()
        changed = sorted(key for key, value in sampling.items() if value != defaults[key])
        if changed:
            raise ValueError(f"{changed} apply to --decoding sample, not to beam search")
    for key in ("min_new_tokens", "no_repeat_ngram_size", "repetition_penalty"):
        if getattr(settings, key) is not None:
            options[key] = getattr(settings, key)
    return options


def run_dtg_job(
    settings: DTGOptions,
    contexts: list[DTGContext],
    output: str | Path,
    overwrite: bool = False,
    device: DeviceLike = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Runs (or resumes) DTG over ``contexts`` into ``output``; returns the Table 4 summary row.

    Under ``accelerate launch`` every process runs its share of the batches; only the main
    process writes, and only it returns the summary (the others return ``{}``).
    """
    check_int(settings.trials, "trials")
    if not contexts:
        raise ValueError("no contexts to run DTG on")
    if settings.metric != "nli" and settings.nli_objective != "nli_diversity":
        raise ArgumentError("nli_objective", "applies to --metric nli")
    state = process_state()
    model, tokenizer = load_generator(settings.model, device=device, dtype=settings.dtype)
    is_encoder_decoder = model.config.is_encoder_decoder
    texts = [
        format_context(context.turns, tokenizer, is_encoder_decoder, settings.turn_separator)
        for context in contexts
    ]
    try:
        objective = build_objective(settings.metric, _metric_options(settings, device))
    except (ValueError, OSError) as error:
        # the objective's `model` is our --metric-model, not --model
        raise in_caller_names(error, DTG_METRIC_ARGUMENTS) from error
    generation = _generation_options(settings)
    config, _ = dtg_generation_config(
        model, tokenizer, settings.decoding, settings.num_beams, None, generation
    )
    max_context_tokens = settings.max_context_tokens
    if max_context_tokens is None:
        max_context_tokens = context_token_limit(model, tokenizer, config)
    recorded: dict[str, Any] = {
        "effective_decoding": {
            **decoding_record(config, settings.decoding),
            "max_context_tokens": max_context_tokens,
        },
        # the contexts themselves, not their file's name: an input rewritten in place must not be
        # resumed
        "contexts_sha256": contexts_sha256(contexts),
    }
    if settings.metric == "sent_bert":
        # its default threshold depends on the embedder: a resumed run must keep it
        recorded["effective_threshold"] = (
            objective.default_threshold if settings.threshold is None else settings.threshold
        )
    num_contexts = len(contexts)
    num_batches = -(-num_contexts // settings.batch_size)
    writer: ResumableJsonl | None = None
    num_done = 0
    if state.is_main_process:
        writer = ResumableJsonl(
            output,
            settings,
            settings.batch_size,
            overwrite=overwrite,
            num_contexts=num_contexts,
            recorded=recorded,
        )
        num_done = writer.num_done
    num_done = broadcast_int(num_done)
    total = num_contexts * settings.trials
    bar = tqdm(
        total=total,
        initial=num_done,
        disable=not (progress and state.is_main_process),
        desc="DTG contexts",
    )
    first_trial, done_in_trial = divmod(num_done, num_contexts)
    try:
        for trial in range(first_trial, settings.trials):

            def write_batch(batch_index: int, results: list[DTGResult], trial: int = trial) -> None:
                first = batch_index * settings.batch_size
                if writer is not None:
                    writer.append(
                        [
                            {
                                "trial": trial,
                                "index": first + offset,
                                "id": contexts[first + offset].id,
                                "context": contexts[first + offset].turns,
                                **(
                                    {"references": contexts[first + offset].references}
                                    if contexts[first + offset].references
                                    else {}
                                ),
                                **result.to_dict(),
                            }
                            for offset, result in enumerate(results)
                        ]
                    )
                bar.update(len(results))

            run_dtg(
                model,
                tokenizer,
                texts,
                seed=settings.seed + trial * num_batches,
                batch_size=settings.batch_size,
                start_batch=done_in_trial // settings.batch_size if trial == first_trial else 0,
                on_batch=write_batch,
                metric=objective,
                threshold=settings.threshold,
                num_responses=settings.num_responses,
                max_samples=settings.max_samples,
                decoding=settings.decoding,
                max_context_tokens=max_context_tokens,
                tie_break=settings.tie_break,
                **({"num_beams": settings.num_beams} if settings.decoding == "beam" else {}),
                **generation,
            )
    except Interrupted as stop:  # the appends are whole batches: the file ends at one
        if writer is not None:
            trials = f" ({settings.trials} trials of {num_contexts})" if settings.trials > 1 else ""
            stop.detail = (
                f"{writer.num_done} of {total} contexts{trials} are in {output}; rerun "
                "the same command to resume"
            )
        raise
    bar.close()
    state.wait_for_everyone()
    if not state.is_main_process:
        return {}
    recorded_settings, records = read_run(output)
    return summarize(recorded_settings, records)


# The settings class was DTGRunSettings, beside every other command's *Options.
__getattr__ = renamed_attributes(__name__, {"DTGRunSettings": "DTGOptions"})
