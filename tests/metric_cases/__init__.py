"""Each registered metric's cases for the suites that run over every metric in the registry.

One module per metric, ``tests/metric_cases/<name>.py`` (``<name>`` as in
``dialeval.metrics.registry``); the suites find it through the registry (:func:`cases_of`), so a
new metric adds its module here and edits none of them. It defines:

- ``conformance(fixture) -> Case``: how tests/metrics/test_module_conformance.py calls its evaluate
  module (``fixture(name)`` gives a pytest fixture's value, e.g. a tiny model's path);
- ``module_property() -> ModuleEntry``: the input strategy of tests/property/test_property_modules.py
  (imports hypothesis and ``property_support`` when called, so the other suites need neither);
- ``lone_surrogate_calls(fixture, bad) -> dict``: each public function of the registry entry called
  with ``bad`` (a lone surrogate) in one text, and the argument (with its index) the error must
  name, or None for a function that takes no text (tests/root/test_lone_surrogates.py);
- ``LONE_SURROGATE_MODULE``: ``(inputs, options, argument)`` for the evaluate module with ``BAD_TEXT``
  in one input, or None when the module takes no text (option values ending ``_path`` are fixtures);
- ``TOKENIZER_CALLS`` (when a public function takes ``tokenizer=``): ``{function: (call(package,
  tokenizer), first, last)}``, the arguments a bad tokenizer output on the first and last text
  must name (tests/root/test_custom_tokenizers.py, whose texts are ``TOKENIZER_TEXTS``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from types import ModuleType

#: Response sets and a corpus every conformance case may use.
SETS = [
    ["I went hiking in the hills.", "I fixed the kitchen sink.", "We ate seafood on the coast."],
    ["Not much.", "Not much, you?", "Not much really."],
    ["I love cats.", "I hate cats.", "Cats are fine."],
    ["Pizza tonight?", "Sure, pizza.", "No, sushi!", "Maybe pasta."],
    ["It is raining.", "So sunny today."],
]
CORPUS = [
    "I love pizza.",
    "Sushi for dinner!",
    "Pasta tonight?",
    "It is raining.",
    "So sunny today.",
    "A storm is coming.",
]
#: A lone surrogate at character 3: not valid Unicode.
BAD_TEXT = "ok \ud800 x"
#: The texts tests/root/test_custom_tokenizers.py tokenizes.
TOKENIZER_TEXTS = ["a b c", "d e f", "g h"]


@dataclass
class Case:
    """How the conformance tests call one module."""

    inputs: dict[str, list]
    options: dict = field(default_factory=dict)
    #: one batch evaluate would stringify or mis-store, and the error naming the user's argument
    bad_batch: dict[str, list] = field(default_factory=dict)
    bad_batch_error: str = ""
    #: the error ``add`` gives for bad_batch's second input (naming ``prediction``, ``reference`` for add)
    bad_add_error: str = ""
    #: inputs the metric refuses once gathered (after ``inputs``), options for that compute, the error
    refused: dict[str, list] | None = None
    refused_options: dict | None = None
    refused_error: str = ""
    #: the function _compute wraps, whose defaults its options must keep (but for ``own_meaning``)
    wraps: object = None
    own_meaning: tuple[str, ...] = ()


def sets_case(**more) -> Case:
    """The case of a module whose input is response sets (or a corpus): ``SETS``, and a batch with a number in a set."""
    return Case(
        inputs={"predictions": SETS},
        bad_batch={"predictions": [["a b", "c d"], ["e f", 3]]},
        bad_batch_error=r"`predictions\[1\]\[1\]` must be a string",
        bad_add_error=r"`prediction\[1\]` must be a string",
        **more,
    )


#: The refusal of a set with one response, the 6th input once ``SETS`` is gathered.
ONE_RESPONSE = {"predictions": [["only one response"]]}
ONE_RESPONSE_ERROR = r"`predictions\[5\]` must hold at least 2 responses"
#: The refusal of an empty response, the 6th input once ``SETS`` is gathered.
EMPTY_RESPONSE = {"predictions": [["fine", ""]]}
EMPTY_RESPONSE_ERROR = r"`predictions\[5\]\[1\]` is an empty string"


@dataclass
class ModuleEntry:
    """How the properties call one module: a strategy of valid inputs (one list per feature), the
    options every compute gets (a model fixture's path by name), and the divisor of the profile's
    example count (model-backed modules run a forward pass per example)."""

    inputs: object  # a hypothesis strategy
    options: dict = field(default_factory=dict)
    fixtures: dict[str, str] = field(default_factory=dict)
    divisor: int = 1
    floor: int = 3
    #: figures documented as NaN in some cases (with a warning)
    nan_ok: tuple[str, ...] = ()
    #: the documented ranges of its figures, by key (the card's "Output Values")
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)


def predictions_strategy(corpus_min_size: int = 1):
    """Response sets or a corpus, as ``{"predictions": ...}`` (property_support's strategies)."""
    from hypothesis import strategies as st
    from property_support import nonblank_text, response_sets

    corpus = st.lists(nonblank_text, min_size=corpus_min_size, max_size=6)
    return st.one_of(response_sets(max_size=4, max_sets=4), corpus).map(
        lambda p: {"predictions": p}
    )


def sets_strategy():
    """Response sets only, as ``{"predictions": ...}``."""
    from property_support import response_sets

    return response_sets(max_size=4, max_sets=4).map(lambda p: {"predictions": p})


def cases_of(name: str) -> ModuleType:
    """The case module of the registered metric ``name``."""
    try:
        return import_module(f"metric_cases.{name}")
    except ModuleNotFoundError as error:
        if error.name != f"metric_cases.{name}":
            raise
        raise AssertionError(
            f"the registered metric {name!r} has no tests/metric_cases/{name}.py "
            "(tests/metric_cases/__init__.py says what it defines)"
        ) from None
