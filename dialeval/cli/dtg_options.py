"""``dialeval dtg``'s own options: everything that decides a run's output.

:class:`DTGOptions` is what ``main.py`` builds the ``dtg`` parser from (each default written once,
in its field) and what ``OUTPUT.run.json`` records (:mod:`dialeval.cli.dtg_writer`): a resumed
run must match it exactly. Its checks run when it is built, before any model loads or output is
written. Building the parser imports this module, so it imports no model library.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from dialeval.cli.options import option
from dialeval.validation import check_int, check_unicode_text

#: The flags of nucleus sampling (§6.2), which beam search (App. D) does not take.
SAMPLING_OPTIONS = ("top_p", "top_k", "temperature")


@dataclass
class DTGOptions:
    """Everything that decides a run's output: a resumed run must match it exactly."""

    model: str = field(
        metadata=option(
            "--model",
            help="causal (e.g. microsoft/DialoGPT-large) or seq2seq model id or directory",
        )
    )
    metric: str = field(
        metadata=option(
            "--metric",
            choices=("nli", "sent_bert", "distinct_n"),
            default="nli",
            help="the diversity the threshold applies to",
        )
    )
    contexts_from: str  # "dailydialog_pp:validation" or the input file
    metric_model: str | None = field(
        default=None,
        metadata=option(
            "--metric-model",
            help="NLI classifier (default FacebookAI/roberta-large-mnli) or sentence model for "
            "sent_bert",
        ),
    )
    threshold: float | None = field(
        default=None,
        metadata=option(
            "--threshold",
            help="stop when diversity is above this (default: nli 10, distinct_n 0.98, sent_bert "
            "the one calibrated for --metric-model: -0.1597 all-MiniLM-L6-v2, -0.179 the paper's "
            "bert-large-nli-stsb-mean-tokens)",
        ),
    )
    num_responses: int = field(
        default=5, metadata=option("--num-responses", help="n, the set size")
    )
    max_samples: int = field(
        default=20,
        metadata=option("--max-samples", help="S, most resamples per context after the first n"),
    )
    decoding: str = field(
        default="sample",
        metadata=option(
            "--decoding", choices=("sample", "beam"), help="nucleus sampling (§5) or App. D's beams"
        ),
    )
    num_beams: int = field(
        default=25, metadata=option("--num-beams", help="beams for --decoding beam")
    )
    top_p: float = field(default=0.9, metadata=option("--top-p", help="nucleus p"))
    max_new_tokens: int = field(
        default=40, metadata=option("--max-new-tokens", help="most tokens per response")
    )
    max_context_tokens: int | None = field(
        default=None,
        metadata=option(
            "--max-context-tokens",
            help="keep each context's last N tokens (the paper gives BlenderBot 128)",
        ),
    )
    turn_separator: str | None = field(
        default=None,
        metadata=option(
            "--turn-separator",
            help="joins context turns (default: EOS after every turn for causal models, newline "
            "for seq2seq)",
        ),
    )
    seed: int = field(
        default=0, metadata=option("--seed", help="batch k is sampled under seed + k")
    )
    batch_size: int = field(
        default=8,
        metadata=option("--batch-size", help="contexts per generate call and per seeded batch"),
    )
    limit: int | None = field(
        default=None, metadata=option("--limit", help="only the first N contexts")
    )
    top_k: int = field(
        default=0,
        metadata=option(
            "--top-k", help="top-k cut of the sampling (0: none; §6.2 is nucleus only)"
        ),
    )
    temperature: float = field(
        default=1.0, metadata=option("--temperature", help="sampling temperature")
    )
    min_new_tokens: int | None = field(
        default=None,
        metadata=option(
            "--min-new-tokens",
            help="at least this many new tokens (default: the checkpoint's min_length)",
        ),
    )
    no_repeat_ngram_size: int | None = field(
        default=None,
        metadata=option(
            "--no-repeat-ngram-size",
            help="block repeated n-grams (default: the checkpoint's setting)",
        ),
    )
    repetition_penalty: float | None = field(
        default=None,
        metadata=option(
            "--repetition-penalty",
            help="CTRL repetition penalty (default: the checkpoint's setting)",
        ),
    )
    nli_objective: str = field(
        default="nli_diversity",
        metadata=option(
            "--nli-objective",
            choices=("nli_diversity", "contradictions"),
            help="how --metric nli ranks leave-one-out subsets: Baseline NLI Diversity (§6.2) or "
            "contradiction counts",
        ),
    )
    tie_break: str = field(
        default="random",
        metadata=option(
            "--tie-break",
            choices=("random", "first"),
            help="tied subsets: random, or first (the lowest slot)",
        ),
    )
    trials: int = field(
        default=1,
        metadata=option(
            "--trials", help="seeded repeats of the whole run (§6.1 averages 10 trials)"
        ),
    )
    dtype: str | None = field(
        default=None,
        metadata=option(
            "--dtype",
            choices=("float32", "float16", "bfloat16"),
            help="generator weights (default: the checkpoint's)",
        ),
    )
    metric_dtype: str | None = field(
        default=None,
        metadata=option(
            "--metric-dtype",
            choices=("float32", "float16", "bfloat16"),
            help="NLI / sentence model weights (default: the checkpoint's)",
        ),
    )
    nli_batch_size: int = field(
        default=32,
        metadata=option(
            "--nli-batch-size",
            help="NLI pairs (Sent-BERT sentences) per forward pass of the metric model",
        ),
    )

    def __post_init__(self) -> None:
        # Refused before any model loads or output is written (a flag's value, named by its flag).
        # dialeval.generation's package imports torch: only a built DTGOptions needs its checks.
        from dialeval.generation.dtg_checks import (
            check_dtg_settings,
            check_max_samples,
            check_num_beams,
            check_num_responses,
        )

        check_int(self.batch_size, "batch_size")
        check_max_samples(self.max_samples)
        num_responses = check_num_responses(self.num_responses)
        if self.decoding == "beam":
            check_num_beams(self.num_beams, num_responses)
        else:
            check_int(self.num_beams, "num_beams")
        if self.turn_separator is not None:
            # argv bytes that are not UTF-8 arrive as lone surrogates; every context would hold one
            check_unicode_text(self.turn_separator, "turn_separator")
        check_dtg_settings(
            self.threshold,
            self.top_p,
            self.min_new_tokens,
            self.max_new_tokens,
            self.temperature,
            self.repetition_penalty,
        )

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def sampling_defaults() -> dict[str, Any]:
    """The default of each of :data:`SAMPLING_OPTIONS`, as its field declares it."""
    return {
        option_field.name: option_field.default
        for option_field in fields(DTGOptions)
        if option_field.name in SAMPLING_OPTIONS
    }
