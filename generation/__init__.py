"""dialeval.generation: diversity-aware decoding for any GenerationMixin model (DTG, n-best helpers)."""
from .dtg import DTGResult, diversity_threshold_generate
from .dtg_runner import run_dtg
from .set_objectives import DistinctN, NLIContradictions, SentBertDiversity

__all__ = ["DTGResult", "DistinctN", "NLIContradictions", "SentBertDiversity", "diversity_threshold_generate", "run_dtg"]
