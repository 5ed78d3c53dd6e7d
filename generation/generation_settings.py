"""The settings ``generate()`` would run with, for the one decoding loop we write ourselves.

Sato et al. (2022, App. C) decode with "ParlAI's default settings, except
``beam_length_penalty=0``": for BlenderBot those defaults are content constraints (minimum
length 20, tri-gram blocking on the response and on the context) that Hugging Face
checkpoints carry in their ``generation_config`` (``min_length``, ``no_repeat_ngram_size``,
``encoder_no_repeat_ngram_size``, ``forced_eos_token_id``, ...). Beam search and nucleus
sampling go through ``model.generate`` and honour them; our group beam search
(:mod:`dialeval.generation.group_beam_search`) must too, or BS and DBS rows of Table 3 would be
produced under different constraints.

So the search asks transformers for exactly what ``generate`` builds, with the same methods
``generate`` calls (``_prepare_generation_config``: the call's options over the checkpoint's
``generation_config`` over the library defaults; ``_prepare_special_tokens``;
``_prepare_generated_length``; ``_get_logits_processor``). These are transformers' private
methods: calling them, rather than re-listing the processors, keeps every processor, its
arguments and its order identical to ``generate``'s; the equality tests in
``tests/generation/test_nbest.py`` fail if a transformers release changes them. The caller's
``generation_config`` is never modified (transformers deep-copies it; we copy again per input).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    import torch
    from transformers import GenerationConfig, LogitsProcessorList

#: A transformers model that generates (``GenerationMixin``: ``AutoModelForCausalLM`` /
#: ``AutoModelForSeq2SeqLM``). Any to type checkers: transformers annotates ``generate`` and its
#: helpers with a ``self`` protocol of its own that a ``PreTrainedModel`` annotation does not meet.
GenerativeModel: TypeAlias = Any

#: ``GenerationMixin``'s private methods called here, and nowhere else in dialeval (tests check
#: that transformers still defines each; setup.py caps transformers below 6).
GENERATION_PRIVATE_METHODS = (
    "_prepare_generation_config",
    "_prepare_special_tokens",
    "_prepare_generated_length",
    "_get_logits_processor",
)

#: ``generate`` options that choose the decoding algorithm or its output, which the search sets
#: itself.
SEARCH_OWNED_OPTIONS = frozenset(
    {
        "do_sample",
        "num_beams",
        "num_beam_groups",
        "diversity_penalty",
        "length_penalty",
        "early_stopping",
        "max_new_tokens",
        "max_length",
        "num_return_sequences",
        "return_dict_in_generate",
        "output_scores",
    }
)


@dataclass
class SearchSettings:
    """A prepared ``GenerationConfig`` (deterministic search, the checkpoint's constraints kept)
    and the special tokens the search needs."""

    config: GenerationConfig
    eos_token_ids: frozenset[int]
    decoder_start_token_id: int | None

    def logits_processor(
        self,
        model: GenerativeModel,
        prefix_length: int,
        max_new_tokens: int,
        encoder_input_ids: torch.Tensor | None = None,
        extra_processors: LogitsProcessorList | None = None,
    ) -> LogitsProcessorList:
        """The ``LogitsProcessorList`` ``generate`` would apply to one input.

        ``prefix_length``: tokens before the first generated one (the prompt for decoder-only
        models, the decoder start token for encoder-decoder ones), so that ``min_length``,
        ``min_new_tokens`` and the forced EOS at ``max_length`` count as in ``generate``.
        ``encoder_input_ids``: the encoder's input (``encoder_no_repeat_ngram_size``).
        """
        config = copy.deepcopy(self.config)
        config.max_new_tokens = max_new_tokens
        anchor = encoder_input_ids if encoder_input_ids is not None else model.device
        device = getattr(anchor, "device", anchor)
        model._prepare_special_tokens(config, True, device=device)
        # has_default_*=True: we set max_new_tokens ourselves; no "both were set" warning per input.
        config = model._prepare_generated_length(
            generation_config=config,
            has_default_max_length=True,
            has_default_min_length=True,
            model_input_name="input_ids",
            input_ids_length=prefix_length,
            inputs_tensor=encoder_input_ids,
        )
        return model._get_logits_processor(
            generation_config=config,
            input_ids_seq_length=prefix_length,
            encoder_input_ids=encoder_input_ids,
            logits_processor=extra_processors,
            device=device,
            model_kwargs={},
        )

    def min_generated_tokens(self, prefix_length: int) -> int:
        """Tokens a hypothesis must have (EOS included) before EOS is allowed, as the config's
        ``min_length`` (which counts ``prefix_length``) and ``min_new_tokens`` require."""
        config = self.config
        from_min_length = (config.min_length or 0) - prefix_length + 1
        from_new_tokens = (config.min_new_tokens or 0) + 1
        return max(1, from_min_length, from_new_tokens)


def search_settings(
    model: GenerativeModel, generation_config: GenerationConfig | None = None, **options: Any
) -> SearchSettings:
    """The checkpoint's generation settings (or ``generation_config``'s) with ``options`` over
    them, for a deterministic search.

    Raises ``TypeError`` for an option ``GenerationConfig`` does not have (a typo would
    otherwise be dropped silently) or one the search sets itself (:data:`SEARCH_OWNED_OPTIONS`).
    """
    owned = sorted(SEARCH_OWNED_OPTIONS & set(options))
    if owned:
        raise TypeError(
            f"group beam search sets {owned} itself; use its own arguments (num_beams=, ...)"
        )
    config, unused = model._prepare_generation_config(generation_config, **options)
    unused = {
        key: value
        for key, value in unused.items()
        if key not in ("output_attentions", "output_hidden_states")
    }
    if unused:
        raise TypeError(
            f"unknown generation option(s) {sorted(unused)}: not fields of transformers' "
            "GenerationConfig"
        )
    # A checkpoint that samples by default must not add its top-k / top-p warpers to a search.
    config.do_sample = False
    eos = config.eos_token_id
    eos_ids = (
        frozenset()
        if eos is None
        else frozenset(int(t) for t in (eos if isinstance(eos, (list, tuple)) else [eos]))
    )
    start = config.decoder_start_token_id
    if start is None and model.config.is_encoder_decoder:
        start = (
            model.config.decoder_start_token_id
            if model.config.decoder_start_token_id is not None
            else config.bos_token_id
        )
    if isinstance(start, (list, tuple)):
        raise ValueError("a decoder_start_token_id per input is not supported by group beam search")
    return SearchSettings(config, eos_ids, None if start is None else int(start))
