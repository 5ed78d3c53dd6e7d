"""Input checks shared by every metric.

Metrics take either one *response set* (``list[str]``: several responses to one context) or a
*corpus* (``list[str]``: every generated response of a system). Bad input raises a
``ValueError`` that names the argument and says what was expected; nothing is dropped silently.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

# An argument path as a message quotes it: a name and any indexes (``predictions[0][2]``).
_ARGUMENT_PATH = re.compile(r"[A-Za-z_]\w*(?:\[[^\]`]*\])*")
_QUOTED = re.compile(r"`([^`]+)`")


class ArgumentProblem(Exception):
    """An error about one of the caller's arguments, carrying its name rather than only a sentence.

    ``argument`` is the argument's path as the caller wrote it (``responses``, ``responses[3]``,
    ``predictions[0][2]``); ``problem`` the rest of the message; ``mentions`` the other argument
    paths the problem quotes in backticks (by default every backticked path in it). ``str(error)``
    is ```argument` problem`` (no space before a problem that starts with punctuation,
    ```metrics`: ...``). Callers that know the argument by another name (an outer function, the
    CLI's flags, an evaluate module's ``add``) take :meth:`renamed`, so no message text is rewritten
    by guesswork. Use :class:`ArgumentError` (a ``ValueError``) or :class:`ArgumentTypeError` (a
    ``TypeError``).
    """

    def __init__(self, argument: str, problem: str, mentions: Iterable[str] | None = None) -> None:
        self.argument = argument
        self.problem = problem
        self.mentions = (
            tuple(name for name in _QUOTED.findall(problem) if _ARGUMENT_PATH.fullmatch(name))
            if mentions is None
            else tuple(mentions)
        )
        super().__init__(self._message())

    def _message(self) -> str:
        # "`max_n`=0 ..." reads as the call did; "`labels[0]` = 2 ..." keeps its spaces
        attached = self.problem[:1] in (":", ";", ",", ".", "!", "?", ")") or (
            self.problem[:1] == "=" and self.problem[1:2] != " "
        )
        separator = "" if not self.problem or attached else " "
        return f"`{self.argument}`{separator}{self.problem}"

    def __str__(self) -> str:
        return self._message()

    def __reduce__(
        self,
    ) -> tuple[
        type[ArgumentProblem], tuple[str, str, tuple[str, ...]]
    ]:  # pickled (multiprocessing) with its fields, not its message
        return (type(self), (self.argument, self.problem, self.mentions))

    @property
    def root(self) -> str:
        """The argument's name without its indexes (``predictions`` for ``predictions[0][2]``)."""
        return _root(self.argument)

    def renamed(self, names: Mapping[str, str]) -> ArgumentProblem:
        """A copy naming the arguments as ``names`` maps them, each index path kept.

        A key is a name (``{"predictions": "responses"}``: ``predictions[3]`` -> ``responses[3]``)
        or a path prefix (``{"predictions[0]": "prediction"}``: ``predictions[0][2]`` ->
        ``prediction[2]``); the longest key that matches wins. The argument and every mention are
        renamed.
        """
        mentions = set(self.mentions)

        def quoted(match: re.Match) -> str:
            path = match.group(1)
            return f"`{rename_argument(path, names)}`" if path in mentions else match.group(0)

        copy = type(self)(
            rename_argument(self.argument, names),
            _QUOTED.sub(quoted, self.problem),
            tuple(rename_argument(path, names) for path in self.mentions),
        )
        copy.__cause__, copy.__suppress_context__ = self.__cause__, self.__suppress_context__
        return copy.with_traceback(self.__traceback__)


class ArgumentError(ArgumentProblem, ValueError):
    """A ``ValueError`` about one argument:
    ``raise ArgumentError("responses[3]", "is an empty string")``."""


class ArgumentTypeError(ArgumentProblem, TypeError):
    """A ``TypeError`` about one argument (same fields and :meth:`~ArgumentProblem.renamed`
    as :class:`ArgumentError`)."""


