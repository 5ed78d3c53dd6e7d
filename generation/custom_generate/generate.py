"""Diversity Threshold Generation (Stasaski & Hearst 2022, §5) as a transformers ``custom_generate``
recipe.

    out = model.generate(**inputs, custom_generate=dialeval.generation.custom_generate_path(),
                         trust_remote_code=True, tokenizer=tokenizer, metric="nli", num_responses=5,
                         return_dict_in_generate=True)
    out.sequences     # as generate(num_return_sequences=5) lays them out: prompt + response tokens
    out.dtg_results   # one dialeval.generation.DTGResult per context

Without ``return_dict_in_generate`` it returns the ``sequences`` tensor alone; ``output_scores`` /
``output_logits`` add ``scores`` / ``logits`` (those of the call that drew each kept response).
``custom_generate`` is the folder holding ``custom_generate/generate.py`` (this recipe's Hub repo,
or ``"generation"`` from a dialeval checkout's root), never ``custom_generate/`` itself.
``num_return_sequences`` is accepted as ``num_responses``; ``decoding="beam"`` gives App. D's beam
variant. The algorithm lives in ``dialeval.generation.dtg``, this contract in
``dialeval.generation.dtg_outputs``; sampling inside goes through ``GenerationMixin.generate``, so
this recipe never calls itself.
"""

from typing import TYPE_CHECKING, Any

from dialeval.generation.dtg_outputs import dtg_generate

if TYPE_CHECKING:
    import torch

    from dialeval.generation.dtg_outputs import DTGDecoderOnlyOutput, DTGEncoderDecoderOutput


def generate(
    model: Any, **kwargs: Any
) -> "torch.Tensor | DTGDecoderOnlyOutput | DTGEncoderDecoderOutput":
    return dtg_generate(model, **kwargs)
