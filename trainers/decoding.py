"""Greedy decoding as Han et al. (2022, §5.3) describe it, whatever the checkpoint's
``generation_config``.

Hub checkpoints ship decoding settings for their own demos (BlenderBot's are beam search with a
minimum length, as the Blender recipe's 10 beams and min length 20), and ``model.generate`` fills
every setting a call leaves unset (``None``) from them: a call with only ``do_sample=False,
num_beams=1`` still forces responses of the minimum length there. :func:`greedy_generation_config`
starts from the checkpoint's settings (its token ids, forced first / last tokens and suppressed
tokens belong to the model's format) and sets every setting that selects the algorithm or bends
greedy's choice to greedy's value: one beam, no sampling, no min length, no repetition or length
penalty. §5.3 blocks repeated 3-grams "within the generated response and the input sequence": a
decoder-only model's sequence holds the context, an encoder-decoder's does not, so there the
encoder's n-grams are blocked as well (``encoder_no_repeat_ngram_size``, ParlAI's
``--beam-context-block-ngram``).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from transformers import GenerationConfig
from transformers.generation import GenerationMode

from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    from transformers import PreTrainedModel

#: Greedy's value of each setting that would otherwise change which token greedy picks.
GREEDY = {
    "do_sample": False,
    "num_beams": 1,
    "num_beam_groups": 1,
    "diversity_penalty": 0.0,
    "min_length": 0,
    "repetition_penalty": 1.0,
    "encoder_repetition_penalty": 1.0,
    "length_penalty": 1.0,
    "return_dict_in_generate": False,
    "output_scores": False,
    "output_logits": False,
}


def greedy_generation_config(
    model: PreTrainedModel,
    max_new_tokens: int,
    no_repeat_ngram_size: int = 3,
    pad_token_id: int | None = None,
) -> GenerationConfig:
    """Greedy decoding of at most ``max_new_tokens`` with ``no_repeat_ngram_size``-grams (0: none)
    blocked in the response and, for encoder-decoders, against the input (see the module docstring).

    Raises:
        ValueError: bad arguments, or a checkpoint setting that still selects another algorithm
            (one transformers can only switch off by ``None``, which it refills from the
            checkpoint).
    """
    if (
        isinstance(max_new_tokens, bool)
        or not isinstance(max_new_tokens, int)
        or max_new_tokens < 1
    ):
        raise ArgumentError("max_new_tokens", f"must be an int >= 1, got {max_new_tokens!r}")
    if (
        isinstance(no_repeat_ngram_size, bool)
        or not isinstance(no_repeat_ngram_size, int)
        or no_repeat_ngram_size < 0
    ):
        raise ArgumentError(
            "no_repeat_ngram_size", f"must be an int >= 0, got {no_repeat_ngram_size!r}"
        )
    checkpoint = getattr(model, "generation_config", None)
    config = copy.deepcopy(checkpoint) if checkpoint is not None else GenerationConfig()
    encoder_decoder = bool(getattr(model.config, "is_encoder_decoder", False))
    settings = {
        **GREEDY,
        "max_new_tokens": max_new_tokens,
        "no_repeat_ngram_size": no_repeat_ngram_size,
        "encoder_no_repeat_ngram_size": no_repeat_ngram_size if encoder_decoder else 0,
    }
    if pad_token_id is not None:
        settings["pad_token_id"] = pad_token_id
    if config.min_new_tokens:
        settings["min_new_tokens"] = 0
    for key, value in settings.items():
        setattr(config, key, value)
    mode = config.get_generation_mode()
    if mode != GenerationMode.GREEDY_SEARCH:
        raise ValueError(
            f"the model's generation_config makes greedy settings run as {mode.value}; set the "
            "setting that selects it to None in model.generation_config"
        )
    return config
