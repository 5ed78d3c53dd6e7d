"""Command-line options written once: argparse arguments built from the jobs' option dataclasses.

A dataclass field joins a command line when its metadata holds a :class:`CliOption`, made with
:func:`option` (``field(default=5, metadata=option("--max-n", help=...))``). The field's default
is the only place a default is written: the parser leaves an option that is not given out of
the namespace (``argparse.SUPPRESS``), :func:`build` then lets the dataclass fill it, and the
help text shows it. The option says how the command line spells the field: its flags, metavar,
choices, whether it repeats (``action="append"``), a converter where the command-line form
differs from the value (a file path read into a list, ``none`` that turns a metric off), and a
switch that turns a value off (``--no-sentence-model``). The value's type (``int``, ``float``)
comes from the field's annotation.

The same metadata maps the jobs' Python argument names to their flags (:func:`flag_names`), so
that an error raised by a job or a metric names the flag the user typed (:func:`name_flags`).

transformers' ``HfArgumentParser`` builds parsers from dataclasses too, but spells options its
own way (``--max_n``, ``nargs="+"`` lists, ``--no_x`` for every bool), which would change the
command line this project has published; hence these few lines of argparse.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

# The spelling lives in the root layer (metric subpackages declare their own flags with it).
from dialeval.option_fields import KEY, CliOption, cli_fields, option  # noqa: F401 - re-exported
from dialeval.option_fields import NOT_GIVEN as _NOT_GIVEN
from dialeval.validation import ArgumentProblem

Options = TypeVar("Options")


def _default(f: dataclasses.Field[Any], spec: CliOption) -> Any:
    if spec.default is not _NOT_GIVEN:
        return spec.default
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def _value_type(cls: type, f: dataclasses.Field[Any]) -> type | None:
    """int or float when the annotation is one of them (or it | None); None keeps strings."""
    annotation = typing.get_type_hints(cls).get(f.name)
    candidates = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
    return candidates[0] if len(candidates) == 1 and candidates[0] in (int, float) else None


def _shown(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(item) for item in value)
    return str(value)


def _help(spec: CliOption, default: object, switch: bool) -> str | None:
    notes = ["repeatable"] if spec.repeatable else []
    if spec.default_text is not None:
        notes.append(f"default: {spec.default_text}")
    elif not switch and default not in (None, dataclasses.MISSING, [], ()):
        notes.append(f"default: {_shown(default)}")
    if not notes:
        return spec.help
    suffix = "(" + "; ".join(notes).replace("%", "%%") + ")"  # argparse formats help with %
    return f"{spec.help} {suffix}" if spec.help else suffix


def _off_dest(f: dataclasses.Field[Any]) -> str:
    return f"{f.name}:off"


def add_options(parser: argparse.ArgumentParser, cls: type) -> argparse.ArgumentParser:
    """Add an argument to ``parser`` for every command-line field of dataclass ``cls``."""
    groups: dict[str, argparse._MutuallyExclusiveGroup] = {}
    for f, spec in cli_fields(cls):
        default = _default(f, spec)
        switch = _is_switch(spec, default)
        kwargs: dict[str, Any] = {
            "dest": f.name,
            "default": argparse.SUPPRESS,
            "help": _help(spec, default, switch),
        }
        if switch:
            kwargs.update(action="store_const", const=not default)
        else:
            if spec.metavar:
                kwargs["metavar"] = spec.metavar
            if spec.choices:
                kwargs["choices"] = spec.choices
            value_type = None if spec.convert else _value_type(cls, f)
            if value_type is not None:
                kwargs["type"] = value_type
            if spec.repeatable:
                kwargs["action"] = "append"
            if spec.nargs:
                kwargs["nargs"] = spec.nargs
            if default is dataclasses.MISSING and spec.flags and not spec.one_of:
                kwargs["required"] = True
        target: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup = parser
        if spec.one_of:
            if spec.one_of not in groups:
                groups[spec.one_of] = parser.add_mutually_exclusive_group(required=True)
            target = groups[spec.one_of]
        if spec.flags:
            target.add_argument(*spec.flags, **kwargs)
        else:
            kwargs.pop("dest")
            kwargs.pop("default")
            target.add_argument(f.name, **kwargs)
        if spec.off_flag:
            parser.add_argument(
                spec.off_flag, dest=_off_dest(f), action="store_true", help=spec.off_help
            )
    return parser


def given(namespace: argparse.Namespace, cls: type) -> dict[str, Any]:
    """The command-line fields of ``cls`` that the user gave, as the dataclass takes them."""
    values = vars(namespace)
    out: dict[str, Any] = {}
    for f, spec in cli_fields(cls):
        if values.get(_off_dest(f)):
            out[f.name] = copy.copy(spec.off_value)  # a fresh [] per instance
        elif f.name in values:
            out[f.name] = spec.convert(values[f.name]) if spec.convert else values[f.name]
        elif spec.default is not _NOT_GIVEN:
            out[f.name] = spec.default
    return out


def build(cls: type[Options], namespace: argparse.Namespace, **fixed: object) -> Options:
    """An instance of ``cls`` from the parsed command line; ``fixed`` sets fields the command line
    does not."""
    return cls(**{**given(namespace, cls), **fixed})


def _is_switch(spec: CliOption, default: object) -> bool:
    return isinstance(default, bool) and not spec.choices and spec.convert is None


def used_options(namespace: argparse.Namespace, *classes: type) -> dict[str, Any]:
    """Every option of ``classes`` by its flag, as given on the command line or by default (for
    reports); a switch (``--allow-empty``, ``--no-progress``) is True when given."""
    values = vars(namespace)
    out: dict[str, Any] = {}
    for cls in classes:
        for f, spec in cli_fields(cls):
            name = spec.flags[0] if spec.flags else f.name
            default = _default(f, spec)
            if _is_switch(spec, default):
                out[name] = f.name in values
            else:
                out[name] = values.get(f.name, None if default is dataclasses.MISSING else default)
            if spec.off_flag:
                out[spec.off_flag] = bool(values.get(_off_dest(f)))
    return out


def flag_names(*classes: type) -> dict[str, str]:
    """What jobs' errors say -> what the command line says: each Python argument name -> its flag
    (positional arguments by their metavar); a switch also as ``name=VALUE`` (``allow_empty=True``
    -> ``--allow-empty``); and the literal ``(text, replacement)`` pairs among the aliases."""
    names: dict[str, str] = {}
    for cls in classes:
        for f, spec in cli_fields(cls):
            flag = spec.flags[0] if spec.flags else (spec.metavar or f.name.upper())
            default = _default(f, spec)
            for name in (f.name, *spec.aliases):
                if isinstance(name, tuple):
                    names[name[0]] = name[1]
                    continue
                names[name] = flag
                if _is_switch(spec, default) and spec.flags:
                    names[f"{name}={not default}"] = flag
    return names


def name_flags(error: BaseException | str, names: Mapping[str, str]) -> str:
    """``error``'s message with the Python argument names in ``names`` written as their flags.

    An :class:`~dialeval.validation.ArgumentError` carries its argument's name: it is
    :meth:`~dialeval.validation.ArgumentProblem.renamed` (the argument and the names it mentions;
    ``max_n`` -> ``--max-n``, an index path kept). Keys holding ``=`` or a backtick are advice
    written as code (``allow_empty=True`` -> ``--allow-empty``) and are replaced as they stand.
    Fallback, for messages that are not an ArgumentError (an ``OSError``, a sentence that names
    several arguments in its middle): the quoted names (```data_dir` ...``) are replaced in the
    text.
    """
    literal = {name: flag for name, flag in names.items() if "=" in name or "`" in name}
    if isinstance(error, ArgumentProblem):
        message = str(
            error.renamed({name: flag for name, flag in names.items() if name not in literal})
        )
    else:
        message = str(error)
        for name in sorted(set(names) - set(literal), key=len, reverse=True):
            message = message.replace(f"`{name}`", f"`{names[name]}`")
    for name in sorted(literal, key=len, reverse=True):
        message = message.replace(name, literal[name])
    return message
