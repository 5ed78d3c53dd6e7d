"""response_selection's cases for the registry-wide suites (tests/metric_cases/__init__.py)."""

from importlib import import_module

from metric_cases import BAD_TEXT, Case, ModuleEntry


def conformance(fixture):
    from dialeval.metrics.response_selection.selection import response_selection

    return Case(
        inputs={
            "contexts": [
                ["Do you have a car?"],
                "Where do you live?",
                ["Hi!", "Hello, how are you?"],
            ],
            "candidates": [
                ["Yes, a red one.", "I play tennis."],
                ["In Osaka.", "Blue.", "Never."],
                ["Fine, thanks.", "A car."],
            ],
            "labels": [0, 0, 1],
        },
        options={"model": fixture("tiny_gpt2_path"), "device": "cpu"},
        bad_batch={
            "contexts": ["Hi", ["Hey", ["nested"]]],
            "candidates": [["a", "b"], ["c", "d"]],
            "labels": [0, 1],
        },
        bad_batch_error=r"`contexts\[1\]\[1\]` must be a non-empty string",
        bad_add_error=r"`contexts\[1\]` must be a non-empty string",
        refused={"contexts": ["Fine?"], "candidates": [["Yes.", "No."]], "labels": [0]},
        refused_options={},
        refused_error="`model` is required",
        wraps=response_selection,
    )


def module_property():
    from hypothesis import strategies as st
    from property_support import nonblank_text

    inputs = st.lists(
        st.tuples(
            st.one_of(nonblank_text, st.lists(nonblank_text, min_size=1, max_size=2)),
            st.lists(nonblank_text, min_size=2, max_size=3),
            st.integers(0, 1),
        ),
        min_size=1,
        max_size=3,
    ).map(
        lambda items: {
            "contexts": [c for c, _, _ in items],
            "candidates": [o for _, o, _ in items],
            "labels": [label for _, _, label in items],
        }
    )
    return ModuleEntry(
        inputs,
        options={"device": "cpu"},
        fixtures={"model": "tiny_gpt2_path"},
        divisor=5,
        ranges={"accuracy": (0, 1)},
    )


def lone_surrogate_calls(fixture, bad):
    # the subpackage, not its function of that name
    package = import_module("dialeval.metrics.response_selection")

    return {
        "response_selection": (
            lambda: package.response_selection(
                [bad], [["a b", "c d"]], [0], fixture("tiny_gpt2_path"), device="cpu"
            ),
            "contexts[0]",
        ),
        "system_ranking_correlation": None,
        "random_protocol_correlation": None,
    }


LONE_SURROGATE_MODULE = (
    {"contexts": ["a b"], "candidates": [["c d", BAD_TEXT]], "labels": [0]},
    {"device": "cpu", "model": "tiny_gpt2_path"},
    "candidates[0][1]",
)
