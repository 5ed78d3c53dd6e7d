"""Answer labels shared by the yes/no classifier, Certainty / Variety and the Circa builder.

Sato et al. (2022, §3.2) classify each response to a polar question as a direct "yes", a
direct "no" or neither; Circa's (Louis et al. 2020) label names map onto these three.
"""

from __future__ import annotations

YES = "yes"
NO = "no"
AMBIGUOUS = "ambiguous"
#: A classified response is one of these.
ANSWER_LABELS = (YES, NO, AMBIGUOUS)
#: The expected (non-contradictory) answer of an input is one of these.
EXPECTED_ANSWERS = (YES, NO)

#: Normalized Circa label (lower case, straight apostrophe, single spaces) -> answer.
CIRCA_LABEL_ANSWERS = {
    "yes": YES,
    "probably yes / sometimes yes": YES,
    "yes, subject to some conditions": YES,
    "no": NO,
    "probably no": NO,
    "in the middle, neither yes nor no": AMBIGUOUS,
    "i am not sure how x will interpret y's answer": AMBIGUOUS,
    "other": AMBIGUOUS,
    "ambiguous": AMBIGUOUS,
}


def normalize_label(label: str) -> str:
    return " ".join(label.replace("\u2019", "'").lower().split())


def answer_of_label(label: str) -> str:
    """ "yes", "no" or "ambiguous" for a classifier label name (Circa's names or those three)."""
    normalized = normalize_label(str(label))
    if normalized not in CIRCA_LABEL_ANSWERS:
        raise ValueError(
            f"classifier label {label!r} is not a yes/no/ambiguous or Circa label name; pass "
            "label_map={label name: 'yes' | 'no' | 'ambiguous'} for this model"
        )
    return CIRCA_LABEL_ANSWERS[normalized]
