"""Diversity Threshold Generation (Stasaski & Hearst 2022, §5) as a transformers ``custom_generate`` recipe.

    model.generate(**inputs, custom_generate="<this repo or dialeval's generation/ folder>",
                   trust_remote_code=True, tokenizer=tokenizer, metric="nli", num_responses=5)

(``decoding="beam"`` for App. D's beam variant) returns the token ids of each context's final set (``num_responses`` rows per context, in
context order, like ``num_return_sequences``); with ``return_dict_in_generate=True`` a dict with
``sequences`` and ``dtg_results`` (one :class:`dialeval.generation.DTGResult` per context).
The algorithm lives in ``dialeval.generation.dtg``; sampling inside it goes through
``GenerationMixin.generate`` so this recipe never calls itself.
"""
from transformers import GenerationMixin

from dialeval.generation.dtg import diversity_threshold_generate

_GENERATE_ARGUMENTS = ("logits_processor", "stopping_criteria", "prefix_allowed_tokens_fn", "synced_gpus",
                       "assistant_model", "streamer", "negative_prompt_ids", "negative_prompt_attention_mask",
                       "use_model_defaults")


class _PlainGenerate:
    """The model seen through GenerationMixin.generate (not the custom recipe bound to it)."""

    def __init__(self, model):
        self._model = model
        self.config = model.config

    @property
    def device(self):
        return self._model.device

    def generate(self, **kwargs):
        return GenerationMixin.generate(self._model, **kwargs)


def generate(model, inputs=None, generation_config=None, tokenizer=None, metric="nli", threshold=None,
             num_responses=5, max_samples=20, metric_options=None, return_dict_in_generate=False, **kwargs):
    if tokenizer is None:
        raise ValueError("DTG decodes and scores text: pass tokenizer=... to generate()")
    for name in _GENERATE_ARGUMENTS:
        if kwargs.get(name) is None:
            kwargs.pop(name, None)
    encoded = {key: kwargs.pop(key) for key in ("input_ids", "attention_mask") if kwargs.get(key) is not None}
    if inputs is not None:
        encoded["input_ids"] = inputs
    results = diversity_threshold_generate(
        _PlainGenerate(model), tokenizer, encoded, metric=metric, threshold=threshold, num_responses=num_responses,
        max_samples=max_samples, generation_config=generation_config, metric_options=metric_options, **kwargs,
    )
    texts = [response for result in results for response in result.responses]
    sequences = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)["input_ids"]
    if return_dict_in_generate:
        return {"sequences": sequences, "dtg_results": results}
    return sequences