def _root(path: str) -> str:
    return path.split("[", 1)[0]


def rename_argument(path: str, names: Mapping[str, str]) -> str:
    """``path`` (``predictions[0][2]``) under the longest key of ``names`` that is the path or a
    prefix of it ending at an index (``predictions`` or ``predictions[0]``); unchanged if none."""
    best = None
    for key in names:
        if (path == key or path.startswith(key + "[")) and (best is None or len(key) > len(best)):
            best = key
    return path if best is None else names[best] + path[len(best) :]


@contextlib.contextmanager
def arguments_named(names: Mapping[str, str]) -> Iterator[None]:
    """Inside the block, an :class:`ArgumentProblem` is re-raised :meth:`~ArgumentProblem.renamed`
    by ``names``: an outer function that passes its arguments to an inner one under other names
    (``with arguments_named({"predictions": "responses", "threshold": "lf_threshold"}): ...``)."""
    try:
        yield
    except ArgumentProblem as error:
        raise error.renamed(names) from error.__cause__


def check_int(value: object, argument: str, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` as an ``int`` (any integer type: numpy's too; bools refused) of at least
    ``minimum`` and, when given, at most ``maximum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < minimum:
        expected = "a positive int" if minimum == 1 else f"an int >= {minimum}"
        raise ArgumentError(argument, f"must be {expected}, got {value!r}")
    if maximum is not None and int(value) > maximum:
        raise ArgumentError(argument, f"must be at most {maximum:,}, got {value!r}")
    return int(value)


def check_real(
    value: object,
    argument: str,
    minimum: float = -math.inf,
    maximum: float = math.inf,
    open_bounds: tuple[bool, bool] = (False, False),
    meaning: str = "",
) -> float:
    """``value`` as a finite ``float`` (any real number type: ints, numpy's floats and integers;
    bools, NaN and infinities refused) within ``[minimum, maximum]``, an end excluded where
    ``open_bounds`` says so. ``meaning`` (``" (a TTR)"``) is added to the refusal."""
    number = math.nan
    if isinstance(value, numbers.Real) and not isinstance(value, _bool_types()):
        try:
            number = float(value)
        except OverflowError:  # an int past float's range
            number = math.inf
    low_ok = number > minimum if open_bounds[0] else number >= minimum
    high_ok = number < maximum if open_bounds[1] else number <= maximum
    if not (math.isfinite(number) and low_ok and high_ok):
        raise ArgumentError(
            argument,
            f"must be {_range_text(minimum, maximum, open_bounds)}{meaning}, got {value!r:.60}",
        )
    return number


def _range_text(minimum: float, maximum: float, open_bounds: tuple[bool, bool]) -> str:
    low = f"{'>' if open_bounds[0] else '>='} {minimum:g}"
    high = f"{'<' if open_bounds[1] else '<='} {maximum:g}"
    if math.isinf(minimum) and math.isinf(maximum):
        return "a finite number"
    if math.isinf(maximum):
        return f"a finite number {low}"
    if math.isinf(minimum):
        return f"a finite number {high}"
    if open_bounds == (True, True):
        return f"a number strictly between {minimum:g} and {maximum:g}"
    return f"a number {low} and {high}"


def check_progress(progress: object, argument: str = "progress") -> None:
    """``progress`` must be None or a callable (tqdm's ``update``): a number or a string would
    fail only once the first unit of work is done, with a ``TypeError`` that names nothing."""
    if progress is not None and not callable(progress):
        raise ArgumentError(
            argument,
            f"must be a callable (e.g. tqdm's update) or None, got {type(progress).__name__}",
        )


def check_flag(value: object, argument: str) -> bool:
    """``value`` as a ``bool`` (numpy bools accepted): a string such as ``"no"`` or a number is
    refused rather than read by its truth value."""
    if not isinstance(value, _bool_types()):
        raise ArgumentError(
            argument, f"must be True or False, got {type(value).__name__}: {value!r:.60}"
        )
    return bool(value)


def _bool_types() -> tuple[type, ...]:
    """``bool``, and numpy's bool once numpy is imported (none of its values can exist before)."""
    numpy = sys.modules.get("numpy")
    return (bool,) if numpy is None else (bool, numpy.bool_)


def _describe(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_response_set(
    responses: object, argument: str = "responses", min_size: int = 1, allow_empty: bool = False
) -> list[str]:
    """Validate one response set and return it as a list.

    Args:
        responses: the responses generated for one context.
        argument: the caller's argument name, used in error messages.
        min_size: fewest responses allowed (2 for pairwise metrics).
        allow_empty: accept ``""`` and whitespace-only strings (scored as responses without tokens,
            as the papers' released code does; one decTest set is all empty). Off by default: an
            empty response is usually a bug upstream.
    """
    allow_empty = check_flag(allow_empty, "allow_empty")
    if isinstance(responses, (str, bytes)) or not isinstance(responses, Sequence):
        raise ArgumentError(
            argument,
            f"must be a list of strings (one response set), got {type(responses).__name__}: "
            f"{_describe(responses)}",
        )
    responses = list(responses)
    if len(responses) < min_size:
        needed = (
            "at least one response"
            if min_size == 1
            else f"at least {min_size} responses (the metric compares pairs)"
        )
        raise ArgumentError(argument, f"must hold {needed}, got {len(responses)}")
    for index, response in enumerate(responses):
        if not isinstance(response, str):
            raise ArgumentError(
                f"{argument}[{index}]",
                f"must be a string, got {type(response).__name__}: {_describe(response)}",
            )
        check_unicode_text(response, f"{argument}[{index}]")
        if not allow_empty and not response.strip():
            # A whitespace-only response has no token either: it is refused like "".
            what = (
                "an empty string" if response == "" else f"a whitespace-only string ({response!r})"
            )
            raise ArgumentError(
                f"{argument}[{index}]",
                f"is {what}; pass allow_empty=True to score it as a "
                "response without tokens, or filter it out before calling the metric",
            )
    return responses


def check_response_sets(
    response_sets: object,
    argument: str = "predictions",
    min_size: int = 1,
    allow_empty: bool = False,
) -> list[list[str]]:
    """Validate a list of response sets (one per context)."""
    allow_empty = check_flag(allow_empty, "allow_empty")
    if isinstance(response_sets, (str, bytes)) or not isinstance(response_sets, Sequence):
        raise ArgumentError(
            argument,
            "must be a list of response sets (list of lists of strings), got "
            f"{type(response_sets).__name__}: {_describe(response_sets)}",
        )
    if len(response_sets) == 0:
        raise ArgumentError(argument, "is empty: give at least one response set")
    return [
        check_response_set(
            response_set, f"{argument}[{index}]", min_size=min_size, allow_empty=allow_empty
        )
        for index, response_set in enumerate(response_sets)
    ]


def check_corpus(
    responses: object, argument: str = "responses", allow_empty: bool = False
) -> list[str]:
    """Validate a flat corpus of responses (corpus-scope metrics)."""
    return check_response_set(responses, argument, min_size=1, allow_empty=allow_empty)


def split_scope(predictions: object, argument: str = "predictions") -> str:
    """Tell whether ``predictions`` is a flat corpus (``"corpus"``) or a list of sets (``"sets"``).

    Mixed nesting (some strings, some lists) is an error rather than a guess.
    """
    if (
        isinstance(predictions, (str, bytes))
        or not isinstance(predictions, Sequence)
        or len(predictions) == 0
    ):
        raise ArgumentError(
            argument,
            "must be a non-empty list of strings (a corpus) or of lists of strings "
            f"(response sets), got {_describe(predictions)}",
        )
    kinds = [
        "text"
        if isinstance(item, str)
        else "set"
        if isinstance(item, Sequence) and not isinstance(item, bytes)
        else "other"
        for item in predictions
    ]
    if "other" in kinds:
        index = kinds.index("other")
        raise ArgumentError(
            f"{argument}[{index}]",
            "must be a string or a list of strings, got "
            f"{type(predictions[index]).__name__}: {_describe(predictions[index])}",
        )
    if all(kind == "text" for kind in kinds):
        return "corpus"
    if all(kind == "set" for kind in kinds):
        return "sets"
    raise ArgumentError(
        argument,
        f"mixes nesting levels: item {kinds.index('text')} is a string but item "
        f"{kinds.index('set')} is a list; give either a flat list of strings (corpus scope) or a "
        "list of lists of strings (one response set per context)",
    )


def check_module_predictions(
    predictions: object, scopes: tuple[str, ...] = ("sets", "corpus"), argument: str = "predictions"
) -> str:
    """The raw-type guard of our evaluate modules' ``predictions``; returns their scope.

    evaluate silently stringifies a nested item or a number (``["a", ["b"]]`` becomes
    ``["a", "['b']"]``) and splits a string inside a list of lists into characters, so the
    modules check the types of each batch before evaluate encodes it. Sizes and empty strings
    are left to the metric, which checks them on the gathered inputs, knowing its options.

    Args:
        predictions: one batch: response sets (``list[list[str]]``) or a corpus (``list[str]``).
        scopes: the scopes the module takes: ``"sets"``, ``"corpus"`` or both.
        argument: the caller's argument name, used in error messages.

    Returns:
        ``"sets"`` or ``"corpus"``.
    """
    if scopes == ("sets",):
        check_response_sets(predictions, argument, allow_empty=True)
        return "sets"
    if scopes == ("corpus",):
        if isinstance(predictions, Sequence) and not isinstance(predictions, str) and predictions:
            index = next(
                (i for i, item in enumerate(predictions) if not isinstance(item, str)), None
            )
            if index is not None:
                raise ArgumentError(
                    f"{argument}[{index}]",
                    f"must be a string: `{argument}` is a flat list of responses (one corpus), "
                    f"got {type(predictions[index]).__name__}: {_describe(predictions[index])}",
                )
        check_corpus(predictions, argument, allow_empty=True)
        return "corpus"
    scope = split_scope(predictions, argument)
    if scope == "corpus":
        check_corpus(predictions, argument, allow_empty=True)
    else:
        check_response_sets(predictions, argument, allow_empty=True)
    return scope


def as_plain_python(value: object) -> object:
    """``value`` with arrays and tensors as nested lists of Python scalars, for the checks above.

    evaluate's base ``Metric`` takes numpy arrays, torch tensors and pandas Series (and lists of
    them) wherever it takes a list: datasets casts them when it encodes a batch. The checks here
    ask for Python lists, strings and numbers, so an evaluate module converts its raw inputs first.
    Anything with ``tolist`` (numpy arrays and scalars, torch tensors, pandas Series) is converted;
    numpy strings become ``str``; lists and tuples are converted item by item; the rest is kept,
    for the checks to refuse by name.
    """
    if isinstance(value, str):
        return str(value)  # numpy's str_ is a str subclass
    if isinstance(value, (list, tuple)):
        return [as_plain_python(item) for item in value]
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and not isinstance(value, bytes):
        converted = tolist()
        return converted if converted is value else as_plain_python(converted)
    return value


def check_float_rows(embeddings: object, argument: str = "embeddings") -> np.ndarray:
    """``embeddings`` as a 2-D float array, one row per item (float32 and float64 kept, anything
    else as float64); a ValueError naming ``argument`` otherwise."""
    import numpy as np  # deferred: the CLI's parser imports this module and stays numpy-free

    try:
        rows = np.asarray(embeddings)
        _refuse_complex(rows, argument)
        if rows.dtype not in (np.float32, np.float64):
            rows = rows.astype(np.float64)
    except (TypeError, ValueError) as error:
        if isinstance(error, ArgumentError):
            raise
        raise ArgumentError(argument, f"must be a 2-D array of numbers: {error}") from error
    if rows.ndim != 2:
        raise ArgumentError(
            argument, f"must be a 2-D array (one row per item), got shape {rows.shape}"
        )
    return rows


# -- Text that is not valid Unicode -------------------------------------------------------------
# A Python string may hold a lone surrogate (U+D800..U+DFFF: JSON's "\ud800", or bytes decoded
# with errors="surrogateescape"); it has no UTF-8 form, so every tokenizer, zlib and Arrow fail
# on it deep inside with an error that names nothing. It is refused once, where text comes in.
_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> str | None:
    """``"a lone surrogate (U+D800) at character 5"`` for the first surrogate code point of
    ``text``, None when ``text`` is valid Unicode (the common ASCII case costs one ``isascii``)."""
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    if found is None:
        return None
    return f"a lone surrogate (U+{ord(found.group()):04X}) at character {found.start()}"


#: What to do about a lone surrogate, shared by every message that reports one.
SURROGATE_ADVICE = (
    "not valid Unicode (it has no UTF-8 form); decode the source with errors='replace' "
    "or remove the character"
)


def check_unicode_text(text: str, argument: str) -> str:
    """``text`` itself when it is valid Unicode; a ValueError naming ``argument``
    (``"responses[3]"``) and the first lone surrogate's position otherwise."""
    found = lone_surrogate(text)
    if found is not None:
        raise ArgumentError(argument, f"holds {found}: {SURROGATE_ADVICE}")
    return text


def check_texts(texts: object, argument: str) -> None:
    """Every string in ``texts`` (a string, or lists of them nested at any depth) is valid Unicode;
    items that are not strings are left to the caller's own type checks."""
    if isinstance(texts, str):
        check_unicode_text(texts, argument)
    elif isinstance(texts, (list, tuple)):
        for index, item in enumerate(texts):
            check_texts(item, f"{argument}[{index}]")


def as_float_array(values: object, argument: str) -> np.ndarray:
    """``values`` as a float64 array (any shape); an :class:`ArgumentError` naming ``argument`` when
    it is a string or holds something that is not a number (numpy's own error names nothing)."""
    import numpy as np  # deferred: the CLI's parser imports this module and stays numpy-free

    if isinstance(values, (str, bytes)):
        raise ArgumentError(
            argument, f"must be numbers, got {type(values).__name__}: {_describe(values)}"
        )
    if isinstance(values, np.ndarray):
        _refuse_complex(values, argument)
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ArgumentError(argument, f"must hold numbers only: {error}") from error


def _refuse_complex(values: np.ndarray, argument: str) -> None:
    # numpy casts complex to float by dropping the imaginary part, with only a warning.
    import numpy as np  # deferred: the CLI's parser imports this module and stays numpy-free

    if np.iscomplexobj(values):
        raise ArgumentError(
            argument, f"must hold real numbers, got complex values (dtype {values.dtype})"
        )


def require_collection(value: object, argument: str, expected: str = "a list") -> None:
    """Refuse, naming ``argument``, a ``value`` that is a string or has no length to iterate over
    (``len()`` / ``iter()`` would fail with a ``TypeError`` that names nothing)."""
    if (
        isinstance(value, (str, bytes))
        or not hasattr(value, "__len__")
        or not hasattr(value, "__iter__")
    ):
        raise ArgumentError(
            argument, f"must be {expected}, got {type(value).__name__}: {_describe(value)}"
        )


def check_path(value: object, argument: str, optional: bool = False) -> str | None:
    """``value`` (a ``str`` or ``os.PathLike``, not empty; None too where ``optional``) as a str:
    None, a number or bytes would otherwise end in a TypeError from ``pathlib`` that names nothing,
    and ``""`` would be read as the current folder."""
    if value is None and optional:
        return None
    text = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(text, str):
        expected = "a path (a str or os.PathLike)" + (" or None" if optional else "")
        raise ArgumentError(
            argument, f"must be {expected}, got {type(value).__name__}: {value!r:.60}"
        )
    if not text:
        raise ArgumentError(argument, "is an empty path")
    return text
