"""dialeval.generation: diversity-aware decoding for any GenerationMixin model.

- ``dtg.py`` / ``dtg_runner.py``: Diversity Threshold Generation (Stasaski & Hearst 2022, §5),
  with the set objectives of ``objectives.py``; ``custom_generate/`` wraps it for
  ``model.generate(custom_generate=custom_generate_path())`` (``dtg_outputs.py``; per-step scores in
  ``dtg_scores.py``).
- ``nbest.py``: n-best lists (beam search, nucleus sampling, diverse beam search; Sato et al. 2022),
  on ``group_beam_search.py``, which applies the logits processors ``generate`` would build
  (``generation_settings.py``); ``nbest_plots.py`` draws the beam-size sweep.
- ``mmi_antilm.py``: MMI-antiLM decoding (Li et al. 2016, §4.3) as a ``LogitsProcessor`` for
  ``model.generate(logits_processor=...)`` (Han et al. 2022's MMI baseline).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialeval.lazy_exports import export_lazily

if TYPE_CHECKING:
    from dialeval.generation.dtg import DTGResult, diversity_threshold_generate
    from dialeval.generation.dtg_outputs import custom_generate_path
    from dialeval.generation.dtg_runner import run_dtg
    from dialeval.generation.group_beam_search import Hypothesis, group_beam_search
    from dialeval.generation.mmi_antilm import MMIAntiLMLogitsProcessor
    from dialeval.generation.nbest import (
        beam_search_nbest,
        beam_size_sweep,
        dialogue_prompt,
        diverse_beam_search_nbest,
        nucleus_sampling_nbest,
    )
    from dialeval.generation.objectives import DistinctN, NLIContradictions, SentBertDiversity
else:
    # each name is imported from its module on first use
    __getattr__, __dir__ = export_lazily(
        __name__,
        {
            ".dtg": ("DTGResult", "diversity_threshold_generate"),
            ".dtg_outputs": ("custom_generate_path",),
            ".dtg_runner": ("run_dtg",),
            ".group_beam_search": ("Hypothesis", "group_beam_search"),
            ".mmi_antilm": ("MMIAntiLMLogitsProcessor",),
            ".nbest": (
                "beam_search_nbest",
                "beam_size_sweep",
                "dialogue_prompt",
                "diverse_beam_search_nbest",
                "nucleus_sampling_nbest",
            ),
            ".objectives": ("DistinctN", "NLIContradictions", "SentBertDiversity"),
        },
    )

__all__ = [
    "DTGResult",
    "DistinctN",
    "Hypothesis",
    "MMIAntiLMLogitsProcessor",
    "NLIContradictions",
    "SentBertDiversity",
    "beam_search_nbest",
    "beam_size_sweep",
    "custom_generate_path",
    "dialogue_prompt",
    "diverse_beam_search_nbest",
    "diversity_threshold_generate",
    "group_beam_search",
    "nucleus_sampling_nbest",
    "run_dtg",
]
