"""MMI-antiLM decoding (Li, Galley, Brockett, Gao & Dolan, NAACL 2016, §4.1-4.3) as a
LogitsProcessor.

Li et al. decode ``argmax_T log p(T|S) - lambda log U(T)`` where
``U(T) = prod_k p(t_k | t_<k) g(k)`` is a language model's probability of the response restricted to
its first ``gamma`` tokens (``g(k) = 1`` for ``k <= gamma``, else 0): the anti-LM penalizes
responses that are likely whatever the context, mostly at their start, and leaves later tokens to
``p(T|S)`` so the response stays grammatical. Han et al. (2022, §5.2) use MMI-antiLM as the MMI
baseline.

:class:`MMIAntiLMLogitsProcessor` subtracts ``lambda * log p_LM(next token | response so far)``
from the scores of each of the first ``gamma`` generated tokens and leaves the later ones
unchanged. It plugs into ``model.generate(logits_processor=LogitsProcessorList([...]))`` for
decoder-only and encoder-decoder generators; with beam search (whose scores are log-probabilities
summed over steps) each hypothesis is ranked by ``log p(T|S) - lambda log U(T)``; greedy and
sampling pick from the same per-token scores (a per-row constant on the logits changes neither).

The language model reads the response only: ``[bos] + generated tokens`` (``bos_token_id``,
default the LM's ``bos_token_id``). It must share the generator's vocabulary (same tokenizer and
output size; refused otherwise). Li et al. tune lambda and gamma on development data; the defaults
here (``lambda = 0.5``, ``gamma = 5``) are our choice, not values from the paper. Their Eq. also
has a length term for reranking, which a per-token processor does not add.

The processor notices where the response starts from its first call (the prompt for decoder-only
models, the decoder start token for encoder-decoder ones) and starts over when a call is not the
next step of the same generation, so one instance can serve several ``generate`` calls.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
from transformers import LogitsProcessor

from dialeval.hub import load_model
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    from transformers import PreTrainedModel

    from dialeval.type_aliases import DeviceLike

CITATION = """@inproceedings{li-etal-2016-diversity,
  title = {A Diversity-Promoting Objective Function for Neural Conversation Models},
  author = {Li, Jiwei and Galley, Michel and Brockett, Chris and Gao, Jianfeng and Dolan, Bill},
  booktitle = {Proceedings of the 2016 Conference of the North American Chapter of the Association for Computational Linguistics: Human Language Technologies},
  year = {2016},
  url = {https://aclanthology.org/N16-1014}
}"""  # noqa: E501


def _load_language_model(
    language_model: str | PreTrainedModel, device: DeviceLike
) -> PreTrainedModel:
    if isinstance(language_model, str):
        return load_model(language_model, "language_model", device=device).model
    if not isinstance(language_model, torch.nn.Module) or not callable(language_model):
        raise ArgumentError(
            "language_model", "must be a causal LM (a transformers model) or its id / directory"
        )
    if getattr(getattr(language_model, "config", None), "is_encoder_decoder", False):
        raise ArgumentError(
            "language_model", "must be a decoder-only (causal) LM: it scores the response alone"
        )
    return language_model


class MMIAntiLMLogitsProcessor(LogitsProcessor):
    """``scores - lambda * log p_LM(next | response so far)`` for the first ``gamma`` generated
    tokens.

    Args:
        language_model: the anti-LM ``U``: a causal LM object (put in eval mode), or an id /
            directory loaded through :func:`dialeval.hub.load_model`; it must share the generator's
            vocabulary.
        lam: ``lambda``, the weight of the anti-LM (> 0; Li et al. tune it; default 0.5, our
            choice).
        gamma: ``gamma``, how many leading response tokens are penalized (>= 1; default 5, our
            choice).
        bos_token_id: the token the LM reads before the response (default: its ``bos_token_id``).
        device: where a loaded ``language_model`` goes (ignored for a model object).
    """

    def __init__(
        self,
        language_model: str | PreTrainedModel,
        lam: float = 0.5,
        gamma: int = 5,
        bos_token_id: int | None = None,
        device: DeviceLike = None,
    ) -> None:
        if (
            isinstance(lam, bool)
            or not isinstance(lam, (int, float))
            or not math.isfinite(lam)
            or lam <= 0
        ):
            raise ArgumentError("lam", f"must be a finite number > 0, got {lam!r}")
        if isinstance(gamma, bool) or not isinstance(gamma, int) or gamma < 1:
            raise ArgumentError("gamma", f"must be an int >= 1, got {gamma!r}")
        # it only scores: dropout would make the decoding random
        self.language_model = _load_language_model(language_model, device).eval()
        if bos_token_id is None:
            bos_token_id = getattr(self.language_model.config, "bos_token_id", None)
        if isinstance(bos_token_id, bool) or not isinstance(bos_token_id, int) or bos_token_id < 0:
            raise ArgumentError(
                "bos_token_id",
                "must be an int >= 0 (the language model's config has none; pass it)",
            )
        self.lam = float(lam)
        self.gamma = gamma
        self.bos_token_id = bos_token_id
        self._prompt: torch.Tensor | None = None
        self._steps = 0

    def _response_so_far(self, input_ids: torch.Tensor) -> torch.Tensor:
        prompt = self._prompt
        same_generation = (
            prompt is not None
            and input_ids.shape[0] == prompt.shape[0]
            and input_ids.shape[1] == prompt.shape[1] + self._steps
            and torch.equal(input_ids[:, : prompt.shape[1]], prompt)
        )
        if not same_generation:
            self._prompt, self._steps = input_ids.clone(), 0
        assert self._prompt is not None  # this generation's prompt, kept from its first step
        response = input_ids[:, self._prompt.shape[1] :]
        self._steps += 1
        return response

    @torch.no_grad()
    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        response = self._response_so_far(input_ids)
        if response.shape[1] >= self.gamma:
            return scores
        device = next(self.language_model.parameters()).device
        bos = torch.full((response.shape[0], 1), self.bos_token_id, dtype=torch.long, device=device)
        lm_input = torch.cat([bos, response.to(device)], dim=1)
        logits = self.language_model(input_ids=lm_input).logits[:, -1, :]
        if logits.shape[-1] != scores.shape[-1]:
            raise ArgumentError(
                "language_model",
                f"predicts {logits.shape[-1]} tokens but the generator {scores.shape[-1]}: "
                "the anti-LM must share the generator's vocabulary",
            )
        log_probs = torch.log_softmax(logits.float(), dim=-1).to(scores.device, scores.dtype)
        # transformers annotates scores torch.FloatTensor, a class no tensor has to a type checker
        return scores - self.lam * log_probs  # type: ignore[return-value]
