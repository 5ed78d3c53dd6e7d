"""dialeval.generation: diversity-aware decoding for any GenerationMixin model (DTG, n-best helpers)."""
from .dtg import DTGResult, diversity_threshold_generate
from .dtg_runner import run_dtg
from .nbest import (
    Hypothesis,
    beam_search_nbest,
    beam_size_sweep,
    dialogue_prompt,
    diverse_beam_search_nbest,
    group_beam_search,
    nucleus_sampling_nbest,
)
from .set_objectives import DistinctN, NLIContradictions, SentBertDiversity

__all__ = [
    "DTGResult",
    "DistinctN",
    "Hypothesis",
    "NLIContradictions",
    "SentBertDiversity",
    "beam_search_nbest",
    "beam_size_sweep",
    "dialogue_prompt",
    "diverse_beam_search_nbest",
    "diversity_threshold_generate",
    "group_beam_search",
    "nucleus_sampling_nbest",
    "run_dtg",
]
