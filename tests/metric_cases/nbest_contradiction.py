"""nbest_contradiction's cases for the registry-wide suites (tests/metric_cases/__init__.py)."""

from importlib import import_module

from metric_cases import BAD_TEXT, Case, ModuleEntry


def conformance(fixture):
    from dialeval.metrics.nbest_contradiction.certainty_variety import nbest_contradiction

    return Case(
        inputs={
            "predictions": [
                ["Yes, I am.", "No."],
                ["No, never.", "No!"],
                ["Yes.", "Yeah."],
                ["No."],
            ],
            "references": ["yes", "no", "no", "no"],
        },
        options={"classifier": fixture("tiny_roberta_yes_no_path"), "device": "cpu"},
        bad_batch={"predictions": [["Yes."], "No."], "references": ["yes", "no"]},
        bad_batch_error=r"`predictions\[1\]` must be a list of strings",
        bad_add_error="`prediction` must be a list of strings",
        refused={"predictions": [["Maybe."]], "references": ["perhaps"]},
        refused_error=r"`references\[4\]` must be 'yes' or 'no'",
        wraps=nbest_contradiction,
    )


def module_property():
    from hypothesis import strategies as st
    from property_support import nonblank_text

    inputs = st.lists(
        st.tuples(st.lists(nonblank_text, min_size=1, max_size=3), st.sampled_from(["yes", "no"])),
        min_size=1,
        max_size=3,
    ).map(lambda items: {"predictions": [p for p, _ in items], "references": [r for _, r in items]})
    return ModuleEntry(
        inputs,
        options={"device": "cpu"},
        fixtures={"classifier": "tiny_roberta_yes_no_path"},
        divisor=5,
        nan_ok=("certainty", "variety"),
        ranges={"certainty": (0, 1), "variety": (0, 1)},
    )


def lone_surrogate_calls(fixture, bad):
    # the subpackage, not its function of that name
    package = import_module("dialeval.metrics.nbest_contradiction")

    return {
        "nbest_contradiction": (
            lambda: package.nbest_contradiction(
                [["yes", bad]], ["yes"], fixture("tiny_roberta_yes_no_path"), device="cpu"
            ),
            "predictions[0][1]",
        ),
        "certainty_variety": None,  # labels 'yes' / 'no' / ... only: anything else is refused as not a label
    }


LONE_SURROGATE_MODULE = (
    {"predictions": [["yes", BAD_TEXT]], "references": ["yes"]},
    {"device": "cpu", "classifier": "tiny_roberta_yes_no_path"},
    "predictions[0][1]",
)
